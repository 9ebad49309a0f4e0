"""Start-up of the verbs a node or CI runs most, side by side with their peers, as ratios.

    python bench/start_bench.py [--runs 15] [--stat median|min] [--file CONFIG] [--before CHECKOUT]

Each command is a fresh process, as a user runs it; the commands are run round-robin (one
of each, then again) so that a busy machine slows them alike, and the medians of wall
time and of CPU time (user + system, from the kernel's child accounting: less sensitive
to other load than wall time) are printed with their ratio to the peer and the aim
(``--stat min``: the minimum of the runs instead, on a machine others are busy on: the
run least slowed by them):

* ``spec-check check`` (terminal and JSON) against ``python -c "import psutil"`` in the
  same interpreter, the floor of any Python tool that probes a node: aim at most 3x
  (a ``check`` of this node imports no psutil on Linux: validator/facts/node/host.py);
* ``spec-check --help`` against the same: aim at most 2.5x;
* ``spec-check lint FILE`` of one file against ``check-jsonschema --schemafile {} FILE``
  (which only parses the file): aim at most 0.5x. Needs ``pip install check-jsonschema``.

``--before CHECKOUT`` also times another checkout's ``check`` and ``lint`` (e.g. main's)
in the same rounds, so a change is measured against its baseline under the same load.

Each command runs once before timing, so that every module's bytecode is written (as pip
does on install; PYTHONDONTWRITEBYTECODE is dropped for the children) and the page cache is
warm; the bundled rule pack comes compiled (validator/rules/bundled.json). Nothing is
asserted (tests never assert times; machines differ, ratios travel better).
tests/test_startup.py checks what can be checked without a clock: which modules each of
these verbs imports.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = next((p for p in (ROOT.parent / "shared" / "corpus", Path("/work/shared/corpus")) if p.is_dir()), None)


# as installed: pip writes each module's bytecode, so the children may write theirs (a shell
# with PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module of a checkout on every
# run, while the peers' site-packages have theirs: a third of `check`'s time, not its own)
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(cmd: list[str]) -> tuple[float, float]:
    env = _ENV
    if cmd[0] == "BEFORE":  # ["BEFORE", checkout, command...]
        env = {**_ENV, "PYTHONPATH": cmd[1]}
        cmd = cmd[2:]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # run outside any checkout: ``python -m`` puts the working directory first on sys.path, so
    # from a checkout's root every command (the --before ones too) would run that checkout
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env,
                   cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _one_file(given: Path | None) -> Path | None:
    if given is not None:
        return given.resolve()
    if CORPUS is None:
        return None
    return next(iter(sorted(CORPUS.rglob("*.json"))), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="median of the runs, or their minimum (a busy machine)")
    ap.add_argument("--file", type=Path, default=None, help="the config lint reads (default: a corpus JSON file)")
    ap.add_argument("--before", type=Path, default=None, help="another checkout to time alongside (PYTHONPATH)")
    args = ap.parse_args()
    tool = [sys.executable, "-m", "validator"]  # this checkout (PYTHONPATH), or the installed package
    cjs = shutil.which("check-jsonschema", path=os.path.dirname(sys.executable)) or shutil.which("check-jsonschema")
    one = _one_file(args.file)
    with tempfile.TemporaryDirectory() as tmp:
        schema = Path(tmp) / "trivial.json"
        schema.write_text(json.dumps({}))
        cases: dict[str, list[str]] = {
            "psutil": [sys.executable, "-c", "import psutil"],
            "check": [*tool, "check"],
            "check json": [*tool, "check", "--format", "json"],
            "--help": [*tool, "--help"],
        }
        if one is not None and cjs:
            cases["lint 1 file"] = [*tool, "lint", str(one)]
            cases["check-jsonschema 1 file"] = [cjs, "--schemafile", str(schema), str(one)]
        if args.before is not None:
            old = ["BEFORE", str(args.before.resolve()), sys.executable, "-m", "validator"]
            cases["check (before)"] = [*old, "check"]
            cases["check json (before)"] = [*old, "check", "--format", "json"]
            if "lint 1 file" in cases:
                cases["lint 1 file (before)"] = [*old, "lint", str(one)]
        for cmd in cases.values():  # write bytecode, warm the page cache
            _run(cmd)
        walls: dict[str, list[float]] = {k: [] for k in cases}
        cpus: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                w, c = _run(cmd)
                walls[name].append(w)
                cpus[name].append(c)
    stat = min if args.stat == "min" else statistics.median
    wall = {k: stat(v) for k, v in walls.items()}
    cpu = {k: stat(v) for k, v in cpus.items()}
    print(f"{'minimum' if args.stat == 'min' else 'median'} of {args.runs} runs each, round-robin; {sys.executable}")
    print(f"{'command':<26}{'wall':>9}{'cpu':>9}")
    for k in cases:
        print(f"{k:<26}{wall[k] * 1000:>7.0f}ms{cpu[k] * 1000:>7.0f}ms")
    print(f"\n{'ratio':<36}{'wall':>7}{'cpu':>7}{'aim':>8}")
    rows = [("check / import psutil", "check", "psutil", 3.0),
            ("check json / import psutil", "check json", "psutil", 3.0),
            ("--help / import psutil", "--help", "psutil", 2.5)]
    if "lint 1 file" in cases:
        rows.append(("lint / check-jsonschema (1 file)", "lint 1 file", "check-jsonschema 1 file", 0.5))
    else:
        print("(lint row left out: no corpus file or no check-jsonschema; pip install check-jsonschema)")
    if args.before is not None:
        rows += [("before: check / import psutil", "check (before)", "psutil", 3.0),
                 ("before: check json / import psutil", "check json (before)", "psutil", 3.0)]
        if "lint 1 file (before)" in cases:
            rows.append(("before: lint / check-jsonschema", "lint 1 file (before)", "check-jsonschema 1 file", 0.5))
    for label, a, b, aim in rows:
        rw, rc = wall[a] / wall[b], cpu[a] / cpu[b]
        print(f"{label:<36}{rw:>6.2f}x{rc:>6.2f}x{'<= ' + str(aim) + 'x':>8}{'' if rw <= aim else '  (over)'}")
    print(f"\nload average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (ratios are fairest on a quiet machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
