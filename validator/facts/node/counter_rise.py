"""Error counters that rose since an earlier probe of the same node (``--since FACTS``).

A count since the driver loaded says how a GPU has done; a count that rises between two
probes says what it is doing now, which is what DCGM's health watches judge (NVLink replay
and recovery errors, CRC errors by their rate, PCIe replays per minute). GPUs are matched by
UUID, not by index, which can change across a reboot; a GPU of one probe missing from the
other, or a counter unreadable in either, is said so, never taken as "no rise".
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from validator.facts.document import Document, Fact, error, item, items, value
from validator.facts.node.base import Context
from validator.facts.node.nvidia_counters import FIELDS as COUNTERS

if TYPE_CHECKING:
    from validator.report.model import JSONValue

NAME = "counter_rise"
FACTS = ("gpu.counter_rises",)
NOT_COMPARED = "not compared: give an earlier probe of this node with --since FACTS"


def collect(ctx: Context) -> dict[str, Fact]:
    earlier = getattr(ctx, "since", None)
    if earlier is None:
        return {"gpu.counter_rises": items([], source=NOT_COMPARED)}
    from datetime import timezone

    return {"gpu.counter_rises": rises(earlier, ctx.facts, datetime.now(timezone.utc))}


def _by_uuid(devices: Fact) -> dict[str, dict[str, JSONValue]]:
    out = {}
    for m in devices.get("items", []):
        uuid = m["fields"].get("uuid", {}).get("value")
        if isinstance(uuid, str):
            out[uuid] = m
    return out


def _when(doc: Document) -> datetime | None:
    try:
        return datetime.fromisoformat(str(doc.get("collected_at", "")).replace("Z", "+00:00"))
    except ValueError:
        return None


def rises(earlier_doc: Document, now: dict[str, Fact], now_at: datetime | None = None) -> Fact:
    """One item per GPU of this probe: the counters that rose, as ``name before -> after``."""
    src = f"compared with the probe of {earlier_doc.get('collected_at', 'unknown time')}"
    before_devices = earlier_doc.get("facts", {}).get("gpu.devices", {})
    devices = now.get("gpu.devices", {})
    if "items" not in devices:
        return error(f"this probe's GPUs are unknown: {devices.get('error', 'not gathered')}", source=src)
    if "items" not in before_devices:
        return error(f"the earlier probe's GPUs are unknown: {before_devices.get('error', 'not gathered')}",
                     source=src)
    before = _by_uuid(before_devices)
    then = _when(earlier_doc)
    span = f" in {(now_at - then).total_seconds():.0f} s" if then and now_at else ""
    out = []
    for m in devices["items"]:
        uuid = m["fields"].get("uuid", {}).get("value")
        old = before.get(uuid) if isinstance(uuid, str) else None
        if old is None:
            f: Fact = error(f"{m['id']} ({uuid}) is not in the earlier probe", source=src)
        else:
            risen, unknown = [], []
            for name in COUNTERS:
                a, b = old["fields"].get(name, {}), m["fields"].get(name, {})
                if "value" in a and "value" in b:
                    if b["value"] > a["value"]:
                        risen.append(f"{name} {a['value']} -> {b['value']}{span}")
                elif "value" in a or "value" in b:  # readable once, not the other time
                    unknown.append(name)
            if unknown and not risen:
                f = error(f"unreadable in one of the two probes: {', '.join(unknown)}", source=src)
            else:
                f = value(risen, source=src)
        out.append(item(str(m["id"]), {"uuid": dict(m["fields"].get("uuid", {})) or error("unknown"),
                                       "risen": f}))
    return items(out, source=src)
