"""The rule and requirement catalogue as data: which rules a pack holds (in spec order),
one rule or requirement found by the ID a person typed, and the JSON forms that
``spec-check rules list --format json`` and ``spec-check spec show --format json`` print.

The library half of ``validator/cli/catalog.py``, which renders the text and markdown
forms. An ID that names nothing raises ``UnknownRuleError`` with the closest IDs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from validator.api.options import DEFAULT_SPEC_VERSION, ReportOptions
from validator.api.steps import Built, build

if TYPE_CHECKING:
    from collections.abc import Mapping

    from validator.report.model import JSONValue
    from validator.rules.rulemodel import FactInfo, Requirement, Rule, RulePack, Spec


@dataclass(frozen=True)
class RuleRow:
    """One rule of ``rules list``: its ID, requirement, level under the spec, scope, summary."""

    id: str
    requirement: str
    level: str
    scope: str
    summary: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "requirement": self.requirement, "level": self.level, "scope": self.scope,
                "summary": self.summary}


def catalogue(spec_version: str = DEFAULT_SPEC_VERSION, rules: Path | None = None,
              rules_version: str | None = None) -> Built:
    """The spec, parameters and rule pack a catalogue verb shows (``build`` of every scope)."""
    return build(ReportOptions(spec_version=spec_version, rules=rules, rules_version=rules_version))


def chosen_rules(built: Built, scope: str | None = None) -> list[Rule]:
    """The pack's rules (of ``scope``, or all), in the spec's requirement order, then by ID."""
    order = {req.id: i for i, req in enumerate(built.ctx.spec.requirements)}
    return sorted((r for r in built.pack.rules if scope is None or r.scope == scope),
                  key=lambda r: (order.get(r.requirement, len(order)), r.id))


def rule_rows(built: Built, rules: list[Rule]) -> list[RuleRow]:
    return [RuleRow(r.id, r.requirement, built.pack.level_of(r, built.ctx.spec), r.scope, r.summary.strip())
            for r in rules]


def find_rule(built: Built, rule_id: str) -> Rule:
    """The rule ``rule_id`` names; an unknown ID raises UnknownRuleError naming the closest."""
    spec, pack = built.ctx.spec, built.pack
    if rule_id not in {r.id for r in pack.rules}:
        from validator.errors import UnknownRuleError

        raise UnknownRuleError(f'no such rule: "{rule_id}"'
                               f"{closest_ids(rule_id, spec, pack)} (see `spec-check rules list`)")
    return pack.get(rule_id)


def closest_ids(typed: str, spec: Spec, pack: RulePack) -> str:
    """`; did you mean NET-01?` for NET-1 (a requirement ID without its zero), else the
    rule or requirement IDs closest to what was typed, one line."""
    import difflib
    import re

    reqs = [q.id for q in spec.requirements]
    ids = reqs + [r.id for r in pack.rules]
    m = re.fullmatch(r"([A-Za-z]+)-?0*(\d+)(\..*)?", typed.strip())
    if m:  # NET-1 -> NET-01, plat-2.gpu-model-mixed -> PLAT-02.gpu-model-mixed
        typed = f"{m.group(1).upper()}-{int(m.group(2)):02d}{m.group(3) or ''}"
        if typed in ids:
            return f"; did you mean {typed}?"
    close = difflib.get_close_matches(typed, ids, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def fact_words(catalogue: Mapping[str, FactInfo], fact: str, field: str | None) -> str:
    """A fact in words: its label from the fact catalogue (spec/facts/*.yaml), then its key in
    quotes, the name `spec-check probe` output and --facts files use: `hung-rank detection time
    ("job.recovery.hang_detection")`, `each GPU's ECC mode (current) ("gpu.devices" field "ecc_enabled")`."""
    info = catalogue.get(fact)
    label = info.label if info is not None else fact
    if not field:
        return f'{label} ("{fact}")'
    sub = info.fields.get(field) if info is not None else None
    return f'each {label}\'s {sub.label if sub is not None else field} ("{fact}" field "{field}")'


def params_of(values: list[object]) -> list[str]:
    """The spec parameters a rule's values name, in order of first use."""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            if isinstance(v.get("param"), str) and v["param"] not in out:
                out.append(v["param"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for v in values:
        walk(v)
    return out


def requirements(spec: Spec, spec_version: str, prefix: str | None) -> list[Requirement]:
    """The spec's requirements, or those whose ID starts with ``prefix`` (any case); a
    prefix that matches none raises UnknownRuleError."""
    reqs = spec.requirements
    if prefix:
        reqs = [r for r in reqs if r.id.startswith(prefix.upper())]
        if not reqs:
            from validator.errors import UnknownRuleError

            raise UnknownRuleError(f'no requirement "{prefix}" in spec {spec_version}')
    return list(reqs)


def spec_as_dict(spec: Spec, reqs: list[Requirement], only_theirs: bool) -> dict[str, JSONValue]:
    """The spec as ``spec show --format json`` prints it: ``reqs`` only, and with
    ``only_theirs`` only the parameters those requirements use."""
    data: dict[str, JSONValue] = spec.model_dump(mode="json")
    data["requirements"] = [r.model_dump(mode="json") for r in reqs]
    if only_theirs:
        used = {p for r in reqs for p in r.parameters}
        data["parameters"] = {k: v for k, v in data["parameters"].items() if k in used}
    return data
