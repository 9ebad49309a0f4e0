"""Per-requirement outcomes, shared by the HTML, Markdown and Prometheus renderers.

One place decides what "NET-01 on node n3" came to, so the three formats cannot
disagree: the worst status among its findings, where a fail or error under an active
waiver shows as ``waived``; and conformant unless an unwaived fail or MUST error remains
(``model.summarize``, the same rule as the whole report's verdict).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from validator.model import Finding, Report, Status, summarize

# Worst first; "waived" ranks below the problems it hides, above a clean pass.
OUTCOMES = ("fail", "error", "warn", "waived", "pass", "skip", "none")
PAIR = re.compile(r"^\s*(?P<a>.+?)\s*(?:->|→)\s*(?P<b>.+?)\s*$")
_GBPS = {
    "Gb/s": 1.0,
    "Gbit/s": 1.0,
    "Gbps": 1.0,
    "Mb/s": 1e-3,
    "Mbit/s": 1e-3,
    "Tb/s": 1e3,
    "GB/s": 8.0,
    "b/s": 1e-9,
    "bit/s": 1e-9,
}


def waived(f: Finding) -> bool:
    return bool(f.waiver and f.waiver.get("active"))


def outcome(findings: list[Finding]) -> str:
    """The worst outcome among findings ("none" when there are none)."""
    seen = set()
    for f in findings:
        if waived(f) and f.status in (Status.FAIL, Status.ERROR, Status.WARN):
            seen.add("waived")
        else:
            seen.add(f.status.value)
    return next((o for o in OUTCOMES if o in seen), "none")


@dataclass(frozen=True)
class Cell:
    outcome: str
    conformant: bool
    findings: tuple[Finding, ...]


def requirement_ids(report: Report) -> list[str]:
    """Requirements in catalogue order, then any only the findings name."""
    ids = [q.id for q in report.requirements]
    for f in report.findings:
        if f.requirement not in ids:
            ids.append(f.requirement)
    return ids


def subject_names(report: Report) -> list[str]:
    names = [s.name for s in report.subjects]
    for f in report.findings:
        if f.subject not in names:
            names.append(f.subject)
    return names


def matrix(report: Report) -> dict[tuple[str, str], Cell]:
    """(subject, requirement) -> Cell, for every pair that has findings."""
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in report.findings:
        groups[(f.subject, f.requirement)].append(f)
    return {k: Cell(outcome(v), summarize(v).conformant, tuple(v)) for k, v in groups.items()}


def rules_of(report: Report) -> dict[str, list[str]]:
    """requirement -> its rule IDs (the pack's, then any only the findings name)."""
    out: dict[str, list[str]] = defaultdict(list)
    for r in report.rules:
        out[r.requirement].append(r.id)
    for f in report.findings:
        if f.rule not in out[f.requirement]:
            out[f.requirement].append(f.rule)
    return out


@dataclass(frozen=True)
class Measurement:
    a: str
    b: str
    gbps: float
    status: str  # the finding's status, or "" for a bare measurement


def _to_gbps(value: Any, unit: str | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    factor = _GBPS.get((unit or "").strip())
    return float(value) * factor if factor is not None else None


def bandwidth(report: Report) -> list[Measurement]:
    """Measured pairwise throughput: NET-01 findings whose item is ``a->b`` with a rate, and
    ``extra["measurements"]`` entries (``{a|src|from|sender, b|dst|to|receiver, value,
    unit}`` or ``{pair: "a->b", ...}``); whatever is
    not in that shape is left out rather than guessed at."""
    out: dict[tuple[str, str], Measurement] = {}
    for f in report.findings:
        m = PAIR.match(f.item or "")
        if f.requirement != "NET-01" or not m:
            continue
        gbps = _to_gbps(f.value, f.unit)
        if gbps is not None:
            out[(m["a"], m["b"])] = Measurement(m["a"], m["b"], gbps, f.status.value)
    extra = report.extra.get("measurements") if isinstance(report.extra, dict) else None
    rows = extra if isinstance(extra, list) else []
    if isinstance(extra, dict):
        rows = [r for v in extra.values() if isinstance(v, list) for r in v]
    for r in rows:
        if not isinstance(r, dict):
            continue
        a = r.get("a") or r.get("src") or r.get("from") or r.get("sender")
        b = r.get("b") or r.get("dst") or r.get("to") or r.get("receiver")
        pair = PAIR.match(str(r.get("pair") or r.get("item") or ""))
        if pair and not (a and b):
            a, b = pair["a"], pair["b"]
        val: Any = r.get("value", r.get("bandwidth", r.get("throughput")))
        unit = r.get("unit")
        if isinstance(val, dict):
            val, unit = val.get("value"), val.get("unit")
        gbps = _to_gbps(val, unit)
        if a and b and gbps is not None and (str(a), str(b)) not in out:
            out[(str(a), str(b))] = Measurement(str(a), str(b), gbps, "")
    return sorted(out.values(), key=lambda m: (m.a, m.b))


def threshold_gbps(report: Report) -> float:
    """The 400 Gb/s line, or the run's fabric_port_rate parameter if it was changed."""
    raw = str(report.parameters.get("fabric_port_rate", {}).get("value", ""))
    m = re.match(r"^\s*([0-9.]+)\s*(\S+)\s*$", raw)
    if m:
        try:
            got = _to_gbps(float(m.group(1)), m.group(2))
        except ValueError:
            got = None
        if got:
            return got
    return 400.0


def pass_line_gbps(report: Report) -> float | None:
    """Where a measured pair passes: the rate times the run's measured_efficiency (NET-01's
    measured check), or None when the run has no such parameter."""
    raw = report.parameters.get("measured_efficiency", {}).get("value")
    try:
        eff = float(str(raw))
    except ValueError:
        return None
    return threshold_gbps(report) * eff if 0 < eff <= 1 else None
