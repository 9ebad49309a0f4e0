"""One node with N GPU items that carry no fields (issue 24: a 50 KB facts file with 1,000
such items took 60 s and 250 MB for the terminal report, 0.8 s for JSON): the terminal
report against the JSON report of the same facts, side by side, each as a user runs it
(``spec-check check --facts F``, the CLI in a fresh process, measured in the same run).
The issue's bound: the terminal report within 3x the JSON report's time.

    python bench/long_table_bench.py [--gpus 1000] [--gpus 4000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"


def facts_with_empty_gpus(n: int, out: Path) -> Path:
    doc = json.loads(FACTS.read_text())
    doc["facts"]["gpu.devices"] = {"items": [{"id": f"g{i}", "fields": {}} for i in range(n)], "source": "nvml"}
    out.write_text(json.dumps(doc))
    return out


def run(facts: Path, fmt: str, out: Path) -> tuple[float, float]:
    """(wall seconds, peak MiB of the child) of ``check --facts FACTS --format FMT -o OUT``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(facts), "--format", fmt,
                        "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"spec-check check failed: {r.stderr.strip()[:400]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, action="append", help="GPU items (repeatable; default 1000)")
    args = ap.parse_args()
    print(f"{'GPU items':>9} {'facts KB':>8} {'findings':>8} {'json s':>7} {'terminal s':>10} "
          f"{'ratio':>6} {'terminal MiB':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.gpus or [1000]:
            facts = facts_with_empty_gpus(n, Path(tmp) / f"gpus{n}.json")
            j, _ = run(facts, "json", Path(tmp) / "r.json")
            t, mib = run(facts, "terminal", Path(tmp) / "r.txt")
            findings = len(json.loads((Path(tmp) / "r.json").read_text())["findings"])
            print(f"{n:>9} {facts.stat().st_size / 1024:>8.0f} {findings:>8} {j:>7.2f} {t:>10.2f} "
                  f"{t / j:>5.1f}x {mib:>12.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
