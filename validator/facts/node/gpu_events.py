"""GPU error events in the kernel log: NVIDIA Xid and AMD amdgpu RAS (uncorrectable) events.

The shapes, from the drivers' own source:
* NVIDIA, ``src/nvidia/src/kernel/gpu/rc/kernel_rc.c`` (open-gpu-kernel-modules):
  ``NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s`` and, on a MIG GPU, the
  parenthesis also holds `` GPU-I:%02u`` and `` GPU-CI:%02u``. Old drivers print
  ``NVRM: Xid (0000:01:00): 3, ...`` (no ``PCI:``) and no pid/name. The address is
  domain:bus:device, without the function. The driver always prints ``, `` and a message
  after the number, so a line that ends at the number was cut: its Xid is unknown (the
  "79" may have been "7" and a lost "9").
* AMD, ``drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c`` (Linux): ``dev_info(adev->dev, "%ld
  uncorrectable hardware errors detected in %s block")``, since 6.8 as ``socket: %d, die: %d,
  %lld new uncorrectable hardware errors detected in %s block`` (and a ``... in total in``
  line, which repeats the count so far and is not a new event); dev_info prefixes the
  driver and the PCI function: ``amdgpu 0000:c1:00.0: amdgpu: ...``.

Each event names its GPU by the PCI address in the line, matched against the GPUs the
driver sees (gpu.devices) and the accelerators on the PCI bus (accel.pci_devices): an event
of a PCI address that is neither is an error value (a log from another machine?), never
silently judged as this node's.
"""

from __future__ import annotations

from pathlib import Path

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context
from validator.facts.node.kernel_log import KernelLogError, Log, Record, read_file, read_live
from validator.lazy import Pattern

NAME = "events"
FACTS = ("gpu.xid_events", "gpu.ras_events")

# a record names an event only if its message holds one of these (the live read keeps no other)
XID_MARK = "NVRM: Xid"
RAS_MARK = "uncorrectable hardware errors detected in"
XID = Pattern(r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
                 r"(?P<mig>[^)]*)\): (?P<xid>\d+)(?P<sep>,\s?)?(?P<text>.*)$")
RAS = Pattern(r"amdgpu (?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): .*?"
                 r"(?P<count>\d+) (?:new )?uncorrectable hardware errors detected in "
                 r"(?!total in )(?P<block>\S+) block")
TEXT_MAX = 300
FOREIGN = ("not read: probing a recorded tree (--sysfs {sysfs}), whose kernel log is not "
           "this machine's; pass --kernel-log FILE (a saved dmesg or journalctl -k)")


def collect(ctx: Context) -> dict[str, Fact]:
    path: Path | None = getattr(ctx, "kernel_log", None)
    try:
        if path is not None:
            log = read_file(path)
        elif ctx.live or (ctx.query_drivers and ctx.nvml is None and ctx.amdsmi_loader is None):
            log = read_live(only=(XID_MARK, RAS_MARK))  # this host (or a container given its /sys with --nvml): its log
        else:
            why = FOREIGN.format(sysfs=ctx.sysfs)
            return {name: error(why, source="kernel log") for name in FACTS}
    except KernelLogError as exc:
        return {name: error(f"kernel log unreadable: {exc}", source="kernel log") for name in FACTS}
    gpus = _known_gpus(ctx)
    return {"gpu.xid_events": xid_events(log, gpus), "gpu.ras_events": ras_events(log, gpus)}


class _Gpus:
    """The node's GPUs by PCI address, from NVML/amdsmi and from the PCI scan."""

    def __init__(self, driver: dict[str, str] | None, bus: set[str] | None):
        self.driver = driver  # "0000:18:00.0" -> "GPU0"; None: unknown
        self.bus = bus  # PCI addresses of accelerators on the bus; None: unknown

    def name(self, pci: str) -> Fact:
        """The GPU an event names: ``GPU0``, or a PCI function the driver does not show."""
        pci = pci.lower()
        if self.driver:
            for bdf, gpu in self.driver.items():
                if bdf == pci or bdf.startswith(pci + "."):
                    return value(gpu, source="gpu.devices pci_bus_id")
        if self.bus:
            for bdf in sorted(self.bus):
                if bdf == pci or bdf.startswith(pci + "."):
                    return value(f"{bdf} (on the PCI bus, not seen by the GPU driver)",
                                 source="accel.pci_devices")
        if self.driver is None and self.bus is None:
            return error("this node's GPUs are unknown (neither the GPU driver nor the PCI scan "
                         "answered)", source="gpu.devices")
        known = sorted({*(self.driver or {}), *(self.bus or set())})
        return error(f"PCI {pci} is no GPU of this node (GPUs: {', '.join(known) or 'none'}): "
                     "a kernel log from another machine, or a GPU removed since",
                     source="gpu.devices, accel.pci_devices")


