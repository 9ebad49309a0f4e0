"""The verdict names a non-default profile; the chart keeps the spec's 400 Gb/s line; the
host matrix counts measured pairs for both hosts and has the cluster's row and columns;
the fleet summary is in every human format."""

from __future__ import annotations

import io
import re
from dataclasses import replace

from tests.reports.conftest import make_report
from validator.renderers.html_ import HtmlRenderer
from validator.renderers.terminal import TerminalRenderer
from validator.report.model import Status

FLEET = {
    "fleet": {
        "hosts": 3,
        "probed": 2,
        "failed": {"n3": "ssh: connect timed out"},
        "interrupted": False,
        "pairs": {"measured": 2, "rounds": 2, "throughput_min_gbps": 196.2, "throughput_max_gbps": 391.7},
    }
}


def html(report) -> str:
    buf = io.StringIO()
    HtmlRenderer().render(report, buf)
    return buf.getvalue()


def terminal(report) -> str:
    buf = io.StringIO()
    TerminalRenderer(width=200).render(report, buf)
    return buf.getvalue()


def relaxed(**kw):
    return make_report(
        parameters={
            "fabric_port_rate": {"value": "200 Gb/s", "origin": "--set"},
            "measured_efficiency": {"value": "0.95", "origin": "default"},
        },
        **kw,
    )


def test_chart_keeps_the_spec_line_under_a_relaxed_threshold():
    page = html(relaxed())
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "spec 400 Gb/s" in svg and "this run 200 Gb/s" in svg and "pass ≥ 190" in svg
    assert "against the spec's 400 Gb/s line; this run's threshold is 200 Gb/s" in page


def test_default_run_draws_one_spec_line():
    page = html(make_report(parameters={"fabric_port_rate": {"value": "400 Gb/s", "origin": "default"}}))
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "spec 400 Gb/s" in svg and "this run" not in svg


def test_verdict_names_the_non_default_profile_everywhere():
    r = relaxed()
    assert "under a non-default profile (fabric_port_rate = 200 Gb/s (--set))" in html(r)
    assert "under a non-default profile (fabric_port_rate = 200 Gb/s (--set))" in terminal(r)
    plain = make_report(parameters={"fabric_port_rate": {"value": "400 Gb/s", "origin": "default"}})
    assert "non-default profile" not in html(plain) and "non-default profile" not in terminal(plain)


def test_banner_counts_failing_apart_from_waived():
    page = html(make_report())
    # 4 fails (one under an active waiver, three that count) and a MUST error, which counts
    # against conformance like a fail (unknown is never pass)
    # the banner and the tiles count the same: 3 fails outside the waiver, the waived one apart
    assert "3 fail, 1 could not be checked, 1 warn; 1 waived, counted apart" in page
    tiles = re.findall(r'<div class="count"><span class="st (\w+)">[^<]*</span><b>(\d+)</b>', page)
    assert dict(tiles) == {"fail": "3", "error": "1", "warn": "1", "skip": "1", "pass": "3", "waived": "1"}


def test_matrix_attributes_pairs_and_has_the_cluster_row():
    r = make_report()
    extra = replace(
        r.findings[0], rule="PLAT-02.mixed-drivers", requirement="PLAT-02", subject="fleet",
        item=None, status=Status.FAIL, waiver=None,
    )
    page = html(r.with_findings((*r.findings, extra)))
    table = page[page.index('class="matrix"') :]
    table = table[: table.index("</table>")]
    heads = re.findall(r'<th scope="col">([^<]*)</th>', table)
    assert heads[0] == "Host" and "PLAT-02" in heads and "NET-01" in heads
    rows = {m[0]: m[1] for m in re.findall(r'<tr><th scope="row"><a [^>]*>([^<]*)</a>.*?</th>(.*?)</tr>', table)}
    assert set(rows) == {"n1", "n2", "fleet"}
    col = heads.index("NET-01") - 1
    cells = {h: re.findall(r'class="st (\w+)"', row) for h, row in rows.items()}
    assert cells["n1"][col] == "fail"  # n1 passes its own port but is an end of n2->n1 (196 Gb/s)
    assert cells["fleet"][heads.index("PLAT-02") - 1] == "fail"
    assert cells["n1"][heads.index("PLAT-02") - 1] == "none"


def test_waived_pair_is_marked_in_the_chart():
    r = make_report()
    w = {"id": "NET-01", "subject": "n2", "justification": "x", "approver": "y", "expires": "2099-01-01",
         "active": True}
    findings = tuple(replace(f, waiver=w) if f.item == "n2->n1" else f for f in r.findings)
    svg = html(r.with_findings(findings))
    svg = svg[svg.index("<svg") : svg.index("</svg>")]
    assert "n2 → n1 (waived)" in svg and "#1565c0" in svg


def test_fleet_summary_in_terminal_and_html():
    r = make_report(extra=FLEET)
    for text in (terminal(r), html(r)):
        assert "2 of 3 hosts probed, 1 could not be probed (n3: ssh: connect timed out)" in text
        assert "2 pairs measured in 2 rounds, throughput 196.2 to 391.7 Gb/s" in text
    assert "hosts probed" not in terminal(make_report())


def test_job_inputs_are_not_called_a_relaxed_profile():
    """--set step_time (a parameter the spec leaves unset) is an input about the job; a
    changed threshold is a non-default profile and names the spec's default."""
    from validator.renderers.coverage import profile_note

    inputs = make_report(parameters={"step_time": {"value": "2", "origin": "--set", "default": "unset"}})
    assert profile_note(inputs) == "with job inputs (step_time = 2 (--set))"
    both = make_report(parameters={
        "step_time": {"value": "2", "origin": "--set", "default": "unset"},
        "fabric_port_rate": {"value": "200 Gb/s", "origin": "--set", "default": "400 Gb/s"},
    })
    assert profile_note(both) == ("under a non-default profile (fabric_port_rate = 200 Gb/s (--set; spec default "
                                  "400 Gb/s)) with job inputs (step_time = 2 (--set))")
