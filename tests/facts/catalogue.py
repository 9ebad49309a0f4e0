"""Check probe output against spec/facts/node.yaml: every fact, every field, types, units."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from validator.facts.document import new_document, validate

CATALOGUE = Path(__file__).resolve().parents[2] / "spec/facts/node.yaml"


def load_catalogue() -> dict[str, Any]:
    return yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))["facts"]


def _type_ok(kind: str, v: Any) -> bool:
    if kind == "string":
        return isinstance(v, str) and v != ""
    if kind == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "list":
        return isinstance(v, list)
    if kind in ("number", "quantity"):
        return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v == "unlimited"
    raise AssertionError(f"unknown catalogue type {kind}")


def _check(name: str, spec: dict[str, Any], fact: dict[str, Any]) -> None:
    if "error" in fact:
        assert isinstance(fact["error"], str) and fact["error"], name
        return
    assert "value" in fact, f"{name}: {fact}"
    assert _type_ok(spec["type"], fact["value"]), f"{name}: {fact['value']!r} is not {spec['type']}"
    if spec.get("unit"):
        got = fact.get("unit")
        assert got == spec["unit"], f"{name}: unit {got} != {spec['unit']}"


def check_facts(facts: dict[str, dict[str, Any]]) -> None:
    """Every catalogue fact is present and well-formed; nothing outside the catalogue."""
    catalogue = load_catalogue()
    assert set(facts) == set(catalogue)
    validate(new_document("node", "n", facts, tool_version="t", collected_at="c"), "probe")
    for name, spec in catalogue.items():
        fact = facts[name]
        if spec["type"] != "collection":
            _check(name, spec, fact)
            continue
        if "error" in fact:
            continue
        ids = [m["id"] for m in fact["items"]]
        assert len(ids) == len(set(ids)), f"{name}: duplicate ids {ids}"
        for member in fact["items"]:
            assert set(member["fields"]) == set(spec["fields"]), (
                f"{name}[{member['id']}]: fields differ: "
                f"{set(member['fields']) ^ set(spec['fields'])}")
            for fname, fspec in spec["fields"].items():
                _check(f"{name}[{member['id']}].{fname}", fspec, member["fields"][fname])


def fields(facts: dict[str, Any], name: str, item_id: str) -> dict[str, Any]:
    """{field: value-or-error} of one collection member, for terse asserts."""
    for member in facts[name]["items"]:
        if member["id"] == item_id:
            return {k: v.get("value", v) for k, v in member["fields"].items()}
    raise KeyError(f"{name} has no item {item_id}")
