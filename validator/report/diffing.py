"""Comparing two results (``spec-check diff OLD NEW``): what broke, what was fixed, and
which measured values moved.

Findings are matched by (subject, rule, item): the same check on the same GPU, port or
host pair across runs. A finding "fails" as the conformance verdict counts it: a fail,
or an error on a MUST, not under an active waiver. The diff is the gate for "did this
change (a driver upgrade, a config edit) make anything worse", so *new* failures
decide its exit code; old failures that are still there do not.

A diff is only a fair gate when both runs asked the same questions. NEW may have been run
under other parameters (a relaxed ``fabric_port_rate`` turns fails into passes), with
rules deselected (``--ignore``), or without some hosts. Those differences are reported
first, as *configuration changes*, and one that can hide a failure makes the diff a
regression too (exit 1) unless ``--allow-config-change`` says the change is intended:

* any parameter whose value differs (spec-check cannot know in general which direction
  is weaker, so every change is named; the origins are shown);
* a different profile;
* rules that OLD evaluated and NEW did not (``--select``/``--ignore``, a smaller rule
  pack), and a selection that changed;
* subjects (hosts, configs) in OLD that NEW lacks.

A finding whose status is unchanged but whose waiver came or went is shown as such
("waiver expired", "now waived"), not as "fail -> fail". Measured values are compared
with a relative tolerance (5% by default: run-to-run noise is not a change), deltas are
rounded, and cumulative counters (energy in joules, which only ever grow) are left out of
"Changed measurements".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from validator.report.model import Finding, Report, Status, finding_id
from validator.versions import DIFF_SCHEMA

if TYPE_CHECKING:
    from validator.report.model import JSONValue

Key = tuple[str, str, str]
TOLERANCE = 0.05
# units of monotonic counters: their value grows between any two runs, so a change says nothing
COUNTER_UNITS = frozenset({"J", "mJ", "kJ", "MJ", "Wh", "kWh"})


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


def _waived_problem(f: Finding) -> bool:
    """A fail that an active waiver keeps out of the verdict (no waiver accepts an error)."""
    return f.waived and f.status is Status.FAIL


def _brief(key: Key, f: Finding) -> dict[str, JSONValue]:
    d: dict[str, JSONValue] = {
        "id": finding_id(key[1], key[0], key[2]),  # the finding's ID in both results
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
    new_failures: list[dict[str, JSONValue]] = field(default_factory=list)
    fixed: list[dict[str, JSONValue]] = field(default_factory=list)
    status_changes: list[dict[str, JSONValue]] = field(default_factory=list)
    measurement_changes: list[dict[str, JSONValue]] = field(default_factory=list)
    added: list[dict[str, JSONValue]] = field(default_factory=list)
    removed: list[dict[str, JSONValue]] = field(default_factory=list)
    still_failing: int = 0
    old: dict[str, JSONValue] = field(default_factory=dict)
    new: dict[str, JSONValue] = field(default_factory=dict)
    config_changes: list[dict[str, JSONValue]] = field(default_factory=list)
    counters_changed: int = 0
    allow_config_change: bool = False

    @property
    def weakened(self) -> bool:
        """NEW asked fewer or easier questions than OLD (see the module docstring)."""
        return any(c["weakens"] for c in self.config_changes)

    @property
    def regressed(self) -> bool:
        return bool(self.new_failures) or (self.weakened and not self.allow_config_change)

    def to_dict(self) -> dict[str, JSONValue]:
        return {
            "schema": DIFF_SCHEMA,
            "regressed": self.regressed,
            "weakened": self.weakened,
            "allow_config_change": self.allow_config_change,
            "config_changes": self.config_changes,
            "old": self.old,
            "new": self.new,
            "new_failures": self.new_failures,
            "fixed": self.fixed,
            "still_failing": self.still_failing,
            "status_changes": self.status_changes,
            "measurement_changes": self.measurement_changes,
            "counters_changed": self.counters_changed,
            "added": self.added,
            "removed": self.removed,
        }


def _number(v: JSONValue) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _waiver_note(of: Finding, nf: Finding) -> str | None:
    """Why a finding started or stopped counting when its status did not change."""
    if of.status is not nf.status:
        return None
    was, now = of.waived, nf.waived
    if was and not now:
        return "waiver expired" if nf.waiver else "waiver removed"
    if now and not was:
        return "now waived"
    return None


def _round(x: float) -> float:
    """A delta without float noise (391.7 - 387.9 is 3.8, not 3.8000000000000114)."""
    return float(f"{x:.6g}")


def config_changes(old: Report, new: Report) -> list[dict[str, JSONValue]]:
    """How NEW's run differed from OLD's in what it asked; ``weakens`` marks the ones that
    can turn a failure into a pass or hide it."""
    out: list[dict[str, JSONValue]] = []
    for name in sorted(set(old.parameters) | set(new.parameters)):
        a, b = old.parameters.get(name) or {}, new.parameters.get(name) or {}
        if a.get("value") != b.get("value"):
            out.append(
                {
                    "kind": "parameter",
                    "name": name,
                    "old": a.get("value"),
                    "new": b.get("value"),
                    "old_origin": a.get("origin"),
                    "new_origin": b.get("origin"),
                    "weakens": True,
                }
            )
    if old.profile != new.profile:
        out.append({"kind": "profile", "old": old.profile, "new": new.profile, "weakens": True})
    if (old.selection or {}) != (new.selection or {}):
        out.append(
            {
                "kind": "selection",
                "old": old.selection or {},
                "new": new.selection or {},
                "weakens": False,  # the rules it drops are counted below
            }
        )
    old_rules = {f.rule for f in old.findings}
    new_rules = {f.rule for f in new.findings}
    dropped = sorted(old_rules - new_rules)
    if dropped:
        out.append({"kind": "rules_not_evaluated", "rules": dropped, "weakens": True})
    old_subjects = {s.name for s in old.subjects} | {f.subject for f in old.findings}
    new_subjects = {s.name for s in new.subjects} | {f.subject for f in new.findings}
    lost = sorted(old_subjects - new_subjects)
    if lost:
        out.append({"kind": "subjects_lost", "subjects": lost, "weakens": True})
    gained = sorted(new_subjects - old_subjects)
    if gained:
        out.append({"kind": "subjects_added", "subjects": gained, "weakens": False})
    if old.rule_pack != new.rule_pack or old.spec_version != new.spec_version:
        out.append(
            {
                "kind": "rule_pack",
                "old": {"spec_version": old.spec_version, **dict(old.rule_pack)},
                "new": {"spec_version": new.spec_version, **dict(new.rule_pack)},
                "weakens": False,  # a rule it lost shows as rules_not_evaluated
            }
        )
    return out


def diff_reports(
    old: Report,
    new: Report,
    *,
    tolerance: float = TOLERANCE,
    allow_config_change: bool = False,
) -> Diff:
    a, b = keyed(old.findings), keyed(new.findings)
    d = Diff(old=_about(old), new=_about(new), allow_config_change=allow_config_change)
    d.config_changes = config_changes(old, new)
    for key, nf in b.items():
        of = a.get(key)
        if of is None:
            d.added.append(_brief(key, nf))
            if nf.against_verdict:
                d.new_failures.append(_brief(key, nf))
            continue
        note = _waiver_note(of, nf)
        extra = {"was": of.status.value, **({"change": note} if note else {})}
        if nf.against_verdict and not of.against_verdict:
            d.new_failures.append({**_brief(key, nf), **extra})
        elif ((of.against_verdict or _waived_problem(of)) and not nf.against_verdict
              and not (_waived_problem(of) and _waived_problem(nf))):
            # a failure now waived, and a waived failure that now passes (the waiver hid it,
            # the fix removed it), are fixed; one waived in both is not
            d.fixed.append({**_brief(key, nf), **extra})
        elif of.against_verdict and nf.against_verdict:
            d.still_failing += 1
        if of.status is not nf.status and nf.against_verdict == of.against_verdict:
            d.status_changes.append({**_brief(key, nf), "was": of.status.value})
        if of.observed != nf.observed and (of.observed is not None or nf.observed is not None):
            unit = nf.unit or of.unit
            ov, nv = _number(of.value), _number(nf.value)
            numeric = ov is not None and nv is not None and of.unit == nf.unit
            if numeric and unit in COUNTER_UNITS:
                d.counters_changed += 1
                continue
            if numeric and ov is not None and nv is not None:
                scale = max(abs(ov), abs(nv))
                if scale and abs(nv - ov) / scale <= tolerance:
                    continue
            change: dict[str, JSONValue] = {
                "subject": key[0],
                "rule": key[1],
                "item": key[2] or None,
                "old": of.observed,
                "new": nf.observed,
                "unit": unit,
            }
            if numeric and ov is not None and nv is not None:
                change["delta"] = _round(nv - ov)
            d.measurement_changes.append(change)
    for key, of in a.items():
        if key not in b:
            d.removed.append(_brief(key, of))
    return d


def _about(r: Report) -> dict[str, JSONValue]:
    return {
        "generated_at": r.generated_at,
        "spec_version": r.spec_version,
        "rule_pack": dict(r.rule_pack),
        "summary": r.summary.to_dict(),
    }


def _line(item: dict[str, JSONValue]) -> str:
    where = item["subject"] + (f" {item['item']}" if item.get("item") else "")
    loc = item.get("location")
    if loc:
        where = f"{loc['file']}:{loc['line']}" if loc.get("line") else loc["file"]
    return f"{item['rule']} {where}"


def render_text(d: Diff) -> str:
    """The diff for people (one line per change; untrusted text is kept on one line)."""

    def clean(v: JSONValue) -> str:
        return "" if v is None else str(v).replace("\n", " ").replace("\r", " ")

    out = [
        f"old: {d.old['generated_at']} ({d.old['summary']['fail']} fail, {d.old['summary']['error']} error)"
        f"  new: {d.new['generated_at']} ({d.new['summary']['fail']} fail, {d.new['summary']['error']} error)"
    ]
    if d.config_changes:
        head = "NEW was run differently from OLD"
        if d.weakened:
            head += (
                " (accepted: --allow-config-change)"
                if d.allow_config_change
                else "; a failure can hide behind this, so the diff fails (--allow-config-change to accept)"
            )
        out.append(f"\nConfiguration changes ({len(d.config_changes)}): {head}")
        for c in d.config_changes:
            out.append("  " + ("! " if c["weakens"] else "  ") + clean(_config_line(c)))
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
                if r.get("change"):
                    was = f"({r['change']}) "
                observed = (
                    f" observed {clean(r['observed'])}" if r.get("observed") is not None else ""
                )
                out.append(f"  {was}{r['status']:<5} {clean(_line(r))}{observed}")
    if d.measurement_changes:
        out.append(f"\nChanged measurements ({len(d.measurement_changes)}):")
        for m in d.measurement_changes:
            delta = (
                f" ({m['delta']:+.4g}{' ' + clean(m['unit']) if m.get('unit') else ''})"
                if "delta" in m
                else ""
            )
            item = f" {clean(m['item'])}" if m.get("item") else ""
            out.append(
                f"  {clean(m['rule'])} {clean(m['subject'])}{item}: {clean(m['old'])} -> "
                f"{clean(m['new'])}{delta}"
            )
    if d.counters_changed:
        out.append(f"\n{d.counters_changed} cumulative counter(s) (energy) moved, as they always do; not listed")
    for title, rows in (("Only in new", d.added), ("Only in old", d.removed)):
        if rows:
            out.append(f"\n{title}: {len(rows)} finding{'s' if len(rows) != 1 else ''}")
    out.append(
        f"\n{len(d.new_failures)} new failure(s), {len(d.fixed)} fixed, {d.still_failing} still failing"
        + (" — REGRESSED" if d.new_failures else "")
        + (" — NEW RUN WEAKER THAN OLD" if d.weakened and not d.allow_config_change else "")
    )
    return "\n".join(out) + "\n"


def _config_line(c: dict[str, JSONValue]) -> str:
    kind = c["kind"]
    if kind == "parameter":
        return (
            f"parameter {c['name']}: {c['old']} ({c['old_origin']}) -> {c['new']} ({c['new_origin']})"
        )
    if kind == "profile":
        return f"profile: {c['old'] or 'none'} -> {c['new'] or 'none'}"
    if kind == "selection":
        def sel(v: dict[str, JSONValue]) -> str:
            return "; ".join(f"{k} {', '.join(x)}" for k, x in sorted(v.items()) if x) or "all rules"

        return f"selection: {sel(c['old'])} -> {sel(c['new'])}"
    if kind == "rules_not_evaluated":
        rules = c["rules"]
        more = f" and {len(rules) - 8} more" if len(rules) > 8 else ""
        return f"{len(rules)} rule(s) evaluated in OLD, not in NEW: {', '.join(rules[:8])}{more}"
    if kind in ("subjects_lost", "subjects_added"):
        names = c["subjects"]
        more = f" and {len(names) - 8} more" if len(names) > 8 else ""
        which = "in OLD, missing from NEW" if kind == "subjects_lost" else "only in NEW"
        return f"{len(names)} subject(s) {which}: {', '.join(names[:8])}{more}"
    old, new = c["old"], c["new"]
    return (
        f"rules: spec v{old.get('spec_version')} {str(old.get('digest', ''))[:19]} -> "
        f"spec v{new.get('spec_version')} {str(new.get('digest', ''))[:19]}"
    )
