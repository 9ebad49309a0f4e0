"""Where a warm ``spec-check check`` spends its CPU time, by kind of work, in one process.

    python bench/start_profile.py [--runs 7] [--stat median|min] [-- VERB ARGS...]   (default: check)

Each run is a fresh interpreter that runs the verb in-process (output discarded) and
measures, with ``time.process_time`` (CPU, not wall: fairer on a shared machine):

* the whole verb, from the first import of spec-check to its exit;
* the first imports of click, rich's modules and psutil (with what they pull in: typing,
  inspect, fractions, subprocess, ...);
* class creation by ``dataclasses`` (the ``@dataclass`` decorator compiles each class's
  ``__init__``, ``__eq__``, ``__repr__``, ... at import: no bytecode cache holds them);
* regular expression compiles (``re.compile`` at import, and the first use of a pattern);

and prints the median of each over the runs (``--stat min``: the minimum of each, on a
machine others are busy on). Nothing is asserted; docs/startup.md quotes
a recorded run (tests/fixtures/startup/) and tests/test_startup_measured.py checks the quote.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_CHILD = r"""
import contextlib, dataclasses, io, json, re, sys, time
spent = {"dataclasses": 0.0, "regex": 0.0, "click": 0.0, "rich": 0.0, "psutil": 0.0}
count = {"dataclasses": 0}
def timed(kind, fn):
    def wrapper(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            spent[kind] += time.process_time() - t
            count[kind] = count.get(kind, 0) + 1
    return wrapper
dataclasses._process_class = timed("dataclasses", dataclasses._process_class)
re._compile = timed("regex", re._compile)
real_import = __import__
inside = [0]
def first_import(name, *a, **k):  # the first import of click, rich or psutil, with what it pulls in
    top = name.split(".")[0]
    if top not in ("click", "rich", "psutil") or inside[0] or name in sys.modules:
        return real_import(name, *a, **k)
    inside[0] += 1
    t = time.process_time()
    try:
        return real_import(name, *a, **k)
    finally:
        inside[0] -= 1
        spent[top] += time.process_time() - t
import builtins
builtins.__import__ = first_import
start = time.process_time()
from validator.entry import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
builtins.__import__ = real_import
total = time.process_time() - start
print(json.dumps({"total": total, **spent, "classes": count["dataclasses"]}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--stat", choices=("median", "min"), default="median")
    ap.add_argument("verb", nargs="*", default=["check"])
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed
    cmd = [sys.executable, "-c", _CHILD, *args.verb]
    subprocess.run(cmd, env=env, capture_output=True, check=False)  # writes bytecode
    runs = []
    for _ in range(args.runs):
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    stat = min if args.stat == "min" else statistics.median
    med = {k: stat(r[k] for r in runs) for k in runs[0]}
    print(f"spec-check {' '.join(args.verb)}: {'minimum' if args.stat == 'min' else 'median'} of {args.runs} runs, "
          "CPU ms in the process")
    print(f"{'the whole verb':<36}{med['total'] * 1000:>8.1f}")
    for key, label in (("dataclasses", f"creating {med['classes']:.0f} dataclasses"), ("click", "importing click"),
                       ("rich", "importing rich"), ("psutil", "importing psutil"),
                       ("regex", "compiling regular expressions")):
        print(f"{label:<36}{med[key] * 1000:>8.1f}  {med[key] / med['total']:>4.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
