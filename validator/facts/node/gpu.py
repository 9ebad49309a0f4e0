"""The GPU source: picks the vendor backend from the PCI scan, which needs no driver.

AMD-only nodes go to amdsmi; everything else goes to NVML, which also decides "no GPU"
(NVML library missing and no NVIDIA function on the bus). amdsmi is never imported on a
node without AMD accelerators: its import is slow and noisy.
"""

from __future__ import annotations

from validator.facts.document import Fact, error, value
from validator.facts.node import amd, nvidia
from validator.facts.node.base import Context
from validator.facts.node.pci import pci_vendor_counts

NAME = "gpu"
FACTS = (*nvidia.FACTS, "gpu.memory_total")


FOREIGN_ROOT = ("{lib} not queried: probing a foreign root (--sysfs {sysfs}); the GPU driver answers for the "
                "machine running spec-check, not that tree. Pass --nvml if {sysfs} is this host's /sys "
                "(a container with the host's /sys mounted)")


def collect(ctx: Context) -> dict[str, Fact]:
    counts = pci_vendor_counts(ctx) or {}
    amd_only = bool(counts.get("amd") and not counts.get("nvidia"))
    if not ctx.query_drivers:
        why = FOREIGN_ROOT.format(lib="amdsmi" if amd_only else "NVML", sysfs=ctx.sysfs)
        out = {name: error(why, source="probe") for name in FACTS}
        vendor = "amd" if amd_only else "nvidia" if counts.get("nvidia") else None
        if vendor:  # the tree's own PCI scan knows that much
            out["gpu.vendor"] = value(vendor, source="PCI devices (/sys/bus/pci/devices, as lspci lists them)")
        return out
    if amd_only:
        out = amd.collect(ctx)
    else:
        out = nvidia.collect(ctx)
    out["gpu.memory_total"] = memory_total(out["gpu.devices"])
    return out


def memory_total(devices: Fact) -> Fact:
    """The sum of every GPU's memory; unknown if any GPU's is (MEM-03 compares host RAM)."""
    if "items" not in devices:
        return error(devices.get("error", "GPUs unknown"), source=devices.get("source"))
    total = 0
    for gpu in devices["items"]:
        mem = gpu["fields"].get("memory_total", {})
        if "value" not in mem:
            return error(f"{gpu['id']} memory unknown: {mem.get('error', 'not gathered')}",
                         source=mem.get("source"))
        total += mem["value"]
    return value(total, unit="B", source="sum of every GPU's total memory (gpu.devices)")
