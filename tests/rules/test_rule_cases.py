"""Every rule's pass/fail cases (tests/rules/cases/*.yaml), and the catalogue's coverage."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import built, run_rules
from validator.report.model import Status

CASES_DIR = Path(__file__).parent / "cases"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Case facts replace base facts; a collection keeps exactly the items the case names,
    each merged over the base item of the same ID."""
    out = copy.deepcopy(base)
    for name, value in over.items():
        if isinstance(value, dict) and "items" in value and isinstance(out.get(name), dict):
            base_items = out[name].get("items", {})
            value = {"items": {i: {**base_items.get(i, {}), **(f or {})} for i, f in value["items"].items()}}
        out[name] = value
    return out


def _load_cases() -> list[tuple[str, str, str, dict[str, Any]]]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        base = data.get("base", {})
        if "base_from" in data:  # a later pack's cases: another file's base, plus the facts it adds
            base = {**yaml.safe_load((CASES_DIR / data["base_from"]).read_text())["base"], **base}
        kind = data.get("kind", "node")
        version = str(data.get("rules_version", "1.0"))
        for rule_id, rule_cases in data["rules"].items():
            for name, case in rule_cases.items():
                case = dict(case or {})
                case["facts"] = _merge(base, case.get("facts") or {})
                case["kind"] = kind
                case["rules_version"] = version
                cases.append((path.stem, rule_id, name, case))
    return cases


CASES = _load_cases()


@pytest.mark.parametrize(("file", "rule_id", "name", "case"), CASES,
                         ids=[f"{r}-{n}" for _, r, n, _ in CASES])
def test_rule_case(file: str, rule_id: str, name: str, case: dict[str, Any]) -> None:
    findings = run_rules(case["facts"], select=(rule_id,), sets=tuple(case.get("sets", ())),
                         kind=case["kind"], rules_version=case["rules_version"])
    findings = [f for f in findings if f.rule == rule_id]
    assert findings, f"{rule_id} gave no finding"
    expect = case["expect"]
    if isinstance(expect, dict):
        got = {f.item: f.status.value for f in findings}
        assert got == expect, [(f.item, f.status.value, f.message) for f in findings]
    else:
        assert {f.status.value for f in findings} == {expect}, [(f.item, f.status.value, f.message)
                                                                for f in findings]
    for f in findings:
        assert f.message and f.expected and f.remediation
        if f.status in (Status.PASS, Status.FAIL, Status.WARN):
            assert f.observed is not None, "a verdict carries the observed value"


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_every_rule_has_a_pass_and_a_failing_case(version: str) -> None:
    """Every rule of every bundled pack; a rule a later pack inherits unchanged is covered by
    the earlier pack's cases, a rule it adds or changes needs cases of its own version."""
    statuses: dict[tuple[str, str], set[str]] = {}
    for _, rule_id, _, case in CASES:
        exp = case["expect"]
        statuses.setdefault((case["rules_version"], rule_id), set()).update(
            exp.values() if isinstance(exp, dict) else {exp})
    pack = built(rules_version=version).pack
    base = {r.id: r for r in built(rules_version="1.0").pack.rules}
    for r in pack.rules:
        if r.against is not None:  # judged with a second document: tests/jobnodes/test_pairs.py has its cases
            continue
        key = (version, r.id) if base.get(r.id) != r else ("1.0", r.id)
        assert key in statuses, f"{r.id} (pack v{key[0]}) has no cases"
        assert "pass" in statuses[key], f"{r.id} (pack v{key[0]}) has no pass case"
        assert statuses[key] & {"fail", "warn"}, f"{r.id} (pack v{key[0]}) has no fail/warn case"


def test_every_requirement_in_scope_has_rules() -> None:
    b = built()
    by_req: dict[str, set[str]] = {}
    for r in b.pack.rules:
        by_req.setdefault(r.requirement, set()).add(r.scope)
    node_reqs = ["NET-01", "NET-02", "NET-03", "TOPO-01", "TOPO-02", "MEM-01", "MEM-02", "MEM-03",
                 "MON-03", "PLAT-01", "PLAT-03"]
    for req in node_reqs:
        assert "node" in by_req.get(req, set()), f"{req} has no node rule"
    for req in b.ctx.spec.requirements:
        for scope in req.scopes:
            if scope == "node":
                assert "node" in by_req.get(req.id, set()) or req.id == "ENER-01", req.id


def test_rule_levels_follow_requirements_unless_stated() -> None:
    b = built()
    for r in b.pack.rules:
        req = b.ctx.spec.requirement(r.requirement)
        assert req is not None
        if r.level is None:
            assert b.pack.level_of(r, b.ctx.spec) == req.level
