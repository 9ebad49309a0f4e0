"""``spec-check report`` (every format from one result; bad input -> exit 2) and
``spec-check diff`` (new failures -> exit 1)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.reports.conftest import make_report, real_result, spec_check
from validator.renderers import available
from validator.report.diffing import diff_reports
from validator.report.model import Status, finding_id


@pytest.mark.parametrize("fmt", sorted(available()))
def test_report_renders_every_format(tmp_path, result_file, fmt):
    out = tmp_path / f"out.{fmt}"
    proc = spec_check("report", result_file, "--format", fmt, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 100


def test_report_json_roundtrip_is_identity(tmp_path, result_file):
    out = tmp_path / "again.json"
    assert spec_check("report", result_file, "--format", "json", "-o", out).returncode == 0
    assert json.loads(out.read_text()) == json.loads(result_file.read_text())


def test_report_on_real_result(tmp_path):
    res = real_result(tmp_path, "dgx_h100.json")
    for fmt in ("html", "markdown", "prometheus"):
        proc = spec_check("report", res, "--format", fmt)
        assert proc.returncode == 0 and proc.stdout, proc.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"schema": "spec-check/result/1", "command": "check", "findi', "invalid JSON"),
        ("", "invalid JSON"),
        ("[1, 2]", "expected an object"),
        ('{"schema": "spec-check/facts/1", "facts": {}}', 'schema "spec-check/facts/1"'),
        ('{"version": "2.1.0", "runs": []}', 'a SARIF log, not a spec-check result'),
        ('{"schema": "spec-check/result/1"}', '"command" missing'),
        (None, "findings[0].status: unknown status"),
        (None, "findings[1].rule: expected a JSON string, got null"),
        (None, "parameters: expected a JSON object, got null"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
    ],
)
def test_report_bad_input_exits_2(tmp_path, result_file, content, words):
    bad = tmp_path / "bad.json"
    if content is None:
        data = json.loads(result_file.read_text())
        if "unknown status" in words:
            data["findings"][0]["status"] = "maybe"
        elif "parameters" in words:  # checked field by field, each error naming its field
            data["parameters"] = None
        else:
            del data["findings"][1]["rule"]
        bad.write_text(json.dumps(data))
    elif isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    proc = spec_check("report", bad, "--format", "html")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"spec-check: error: {bad}") and proc.stderr.count("\n") == 1, (
        proc.stderr
    )
    assert words in proc.stderr and "Traceback" not in proc.stderr


def test_report_missing_file_and_directory(tmp_path):
    for target in (tmp_path / "missing.json", tmp_path):
        proc = spec_check("report", target)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr


# ---- diff -----------------------------------------------------------------------------------


def _write(tmp_path, name, report):
    p = tmp_path / name
    p.write_text(json.dumps(report.to_dict()))
    return p


def test_diff_model():
    old = make_report()
    changed = []
    for f in old.findings:
        if f.subject == "n1" and f.rule == "NET-01.fabric-port-slow":
            f = replace(
                f, status=Status.FAIL, observed="200 Gb/s", value=200
            )  # new failure + measurement
        elif f.subject == "fleet" and f.item == "n2->n1":
            f = replace(f, status=Status.PASS, observed="390.0 Gb/s", value=390.0)  # fixed
        changed.append(f)
    d = diff_reports(old, old.with_findings(tuple(changed)))
    assert [(x["subject"], x["rule"]) for x in d.new_failures] == [
        ("n1", "NET-01.fabric-port-slow")
    ]
    assert [(x["subject"], x["item"]) for x in d.fixed] == [("fleet", "n2->n1")]
    deltas = {(m["subject"], m["item"]): m.get("delta") for m in d.measurement_changes}
    assert deltas == {("n1", "mlx5_0:1"): -200, ("fleet", "n2->n1"): pytest.approx(390.0 - 196.2)}
    assert d.regressed


def test_diff_ignores_waived_and_still_failing():
    old = make_report()
    d = diff_reports(old, old)
    assert not d.regressed and d.still_failing == 4 and not d.measurement_changes
    # a new failure that is waived is not a regression
    extra = replace(old.findings[1], subject="n3")
    assert not diff_reports(old, old.with_findings((*old.findings, extra))).regressed


def test_diff_cli_exit_codes_and_json(tmp_path):
    old = make_report()
    better = old.with_findings(tuple(f for f in old.findings if f.status is not Status.FAIL))
    a, b = _write(tmp_path, "old.json", better), _write(tmp_path, "new.json", old)
    worse = spec_check("diff", a, b)
    assert worse.returncode == 1, worse.stderr
    assert "New failures (3)" in worse.stdout and "REGRESSED" in worse.stdout
    same = spec_check("diff", b, b)
    assert same.returncode == 0 and "0 new failure(s)" in same.stdout
    # NEW lacks a whole subject (the config) and rule: a weaker run, exit 1 unless accepted
    assert spec_check("diff", b, a).returncode == 1
    fixed = spec_check("diff", b, a, "--format", "json", "--allow-config-change")
    assert fixed.returncode == 0
    data = json.loads(fixed.stdout)
    assert data["weakened"] is True
    assert (
        data["regressed"] is False
        and len(data["removed"]) == 4
        and data["schema"] == "spec-check/diff/1"
    )
    out = tmp_path / "d.json"
    assert spec_check("diff", a, b, "--format", "json", "-o", out).returncode == 1
    assert json.loads(out.read_text())["regressed"] is True


def test_diff_real_results(tmp_path):
    good = real_result(tmp_path, "dgx_h100.json")
    bad = real_result(tmp_path, "dgx_h100_port_200g.json")
    assert spec_check("diff", good, bad).returncode == 1
    proc = spec_check("diff", bad, good)
    assert proc.returncode == 0 and "Fixed" in proc.stdout


def test_diff_bad_input_exits_2(tmp_path, result_file):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = spec_check("diff", result_file, bad)
    assert proc.returncode == 2 and str(bad) in proc.stderr


@pytest.mark.parametrize("fmt", ["html", "markdown", "prometheus"])
def test_check_writes_the_new_formats(tmp_path, fmt):
    """The checking verbs reach the renderers through the registry (--format)."""
    out = tmp_path / "r.out"
    proc = spec_check(
        "check",
        "--facts",
        "tests/reports/fixtures/facts/small_node.json",
        "--format",
        fmt,
        "-o",
        out,
    )
    assert proc.returncode == 1, proc.stderr  # the small node is not conformant
    assert out.read_text().strip()


def test_diff_relaxed_parameter_is_a_weaker_run(tmp_path):
    old = make_report()
    relaxed = replace(
        old,
        parameters={**old.parameters, "fabric_port_rate": {"value": "200 Gb/s", "origin": "--set"}},
        findings=tuple(
            replace(f, status=Status.PASS) if f.item == "n2->n1" else f for f in old.findings
        ),
    )
    d = diff_reports(old, relaxed)
    assert not d.new_failures and d.weakened and d.regressed
    (c,) = [c for c in d.config_changes if c["kind"] == "parameter"]
    assert (c["name"], c["old"], c["new"], c["new_origin"]) == (
        "fabric_port_rate", "400 Gb/s", "200 Gb/s", "--set"
    )
    a, b = _write(tmp_path, "a.json", old), _write(tmp_path, "b.json", relaxed)
    proc = spec_check("diff", a, b)
    assert proc.returncode == 1
    assert "parameter fabric_port_rate: 400 Gb/s (default) -> 200 Gb/s (--set)" in proc.stdout
    assert "WEAKER" in proc.stdout
    assert spec_check("diff", a, b, "--allow-config-change").returncode == 0


def test_diff_ignore_and_dropped_hosts_are_named(tmp_path):
    old = make_report()
    new = replace(
        old,
        selection={"select": [], "ignore": ["MEM-01"]},
        subjects=tuple(s for s in old.subjects if s.name != "n1"),
        findings=tuple(f for f in old.findings if f.subject != "n1" and f.requirement != "MEM-01"),
    )
    d = diff_reports(old, new)
    kinds = {c["kind"]: c for c in d.config_changes}
    assert kinds["subjects_lost"]["subjects"] == ["n1"]
    assert "MEM-01.ecc-disabled" in kinds["rules_not_evaluated"]["rules"]
    assert "selection" in kinds and d.regressed
    proc = spec_check("diff", _write(tmp_path, "a.json", old), _write(tmp_path, "b.json", new))
    assert proc.returncode == 1 and "1 subject(s) in OLD, missing from NEW: n1" in proc.stdout


def test_diff_waiver_only_changes_and_noise():
    old = make_report()
    w = {"id": "MEM-01", "subject": "n2", "justification": "x", "approver": "y",
         "expires": "2099-01-01", "active": True}
    new = old.with_findings(
        tuple(
            replace(f, waiver=w) if f.rule == "MEM-01.ecc-disabled" and f.subject == "n2"
            else replace(f, waiver={**f.waiver, "active": False}) if f.waiver and f.waiver.get("active")
            else replace(f, value=391.7 + 3.8, observed="395.5 Gb/s") if f.item == "n1->n2"
            else f
            for f in old.findings
        )
        + (
            replace(old.findings[0], rule="ENER-01.gpu-energy-unreadable", requirement="ENER-01",
                    item="GPU0", observed="2000000 J", value=2000000.0, unit="J"),
        )
    )
    old = old.with_findings(
        (*old.findings, replace(old.findings[0], rule="ENER-01.gpu-energy-unreadable",
                                requirement="ENER-01", item="GPU0", observed="1000000 J",
                                value=1000000.0, unit="J"))
    )
    d = diff_reports(old, new)
    assert [(x["rule"], x.get("change")) for x in d.fixed] == [("MEM-01.ecc-disabled", "now waived")]
    assert [(x["rule"], x.get("change")) for x in d.new_failures] == [
        ("NET-01.fabric-port-slow", "waiver expired")
    ]
    assert d.counters_changed == 1 and not d.measurement_changes  # +3.8 of 391.7 is under 5%
    from validator.report.diffing import render_text

    text = render_text(d)
    assert "fail -> fail" not in text and "(waiver expired) fail" in text
    d2 = diff_reports(old, new, tolerance=0.0)
    (m,) = d2.measurement_changes
    assert m["delta"] == 3.8  # rounded, not 3.8000000000000114


def test_a_fixed_waived_failure_counts_as_fixed():
    """OLD: a fail under an active waiver; NEW: the same finding passes. The waiver hid it,
    the fix removed it: one fixed (0.2 said "0 fixed"). Waived in both: not fixed."""
    old = make_report()
    w = {"id": "MEM-01.ecc-disabled", "subject": "n2", "justification": "x", "approver": "y",
         "expires": "2099-01-01", "active": True}
    target = next(f for f in old.findings if f.rule == "MEM-01.ecc-disabled" and f.status is Status.FAIL)
    waived = old.with_findings(tuple(replace(f, waiver=w) if f is target else f for f in old.findings))
    passed = old.with_findings(tuple(replace(f, status=Status.PASS) if f is target else f for f in old.findings))
    d = diff_reports(waived, passed)
    assert [x["rule"] for x in d.fixed] == ["MEM-01.ecc-disabled"] and not d.new_failures
    assert d.fixed[0]["id"] == finding_id(target.rule, target.subject, target.item)
    assert diff_reports(waived, waived).fixed == []
