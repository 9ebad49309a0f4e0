"""Waivers: active ones take a finding out of the verdict, expired ones are shown and count
again, unknown IDs and malformed files are exit-2 errors at file:line."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.reports.conftest import ROOT, make_report, real_result, spec_check
from validator.errors import SpecCheckError
from validator.report.model import Finding, Location, Status
from validator.report.waivers import WaiverFileError, apply_waivers, load_waivers, subject_matches, today_utc

KNOWN = SimpleNamespace(
    rules=[SimpleNamespace(id="NET-01.fabric-port-slow"), SimpleNamespace(id="MEM-01.ecc-disabled")]
)
REQS = SimpleNamespace(requirements=[SimpleNamespace(id="NET-01"), SimpleNamespace(id="MEM-01")])


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "waivers.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def entry(id_: str = "NET-01", subject: str = "n2", expires: str = "2027-01-31") -> str:
    return (
        f'  - id: {id_}\n    subject: "{subject}"\n    justification: RMA open\n'
        f"    approver: ops@example.com\n    expires: {expires}\n"
    )


def finding(**kw) -> Finding:
    base = dict(
        rule="NET-01.fabric-port-slow",
        requirement="NET-01",
        level="MUST",
        status=Status.FAIL,
        subject="n2",
        expected="",
        message="m",
        remediation="",
    )
    base.update(kw)
    return Finding(**base)


def test_active_waiver_makes_conformant(tmp_path):
    r = make_report()
    r = r.with_findings(
        tuple(
            replace(f, waiver=None)
            for f in r.findings
            if f.subject == "n2" and f.rule.startswith("NET-01")
        )
    )
    assert not r.summary.conformant
    waivers = load_waivers(write(tmp_path, "waivers:\n" + entry()), KNOWN, REQS)
    out = apply_waivers(r, waivers, today=date(2026, 11, 18))
    (f,) = out.findings
    assert f.status is Status.FAIL  # keeps its status
    assert f.waiver == {
        "id": "NET-01",
        "subject": "n2",
        "justification": "RMA open",
        "approver": "ops@example.com",
        "expires": "2027-01-31",
        "active": True,
        "waiver_id": waivers[0].key,  # derived: W- + 12 hex of rule, subject, expiry
        "granted": None,
        "as_of": "2026-11-18",  # the day it was judged active on
    }
    assert waivers[0].key.startswith("W-") and len(waivers[0].key) == 14
    assert out.summary.conformant
    record = out.extra["waivers"]  # what judged the waivers, kept in the result
    assert record["as_of"] == "2026-11-18" and record["files"][0]["sha256"].startswith("sha256:")
    assert record["waivers"][0]["waiver_id"] == waivers[0].key


@pytest.mark.parametrize(
    ("today", "active"), [(date(2027, 1, 31), True), (date(2027, 2, 1), False)]
)
def test_expiry_is_inclusive_and_expired_counts_again(tmp_path, today, active):
    r = make_report().with_findings((finding(),))
    out = apply_waivers(
        r, load_waivers(write(tmp_path, "waivers:\n" + entry()), KNOWN, REQS), today=today
    )
    assert out.findings[0].waiver["active"] is active
    assert out.summary.conformant is active


def test_today_respects_source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")
    assert today_utc() == date(2026, 11, 18)


def test_active_wins_over_expired_and_rule_over_requirement(tmp_path):
    text = (
        "waivers:\n" + entry(expires="2020-01-01") + entry(id_="NET-01.fabric-port-slow") + entry()
    )
    out = apply_waivers(
        make_report().with_findings((finding(),)),
        load_waivers(write(tmp_path, text), KNOWN, REQS),
        today=date(2026, 11, 18),
    )
    assert (
        out.findings[0].waiver["id"] == "NET-01.fabric-port-slow"
        and out.findings[0].waiver["active"]
    )


def test_pass_skip_and_error_get_no_waiver(tmp_path):
    """An error is an unknown: no waiver makes it count as judged (MUST errors still fail)."""
    r = make_report().with_findings(
        (finding(status=Status.PASS), finding(status=Status.SKIP), finding(status=Status.ERROR))
    )
    out = apply_waivers(r, load_waivers(write(tmp_path, "waivers:\n" + entry()), KNOWN, REQS))
    assert [f.waiver for f in out.findings] == [None, None, None]
    assert "unmatched_waivers" not in out.extra  # it matched; it just has nothing to waive


@pytest.mark.parametrize(
    ("pattern", "kw", "hit"),
    [
        ("n2", {}, True),
        ("n*", {}, True),
        ("gpu-a0[1-3]", {"subject": "gpu-a02"}, True),
        ("n1", {}, False),
        (
            "GPU-4a3f9c2e-1b7d-5e80-9f21-6c0d8e3a7b11",
            {"item": "GPU0 (GPU-4a3f9c2e-1b7d-5e80-9f21-6c0d8e3a7b11)"},
            True,
        ),
        ("GPU-4a3f9c2e-1b7d-5e80-9f21-6c0d8e3a7b11", {"item": "GPU0"}, False),
        (
            "conf/ds.json",
            {"subject": "/repo/conf/ds.json", "location": Location("/repo/conf/ds.json", 3)},
            True,
        ),
        ("*.yaml", {"subject": "job", "location": Location("x/job.yaml", 3)}, True),
        (
            "other.json",
            {"subject": "/repo/conf/ds.json", "location": Location("/repo/conf/ds.json", 3)},
            False,
        ),
        ("gpu-a04", {"subject": "fleet", "item": "gpu-a03->gpu-a04"}, True),
        ("gpu-a05", {"subject": "fleet", "item": "gpu-a03->gpu-a04"}, False),
    ],
)
def test_subject_matching(pattern, kw, hit):
    assert subject_matches(pattern, finding(**kw)) is hit


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("waivers:\n" + entry() + entry(id_="NET-99"), 7, 'no rule or requirement "NET-99"'),
        ("waivers:\n" + entry(id_="NET"), 2, 'no rule or requirement "NET"'),  # no prefixes
        ("waivers:\n" + entry(expires="someday"), 6, "not a date"),
        ("waivers:\n" + entry() + "    color: red\n", 7, 'unknown key "color"'),
        ("waivers:\n  - id: NET-01\n    subject: n2\n", 2, 'missing "justification"'),
        (
            "waivers:\n  - id: NET-01\n    subject: ''\n    justification: j\n    approver: a\n    expires: 2027-01-01\n",
            3,
            "non-empty string",
        ),
        ("waivers: {a: 1}\n", 1, "expected a list"),
        ("nope: []\n", 1, 'unknown top-level key "nope"'),
        ("waivers:\n  - [1, 2\n", 3, "invalid YAML"),
        ("waivers:\n  - !!python/object:os.system {}\n", 2, "only plain YAML"),
    ],
)
def test_invalid_files_name_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(SpecCheckError) as exc:
        load_waivers(path, KNOWN, REQS)
    assert exc.value.file == str(path) and exc.value.line == line, str(exc.value)
    assert words in str(exc.value)


def test_bare_list_and_empty_file(tmp_path):
    assert (
        len(
            load_waivers(
                write(tmp_path, entry().replace("  - ", "- ", 1).replace("\n    ", "\n  ")),
                KNOWN,
                REQS,
            )
        )
        == 1
    )
    assert load_waivers(write(tmp_path, ""), KNOWN, REQS) == ()


# ---- through the CLI ------------------------------------------------------------------------

FACTS = "dgx_h100_ecc_off.json"


def test_check_with_waivers_cli(tmp_path):
    w = write(
        tmp_path, "waivers:\n" + entry(id_="MEM-01.ecc-disabled", subject="*", expires="2027-01-31")
    )
    out = tmp_path / "r.json"
    base = real_result(tmp_path, FACTS)
    if json.loads(base.read_text())["summary"]["fail"] != 1:
        pytest.skip("fixture facts changed shape")
    proc = spec_check(
        "check",
        "--facts",
        f"tests/fixtures/facts/{FACTS}",
        "--waivers",
        w,
        "--format",
        "json",
        "-o",
        out,
    )
    assert proc.returncode == 0, proc.stderr  # the one failure is waived
    data = json.loads(out.read_text())
    waived = [f for f in data["findings"] if f["waiver"]]
    assert waived and all(f["waiver"]["active"] for f in waived) and data["summary"]["conformant"]

    expired = write(
        tmp_path, "waivers:\n" + entry(id_="MEM-01.ecc-disabled", subject="*", expires="2026-01-01")
    )
    proc = spec_check("check", "--facts", f"tests/fixtures/facts/{FACTS}", "--waivers", expired)
    assert proc.returncode == 1 and "(waived)" not in proc.stdout


def test_unknown_id_is_exit_2_with_file_line(tmp_path):
    w = write(tmp_path, "waivers:\n" + entry(id_="NET-01.no-such-rule"))
    proc = spec_check(
        "check", "--facts", "tests/reports/fixtures/facts/small_node.json", "--waivers", w
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert (
        f"{w}:2:" in proc.stderr
        and "NET-01.no-such-rule" in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_report_verb_applies_waivers(tmp_path, result_file):
    w = write(
        tmp_path,
        "waivers:\n"
        + entry(id_="MEM-01", subject="n2", expires="2030-01-01")
        + entry(id_="NET-01", subject="fleet")
        + entry(id_="PREC-01", subject="conf/*"),
    )
    out = tmp_path / "w.json"
    proc = spec_check(
        "report",
        result_file,
        "--waivers",
        w,
        "--format",
        "json",
        "-o",
        out,
        env={"SOURCE_DATE_EPOCH": "1795000000"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    by = {(f["subject"], f["rule"], f["item"]): f["waiver"] for f in data["findings"]}
    assert by[("fleet", "NET-01.measured-throughput-low", "n2->n1")]["active"] is True
    assert by[("n2", "MEM-01.row-remap-failed", "GPU1")] is None  # an error: never waived
    assert by[("conf/ds_config.json", "PREC-01.fp32-training", None)]["id"] == "PREC-01"
    # the waiver on n2's port recorded in the result is replaced: this file has none for it
    assert by[("n2", "NET-01.fabric-port-slow", "mlx5_0:1")] is None
    assert data["summary"]["conformant"] is False
    bad = write(tmp_path, "waivers:\n" + entry(id_="ZZZ-01"))
    proc = spec_check("report", result_file, "--waivers", bad)
    assert proc.returncode == 2 and "ZZZ-01" in proc.stderr


def test_lint_waiver_by_config_path(tmp_path):
    """A lint finding's subject is its config file: a waiver names it by trailing path or glob."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "ds.json").write_text(
        json.dumps(
            {
                "train_micro_batch_size_per_gpu": 4,
                "steps_per_print": 100000,
                "fp16": {"enabled": True, "loss_scale": 128},
            },
            indent=2,
        )
    )
    first = spec_check("lint", "conf/ds.json", "--format", "json", cwd=tmp_path)
    if first.returncode == 2 and "No such command" in first.stderr:
        pytest.skip("the lint verb is not in this build")
    problems = [f for f in json.loads(first.stdout)["findings"] if f["status"] in ("fail", "warn")]
    assert problems, "expected findings on this config"
    rule = problems[0]["rule"]
    w = write(
        tmp_path,
        "waivers:\n"
        + entry(id_=rule, subject="conf/ds.json")
        + entry(id_=problems[-1]["requirement"], subject="*.json"),
    )
    proc = spec_check("lint", "conf/ds.json", "--waivers", w, "--format", "json", cwd=tmp_path)
    findings = json.loads(proc.stdout)["findings"]
    assert all(f["waiver"] and f["waiver"]["active"] for f in findings if f["rule"] == rule)
    assert all(
        f["waiver"]
        for f in findings
        if f["requirement"] == problems[-1]["requirement"] and f["status"] in ("fail", "warn")
    )


