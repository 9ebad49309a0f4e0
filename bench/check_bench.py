"""Start-up and `spec-check check` wall time, against a baseline measured in the same run.

    python bench/check_bench.py [--runs 15]

Prints medians and ratios to `python3 -c "import psutil"` (the floor any Python tool that
probes a node pays). Aims: `check` under 0.5 s and `--help` under 0.2 s median on the CI
machine. Nothing here is asserted in tests: machines differ, ratios travel better.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def median_seconds(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    exe = shutil.which("spec-check", path=os.path.dirname(sys.executable)) or shutil.which("spec-check")
    tool = [exe] if exe else [sys.executable, "-m", "validator"]
    cases = {
        'python -c "import psutil" (baseline)': [sys.executable, "-c", "import psutil"],
        "spec-check --help": [*tool, "--help"],
        "spec-check check": [*tool, "check"],
        "spec-check check --format json": [*tool, "check", "--format", "json"],
    }
    median_seconds(cases["spec-check check"], 2)  # warm the page cache
    results = {name: median_seconds(cmd, args.runs) for name, cmd in cases.items()}
    base = next(iter(results.values()))
    print(f"{'command':<42} {'median':>9} {'vs baseline':>12}")
    for name, sec in results.items():
        print(f"{name:<42} {sec * 1000:>7.0f}ms {sec / base:>11.2f}x")
    print("\naims: check < 500 ms, --help < 200 ms (median, this machine)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (compare timings on a quiet machine)")


if __name__ == "__main__":
    main()
