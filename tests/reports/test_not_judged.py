"""Issue 30: no output counts a requirement whose findings are all skips as evaluated or
conformant. It is "not judged", listed in the verdict line; a MUST not judged makes the
verdict INCOMPLETE (exit 1); "covers every requirement" is said only when true; an
``--ignore``d rule is named in the verdict; every skip shows its reason; the counts in a
heading are the table's."""

from __future__ import annotations

import io
import json
import re

from tests.reports.conftest import _f
from validator.api.outcome import exit_code
from validator.renderers import get_renderer
from validator.renderers.scope import scope_of, verdict_text
from validator.report.model import Report, RequirementDoc, RuleDoc, Status, Subject

NO_GPU = "applies only where GPUs seen by the driver >= 1 (observed 0)"


def _report(findings: tuple, **changes: object) -> Report:
    rules = sorted({f.rule for f in findings})
    base: dict = dict(
        command="check", spec_version="1.0", tool_version="0.3.0", rule_pack={"id": "v1.1", "digest": "sha256:" + "ab" * 32},
        generated_at="2026-12-01T10:00:00Z", parameters={},
        subjects=(Subject("cpu-host", "node"),),
        findings=findings,
        rules=tuple(RuleDoc(r, r.split(".")[0], r.split(".")[1], "MUST", "node", f"summary {r}", "why", "fix")
                    for r in rules),
        requirements=(RequirementDoc("MEM-01", "MUST", "GPU ECC enabled", "ECC on"),
                      RequirementDoc("MEM-02", "MUST", "memlock", "unlimited"),
                      RequirementDoc("PLAT-03", "SHOULD", "Persistence mode", "persistence on")),
    )
    base.update(changes)
    return Report(**base)


def gpuless() -> Report:
    return _report((
        _f("MEM-01.ecc-disabled", Status.SKIP, "cpu-host", message=NO_GPU),
        _f("MEM-01.amd-uncorrectable-error-event", Status.SKIP, "cpu-host", message=NO_GPU),
        _f("MEM-02.memlock-limited", Status.PASS, "cpu-host", observed="unlimited"),
        _f("PLAT-03.persistence-off", Status.SKIP, "cpu-host", message=NO_GPU),
    ), selection={"select": [], "ignore": ["ENER-01"]})


def judged() -> Report:
    return _report((
        _f("MEM-01.ecc-disabled", Status.PASS, "gpu-host", observed="true"),
        _f("MEM-01.amd-uncorrectable-error-event", Status.SKIP, "gpu-host", message="applies only where GPU vendor != nvidia"),
        _f("MEM-02.memlock-limited", Status.PASS, "gpu-host", observed="unlimited"),
        _f("PLAT-03.persistence-off", Status.PASS, "gpu-host", observed="on"),
    ), subjects=(Subject("gpu-host", "node"),))


def _render(report: Report, fmt: str) -> str:
    buf = io.StringIO()
    get_renderer(fmt).render(report, buf)
    return buf.getvalue()


def test_a_must_with_only_skips_is_not_judged_and_the_verdict_is_incomplete() -> None:
    r = gpuless()
    s = r.summary
    assert not s.conformant and s.not_judged == ("MEM-01",) and s.incomplete
    assert exit_code(r, "fail") == 1
    sc = scope_of(r)
    assert sc.evaluated == ("MEM-02",) and sc.not_judged == ("MEM-01", "PLAT-03") and not sc.complete
    text = verdict_text(r)
    assert text.startswith("INCOMPLETE for node scope (1 of 3 requirements"), text
    assert "not judged (only skips): MEM-01 (MUST), PLAT-03" in text
    assert "--ignore ENER-01" in text


def test_a_fully_judged_result_claims_the_spec_and_an_ignore_is_named() -> None:
    r = judged()
    assert r.summary.conformant and exit_code(r, "fail") == 0
    assert verdict_text(r) == "CONFORMANT to spec v1.0"
    assert "every scope and requirement of the spec" in _render(r, "html")
    ignored = _report(r.findings, subjects=r.subjects, selection={"select": [], "ignore": ["ENER-01"]})
    text = verdict_text(ignored)
    assert text.startswith("CONFORMANT for node scope (") and "--ignore ENER-01" in text, text
    assert "every scope and requirement of the spec" not in _render(ignored, "html")


def test_json_summary_lists_what_was_not_judged() -> None:
    doc = json.loads(_render(gpuless(), "json"))
    s = doc["summary"]
    assert s["conformant"] is False and s["not_judged"] == ["MEM-01"]
    assert s["verdict"].startswith("INCOMPLETE")
    assert s["coverage"]["requirements_evaluated"] == ["MEM-02"]
    assert s["coverage"]["requirements_not_judged"] == ["MEM-01", "PLAT-03"]
    assert s["coverage"]["ignored"] == ["ENER-01"] and s["coverage"]["complete"] is False


