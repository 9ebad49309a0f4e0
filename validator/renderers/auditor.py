"""What an auditor reads first, shared by the HTML, terminal and Markdown renderers.

* **Facts age** beside each node: when its facts were collected, how old they were when the
  result was made (the result's ``generated_at`` minus the subject's ``collected_at``), and
  the file they came from.
* **Passes folded**: one line per rule with the count of subjects and verdicts and the range
  of values seen, instead of every pass of every node (8 nodes' passes ran to hundreds of
  printed pages); ``--show passes`` lists them one by one.
* **Whose reading**: the spec's text is not public, so every requirement's wording is
  spec-check's, and some thresholds are spec-check's own choice, not published figures.
  Which ones is data: each parameter's ``reading`` in ``spec/vX/requirements.yaml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from validator.report.model import Finding, Report, Scope, Status

if TYPE_CHECKING:
    from collections.abc import Iterable

WORDING = ("The requirement wording is spec-check's words from the public descriptions of the "
           "specification (May 2026); the specification's own text is not public.")
# the values of a parameter's ``reading`` (spec/vX/requirements.yaml)
READINGS = {
    "spec": "the specification's own published figure",
    "published": "a published figure from the cited source",
    "spec-check": "spec-check's own choice, not a published figure",
    "per-run": "no default: set per run or profile",
}


def _when(text: str | None) -> datetime | None:
    """An ISO 8601 time as written in results (``...Z`` or an offset); None if it is not one."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def age(generated_at: str | None, collected_at: str | None) -> timedelta | None:
    """How old the facts were when the result was made; None where either time is unknown."""
    made, collected = _when(generated_at), _when(collected_at)
    return None if made is None or collected is None else made - collected


def age_text(delta: timedelta | None) -> str:
    """``3 d 4 h``, ``5 h``, ``12 min``; a negative age says the facts are dated in the future
    (``in the future: dated 2 d 3 h after the result``)."""
    if delta is None:
        return "unknown (no collection time)"
    future = delta < timedelta(0)
    secs = int(abs(delta).total_seconds())
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    if days:
        text = f"{days} d {hours} h"
    elif hours:
        text = f"{hours} h"
    else:
        text = f"{rest // 60} min"
    return f"in the future: dated {text} after the result" if future else text


@dataclass(frozen=True)
class NodeFacts:
    name: str
    kind: str
    collected_at: str | None
    age: timedelta | None
    source: str | None
    probe_version: str | None = None
    machine_id: str | None = None
    board_serial: str | None = None

    @property
    def age_text(self) -> str:
        return age_text(self.age)

    @property
    def machine_text(self) -> str:
        """The machine's identity as the probe recorded it, or that it did not."""
        parts = []
        if self.machine_id:
            parts.append(f"machine-id {self.machine_id}")
        if self.board_serial:
            parts.append(f"board {self.board_serial}")
        return "; ".join(parts) or "not recorded"


def node_facts(report: Report) -> list[NodeFacts]:
    """Each node, and each job with a collection time, in the result's order, with the age of
    its facts (the cluster's document is made from its nodes' at the run: their ages count)."""
    out = []
    for sub in report.subjects:
        if sub.kind != Scope.NODE and (sub.kind == Scope.CLUSTER or not sub.collected_at):
            continue
        out.append(NodeFacts(sub.name, str(sub.kind), sub.collected_at,
                             age(report.generated_at, sub.collected_at), sub.source,
                             sub.probe_version, sub.machine_id, sub.board_serial))
    return out


# ---- passes folded ------------------------------------------------------------------------

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@dataclass
class PassFold:
    """The passes of one rule: on how many subjects, how many verdicts, the values seen."""

    rule: str
    level: str
    expected: str
    subjects: list[str] = field(default_factory=list)
    verdicts: int = 0
    observed: list[str] = field(default_factory=list)  # distinct, in first-seen order
    sample: Finding | None = None
    hosts_folded: int = 0  # subjects inside findings a large-fleet run already folded

    @property
    def subject_count(self) -> int:
        return self.hosts_folded + sum(1 for s in self.subjects if s not in self._folders)

    _folders: set[str] = field(default_factory=set)  # subjects that stand for folded hosts

    def values(self, limit: int = 3) -> str:
        """The range of the values seen: ``380.2-398.7 Gb/s`` where all are numbers in one unit,
        else the distinct values (``a, b and 4 more``); ``""`` where none was recorded."""
        seen = [v for v in self.observed if v]
        if not seen:
            return ""
        if len(seen) == 1:
            return seen[0]
        nums = [_NUMBER.match(v) for v in seen]
        if all(nums) and len({m.group(2) for m in nums if m}) == 1:
            values = [float(m.group(1)) for m in nums if m]
            unit = nums[0].group(2) if nums[0] else ""
            return f"{min(values):g}–{max(values):g}{' ' + unit if unit else ''}"  # noqa: RUF001
        shown = ", ".join(seen[:limit])
        return shown + (f" and {len(seen) - limit} more" if len(seen) > limit else "")