def _known_gpus(ctx: Context) -> _Gpus:
    driver: dict[str, str] | None = None
    devices = ctx.facts.get("gpu.devices", {})
    if "items" in devices:
        driver = {}
        for m in devices["items"]:
            bdf = m["fields"].get("pci_bus_id", {}).get("value")
            if isinstance(bdf, str):
                driver[bdf.lower()] = str(m["id"])
    bus: set[str] | None = None
    accel = ctx.facts.get("accel.pci_devices", {})
    if "items" in accel:
        bus = {str(m["id"]).lower() for m in accel["items"]}
    return _Gpus(driver, bus)


def _age(log: Log, rec: Record) -> Fact:
    """Seconds from the event to the moment the log was read (live) or its last line (a file)."""
    what = "when read" if not rec.line else "at the log's last line"
    if rec.since_boot is not None and log.now_since_boot is not None:
        return value(round(max(0.0, log.now_since_boot - rec.since_boot), 3), unit="s",
                     source=f"{log.source}: boot clock {what}")
    if rec.wall is not None and log.now_wall is not None:
        return value(round(max(0.0, (log.now_wall - rec.wall).total_seconds()), 3), unit="s",
                     source=f"{log.source}: wall clock {what}")
    return error("the line carries no time stamp", source=log.source)


def _where(log: Log, rec: Record) -> str:
    return f"{log.source}:{rec.line}" if rec.line else log.source


def xid_events(log: Log, gpus: _Gpus) -> Fact:
    out = []
    seen: dict[str, int] = {}
    for rec in log.records:
        if XID_MARK not in rec.message:
            continue
        where = _where(log, rec)
        m = XID.search(rec.message)
        text = rec.message[rec.message.find(XID_MARK):][:TEXT_MAX]
        if m is None:
            f: dict[str, Fact] = {
                "xid": error(f"Xid line of no known shape (cut mid-way?): {text!r}", source=where),
                "pci_bus_id": error("not in the line", source=where),
                "gpu": error("the line names no PCI address", source=where),
            }
            key = f"line {rec.line}" if rec.line else f"record at {rec.when()}"
        else:
            pci = m.group("pci").lower()
            xid: Fact = value(int(m.group("xid")), source=where)
            if not m.group("sep"):
                xid = error(f"Xid line ends at the number {m.group('xid')} (cut mid-way: the driver "
                            "always prints a message after it)", source=where)
            f = {"xid": xid, "pci_bus_id": value(pci, source=where), "gpu": gpus.name(pci)}
            if "error" in f["gpu"] and "no GPU of this node" in f["gpu"]["error"] and "value" in xid:
                f["xid"] = error(f"Xid {xid['value']} of PCI {pci}: {f['gpu']['error']}", source=where)
            mig = m.group("mig").strip()
            f["text"] = value((f"({mig}) " if mig else "") + m.group("text")[:TEXT_MAX], source=where)
            key = f"PCI:{pci} Xid {m.group('xid')} at {rec.when()}"
        f.setdefault("text", value(text, source=where))
        f["time"] = value(rec.when(), source=where)
        f["age"] = _age(log, rec)
        n = seen.get(key, 0)
        seen[key] = n + 1
        out.append(item(key if not n else f"{key} #{n + 1}", f))
    return items(out, source=log.source)


def ras_events(log: Log, gpus: _Gpus) -> Fact:
    out = []
    seen: dict[str, int] = {}
    for rec in log.records:
        if RAS_MARK not in rec.message:
            continue
        m = RAS.search(rec.message)
        if m is None:
            continue  # the "in total in" summary, or another driver's words
        where = _where(log, rec)
        pci = m.group("pci").lower()
        f: dict[str, Fact] = {
            "count": value(int(m.group("count")), source=where),
            "block": value(m.group("block"), source=where),
            "pci_bus_id": value(pci, source=where),
            "gpu": gpus.name(pci),
            "text": value(rec.message[:TEXT_MAX], source=where),
            "time": value(rec.when(), source=where),
            "age": _age(log, rec),
        }
        if "error" in f["gpu"] and "no GPU of this node" in f["gpu"]["error"]:
            f["count"] = error(f"{f['gpu']['error']}", source=where)
        key = f"{pci} {m.group('block')} at {rec.when()}"
        n = seen.get(key, 0)
        seen[key] = n + 1
        out.append(item(key if not n else f"{key} #{n + 1}", f))
    return items(out, source=log.source)
