"""Every rule's pass/fail cases (tests/rules/cases/*.yaml), and the catalogue's coverage."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import built, run_rules
from validator.model import Status

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
        kind = data.get("kind", "node")
        for rule_id, rule_cases in data["rules"].items():
            for name, case in rule_cases.items():
                case = dict(case or {})
                case["facts"] = _merge(base, case.get("facts") or {})
                case["kind"] = kind
                cases.append((path.stem, rule_id, name, case))
    return cases


CASES = _load_cases()


@pytest.mark.parametrize(("file", "rule_id", "name", "case"), CASES,
                         ids=[f"{r}-{n}" for _, r, n, _ in CASES])
def test_rule_case(file: str, rule_id: str, name: str, case: dict[str, Any]) -> None:
    findings = run_rules(case["facts"], select=(rule_id,), sets=tuple(case.get("sets", ())),
                         kind=case["kind"])
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


def test_every_rule_has_a_pass_and_a_failing_case() -> None:
    statuses: dict[str, set[str]] = {}
    for _, rule_id, _, case in CASES:
        exp = case["expect"]
        statuses.setdefault(rule_id, set()).update(exp.values() if isinstance(exp, dict) else {exp})
    pack = built().pack
    missing = [r.id for r in pack.rules if r.id not in statuses]
    assert not missing, f"rules without cases: {missing}"
    for r in pack.rules:
        assert "pass" in statuses[r.id], f"{r.id} has no pass case"
        assert statuses[r.id] & {"fail", "warn"}, f"{r.id} has no fail/warn case"


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
