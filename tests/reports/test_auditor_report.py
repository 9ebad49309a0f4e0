"""A report an auditor reads (issue 35, deliverable 7): each node's facts collection time,
age and file up front; passes folded by rule (``--show folded``, the HTML default) unless
``--show passes``; the page names which thresholds are spec-check's own choice and says
the requirement wording is spec-check's; an 8-node fleet prints in a few pages."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from tests.reports.conftest import _f, make_report
from tests.reports.test_html import _pdf_pages, chromium, needs_chromium, render
from validator.renderers.auditor import age, age_text, fold_passes
from validator.report.model import Status, Subject

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "v1.0" / "requirements.yaml"
FACTS = ROOT / "tests" / "fixtures" / "facts"


def _section(html: str, anchor: str) -> str:
    start = html.index(f'<h2 id="{anchor}"')
    end = html.find("<h2 ", start + 1)
    return html[start:] if end < 0 else html[start:end]


# ---- facts age up front ----------------------------------------------------------------------


def test_age_is_the_results_time_minus_the_collection_time() -> None:
    assert age("2026-11-20T12:00:00Z", "2026-11-17T09:30:00Z") == timedelta(days=3, hours=2, minutes=30)
    assert age_text(age("2026-11-20T12:00:00Z", "2026-11-17T09:30:00Z")) == "3 d 2 h"
    assert age_text(timedelta(hours=5, minutes=59)) == "5 h"
    assert age_text(timedelta(minutes=12)) == "12 min"
    assert age_text(age("2026-11-20T12:00:00Z", "2027-06-01T00:00:00Z")) == \
        "in the future: dated 192 d 12 h after the result"
    assert age("2026-11-20T12:00:00Z", None) is None and age("not a time", "2026-11-20T12:00:00Z") is None
    assert age_text(None).startswith("unknown")


def test_each_nodes_collection_time_age_and_file_come_first() -> None:
    base = make_report()
    subjects = (
        Subject("n1", "node", "sha256:" + "11" * 32, "2026-11-15T08:06:40Z", "replay:facts/n1.json"),
        Subject("n2", "node", "sha256:" + "22" * 32, "2027-06-01T00:00:00Z", "replay:facts/n2.json"),
        Subject("n3", "node", None, None, None),
        *[s for s in base.subjects if s.kind != "node"],
    )
    html = render(replace(base, subjects=subjects))
    facts = _section(html, "facts")
    # the first table after the verdict: before what to fix and the findings
    assert html.index('id="facts"') < html.index('id="to-fix"') < html.index('id="findings"')
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr><th scope="row"><a [^>]*>([^<]+)</a>.*?</tr>', facts)}
    assert set(rows) == {"n1", "n2", "n3"}  # nodes; not the cluster, not a job without facts
    assert "2026-11-15T08:06:40Z" in rows["n1"] and ">3 d 3 h<" in rows["n1"] and "facts/n1.json" in rows["n1"]
    assert "in the future" in rows["n2"] and 'class="age future"' in rows["n2"]
    assert "unknown (no collection time)" in rows["n3"] and "not recorded" in rows["n3"]


# ---- passes folded -----------------------------------------------------------------------------


def _fleet_passes():
    base = make_report()
    passes = tuple(
        _f("NET-01.fabric-port-slow", Status.PASS, f"n{n}", item=f"mlx5_{p}:1", observed=f"{rate} Gb/s",
           value=rate, unit="Gb/s", expected="at least 400 Gb/s")
        for n, rate in ((1, 400), (2, 800), (3, 400)) for p in range(4)
    )
    return base.with_findings(base.findings + passes)


def test_passes_fold_to_one_row_per_rule_with_subjects_and_range() -> None:
    folds = {f.rule: f for f in fold_passes(_fleet_passes().findings)}
    net = folds["NET-01.fabric-port-slow"]
    assert (net.subject_count, net.verdicts, net.values()) == (3, 13, "400–800 Gb/s")  # noqa: RUF001
    html = render(_fleet_passes())
    passes = _section(html, "passes")
    row = re.search(r"<tr><th scope=\"row\"><code class=\"id\">NET-01.fabric-port-slow</code>.*?</tr>", passes)
    assert row and "<td>3</td><td>13</td>" in row.group(0) and "400–800 Gb/s" in row.group(0)  # noqa: RUF001
    # not also listed one by one on each node
    assert "mlx5_3:1" not in _section(html, "findings")


def test_show_passes_lists_each_pass_on_its_node() -> None:
    html = render(_fleet_passes(), show_passes=True)
    assert 'id="passes"' not in html
    assert html.count("mlx5_3:1") == 3  # n1, n2, n3 each list their port 3


def test_folded_skips_and_problem_rows_keep_their_evidence() -> None:
    html = render(_fleet_passes())
    findings = _section(html, "findings")
    assert "fix: see What to fix" in findings or "<strong>Fix:</strong>" in findings
    assert "Remediation" not in findings  # each fix is said once, under What to fix
    assert "Remediation" in _section(render(_fleet_passes(), show_passes=True), "findings")


def test_report_accepts_show_folded_and_show_passes(tmp_path: Path) -> None:
    from validator.renderers.json_ import JsonRenderer

    result = tmp_path / "r.json"
    with result.open("w", encoding="utf-8") as fh:
        JsonRenderer().render(_fleet_passes(), fh)
    out = {}
    for show in ("folded", "passes"):
        page = tmp_path / f"{show}.html"
        proc = subprocess.run([sys.executable, "-m", "validator", "report", str(result), "--format", "html",
                               "--show", show, "-o", str(page)], capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        out[show] = page.read_text(encoding="utf-8")
    assert 'id="passes"' in out["folded"] and 'id="passes"' not in out["passes"]
    bad = subprocess.run([sys.executable, "-m", "validator", "report", str(result), "--show", "everything"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ---- whose reading -----------------------------------------------------------------------------


def _spec_params() -> dict[str, dict]:
    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))["parameters"]


def test_every_parameter_says_whose_figure_it_is() -> None:
    params = _spec_params()
    assert {p.get("reading") for p in params.values()} <= {"spec", "published", "spec-check", "per-run"}
    assert all("reading" in p for p in params.values()), [n for n, p in params.items() if "reading" not in p]
    for name, p in params.items():
        source = " ".join(p["source"].split())
        # a source that says the value is spec-check's own is marked so, and the other way
        if "spec-check choice" in source or ("(spec-check default)" in source and "no published figure" in source):
            assert p["reading"] == "spec-check", name
        if p["default"] in (None, []):
            assert p["reading"] == "per-run", name
        if source.startswith("The spec's"):
            assert p["reading"] == "spec", name


def test_the_page_lists_exactly_spec_checks_own_thresholds() -> None:
    own = sorted(n for n, p in _spec_params().items() if p["reading"] == "spec-check")
    assert len(own) >= 6  # the six the issue counted, whose source says "A spec-check choice"
    html = render(make_report(parameters={n: {"value": "x", "origin": "default"} for n in _spec_params()}))
    para = re.search(r'<p class="reading small">.*?</p>', html, re.S)
    assert para, "no reading paragraph"
    listed = re.findall(r'<code class="id own-reading">([^<]+)</code>', para.group(0))
    assert listed == own
    assert f"{len(own)} of the {len(_spec_params())} thresholds" in para.group(0)
    assert "spec-check&#x27;s words from the public descriptions" in para.group(0) or \
        "spec-check's words from the public descriptions" in para.group(0)
    # one a profile replaced is the provider's figure, named apart
    changed = {n: {"value": "x", "origin": "default"} for n in _spec_params()}
    changed[own[0]] = {"value": "x", "origin": "profile:p.yaml", "default": "y"}
    para = re.search(r'<p class="reading small">.*?</p>', render(make_report(parameters=changed)), re.S)
    assert para and own[0] not in re.findall(r'own-reading">([^<]+)<', para.group(0))
    assert "instead of spec-check" in para.group(0) and own[0] in para.group(0)


# ---- 8 nodes in a few printed pages -----------------------------------------------------------


@needs_chromium
def test_an_8_node_fleet_prints_in_a_few_pages(tmp_path: Path) -> None:
    files = sorted(FACTS.glob("dgx_h100*.json"))[:8]
    assert len(files) == 8
    result = tmp_path / "r.json"
    args = [a for f in files for a in ("--facts", str(f))]
    proc = subprocess.run([sys.executable, "-m", "validator", "cluster", *args, "--format", "json", "-o", str(result)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and result.exists(), proc.stderr  # the fixtures hold failing nodes
    counts = {}
    for show in ((), ("--show", "passes")):
        page = tmp_path / f"r{len(show)}.html"
        subprocess.run([sys.executable, "-m", "validator", "report", str(result), "--format", "html", *show,
                        "-o", str(page)], capture_output=True, text=True, timeout=300, check=False)
        text = page.read_text(encoding="utf-8")
        if not show:  # each node's facts file named up front
            assert all(f.name in _section(text, "facts") for f in files)
        pdf = tmp_path / f"r{len(show)}.pdf"
        out = chromium(tmp_path, page, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
        assert out.returncode == 0 and pdf.exists(), out.stderr[-2000:]
        counts[show] = _pdf_pages(pdf)
    # measured: 9 pages folded, 340 listed one by one (339 before folding existed)
    assert counts[()] <= 12 and counts[("--show", "passes")] > 20 * counts[()], counts


@pytest.mark.parametrize("fmt", ["terminal", "markdown"])
def test_the_other_renderers_take_show_folded(fmt: str) -> None:
    import io

    from validator.renderers import get_renderer

    buf = io.StringIO()
    get_renderer(fmt, show_folded=True).render(_fleet_passes(), buf)
    line = next(ln for ln in buf.getvalue().splitlines() if "NET-01.fabric-port-slow" in ln and "400–800" in ln)  # noqa: RUF001
    assert ("13 on 3 subjects" if fmt == "terminal" else "| 3 | 13 |") in line
    plain = io.StringIO()
    get_renderer(fmt).render(_fleet_passes(), plain)
    assert "folded by rule" not in plain.getvalue()  # the default stays as it was


def test_a_large_fleets_facts_table_stays_short_and_paths_stay_relative(tmp_path: Path, monkeypatch) -> None:
    from validator.renderers.html_ import FACTS_ROWS

    monkeypatch.chdir(tmp_path)
    base = make_report()
    nodes = tuple(Subject(f"n{i:03d}", "node", None, f"2026-11-{1 + i % 15:02d}T00:00:00Z",
                          f"replay:{tmp_path}/facts/n{i:03d}.json") for i in range(FACTS_ROWS + 6))
    facts = _section(render(replace(base, subjects=nodes)), "facts")
    assert facts.count('<tr><th scope="row">') == FACTS_ROWS
    assert f"{FACTS_ROWS + 6:,} nodes; facts ages from 3 d 11 h to 17 d 11 h" in facts
    assert "replay:facts/n000.json" in facts and str(tmp_path) not in facts


def test_terminal_and_markdown_give_each_nodes_facts_age() -> None:
    import io

    from validator.renderers import get_renderer

    report = make_report()  # generated 2026-11-18T11:06:40Z, nodes collected at 10:00
    term, md = io.StringIO(), io.StringIO()
    get_renderer("terminal", width=200).render(report, term)
    get_renderer("markdown").render(report, md)
    assert re.search(r"^FAIL +n2: .*\(facts 1 h old\)$", term.getvalue(), re.M), term.getvalue()
    assert re.search(r"^\| ❌ fail \| n2 \| .* \| 1 h \|$", md.getvalue(), re.M), md.getvalue()
