"""Markdown and Prometheus renderers: golden snapshots, escaping, and a parse of the
exposition format (by a small parser here, so the tests need no prometheus_client)."""

from __future__ import annotations

import io
import re

import pytest

from tests.reports.conftest import HOSTILE, check_golden, make_report
from validator.renderers import available, get_renderer
from validator.renderers.markdown import cell


def render(fmt: str, report=None) -> str:
    buf = io.StringIO()
    get_renderer(fmt).render(report or make_report(), buf)
    return buf.getvalue()


def test_formats_are_registered():
    assert {"markdown", "html", "prometheus"} <= set(available())


def test_markdown_golden(request):
    check_golden(request, "report.md", render("markdown"))


def test_prometheus_golden(request):
    check_golden(request, "report.prom", render("prometheus"))


def test_markdown_summary_counts_and_details():
    text = render("markdown")
    assert text.startswith("### spec-check cluster: ❌ **Not conformant** to spec v1.0")
    assert "| 4 | 1 | 1 | 1 | 3 | 1 |" in text  # fail error warn skip pass waived
    assert "<details><summary>4 passed or skipped, by rule</summary>" in text
    assert "conf/ds\\_config.json:12" in text  # lint findings point at file:line
    assert "**expired**" in text and "| active |" in text


def test_markdown_escapes_hostile_cells():
    text = render("markdown")
    assert "<script>" not in text
    for line in text.splitlines():
        if line.startswith("| ⚠️"):
            # a pipe inside a cell would split it: every pipe in the row is a column border or escaped
            assert len(re.findall(r"(?<!\\)\|", line)) == 7
    assert cell("a|b\nc") == "a\\|b c"
    assert cell("<b>&") == "\\<b\\>&amp;"


def test_markdown_conformant_report():
    r = make_report()
    r = r.with_findings(tuple(f for f in r.findings if f.status.value in ("pass", "skip")))
    text = render("markdown", r)
    assert "✅ **Conformant**" in text and "#### Problems" not in text


# ---- Prometheus ------------------------------------------------------------------------------

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)')


def parse_exposition(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """A strict parser of the text format's subset we write: HELP/TYPE before samples,
    label values escaped (only \\\\, \\" and \\n), float values, one family per name."""
    families: dict[str, list[tuple[dict[str, str], float]]] = {}
    typed: dict[str, str] = {}
    helped: set[str] = set()
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert name not in helped, f"duplicate HELP for {name}"
            helped.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("gauge", "counter", "untyped") and name not in typed
            typed[name] = kind
            families[name] = []
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name, _, body, value = m.groups()
        assert name in typed and name in helped, f"{name} has no TYPE/HELP before it"
        labels: dict[str, str] = {}
        pos = 0
        while body and pos < len(body):
            lm = _LABEL.match(body, pos)
            assert lm, f"bad labels in {line!r} at {pos}"
            raw = lm.group(2)
            labels[lm.group(1)] = re.sub(
                r"\\(.)", lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), raw
            )
            pos = lm.end()
        families[name].append((labels, float(value)))
    return families


def test_prometheus_parses_and_has_the_gauges():
    fams = parse_exposition(render("prometheus"))
    req = {
        (lab["subject"], lab["requirement"]): (lab["level"], v)
        for lab, v in fams["spec_check_requirement_conformant"]
    }
    assert req[("n1", "NET-01")] == ("MUST", 1.0)
    assert req[("n2", "NET-01")] == ("MUST", 1.0)  # failed, but under an active waiver
    assert req[("n2", "MEM-01")] == ("MUST", 0.0)  # expired waiver, and a MUST error
    assert req[("n1", "PLAT-03")] == ("SHOULD", 1.0)  # a warn does not break conformance
    assert req[("fleet", "NET-01")] == ("MUST", 0.0)
    assert fams["spec_check_conformant"] == [({}, 0.0)]
    assert fams["spec_check_last_run_timestamp_seconds"] == [({}, 1795000000.0)]
    counts = {(lab["subject"], lab["status"]): v for lab, v in fams["spec_check_findings"]}
    assert counts[("n2", "fail")] == 2 and counts[("n1", "warn")] == 1
    assert {lab["subject"]: v for lab, v in fams["spec_check_findings_waived"]}["n2"] == 1


@pytest.mark.parametrize("name", ['n"2', "n\\2", "n\n2", HOSTILE])
def test_prometheus_escapes_label_values(name):
    r = make_report()
    from dataclasses import replace

    r = r.with_findings(
        tuple(replace(f, subject=name) if f.subject == "n2" else f for f in r.findings)
    )
    fams = parse_exposition(render("prometheus", r))
    subjects = {lab["subject"] for lab, _ in fams["spec_check_subject_conformant"]}
    assert name in subjects
