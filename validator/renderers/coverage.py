"""Per-requirement outcomes, shared by the HTML, Markdown and Prometheus renderers.

One place decides what "NET-01 on node n3" came to, so the three formats cannot
disagree: the worst status among its findings, where a fail or error under an active
waiver shows as ``waived``; and conformant unless an unwaived fail or MUST error remains
(``model.summarize``, the same rule as the whole report's verdict).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from validator.report.model import Finding, JSONValue, Report, summarize

# Worst first; "waived" ranks below the problems it hides, above a clean pass. "not judged"
# (a subject with a MUST requirement whose findings are all skips) is never shown as a pass.
OUTCOMES = ("fail", "error", "not judged", "warn", "waived", "pass", "skip", "none")
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


def outcome(findings: list[Finding]) -> str:
    """The worst outcome among findings ("none" when there are none)."""
    seen = set()
    for f in findings:
        if f.waived:
            seen.add("waived")
        else:
            seen.add(f.status.value)
    return next((o for o in OUTCOMES if o in seen), "none")


def subject_outcome(findings: list[Finding]) -> str:
    """A subject's outcome: ``outcome`` of its findings, except that a subject with a MUST
    requirement whose findings on it are all skips is "not judged" unless something worse
    (a fail or error) stands: it leaves its scope INCOMPLETE, so no view may show it clean."""
    o = outcome(findings)
    if o in ("fail", "error"):
        return o
    skipped: dict[str, bool] = {}
    for f in findings:
        if f.level == "MUST":
            skipped[f.requirement] = skipped.get(f.requirement, True) and f.status.value == "skip"
    return "not judged" if any(skipped.values()) else o


@dataclass(frozen=True)
class Cell:
    outcome: str
    conformant: bool
    findings: tuple[Finding, ...]


def requirement_ids(report: Report) -> list[str]:
    """Requirements in catalogue order, then any only the findings name."""
    ids = [q.id for q in report.requirements]
    seen = set(ids)
    for f in report.findings:
        if f.requirement not in seen:
            seen.add(f.requirement)
            ids.append(f.requirement)
    return ids


def subject_names(report: Report) -> list[str]:
    """The subjects in order, then any only the findings name (a set beside the list: a
    10,000-host result has 330,000 findings)."""
    names = [s.name for s in report.subjects]
    seen = set(names)
    for f in report.findings:
        if f.subject not in seen:
            seen.add(f.subject)
            names.append(f.subject)
    return names


def cluster_names(report: Report) -> set[str]:
    return {s.name for s in report.subjects if s.kind == "cluster"}


def pair_ends(f: Finding, known: set[str]) -> list[str]:
    """The hosts a cluster finding about a measured pair ``a->b`` concerns (known subjects
    other than the finding's own), so a host with a failing link does not show NET-01 pass."""
    m = PAIR.match(f.item or "")
    if not m:
        return []
    return [end for end in dict.fromkeys((m["a"], m["b"])) if end in known and end != f.subject]


def matrix(report: Report) -> dict[tuple[str, str], Cell]:
    """(subject, requirement) -> Cell, for every pair that has findings.

    A cluster finding about a measured pair (item ``a->b``) counts in its own (cluster)
    cell *and* in the cells of both hosts it connects: the verdict is about their link.
    """
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    known = set(subject_names(report))
    clusters = cluster_names(report)
    for f in report.findings:
        groups[(f.subject, f.requirement)].append(f)
        if f.item and (not clusters or f.subject in clusters):
            for end in pair_ends(f, known):
                groups[(end, f.requirement)].append(f)
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
    waived: bool = False  # the finding is under an active waiver


def _to_gbps(value: object, unit: str | None) -> float | None:
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
            out[(m["a"], m["b"])] = Measurement(m["a"], m["b"], gbps, f.status.value, f.waived)
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
        val: JSONValue = r.get("value", r.get("bandwidth", r.get("throughput")))
        unit = r.get("unit")
        if isinstance(val, dict):
            val, unit = val.get("value"), val.get("unit")
        gbps = _to_gbps(val, unit)
        if a and b and gbps is not None and (str(a), str(b)) not in out:
            out[(str(a), str(b))] = Measurement(str(a), str(b), gbps, "")
    return sorted(out.values(), key=lambda m: (m.a, m.b))


def _rate_gbps(raw: object) -> float | None:
    m = re.match(r"^\s*([0-9.]+)\s*(\S+)\s*$", str(raw if raw is not None else ""))
    if not m:
        return None
    try:
        return _to_gbps(float(m.group(1)), m.group(2)) or None
    except ValueError:
        return None


def threshold_gbps(report: Report) -> float:
    """The run's port-rate threshold (its fabric_port_rate), else the spec's default."""
    got = _rate_gbps(report.parameters.get("fabric_port_rate", {}).get("value"))
    return got if got is not None else spec_line_gbps(report)


def spec_line_gbps(report: Report) -> float:
    """The spec's own line (fabric_port_rate's default, which the result echoes beside an
    overridden value), whatever the run overrode: 400 Gb/s in v1.0, also the figure for a
    result too old to carry the default. From the report alone, as every renderer works."""
    p = report.parameters.get("fabric_port_rate", {})
    got = _rate_gbps(p.get("value") if p.get("origin") == "default" else p.get("default"))
    return got if got is not None else 400.0


def non_default(report: Report) -> dict[str, dict[str, JSONValue]]:
    """The parameters this run changed from the spec's defaults (profile or --set)."""
    return {k: v for k, v in sorted(report.parameters.items()) if v.get("origin") != "default"}


def profile_note(report: Report, key: Callable[[object], str] = str, text: Callable[[object], str] = str) -> str:
    """``""`` under spec defaults; else ``under a non-default profile (k = v (origin; spec
    default d); ...)``, so a verdict reached under changed thresholds never reads as plain
    conformance. A parameter the spec leaves unset (``step_time``, ``gpu_count``) is an input
    about the job, not a relaxed threshold: it reads ``with job inputs (...)``.
    ``key`` and ``text`` render names and values for the output (Markdown: code spans, cells)."""
    changed = non_default(report)
    if not changed and not report.profile:
        return ""

    def one(k: str, v: dict[str, JSONValue]) -> str:
        default = v.get("default")
        tail = f"; spec default {text(default)}" if default not in (None, "unset") else ""
        return f"{key(k)} = {text(v.get('value'))} ({text(v.get('origin'))}{tail})"

    inputs = {k: v for k, v in changed.items() if v.get("default") == "unset"}
    relaxed = {k: v for k, v in changed.items() if k not in inputs}
    notes = []
    if relaxed or report.profile:
        what = "; ".join(one(k, v) for k, v in relaxed.items())
        notes.append(f"under a non-default profile ({what or key(report.profile)})")
    if inputs:
        notes.append("with job inputs (" + "; ".join(one(k, v) for k, v in inputs.items()) + ")")
    return " ".join(notes)


def pass_line_gbps(report: Report) -> float | None:
    """Where a measured pair passes: the rate times the run's measured_efficiency (NET-01's
    measured check), or None when the run has no such parameter."""
    raw = report.parameters.get("measured_efficiency", {}).get("value")
    try:
        eff = float(str(raw))
    except ValueError:
        return None
    return threshold_gbps(report) * eff if 0 < eff <= 1 else None


def fleet_summary(report: Report) -> list[str]:
    """``result.extra.fleet`` (hosts probed and failed, pairs measured, min/max throughput)
    as short sentences, shared by the HTML, Markdown and terminal renderers; ``[]`` when
    the run was not a fleet run."""
    fleet = report.extra.get("fleet") if isinstance(report.extra, dict) else None
    if not isinstance(fleet, dict):
        return []
    out = []
    failed = fleet.get("failed") or {}
    n_failed = len(failed) if isinstance(failed, (dict, list)) else failed
    hosts = fleet.get("hosts", "?")
    line = f"{fleet.get('probed', '?')} of {hosts} hosts probed, {n_failed} could not be probed"
    if isinstance(failed, dict) and failed:
        line += " (" + "; ".join(f"{h}: {why}" for h, why in sorted(failed.items())[:10])
        line += ", ..." if len(failed) > 10 else ""
        line += ")"
    if fleet.get("interrupted"):
        line += "; the run was interrupted"
    out.append(line)
    pairs = fleet.get("pairs")
    if isinstance(pairs, dict) and pairs.get("measured"):
        lo, hi = pairs.get("throughput_min_gbps"), pairs.get("throughput_max_gbps")
        rounds = pairs.get("rounds")
        n = pairs["measured"]
        text = f"{n} pair{'s' if n != 1 else ''} measured" + (
            f" in {rounds} round{'s' if rounds != 1 else ''}" if rounds else "")
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
            text += f", throughput {lo:g} to {hi:g} Gb/s"
        out.append(text)
    return out


def problem_counts(report: Report) -> tuple[int, int]:
    """(failing, waived): the findings that make the run not conformant (a fail, or an error
    on a MUST rule: unknown is never pass, ``model.summarize``) outside an active waiver,
    and the fails and warns under one (which do not count)."""
    failing = sum(1 for f in report.findings if f.against_verdict)
    n_waived = sum(1 for f in report.findings if f.waived)
    return failing, n_waived
