"""Values with units and the numbers rule: unit conversion and the refusal of numbers
beyond any real value. Leaves: they import nothing of validator but its errors.
``JSONValue``: any JSON value, the type every stage reads documents with (defined here,
below them all)."""

from collections.abc import Mapping
from typing import Any

JSONValue = Any
"""Any JSON value (an observed fact's raw value, a rule's literal): truly open."""


def identity_of(facts: Mapping[str, JSONValue]) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(machine ID, board serial, GPU UUIDs) of a node document's facts, None where not read:
    what a result records of the machine, and what a fleet replay holds hosts apart by."""
    def text(name: str) -> str | None:
        f = facts.get(name)
        v = f.get("value") if isinstance(f, dict) else None
        return v if isinstance(v, str) and v else None

    uuids: list[str] = []
    for coll in ("gpu.devices", "amd.devices"):
        f = facts.get(coll)
        for m in (f.get("items") or []) if isinstance(f, dict) else []:
            u = (m.get("fields") or {}).get("uuid") if isinstance(m, dict) else None
            if isinstance(u, dict) and isinstance(u.get("value"), str) and u["value"]:
                uuids.append(u["value"])
    return text("host.machine_id"), text("host.board_serial"), tuple(uuids)

