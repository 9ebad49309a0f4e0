"""docs/calibration.md: the per-rule counts under v1.0 and v1.1 come from
scripts/calibrate.py, whole and consistent; with SPEC_CHECK_CALIBRATION=1 they must equal a
fresh run (readers improve, so the table is rerun rather than frozen in CI)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import built

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "calibration.md"
sys.path.insert(0, str(ROOT / "scripts"))
import calibrate  # noqa: E402


def _table(text: str) -> str:
    return text.split(calibrate.BEGIN, 1)[1].split(calibrate.END, 1)[0]


def test_the_table_has_every_job_rule_of_both_packs_and_adds_up() -> None:
    table = _table(DOC.read_text())
    jobs = int(re.match(r"\s*(\d+) jobs", table).group(1))  # type: ignore[union-attr]
    rows = dict(re.findall(r"^\| `([^`]+)` \| (.+) \|$", table, re.M))
    for version in ("1.0", "1.1"):
        for r in built(rules_version=version).pack.rules:
            if r.scope == "job" and r.against is None:  # against: judged with --nodes/--run, not a corpus
                assert r.id in rows, f"{r.id} (v{version}) missing: run python scripts/calibrate.py --write"
    for rule, cells in rows.items():
        for cell in cells.split(" | "):
            if cell != "-":
                assert sum(int(n) for n in cell.split(" / ")) == jobs, (rule, cell)


@pytest.mark.skipif(not calibrate.default_corpora(), reason="no corpus here")
def test_the_script_runs_on_the_corpus() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "calibrate.py")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "| `REC-02.hang-detection-too-slow` | - |" in r.stdout
    if os.environ.get("SPEC_CHECK_CALIBRATION") == "1":
        assert r.stdout == _table(DOC.read_text()).lstrip("\n"), "run python scripts/calibrate.py --write"
