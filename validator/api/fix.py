"""``lint --fix`` and ``lint --diff``: the edits a lint's findings carry, applied to the
text the lint read.

``plan_fixes(outcome)`` gathers, file by file, every edit of a failing finding that can be
applied (``Fix`` without ``needs``, whose replacement was computed when the file was read),
applies them in order to the text the run read (``validator.jobs.edits``), and lists what
is not applied, with why and what to pass. Before anything is written, every file to edit
must still hold the text the run read, be writable (and its folder, for the atomic rename)
and lie inside the folders of the jobs linted (a symlink out of them is refused): each
problem is one line, and nothing is written when there is any (exit 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.api.outcome import LintOutcome as Outcome
    from validator.report.model import Fix


@dataclass(frozen=True)
class FileEdit:
    file: str
    old: str  # the text the lint read
    new: str
    applied: tuple[str, ...]  # "RULE: target = value", one per edit


@dataclass(frozen=True)
class FixPlan:
    edits: tuple[FileEdit, ...]
    not_applied: tuple[str, ...]  # "FILE: RULE: target: why", one per edit left out
    problems: tuple[str, ...]  # bad input: one line each; nothing is written when any


def _shown(fx: Fix) -> str:
    import json

    value = fx["value"]
    return str(fx["target"]) if value is True and fx["kind"] == "flag" else f"{fx['target']} = {json.dumps(value)}"


def plan_fixes(outcome: Outcome) -> FixPlan:
    from validator.jobs import edits

    texts = outcome.texts
    by_file: dict[str, list[tuple[str, Fix]]] = {}
    not_applied: list[str] = []
    seen: set[tuple[str, str, str, str]] = set()
    for f in outcome.report.findings:
        if f.waived:
            continue
        for fx in f.fixes or ():
            if fx.get("needs"):
                not_applied.append(f"{fx['file']}: {f.rule}: {fx['target']}: not applied: {fx['needs']}")
                continue
            key = (fx["file"], fx["kind"], fx["target"], repr(fx["value"]))
            if key in seen:
                continue
            seen.add(key)
            by_file.setdefault(fx["file"], []).append((f.rule, fx))
    out: list[FileEdit] = []
    problems: list[str] = []
    for file, items in by_file.items():
        old = texts.get(file)
        if old is None:
            problems.append(f"{file}: cannot fix: the lint could not read this file")
            continue
        new, done = old, []
        for rule, edit in items:
            try:
                new = edits.apply(new, edit)
                done.append(f"{rule}: {_shown(edit)}")
            except edits.EditError as exc:
                not_applied.append(f"{file}: {rule}: {edit['target']}: not applied: {exc}")
        if new != old:
            out.append(FileEdit(file, old, new, tuple(done)))
    problems += [p for e in out for p in _refusals(e.file, e.old, outcome.roots)]
    return FixPlan(tuple(out), tuple(not_applied), tuple(problems))


def _refusals(file: str, old: str, roots: tuple[str, ...]) -> list[str]:
    """Why ``file`` must not be written (empty when it may be)."""
    from validator.io.source import ReadError, read_text

    real = os.path.realpath(file)
    if roots and not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
        return [f"{file}: cannot fix: it is a symlink to {real}, outside the job's folder"]
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return [f"{file}: cannot fix: {exc.strerror or exc}"]
    # the mode bits too: os.access says yes to root, whose write would still undo the owner's choice
    if not os.access(real, os.W_OK) or not mode & 0o200:
        return [f"{file}: cannot fix: the file is read-only"]
    if not os.access(os.path.dirname(real) or ".", os.W_OK):
        return [f"{file}: cannot fix: its folder is read-only (the edit is written beside it, then renamed)"]
    try:
        now = read_text(Path(file))
    except ReadError as exc:
        return [f"{file}: cannot fix: cannot read it again: {exc.message}"]
    if now != old:
        return [f"{file}: cannot fix: the file changed since it was read; lint it again"]
    return []


def unified_diff(plan: FixPlan) -> str:
    import difflib

    out = []
    for e in plan.edits:
        for line in difflib.unified_diff(e.old.splitlines(keepends=True), e.new.splitlines(keepends=True),
                                         fromfile=e.file, tofile=e.file):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_fixes(plan: FixPlan, roots: tuple[str, ...]) -> list[str]:
    """Write every edit atomically, each file checked again right before its write (one
    edited in between is refused: nothing more is written). The problems, one line each
    (empty: all written)."""
    from validator.io.atomic import write_atomic

    problems = [p for e in plan.edits for p in _refusals(e.file, e.old, roots)]
    if problems:
        return problems
    for e in plan.edits:
        again = _refusals(e.file, e.old, roots)
        if again:
            return again
        mode = os.stat(os.path.realpath(e.file)).st_mode & 0o7777
        write_atomic(Path(e.file), e.new, mode=mode)
    return []
