"""Check validator/runs/tags.yaml's pinned rows against the frameworks' own source.

    python scripts/check_framework_tags.py NAME=GIT_DIR [NAME=GIT_DIR ...]

e.g. ``Megatron-LM=~/src/Megatron-LM/.git NeMo=~/src/NeMo/.git "DeepSpeed monitor=~/src/DeepSpeed/.git"``.
For each row of tags.yaml with a ``read_at`` (repo, commit, files) whose name is given, every
exact name and prefix of the row must appear as a string literal in one of the row's files at
the row's commit (``git show COMMIT:FILE``, so a clone with any checkout will do). Names the
framework composes are checked by their parts: a Megatron timer ``X-time`` is the literal
``X`` plus ``'-time'`` (megatron/core/timers.py), a NeMo timer ``X in s`` is ``X`` plus
``' in s'`` (nemo/utils/exp_manager.py). Prints one line per name and exits 1 if any is
missing: a renamed tag in a later release is then seen, and the row's version bumped by
hand after reading the new source.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

TAGS = Path(__file__).resolve().parents[1] / "validator" / "runs" / "tags.yaml"
SUFFIXES = ("-time", " in s")  # composed by the framework from a literal stem and this literal


def literals(name: str) -> list[str]:
    """The literal pieces a name must appear as in source."""
    for suf in SUFFIXES:
        if name.endswith(suf) and name != suf:
            return [name[: -len(suf)], suf]
    return [name]


def present(piece: str, text: str, prefix: bool) -> bool:
    if prefix:  # a prefix is the start of a literal
        return f"'{piece}" in text or f'"{piece}' in text or f"f'{piece}" in text
    return f"'{piece}'" in text or f'"{piece}"' in text


def check(row: dict, git_dir: str) -> list[tuple[str, bool]]:
    at = row["read_at"]
    text = ""
    for f in at["files"]:
        text += subprocess.run(["git", "--git-dir", git_dir, "show", f"{at['commit']}:{f}"], check=True,
                               capture_output=True, text=True).stdout
    out = []
    printed = bool(row.get("printed"))  # names a log line prints: "Name=" or "Name: " in a format string
    for name in row.get("exact") or {}:
        if printed:
            out.append((str(name), f"{name}=" in text or f"{name}: " in text or present(str(name), text, False)))
            continue
        out.append((str(name), all(present(p, text, False) for p in literals(str(name)))))
    for name in row.get("prefix") or {}:
        out.append((str(name) + "*", present(str(name), text, True)))
    return out


def main(argv: list[str]) -> int:
    dirs = dict(a.split("=", 1) for a in argv)
    rows = {r["name"]: r for r in yaml.safe_load(TAGS.read_text("utf-8"))["frameworks"] if r.get("read_at")}
    missing = 0
    for name, git_dir in dirs.items():
        row = rows[name]
        for tag, ok in check(row, str(Path(git_dir).expanduser())):
            missing += not ok
            print(f"{'ok     ' if ok else 'MISSING'} {name} {row['read_at']['ref']}: {tag}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