def fold_passes(findings: Iterable[Finding]) -> list[PassFold]:
    """The passes (outside waivers) folded into one line per rule, by rule ID."""
    from validator.renderers.problems import weight

    folds: dict[str, PassFold] = {}
    seen: dict[str, set[str]] = {}
    subjects: dict[str, set[str]] = {}
    for f in findings:
        if f.status is not Status.PASS or f.waived:
            continue
        fold = folds.get(f.rule)
        if fold is None:
            fold = folds[f.rule] = PassFold(f.rule, str(f.level), f.expected or "", sample=f)
            seen[f.rule], subjects[f.rule] = set(), set()
        if f.subject not in subjects[f.rule]:
            subjects[f.rule].add(f.subject)
            fold.subjects.append(f.subject)
        hosts = f.folded.get("subjects") if isinstance(f.folded, dict) else None
        if isinstance(hosts, int) and not isinstance(hosts, bool) and hosts > 0:
            fold.hosts_folded += hosts  # the cluster subject stands for these hosts
            fold._folders.add(f.subject)
        fold.verdicts += weight(f)
        value = "" if f.observed is None else str(f.observed)
        if value not in seen[f.rule]:
            seen[f.rule].add(value)
            fold.observed.append(value)
    return [folds[r] for r in sorted(folds)]


# ---- whose reading ------------------------------------------------------------------------


@dataclass(frozen=True)
class Readings:
    """Each parameter's reading (``spec/vX/requirements.yaml``), for the spec version a result
    names; empty where this installation does not have that version."""

    by_parameter: dict[str, str]

    def own(self, report: Report) -> list[str]:
        """The thresholds this result used at spec-check's own value: reading ``spec-check``
        and not changed by a profile or ``--set`` (then the value is the provider's)."""
        return [n for n, r in sorted(self.by_parameter.items())
                if r == "spec-check" and (report.parameters.get(n) or {}).get("origin", "default") == "default"]

    def changed(self, report: Report) -> list[str]:
        """spec-check's thresholds that this result's profile or ``--set`` replaced."""
        return [n for n, r in sorted(self.by_parameter.items())
                if r == "spec-check" and (report.parameters.get(n) or {}).get("origin", "default") != "default"]


def readings(spec_version: str) -> Readings:
    """The installed spec's readings of ``spec_version`` (package data, not a user's file),
    looked up by the report package (renderers import nothing upstream of it)."""
    from validator.report.readings import parameter_readings

    return Readings(parameter_readings(spec_version))


@dataclass
class SkipFold:
    """The skips of one rule for one reason, across subjects (not applicable: not judged)."""

    rule: str
    level: str
    reason: str
    subjects: list[str] = field(default_factory=list)
    verdicts: int = 0

    def where(self, limit: int = 3) -> str:
        shown = ", ".join(self.subjects[:limit])
        more = len(self.subjects) - limit
        return shown + (f" and {more} more" if more > 0 else "")


def fold_skips(findings: Iterable[Finding]) -> list[SkipFold]:
    """The skips (outside waivers) folded into one line per rule and reason."""
    from validator.renderers.problems import weight

    folds: dict[tuple[str, str], SkipFold] = {}
    seen: dict[tuple[str, str], set[str]] = {}  # a fleet's 10,000 names: not a list's "in"
    for f in findings:
        if f.status is not Status.SKIP or f.waived:
            continue
        key = (f.rule, f.message)
        fold = folds.get(key)
        if fold is None:
            fold = folds[key] = SkipFold(f.rule, str(f.level), f.message)
            seen[key] = set()
        if f.subject not in seen[key]:
            seen[key].add(f.subject)
            fold.subjects.append(f.subject)
        fold.verdicts += weight(f)
    return [folds[k] for k in sorted(folds)]
