"""Problems first: the per-subject lines and the fixes grouped by rule, shared by the
terminal and Markdown renderers so that both order and count the same way.

A fleet of 64 nodes with two bad ones must show the two bad ones in its first lines, not
after 3,000 PASS rows; and a fix that applies to eight GPUs is one fix naming the eight
GPUs, not eight copies of the same sentence. Fixes are ordered by what they cost the
verdict: MUST failures, then MUST errors (unknown is never pass), then SHOULD warnings,
then SHOULD errors, and findings under an active waiver last.

A finding that a large-fleet run folded (one finding for the passes of a rule on a
subject, its item an item count) is one finding here like any other.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from validator.renderers import coverage as cov
from validator.report.model import Finding, Level, Report, Status

PROBLEM = (Status.FAIL, Status.ERROR, Status.WARN)


def weight(f: Finding) -> int:
    """How many verdicts a finding stands for: 1, or a folded finding's count (a large
    fleet's passes of one rule, folded into one finding by ``spec-check cluster``)."""
    folded = getattr(f, "folded", None)
    if isinstance(folded, dict):
        n = folded.get("verdicts")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return n
    return 1


def fix_rank(f: Finding) -> int:
    """0 MUST fail, 1 MUST error, 2 SHOULD warn, 3 SHOULD error, 4 waived."""
    if f.waived:
        return 4
    if f.status is Status.FAIL:
        return 0
    if f.status is Status.ERROR:
        return 1 if f.level == Level.MUST else 3
    return 2


@dataclass
class SubjectLine:
    name: str
    outcome: str  # cov.OUTCOMES
    counts: Counter[str] = field(default_factory=Counter)  # fail/error/warn outside waivers, waived
    rules: list[str] = field(default_factory=list)  # problem rules, worst first

    @property
    def bad(self) -> bool:
        return self.outcome in ("fail", "error", "not judged", "warn", "waived")

    def counts_text(self) -> str:
        parts = [f"{self.counts[k]} {k}" for k in ("fail", "error", "warn") if self.counts[k]]
        if self.counts["waived"]:
            parts.append(f"{self.counts['waived']} waived")
        if not parts:
            n = self.counts["pass"]
            return f"{n} pass" + (f", {self.counts['skip']} skip" if self.counts["skip"] else "")
        return ", ".join(parts)


def subject_lines(report: Report) -> list[SubjectLine]:
    """One line per subject, worst outcome first, then by name (one pass over findings)."""
    lines: dict[str, SubjectLine] = {n: SubjectLine(n, "none") for n in cov.subject_names(report)}
    groups: dict[str, list[Finding]] = {}
    for f in report.findings:
        groups.setdefault(f.subject, []).append(f)
    for name, fs in groups.items():
        line = lines[name]
        line.outcome = cov.subject_outcome(fs)
        ranked: dict[str, int] = {}
        for f in fs:
            if f.waived:
                line.counts["waived"] += 1
            else:
                line.counts[f.status.value] += weight(f)
            if f.status in PROBLEM:
                r = fix_rank(f)
                ranked[f.rule] = min(r, ranked.get(f.rule, r))
        line.rules = sorted(ranked, key=lambda rule: (ranked[rule], rule))
    order = {o: i for i, o in enumerate(cov.OUTCOMES)}
    return sorted(lines.values(), key=lambda s: (order[s.outcome], s.name))


@dataclass
class FixGroup:
    rule: str
    rank: int
    status: Status
    level: str
    findings: list[Finding]
    summary: str  # the rule's summary (what is wrong), or the first finding's message
    remediation: str

    @property
    def waived(self) -> bool:
        return self.rank == 4

    def where(self, limit: int = 6) -> str:
        """``dgx-017 (mlx5_5:1, GPU3), dgx-042 (GPU5)`` and ``and 12 more subjects``."""
        per: dict[str, list[str]] = {}
        seen: set[tuple[str, str]] = set()  # (subject, entry): a list's "in" was quadratic in items
        for f in self.findings:
            items = per.setdefault(f.subject, [])
            if f.location is not None:
                loc = f"{f.location.file}:{f.location.line}" if f.location.line else f.location.file
                if f.location.file == f.subject:  # a config's own line: "line 12"
                    loc = f"line {f.location.line}" if f.location.line else ""
                if loc and (f.subject, loc) not in seen:
                    seen.add((f.subject, loc))
                    items.append(loc)
            elif f.item and (f.subject, f.item) not in seen:
                seen.add((f.subject, f.item))
                items.append(f.item)
        parts = []
        for name, items in list(per.items())[:limit]:
            shown = ", ".join(items[:8]) + (f" and {len(items) - 8} more" if len(items) > 8 else "")
            parts.append(f"{name} ({shown})" if shown else name)
        more = len(per) - limit
        return ", ".join(parts) + (f" and {more} more subject{'s' if more != 1 else ''}" if more > 0 else "")

    def reasons(self, limit: int = 3) -> list[str]:
        """For errors: the distinct reasons why a fact could not be read."""
        seen = list(dict.fromkeys(f.message for f in self.findings))
        return seen[:limit] + ([f"... and {len(seen) - limit} more reasons"] if len(seen) > limit else [])

    def heading(self) -> str:
        n_subj = len({f.subject for f in self.findings})
        n = len(self.findings)
        tail = f"{n} finding{'s' if n != 1 else ''} on {n_subj} subject{'s' if n_subj != 1 else ''}"
        return f"{self.rule} ({self.level}{', waived' if self.waived else ''}): {tail}"


def fix_groups(report: Report) -> list[FixGroup]:
    """Problems grouped by (rule, rank), ordered MUST fail, MUST error, SHOULD warn,
    SHOULD error, waived; within a rank by rule ID."""
    docs = {r.id: r for r in report.rules}
    groups: dict[tuple[int, str], list[Finding]] = {}
    for f in report.findings:
        if f.status in PROBLEM:
            groups.setdefault((fix_rank(f), f.rule), []).append(f)
    out = []
    for (rank, rule), fs in sorted(groups.items()):
        first = fs[0]
        doc = docs.get(rule)
        summary = doc.summary if doc is not None and doc.summary else first.message
        out.append(FixGroup(rule, rank, first.status, first.level, fs, summary, first.remediation))
    return out
