"""Test helpers: build facts documents tersely and run rules on them (after pre-commit's
run_language and sqlfluff's YAML rule cases)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from validator.cli.common import Built, RunOptions, build
from validator.evaluate.engine import evaluate
from validator.facts.document import new_document
from validator.report.model import Finding

_QTY = re.compile(r"^(-?\d+(?:\.\d+)?)\s*([A-Za-z%/][A-Za-z%/-]*)$")


@lru_cache(maxsize=8)
def built(*sets: str, rules_version: str | None = None) -> Built:
    return build(RunOptions(sets=sets, rules_version=rules_version))


def scalar(v: Any) -> dict[str, Any]:
    """``"400 Gb/s"`` -> value+unit; ``{"error": ...}`` stays; anything else is a value."""
    if isinstance(v, dict) and ("error" in v or "value" in v):
        return v
    if isinstance(v, str):
        m = _QTY.match(v.strip())
        if m:
            n = float(m.group(1))
            return {"value": int(n) if n.is_integer() else n, "unit": m.group(2)}
    return {"value": v}


def fact(v: Any) -> dict[str, Any]:
    """A collection is written ``{ITEM_ID: {FIELD: value}}`` under ``items:``."""
    if isinstance(v, dict) and "items" in v:
        return {"items": [{"id": str(i), "fields": {k: scalar(x) for k, x in (fields or {}).items()}}
                          for i, fields in v["items"].items()]}
    return scalar(v)


def document(facts: dict[str, Any], *, kind: str = "node", name: str = "n1") -> dict[str, Any]:
    return new_document(kind, name, {k: fact(v) for k, v in facts.items()}, tool_version="test",
                        collected_at="2026-11-18T00:00:00Z")  # before the tests' pinned clock: current facts


def run_rules(facts: dict[str, Any], *, select: tuple[str, ...] = (), sets: tuple[str, ...] = (),
              kind: str = "node", rules_version: str | None = None) -> list[Finding]:
    b = built(*sets, rules_version=rules_version)
    return evaluate(b.ctx, b.pack, [document(facts, kind=kind)], select=select)


def own_host(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of a node facts document as host ``name``'s own: its subject and hostname, and a
    machine ID, board serial and GPU UUIDs of its own (of the same lengths), as each real
    node's are. Fleets made of one fixture otherwise hold one machine's facts many times,
    which a replay calls copies (PLAT-02.facts-not-own)."""
    import copy
    import hashlib

    doc = copy.deepcopy(doc)
    doc["subject"] = {**doc["subject"], "name": name}
    facts = doc["facts"]
    tag = hashlib.sha256(name.encode()).hexdigest()
    if isinstance(facts.get("host.hostname"), dict) and "value" in facts["host.hostname"]:
        facts["host.hostname"] = {**facts["host.hostname"], "value": name}
    if isinstance(facts.get("host.machine_id"), dict) and "value" in facts["host.machine_id"]:
        facts["host.machine_id"] = {**facts["host.machine_id"], "value": tag[:32]}
    if isinstance(facts.get("host.board_serial"), dict) and "value" in facts["host.board_serial"]:
        serial = facts["host.board_serial"]["value"]
        facts["host.board_serial"] = {**facts["host.board_serial"], "value": serial[:-6] + tag[:6]}
    for member in (facts.get("gpu.devices") or {}).get("items") or []:
        uuid = member["fields"].get("uuid")
        if isinstance(uuid, dict) and isinstance(uuid.get("value"), str) and uuid["value"].startswith("GPU-"):
            member["fields"]["uuid"] = {**uuid, "value": uuid["value"][:-12] + tag[8:20]}  # the node part
    return doc
