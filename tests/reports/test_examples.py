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
