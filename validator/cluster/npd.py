"""node-problem-detector's custom plugin contract: a report as one status line and a code.

NPD runs a custom plugin every ``invoke_interval`` and reads (kubernetes/node-problem-detector,
pkg/custompluginmonitor/types/types.go and config.go):
* the exit status: 0 OK, 1 NonOK (the problem is present), 2 Unknown; any other code is
  treated as Unknown;
* stdout as the condition's message, cut to ``max_output_length`` (80 by default);
* a plugin still running after ``timeout`` (5 s by default) is killed and counts as Unknown.

So a report maps to: 1 when a MUST rule fails (the node is not fit for training), 2 when
no MUST fails but one could not be judged (an ``error`` on a MUST rule: unknown is never
OK), 0 otherwise; and a line that names the rules, within 80 characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import Report

OK, PROBLEM, UNKNOWN = 0, 1, 2
MAX_LINE = 80
DEADLINE = 4.5  # seconds: inside NPD's default 5 s timeout, with room to print and exit


def fit(text: str, limit: int = MAX_LINE) -> str:
    """One line of at most ``limit`` characters (NPD cuts longer output mid-word)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def _listed(prefix: str, rules: list[str], limit: int = MAX_LINE) -> str:
    ids = sorted(set(rules))
    for k in range(len(ids), 0, -1):
        more = f" (+{len(ids) - k})" if k < len(ids) else ""
        text = f"{prefix}{', '.join(ids[:k])}{more}"
        if len(text) <= limit:
            return text
    return fit(f"{prefix}{ids[0]} (+{len(ids) - 1})" if len(ids) > 1 else f"{prefix}{ids[0]}", limit)


def verdict(report: Report, fail_on: str = "fail") -> tuple[int, str]:
    """The NPD exit code and status line of a report (``--fail-on warn``: a warning not
    waived or baselined is a problem too)."""
    failed = [f.rule for f in report.findings if f.against_verdict and f.status.value == "fail"]
    unknown = [f.rule for f in report.findings if f.against_verdict and f.status.value == "error"]
    if failed:
        return PROBLEM, _listed("spec-check FAIL: ", failed)
    if unknown:
        return UNKNOWN, _listed("spec-check UNKNOWN: ", unknown)
    warned_rules = [f.rule for f in report.findings if not f.waived and f.status.value == "warn"]
    if fail_on == "warn" and warned_rules:
        return PROBLEM, _listed("spec-check WARN: ", warned_rules)
    counts = report.summary.counts
    warned = counts.get("warn", 0) if isinstance(counts, dict) else 0
    tail = f", {warned} warn" if warned else ""
    return OK, fit(f"spec-check OK: {counts.get('pass', 0) if isinstance(counts, dict) else 0} pass{tail}")