def test_prometheus_never_exports_conformant_for_a_requirement_not_judged() -> None:
    text = _render(gpuless(), "prometheus")
    assert not re.search(r'spec_check_requirement_conformant\{[^}]*requirement="MEM-01"[^}]*\} 1', text), text
    assert not re.search(r'spec_check_requirement_conformant\{[^}]*requirement="PLAT-03"[^}]*\} 1', text)
    assert re.search(r'spec_check_requirement_not_judged\{[^}]*requirement="MEM-01"[^}]*\} 1', text)
    assert not re.search(r'spec_check_requirement_not_judged\{[^}]*requirement="MEM-02"', text)
    assert re.search(r'spec_check_requirement_conformant\{[^}]*requirement="MEM-02"[^}]*\} 1', text)
    assert 'spec_check_subject_conformant{subject="cpu-host"} 0' in text
    assert "spec_check_requirements_evaluated 1" in text
    assert "spec_check_conformant 0" in text


def test_html_does_not_claim_coverage_and_names_what_was_not_judged() -> None:
    html = _render(gpuless(), "html")
    assert "every scope and requirement of the spec" not in html
    assert "INCOMPLETE" in html and "not judged" in html
    assert NO_GPU.replace(">", "&gt;") in html


def test_markdown_counts_a_skipped_requirement_as_not_judged_and_shows_skip_reasons() -> None:
    md = _render(gpuless(), "markdown")
    assert "INCOMPLETE" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| MEM-01 |"))
    assert "1/1" not in row and "not judged" in row, row
    assert NO_GPU.replace(">", "\\>") in md or NO_GPU.replace(">", "&gt;") in md, md


def test_markdown_heading_counts_are_the_tables() -> None:
    """A node with SHOULD errors: the heading said "N failing" (fails plus MUST errors) under a
    table that says another number of errors."""
    findings = tuple(
        _f("MEM-01.row-remap-failed", Status.ERROR, "big", item=f"GPU{i}", message="could not be read")
        for i in range(3)) + tuple(
        _f("PLAT-03.persistence-off", Status.ERROR, "big", item=f"GPU{i}", message="could not be read")
        for i in range(5)) + (_f("MEM-02.memlock-limited", Status.PASS, "big", observed="unlimited"),)
    md = _render(_report(findings, subjects=(Subject("big", "node"),)), "markdown")
    lines = md.splitlines()
    counts_line = lines[2]
    header = next(i for i, ln in enumerate(lines) if ln.startswith("| ❌ fail"))
    cols = [c.strip() for c in lines[header].strip("|").split("|")]
    vals = [c.strip() for c in lines[header + 2].strip("|").split("|")]
    table = dict(zip(cols, vals, strict=True))
    assert table["⛔ error"] == "8" and table["❌ fail"] == "0"
    assert "8 error" in counts_line and "0 fail" in counts_line, counts_line
    assert "failing" not in counts_line


def test_terminal_says_incomplete_and_every_skip_has_its_reason() -> None:
    text = _render(gpuless(), "terminal")
    last = text.strip().splitlines()[-1]
    assert last.startswith("INCOMPLETE"), last
    assert "observed 0" in text


def test_a_quiet_lint_says_why_each_must_was_not_judged() -> None:
    """A lint hides passes and skips by default; a MUST left INCOMPLETE still shows the reason
    each of its rules skipped, so the user knows what evidence to give."""
    r = _report((
        _f("CKPT-02.interval-far-from-optimum", Status.SKIP, "job.yaml",
           message="cannot work out Daly's optimum: the time per step is unknown: pass --set step_time=SECONDS"),
        _f("MEM-02.memlock-limited", Status.PASS, "job.yaml", observed="unlimited"),
    ), command="lint", subjects=(Subject("job.yaml", "job"),))
    text = _render(r, "terminal")
    assert "Not judged" in text and "pass --set step_time=SECONDS" in text and "CKPT-02" in text, text
    assert text.strip().splitlines()[-1].startswith("INCOMPLETE")


def test_a_subject_with_a_must_not_judged_is_never_shown_clean() -> None:
    """A fleet view lists each subject with an outcome: a host whose MUST requirement got only
    skips is "not judged" there (HTML badge, Markdown and terminal subject lines), never a
    pass among the subjects "without problems"."""
    from dataclasses import replace

    from validator.renderers.coverage import subject_outcome
    from validator.renderers.problems import subject_lines

    cpu = gpuless()
    gpu = judged()
    both = replace(cpu, subjects=(*cpu.subjects, *gpu.subjects), findings=(*cpu.findings, *gpu.findings))
    assert subject_outcome(list(cpu.findings)) == "not judged"
    assert subject_outcome(list(gpu.findings)) == "pass"
    lines = {ln.name: ln for ln in subject_lines(both)}
    assert lines["cpu-host"].outcome == "not judged" and lines["cpu-host"].bad
    assert lines["gpu-host"].outcome == "pass" and not lines["gpu-host"].bad
    html = _render(both, "html")
    assert '<span class="st not judged">not judged</span>' in html
    md = _render(both, "markdown")
    assert "❔ not judged | cpu-host" in md
    term = _render(both, "terminal")
    assert "NOT JUDGED cpu-host" in term
