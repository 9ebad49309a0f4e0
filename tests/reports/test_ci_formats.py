"""CI formats honour waivers (SARIF suppressions, JUnit skipped, GitHub notice), SARIF
names items and fingerprints results, and JUnit's system-out holds only the evidence of
what failed."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema

from tests.reports.conftest import ROOT, make_report, spec_check
from validator.renderers.github import GitHubRenderer
from validator.renderers.junit import JUnitRenderer
from validator.renderers.sarif import SarifRenderer, fingerprint
from validator.report.model import Location, Report

SCHEMA = json.loads((ROOT / "tests" / "jobs" / "sarif-schema-2.1.0.json").read_text())
FACTS = "tests/fixtures/facts/dgx_h100_ecc_off.json"


def render(renderer: object, report: Report) -> str:
    buf = io.StringIO()
    renderer.render(report, buf)  # type: ignore[attr-defined]
    return buf.getvalue()


def sarif(report: Report) -> dict:
    doc = json.loads(render(SarifRenderer(), report))
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    return doc


def test_sarif_suppresses_active_waivers_only():
    results = sarif(make_report())["runs"][0]["results"]
    by = {(r["ruleId"], r["properties"]["subject"], r["properties"]["item"]): r for r in results}
    waived = by[("NET-01.fabric-port-slow", "n2", "mlx5_0:1")]
    assert waived["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "RMA open",
            "properties": {"waiver": "NET-01", "approver": "ops", "expires": "2027-01-31"},
        }
    ]
    expired = by[("MEM-01.ecc-disabled", "n2", "GPU3")]  # expired waiver: an open alert
    assert "suppressions" not in expired
    assert "suppressions" not in by[("NET-01.measured-throughput-low", "fleet", "n2->n1")]


def test_sarif_names_items_and_fingerprints_them():
    results = sarif(make_report())["runs"][0]["results"]
    pair = next(r for r in results if r["properties"]["item"] == "n2->n1")
    assert pair["message"]["text"].startswith("n2->n1: ")
    fps = [r["partialFingerprints"]["specCheckFinding/v1"] for r in results]
    assert len(set(fps)) == len(fps)  # distinct findings, distinct fingerprints
    again = sarif(make_report(generated_at="2027-01-01T00:00:00Z"))["runs"][0]["results"]
    assert fps == [r["partialFingerprints"]["specCheckFinding/v1"] for r in again]
    f = make_report().findings[0]
    assert fingerprint(f) != fingerprint(replace(f, item="mlx5_1:1"))


def test_sarif_percent_encodes_uris_and_lists_present_scopes(tmp_path: Path):
    r = make_report()
    loc = Location("my configs/ds config.json", 3)
    findings = tuple(replace(f, location=loc) if f.location else f for f in r.findings)
    subjects = tuple(s for s in r.subjects if s.kind == "job")
    doc = sarif(replace(r, findings=findings, subjects=subjects))
    run = doc["runs"][0]
    scopes = {x["properties"]["scope"] for x in run["tool"]["driver"]["rules"] if "scope" in x["properties"]}
    assert scopes <= {"job", "node"}  # subjects name only jobs; node rules have findings
    uris = [x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for x in run["results"] if "locations" in x]
    assert "my%20configs/ds%20config.json" in uris and not any(" " in u for u in uris)


def test_lint_sarif_lists_only_job_rules(tmp_path: Path):
    cfg = tmp_path / "my dir" / "ds config.json"
    cfg.parent.mkdir()
    cfg.write_text('{"train_batch_size": 65, "train_micro_batch_size_per_gpu": 4,'
                   ' "gradient_accumulation_steps": 2}\n')
    out = tmp_path / "o.sarif"
    proc = spec_check("lint", "--format", "sarif", "-o", out, "--set", "gpu_count=8", cfg,
                      cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    scopes = {r["properties"].get("scope") for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert "node" not in scopes and "cluster" not in scopes
    uris = {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for x in doc["runs"][0]["results"]}
    assert "my%20dir/ds%20config.json" in uris


def test_junit_waived_fail_is_skipped_and_expired_still_fails():
    root = ET.fromstring(render(JUnitRenderer(), make_report()).split("\n", 1)[1])
    n2 = root.find("testsuite[@name='n2']")
    assert n2 is not None
    port = n2.find("testcase[@name='NET-01.fabric-port-slow [mlx5_0:1]']")
    assert port is not None and port.find("failure") is None
    assert port.find("skipped").get("message").startswith("waived: RMA open")
    ecc = n2.find("testcase[@name='MEM-01.ecc-disabled [GPU3]']")
    assert ecc.find("failure") is not None  # expired waiver
    assert n2.get("failures") == "1" and root.get("failures") == "3"


def test_junit_system_out_is_the_evidence_of_failures_only():
    root = ET.fromstring(render(JUnitRenderer(), make_report()).split("\n", 1)[1])
    n1 = root.find("testsuite[@name='n1']")
    assert n1.find("system-out") is None  # only passes and a warn there
    lines = root.find("testsuite[@name='n2']/system-out").text.splitlines()
    recs = [json.loads(x) for x in lines]
    assert {r["status"] for r in recs} == {"fail", "error"}
    assert all("remediation" not in r and "message" not in r for r in recs)


def test_github_waived_is_notice():
    out = render(GitHubRenderer(), make_report())
    lines = [x for x in out.splitlines() if "NET-01.fabric-port-slow" in x]
    assert len(lines) == 1 and lines[0].startswith("::notice ") and "waived" in lines[0]
    assert any(x.startswith("::error ") and "MEM-01.ecc-disabled" in x for x in out.splitlines())


def test_fully_waived_real_run_is_green_in_every_ci_format(tmp_path: Path):
    w = tmp_path / "w.yaml"
    w.write_text("waivers:\n  - id: MEM-01.ecc-disabled\n    subject: '*'\n"
                 "    justification: lab node\n    approver: ops\n    expires: 2099-01-01\n")
    for fmt in ("junit", "github", "sarif"):
        out = tmp_path / f"o.{fmt}"
        proc = spec_check("check", "--facts", FACTS, "--waivers", w, "--format", fmt, "-o", out)
        assert proc.returncode == 0, proc.stderr
        text = out.read_text()
        if fmt == "junit":
            root = ET.fromstring(text.split("\n", 1)[1])
            assert root.get("failures") == "0" and "waived: lab node" in text
        elif fmt == "github":
            assert "::error" not in text and "::notice" in text
        else:
            res = [r for r in json.loads(text)["runs"][0]["results"] if r["level"] == "error"]
            assert res and all(r.get("suppressions") for r in res)
