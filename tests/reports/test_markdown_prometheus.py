"""Markdown and Prometheus renderers: golden snapshots, escaping, and a parse of the
exposition format (by a small parser here, so the tests need no prometheus_client)."""

from __future__ import annotations

import io
import re

import pytest

from tests.reports.conftest import HOSTILE, check_golden, make_report
from validator.renderers import available, get_renderer
from validator.renderers.markdown import cell
from validator.report.model import Status


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
    assert text.startswith("### spec-check cluster: ❌ **NOT CONFORMANT to spec v1.0** (node and job scope "
                           "evaluated: 3 of 4 requirements; REC-02: no findings)")
    assert "| 4 | 1 | 1 | 1 | 3 | 1 |" in text  # fail error warn skip pass waived
    assert "<details><summary>4 passed or skipped, by rule</summary>" in text
    assert "conf/ds\\_config.json:12" in text  # lint findings point at file:line
    assert "**expired**" in text and "| active |" in text


def test_markdown_escapes_hostile_cells():
    text = render("markdown")
    assert "<script>" not in text
    borders = 0
    for line in text.splitlines():
        # a pipe inside a cell would split it: every row has as many borders as its header
        if not line.startswith("|"):
            borders = 0
            continue
        n = len(re.findall(r"(?<!\\)\|", line))
        borders = borders or n
        assert n == borders, line
    assert cell("a|b\nc") == "a\\|b c"
    assert cell("<b>&") == "\\<b\\>&amp;"


def test_markdown_conformant_report():
    r = make_report()
    r = r.with_findings(tuple(f for f in r.findings if f.status.value in ("pass", "skip")))
    text = render("markdown", r)
    # conformant, but only for what the result covers (REC-02 has no findings)
    assert ("✅ **CONFORMANT for node scope** (2 of 4 requirements; not judged (only skips): PLAT-03; "
            "REC-02: no findings)") in text
    assert "#### Problems" not in text and "to spec v1.0**" not in text


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
    # the fleet's measured pair n2->n1 failed (196 Gb/s): both its ends fail NET-01
    assert req[("n1", "NET-01")] == ("MUST", 0.0)
    assert req[("n2", "NET-01")] == ("MUST", 0.0)
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


def test_pair_findings_count_for_both_hosts_and_waived_ports_do_not():
    from dataclasses import replace

    r = make_report()
    # drop the failing pair: n2's own port failure is waived, so n2 is conformant on NET-01
    findings = tuple(f for f in r.findings if f.item != "n2->n1")
    fams = parse_exposition(render("prometheus", r.with_findings(findings)))
    req = {(lab["subject"], lab["requirement"]): v for lab, v in fams["spec_check_requirement_conformant"]}
    assert req[("n1", "NET-01")] == 1.0 and req[("n2", "NET-01")] == 1.0
    subj = {lab["subject"]: v for lab, v in fams["spec_check_subject_conformant"]}
    assert subj["fleet"] == 1.0
    # a cluster-only requirement (PLAT-02) appears on the cluster's row only
    extra = replace(r.findings[0], rule="PLAT-02.mixed-drivers", requirement="PLAT-02",
                    subject="fleet", item=None, status=Status.FAIL)
    fams = parse_exposition(render("prometheus", r.with_findings((*findings, extra))))
    req = {(lab["subject"], lab["requirement"]): v for lab, v in fams["spec_check_requirement_conformant"]}
    assert req[("fleet", "PLAT-02")] == 0.0 and ("n1", "PLAT-02") not in req


def _many(n_hosts: int = 240):
    """A fleet whose problems are far over a PR comment's 65,536 characters."""
    from dataclasses import replace

    base = make_report()
    port = next(f for f in base.findings if f.status is Status.FAIL and f.item == "mlx5_0:1")
    findings = tuple(
        replace(port, subject=f"gpu-node-{h:04d}.cluster.example.com", item=f"mlx5_{p}:1", waiver=None,
                message="port rate below the fabric_port_rate parameter " * 2)
        for h in range(n_hosts)
        for p in range(9)
    )
    return base.with_findings(findings)


def test_markdown_is_capped_and_says_what_it_left_out():
    r = _many()
    text = render("markdown", r)
    assert len(text) <= 60_000
    assert "Shortened to fit a comment" in text and "folded by rule" in text
    folded = re.search(r"\| ❌ fail \| `NET-01.fabric-port-slow` \| (\d+) \| (\d+) \|", text)
    shown = text.count("| ❌ fail | `NET-01.fabric-port-slow` | gpu-node-")
    assert folded and shown + int(folded[1]) == len(r.findings)
    small = render("markdown")
    assert "Shortened" not in small


def test_markdown_code_spans_are_not_backslash_escaped():
    from dataclasses import replace

    r = make_report()
    r = replace(r, parameters={"fabric_port_rate": {"value": "200 Gb/s", "origin": "--set"}})
    text = render("markdown", r)
    assert "`fabric_port_rate`" in text and "fabric\\_port\\_rate" not in text
    assert "`NET-01.fabric-port-slow`" in text
    from validator.renderers.markdown import code

    assert code("a|b`c\nd") == "`a\\|b'c d`"


def test_markdown_verdict_names_a_non_default_profile_and_fleet_summary():
    from dataclasses import replace

    r = make_report()
    r = replace(
        r,
        parameters={"fabric_port_rate": {"value": "200 Gb/s", "origin": "--set"}},
        extra={"fleet": {"hosts": 3, "probed": 2, "failed": {"n3": "ssh: timed out"},
                         "pairs": {"measured": 2, "rounds": 2, "throughput_min_gbps": 196.2,
                                   "throughput_max_gbps": 391.7}}},
    )
    first = render("markdown", r).splitlines()[0]
    assert "under a non-default profile (`fabric_port_rate` = 200 Gb/s (--set))" in first
    text = render("markdown", r)
    assert "2 of 3 hosts probed, 1 could not be probed (n3: ssh: timed out)" in text
    assert "throughput 196.2 to 391.7 Gb/s" in text
    assert "4 fail, 1 error, 1 warn (1 waived)" in text


def test_remediation_code_spans_stay_code_in_markdown() -> None:
    """A fix's commands render as code on GitHub, not as escaped backticks; the rest of the
    text is still escaped, and an unpaired backtick stays literal text."""
    from validator.renderers.markdown import prose

    fix = "Set `* - memlock unlimited` in limits.conf, or `--ulimit memlock=-1` for <containers>"
    assert prose(fix) == "Set `* - memlock unlimited` in limits.conf, or `--ulimit memlock=-1` for \\<containers\\>"
    assert prose("use `a|b` now") == "use `a\\|b` now"  # a pipe would split the table cell
    assert prose("one ` tick") == "one \\` tick"
