"""The CI gate: reports/examples/ is what scripts/make_example_reports.py writes today.

If this fails after a change to rules, renderers or fixtures, regenerate the examples in
the same commit: ``python scripts/make_example_reports.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_examples_do_not_drift(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_example_reports.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    fresh = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {
        p.name: p.read_bytes()
        for p in (ROOT / "reports" / "examples").iterdir()
        if p.is_file() and not p.name.startswith(".")
    }
    assert fresh, "the script wrote nothing"
    assert sorted(fresh) == sorted(committed), (
        "examples added or removed: regenerate reports/examples/"
    )
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert not stale, (
        f"reports/examples/ drifted ({', '.join(stale)}): run scripts/make_example_reports.py"
    )


def test_examples_show_what_a_visitor_needs():
    html = (ROOT / "reports" / "examples" / "fleet.html").read_text(encoding="utf-8")
    assert "NOT CONFORMANT" in html and 'class="matrix"' in html and "<svg" in html
    assert "waiver expired" in html and "<strong>waived</strong>" in html
    md = (ROOT / "reports" / "examples" / "fleet.md").read_text(encoding="utf-8")
    assert md.startswith("### spec-check cluster")


def test_examples_index_says_what_is_recorded_and_what_is_synthesized():
    """Each claim of reports/examples/README.md about an example is checked against how it
    was made: the recorded node's facts are not written by the fixture generator (they came
    from `spec-check probe`), the DGX ones are; the counts and verdicts are the results'."""
    import json
    import re

    from tests.fixtures.make_facts import SCENARIOS
    from validator.renderers.scope import verdict_text
    from validator.report.results import load_result

    examples = ROOT / "reports" / "examples"
    index = (examples / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| ([a-z0-9-]+) \|.*$", index, re.M)
            if m.group(1) != "example"}
    assert "recorded" in rows["node-recorded"] and "synthesized" not in rows["node-recorded"]
    assert "recorded_vm" not in SCENARIOS  # not made by tests/fixtures/make_facts.py
    recorded = json.loads((ROOT / "tests" / "fixtures" / "facts" / "recorded_vm.json").read_text())
    assert recorded["subject"]["name"] == "vm" and recorded.get("tool_version")
    assert "synthesized" in rows["node-dgx-h100"] and "recorded" not in rows["node-dgx-h100"]
    assert "dgx_h100" in SCENARIOS
    assert "synthesized" in rows["fleet"] and "illustrative" in rows["fleet"]
    for stem, row in rows.items():
        _, report = load_result(examples / f"{stem}.json")
        assert verdict_text(report) in row, stem
        tiles = {k: 0 for k in ("fail", "error", "warn", "pass", "skip", "waived")}
        for f in report.findings:
            tiles["waived" if f.waived else f.status.value] += 1
        counts = " / ".join(str(tiles[k]) for k in ("fail", "error", "warn", "pass", "waived"))
        assert f"| {counts} |" in row, (stem, counts)
