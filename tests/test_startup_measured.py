"""docs/startup.md's table of start-up times on a real H200 says exactly what the recorded
files say (tests/fixtures/h200_health/MANIFEST.md); no time is asserted against a limit."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REC = ROOT / "tests" / "fixtures" / "h200_health"
DOC = (ROOT / "docs" / "startup.md").read_text()

ROWS = {  # the doc's row -> the command as the bench script names it
    "`spec-check check`": "spec-check check",
    "`spec-check check --format json`": "spec-check check --format json",
    "`spec-check probe -o FILE`": "spec-check probe -o FILE",
    "`nvidia-smi -q`": "nvidia-smi -q",
    '`python -c "import psutil"`': 'python -c "import psutil"',
}


def recorded(name: str) -> dict[str, str]:
    text = (REC / name).read_text()
    got = {cmd: re.search(rf"^'{re.escape(cmd)}': rc=\d+ .*med=([\d.]+) ", text, re.M).group(1) + " s"
           for cmd in ROWS.values()}
    got["ratio"] = re.search(r"^spec-check check\s+/ import psutil\s+[\d.]+x\s+/ nvidia-smi -q\s+([\d.]+x)$",
                             text, re.M).group(1)
    got["cold"] = re.search(r"^cold check .*: ([\d.]+) s, rc=1$", text, re.M).group(1) + " s"
    assert "NVIDIA H200" in text and "16 CPUs" in text
    return got


def doc_table() -> dict[str, tuple[str, str]]:
    section = DOC[DOC.index("## Measured on a real GPU node"):]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and not set(cells[1]) <= set("-"):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def test_the_doc_table_is_the_recorded_medians():
    table = doc_table()
    fast, base = recorded("startup_timing.txt"), recorded("startup_timing_main.txt")
    for row, cmd in ROWS.items():
        assert table[row] == (fast[cmd], base[cmd]), row
    assert table["`check` / `nvidia-smi -q`"] == (fast["ratio"], base["ratio"]) == ("2.14x", "2.77x")
    assert table["cold `check` (compiles into an empty cache)"] == (fast["cold"], base["cold"])


def test_the_doc_names_the_machine_and_the_earlier_figure_as_recorded():
    env = (REC / "env.txt").read_text()
    assert "NVIDIA H200, 580.159.04" in env and "Python 3.12.3" in env
    assert "2026-11-27" in DOC and "NVIDIA H200 (driver 580.159.04)" in DOC and "Python 3.12.3" in DOC
    before = re.search(r"before: ([\d.]+) / ([\d.]+) = ([\d.]+x)", (REC / "startup_timing.txt").read_text())
    assert f"{before.group(3)} on that kind\nof node earlier the same day ({before.group(1)} s against {before.group(2)} s)" in DOC
