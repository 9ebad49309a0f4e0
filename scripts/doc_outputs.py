#!/usr/bin/env python3
"""Regenerate the outputs the docs show as printed, from recorded facts (issue 34).

    python scripts/doc_outputs.py           # rewrite every marked block in README.md and docs/
    python scripts/doc_outputs.py --check   # exit 1 naming each block that differs (the test runs this)

A block of output in a doc is preceded by a marker naming the command that prints it and its
exit code:

    <!-- printed-by: spec-check check --facts tests/fixtures/facts/dgx_h100_port_200g.json; exit 1 -->
    ```
    spec-check 0.3.0.dev0 · spec v1.0 · ...
    ```

The command runs from the repository root as ``python -m validator ARGS`` (this checkout's code,
whatever is installed), on committed inputs only (``tests/fixtures/facts/`` and the like, never
this machine's own probe), with the clock pinned (``SOURCE_DATE_EPOCH``), colour off and the
width set (``COLUMNS``), so the block is the same on every machine. Trailing spaces are cut from
each line. Run it after any change to rules, renderers or the version (docs/release.md).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EPOCH = "1795000000"  # 2026-11-18T11:06:40Z, as scripts/make_example_reports.py
COLUMNS = "140"
MARKER = re.compile(r"^<!-- printed-by: (?P<cmd>spec-check [^;]*?); exit (?P<code>\d+) -->\n"
                    r"```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)


def docs(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "docs").glob("*.md"))]


def run(cmd: str) -> tuple[str, int]:
    """What ``cmd`` prints on stdout, and its exit code, run as the marker says."""
    args = shlex.split(cmd)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPEC_CHECK_", "FORCE_COLOR", "CLICOLOR"))}
    env.update(SOURCE_DATE_EPOCH=EPOCH, COLUMNS=COLUMNS, NO_COLOR="1", TERM="dumb", PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "validator", *args[1:]], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    text = "".join(line.rstrip() + "\n" for line in r.stdout.splitlines())
    return text, r.returncode


def regenerate(doc: Path) -> tuple[str, list[str]]:
    """The doc with every marked block printed afresh, and one problem line per block whose
    command no longer exits as the marker says."""
    text = doc.read_text(encoding="utf-8")
    problems: list[str] = []

    def fresh(m: re.Match[str]) -> str:
        body, code = run(m.group("cmd"))
        if code != int(m.group("code")):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{doc.name}:{line}: `{m.group('cmd')}` exits {code}, the marker says "
                            f"{m.group('code')}")
        return m.group(0)[:m.start("body") - m.start()] + body + "```"

    return MARKER.sub(fresh, text), problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/doc_outputs.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    args = parser.parse_args(argv)
    stale = 0
    for doc in docs():
        old = doc.read_text(encoding="utf-8")
        new, problems = regenerate(doc)
        for line in problems:
            print(f"doc_outputs: {line}", file=sys.stderr)
        stale += len(problems)
        if new == old:
            continue
        rel = doc.relative_to(ROOT).as_posix()
        if args.check:
            stale += 1
            diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True), rel, rel + " (printed now)")
            sys.stdout.writelines(diff)
        else:
            doc.write_text(new, encoding="utf-8")
            print(f"rewrote the printed blocks of {rel}")
    if stale and args.check:
        print("doc_outputs: the docs' printed blocks differ from what the commands print: run "
              "python scripts/doc_outputs.py and review the diff", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
