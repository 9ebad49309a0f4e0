"""Baselines (``--baseline RESULT``): fail only on findings a saved result did not have.

A team adopting spec-check on jobs that already exist saves one result (``--format json
-o baseline.json``) and from then on gates on what is new, as ruff's, semgrep's and SARIF's
baselines do. A finding is the same as a saved one when its rule, subject and item are:
not its line, which moves with every edit above it, and not its message, which carries
the observed value. A saved ``fail`` or ``warn`` that is still there is *known*: it keeps
its status and is shown, marked as in the baseline, and it no longer counts against the
verdict (the same place in the verdict as an active waiver, ``model.Finding.waived``).

An ``error`` is known too when the baseline has it with the same *reason* (its message):
an unchanged DeepSpeed job whose gradient-statistics metric cannot be told from its files
would otherwise exit 1 forever under its own baseline. The reason is part of the key
because an error is an unknown: the same rule failing to judge for another reason (a file
that no longer parses, a new missing setting) is a new unknown, and counts. A waiver file
never accepts an error; only a baseline, which recorded the reason, does.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from validator.report.model import Finding, Report, Status

if TYPE_CHECKING:
    from validator.report.model import JSONValue

_KNOWN = (Status.FAIL, Status.WARN, Status.ERROR)


def key(f: Finding) -> tuple[str, ...]:
    """What makes two findings the same problem: rule, subject and item, not the line; for
    an error also its reason (the message), since another reason is another unknown."""
    if f.status is Status.ERROR:
        return (f.rule, f.subject, f.item or "", f.message)
    return (f.rule, f.subject, f.item or "")


def load_baseline(path: Path) -> set[tuple[str, ...]]:
    """The problems (fail, warn and error) of a saved JSON result, by ``key``. A file that is
    not a spec-check result is the one-line error ``load_result`` gives (exit 2)."""
    from validator.report.results import load_result

    _, saved = load_result(Path(path))
    return {key(f) for f in saved.findings if f.status in _KNOWN}


def apply_baseline(report: Report, known: set[tuple[str, ...]], path: Path) -> Report:
    """The report with each fail, warn or error that ``known`` holds marked as in the
    baseline, unless an active waiver already covers it; ``extra["baseline"]`` says how many."""
    record: dict[str, JSONValue] = {"active": True, "justification": f"in the baseline {path}",
                              "approver": "--baseline", "baseline": str(path)}
    count = 0

    def mark(f: Finding) -> Finding:
        nonlocal count
        if f.status in _KNOWN and not f.waived and key(f) in known:
            count += 1
            return replace(f, waiver={"id": f.rule, "subject": f.subject, **record})
        return f

    findings = tuple(mark(f) for f in report.findings)
    return replace(report, findings=findings,
                   extra={**report.extra, "baseline": {"file": str(path), "known": count}})


def is_baseline(f: Finding) -> bool:
    return bool(f.waived and (f.waiver or {}).get("baseline"))
