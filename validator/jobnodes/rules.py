"""What a two-document finding takes from its rule: pack data, never code.

The rules ``lint --nodes`` and ``lint --run`` judge are rule-pack entries like every other
(``rules/v1.1/job_pairs.yaml``: ``against: nodes`` or ``against: run``, ``check.op`` a
comparison of ``validator.rules.operators.COMPARISONS``), so ``rules list/explain`` show
them, ``--select/--ignore``, waivers and baselines treat them alike, and the engine
evaluates them. Their ID, requirement, level, summary and remediation reach the findings
as a ``RuleText``; the comparison (``validator.jobnodes.pairs``) decides the status and
says what it saw.

``RULES`` (the bundled pack's two-document rules, by ID) and ``texts`` serve callers that
judge outside a run (the tests, ``checks.judge_job``): the pack is loaded on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.rules.rulemodel import Level

if TYPE_CHECKING:
    from collections.abc import Mapping

    from validator.rules.rulemodel import Rule


@dataclass(frozen=True)
class RuleText:
    """The pack's words for one rule, and its level under the spec the run checks."""

    id: str
    requirement: str
    level: Level
    summary: str
    remediation: str

    @classmethod
    def of(cls, rule: Rule, level: Level) -> RuleText:
        return cls(rule.id, rule.requirement, level, rule.summary.strip(), rule.remediation.strip())


def bundled(spec_version: str = "1.0") -> dict[str, Rule]:
    """The two-document rules of the bundled pack a run of ``spec_version`` uses, by ID."""
    from validator.rules.loader import load_pack
    from validator.rules.spec import load_fact_catalogue, load_spec

    spec = load_spec(spec_version)
    pack = load_pack(spec, load_fact_catalogue())
    return {r.id: r for r in pack.rules if r.against is not None}


_CACHE: dict[str, dict[str, Rule]] = {}


def texts(levels: Mapping[str, Level], spec_version: str = "1.0") -> dict[str, RuleText]:
    """Every bundled two-document rule as a RuleText, its level ``levels`` gives by
    requirement (``levels_of(spec)``; MUST where the spec has none)."""
    rules = _CACHE.get(spec_version)
    if rules is None:
        rules = _CACHE[spec_version] = bundled(spec_version)
    return {i: RuleText.of(r, r.level or levels.get(r.requirement, Level.MUST)) for i, r in rules.items()}


def __getattr__(name: str) -> dict[str, Rule]:  # RULES, loaded when first asked for (it reads the pack)
    if name == "RULES":
        rules = _CACHE.get("1.0")
        if rules is None:
            rules = _CACHE["1.0"] = bundled("1.0")
        return rules
    raise AttributeError(name)