def test_report_waivers_on_result_without_rule_docs(tmp_path, result_file):
    """Without rule docs in the result, IDs are checked against its spec version's pack."""
    data = json.loads(result_file.read_text())
    data["rules"] = []
    result_file.write_text(json.dumps(data))
    ok = write(tmp_path, "waivers:\n" + entry(id_="NET-01", subject="fleet"))
    assert spec_check("report", result_file, "--waivers", ok, "--format", "json").returncode == 0
    bad = write(tmp_path, "waivers:\n" + entry(id_="NET-01.not-a-rule", subject="fleet"))
    proc = spec_check("report", result_file, "--waivers", bad)
    assert proc.returncode == 2 and "NET-01.not-a-rule" in proc.stderr


def test_impossible_date_is_one_line_exit_2_with_file_and_line(tmp_path):
    w = write(tmp_path, "waivers:\n" + entry(id_="MEM-01.ecc-disabled", expires="2027-02-30"))
    proc = spec_check(
        "check", "--facts", "tests/reports/fixtures/facts/small_node.json", "--waivers", w
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "internal error" not in proc.stderr
    assert f"{w}:6:" in proc.stderr and "2027-02-30" in proc.stderr


def test_waiver_matching_nothing_is_a_warning_and_recorded(tmp_path):
    w = write(tmp_path, "waivers:\n" + entry(id_="MEM-01.ecc-disabled", subject="no-such-host-*"))
    out = tmp_path / "r.json"
    proc = spec_check(
        "check", "--facts", f"tests/fixtures/facts/{FACTS}", "--waivers", w, "--format", "json",
        "-o", out,
    )
    assert proc.returncode == 1, proc.stderr  # the failure stays unwaived
    assert "warning" in proc.stderr and "no-such-host-*" in proc.stderr and f"{w}:2:" in proc.stderr
    extra = json.loads(out.read_text())["extra"]
    assert extra["unmatched_waivers"] == [
        {"id": "MEM-01.ecc-disabled", "subject": "no-such-host-*", "file": str(w), "line": 2}
    ]
    used = write(tmp_path, "waivers:\n" + entry(id_="MEM-01.ecc-disabled", subject="*"))
    proc = spec_check("check", "--facts", f"tests/fixtures/facts/{FACTS}", "--waivers", used)
    assert "warning" not in proc.stderr


def test_an_error_recorded_as_waived_by_an_older_version_still_counts():
    """Results written before errors stopped being waivable may carry an active waiver on an
    error: it is still an unknown, so it does not count as waived anywhere."""
    from validator.report.model import summarize

    f = replace(finding(status=Status.ERROR), waiver={"id": "NET-01", "active": True})
    assert not f.waived and f.against_verdict
    assert summarize((f,)).conformant is False



def test_granted_and_waiver_id_recorded_and_checked(tmp_path):
    text = ("waivers:\n  - id: NET-01\n    subject: n2\n    justification: RMA open\n"
            "    approver: ops@example.com\n    expires: 2027-01-31\n    granted: 2026-11-01\n"
            "    waiver_id: WVR-17\n")
    (w,) = load_waivers(write(tmp_path, text), KNOWN, REQS)
    assert w.key == "WVR-17" and w.granted == date(2026, 11, 1)
    twice = text + text.replace("waivers:\n", "")
    with pytest.raises(WaiverFileError, match="also waivers"):
        load_waivers(write(tmp_path, twice), KNOWN, REQS)
    with pytest.raises(WaiverFileError, match="after its expiry"):
        load_waivers(write(tmp_path, text.replace("2026-11-01", "2028-01-01")), KNOWN, REQS)


def test_report_judges_waivers_as_of_the_result_unless_asked(tmp_path):
    """A result rendered a month later shows the waivers that were active when it was
    made; --as-of asks for another day."""
    from tests.reports.conftest import spec_check

    facts = ROOT / "tests/fixtures/facts/dgx_h100_ecc_off.json"
    result = tmp_path / "r.json"
    env = {"SOURCE_DATE_EPOCH": "1795000000"}  # 2026-11-18
    assert spec_check("check", "--facts", facts, "--format", "json", "-o", result, env=env).returncode == 1
    wfile = tmp_path / "w.yaml"
    wfile.write_text("waivers:\n  - id: MEM-01.ecc-disabled\n    subject: '*'\n    justification: lab\n"
                     "    approver: ops\n    expires: 2026-12-15\n")
    later = {"SOURCE_DATE_EPOCH": "1799000000"}  # 2027-01-03: the waiver has expired by now
    proc = spec_check("report", result, "--waivers", wfile, "--format", "json", env=later)
    doc = json.loads(proc.stdout)
    assert doc["extra"]["waivers"]["as_of"] == "2026-11-18" and doc["summary"]["conformant"]
    proc = spec_check("report", result, "--waivers", wfile, "--as-of", "today", "--format", "json", env=later)
    doc = json.loads(proc.stdout)
    assert doc["extra"]["waivers"]["as_of"] == "2027-01-03" and not doc["summary"]["conformant"]
    proc = spec_check("report", result, "--as-of", "2027-01-01")
    assert proc.returncode == 2 and "add --waivers" in proc.stderr
