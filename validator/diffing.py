"""Comparing two results (``spec-check diff OLD NEW``): what broke, what was fixed, and
which measured values moved.

Findings are matched by (subject, rule, item): the same check on the same GPU, port or
host pair across runs. A finding "fails" as the conformance verdict counts it: a fail,
or an error on a MUST, not under an active waiver. The diff is the gate for "did this
change (a driver upgrade, a config edit) make anything worse", so only *new* failures
decide its exit code; old failures that are still there do not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from validator.model import Finding, Report, Status

Key = tuple[str, str, str]


def failing(f: Finding) -> bool:
    waived = bool(f.waiver and f.waiver.get("active"))
    return not waived and (
        f.status is Status.FAIL or (f.status is Status.ERROR and f.level == "MUST")
    )


def keyed(findings: tuple[Finding, ...]) -> dict[Key, Finding]:
    """(subject, rule, item) -> finding; a repeated key (two findings of one rule on one
    item, e.g. two lines of one config) gets ``#2``, ``#3`` on its item."""
    out: dict[Key, Finding] = {}
    seen: Counter[Key] = Counter()
    for f in findings:
        base = (f.subject, f.rule, f.item or "")
        seen[base] += 1
        key = base if seen[base] == 1 else (f.subject, f.rule, f"{f.item or ''}#{seen[base]}")
        out[key] = f
    return out


def _brief(key: Key, f: Finding) -> dict[str, Any]:
    d: dict[str, Any] = {
        "subject": key[0],
        "rule": key[1],
        "item": key[2] or None,
        "status": f.status.value,
        "level": f.level,
        "observed": f.observed,
        "expected": f.expected,
        "message": f.message,
    }
    if f.location is not None:
        d["location"] = {"file": f.location.file, "line": f.location.line}
    return d


@dataclass
class Diff:
    new_failures: list[dict[str, Any]] = field(default_factory=list)
    fixed: list[dict[str, Any]] = field(default_factory=list)
    status_changes: list[dict[str, Any]] = field(default_factory=list)
    measurement_changes: list[dict[str, Any]] = field(default_factory=list)
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    still_failing: int = 0
    old: dict[str, Any] = field(default_factory=dict)
    new: dict[str, Any] = field(default_factory=dict)

    @property
    def regressed(self) -> bool:
        return bool(self.new_failures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "spec-check/diff/1",
            "regressed": self.regressed,
            "old": self.old,
            "new": self.new,
            "new_failures": self.new_failures,
            "fixed": self.fixed,
            "still_failing": self.still_failing,
            "status_changes": self.status_changes,
            "measurement_changes": self.measurement_changes,
            "added": self.added,
            "removed": self.removed,
        }


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def diff_reports(old: Report, new: Report) -> Diff:
    a, b = keyed(old.findings), keyed(new.findings)
    d = Diff(old=_about(old), new=_about(new))
    for key, nf in b.items():
        of = a.get(key)
        if of is None:
            d.added.append(_brief(key, nf))
            if failing(nf):
                d.new_failures.append(_brief(key, nf))
            continue
        if failing(nf) and not failing(of):
            d.new_failures.append({**_brief(key, nf), "was": of.status.value})
        elif failing(of) and not failing(nf):
            d.fixed.append({**_brief(key, nf), "was": of.status.value})
        elif failing(of) and failing(nf):
            d.still_failing += 1
        if of.status is not nf.status and failing(nf) == failing(of):
            d.status_changes.append({**_brief(key, nf), "was": of.status.value})
        if of.observed != nf.observed and (of.observed is not None or nf.observed is not None):
            change: dict[str, Any] = {
                "subject": key[0],
                "rule": key[1],
                "item": key[2] or None,
                "old": of.observed,
                "new": nf.observed,
                "unit": nf.unit or of.unit,
            }
            ov, nv = _number(of.value), _number(nf.value)
            if ov is not None and nv is not None and (of.unit == nf.unit):
                change["delta"] = nv - ov
            d.measurement_changes.append(change)
    for key, of in a.items():
        if key not in b:
            d.removed.append(_brief(key, of))
    return d


def _about(r: Report) -> dict[str, Any]:
    return {
        "generated_at": r.generated_at,
        "spec_version": r.spec_version,
        "rule_pack": dict(r.rule_pack),
        "summary": r.summary.to_dict(),
    }


def _line(item: dict[str, Any]) -> str:
    where = item["subject"] + (f" {item['item']}" if item.get("item") else "")
    loc = item.get("location")
    if loc:
        where = f"{loc['file']}:{loc['line']}" if loc.get("line") else loc["file"]
    return f"{item['rule']} {where}"


def render_text(d: Diff) -> str:
    """The diff for people (one line per change; untrusted text is kept on one line)."""

    def clean(v: Any) -> str:
        return "" if v is None else str(v).replace("\n", " ").replace("\r", " ")

    out = [
        f"old: {d.old['generated_at']} ({d.old['summary']['fail']} fail, {d.old['summary']['error']} error)"
        f"  new: {d.new['generated_at']} ({d.new['summary']['fail']} fail, {d.new['summary']['error']} error)"
    ]
    if d.old["rule_pack"] != d.new["rule_pack"] or d.old["spec_version"] != d.new["spec_version"]:
        out.append(
            f"note: checked against different rules (old spec v{d.old['spec_version']} "
            f"{d.old['rule_pack'].get('digest', '')[:19]}, new spec v{d.new['spec_version']} "
            f"{d.new['rule_pack'].get('digest', '')[:19]})"
        )
    sections = (
        ("New failures", d.new_failures),
        ("Fixed", d.fixed),
        ("Other status changes", d.status_changes),
    )
    for title, rows in sections:
        if rows:
            out.append(f"\n{title} ({len(rows)}):")
            for r in rows:
                was = f"{r['was']} -> " if "was" in r else ""
                observed = (
                    f" observed {clean(r['observed'])}" if r.get("observed") is not None else ""
                )
                out.append(f"  {was}{r['status']:<5} {clean(_line(r))}{observed}")
    if d.measurement_changes:
        out.append(f"\nChanged measurements ({len(d.measurement_changes)}):")
        for m in d.measurement_changes:
            delta = (
                f" ({m['delta']:+g}{' ' + clean(m['unit']) if m.get('unit') else ''})"
                if "delta" in m
                else ""
            )
            item = f" {clean(m['item'])}" if m.get("item") else ""
            out.append(
                f"  {clean(m['rule'])} {clean(m['subject'])}{item}: {clean(m['old'])} -> "
                f"{clean(m['new'])}{delta}"
            )
    for title, rows in (("Only in new", d.added), ("Only in old", d.removed)):
        if rows:
            out.append(f"\n{title}: {len(rows)} finding{'s' if len(rows) != 1 else ''}")
    out.append(
        f"\n{len(d.new_failures)} new failure(s), {len(d.fixed)} fixed, {d.still_failing} still failing"
        + (" — REGRESSED" if d.regressed else "")
    )
    return "\n".join(out) + "\n"
