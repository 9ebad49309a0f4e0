"""PCI facts: accelerators on the bus, PCIe link parsing, and GPU-NIC distance.

The PCI scan is independent of any driver, which is why the GPU source trusts it to tell a
node without GPUs (no NVIDIA function on the bus) from a node whose driver is broken.

Traps:
* NVSwitches are NVIDIA functions too (class 0x0680xx, a bridge); only display (0x0300),
  3D (0x0302) and processing-accelerator (0x1200) classes count as accelerators.
* Link speed reads "32.0 GT/s PCIe" (kernel >= 5.7) or "32 GT/s" (older); "Unknown" is an
  error value, never 0.
* Distance follows ``nvidia-smi topo -m`` and NCCL's sysfs walk: a PCIe switch shows as two
  path levels (upstream, downstream port), so switches are counted by upstream ports.
"""

from __future__ import annotations

from pathlib import Path

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, ReadError, parse_numa, read, read_fact
from validator.lazy import Pattern

NAME = "pci"
FACTS = ("accel.pci_count", "accel.pci_devices")

VENDORS = {"0x10de": "nvidia", "0x1002": "amd"}
# 0x0380 ("display controller, other"): AMD Instinct MI200 cards enumerate so
ACCEL_CLASSES = ("0x0300", "0x0302", "0x0380", "0x1200")
DISTANCE_ORDER = ("PIX", "PXB", "PHB", "NODE", "SYS")
_SPEED = Pattern(r"^(\d+(?:\.\d+)?) GT/s(?: PCIe)?$")


def collect(ctx: Context) -> dict[str, Fact]:
    root = ctx.sysfs / "bus/pci/devices"
    source = str(root)
    try:
        names = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        reason = f"cannot list {root}: {exc.strerror or exc}"
        return {n: error(reason, source=source) for n in FACTS}
    found = []
    for bdf in names:
        dev = root / bdf
        try:
            vendor = read(dev / "vendor").lower()
            if vendor not in VENDORS:
                continue
            cls = read(dev / "class").lower()
            if not cls.startswith(ACCEL_CLASSES):
                continue
            device_id = read(dev / "device").lower()
        except ReadError as exc:
            # a function we cannot identify might be a GPU: say so rather than skip it
            return {n: error(str(exc), source=source) for n in FACTS}
        found.append(item(bdf, {
            "vendor": value(VENDORS[vendor], source=str(dev / "vendor")),
            "device_id": value(device_id, source=str(dev / "device")),
            "numa_node": read_fact(dev / "numa_node", parse_numa),
        }))
    return {
        "accel.pci_count": value(len(found), source=source),
        "accel.pci_devices": items(found, source=source),
    }


def pci_vendor_counts(ctx: Context) -> dict[str, int] | None:
    """Accelerators per vendor from the PCI scan, or None when the scan failed."""
    fact = ctx.facts.get("accel.pci_devices", {})
    if "items" not in fact:
        return None
    counts: dict[str, int] = {}
    for member in fact["items"]:
        vendor = member["fields"]["vendor"].get("value")
        counts[vendor] = counts.get(vendor, 0) + 1
    return counts


def parse_speed(raw: str) -> float | int:
    """'32.0 GT/s PCIe' or '32 GT/s' -> 32; 2.5 stays 2.5. 'Unknown' raises ValueError."""
    m = _SPEED.match(raw.strip())
    if not m:
        raise ValueError(f"link speed not known ({raw!r})")
    speed = float(m.group(1))
    return int(speed) if speed.is_integer() else speed


def link_facts(ctx: Context, bdf: str) -> dict[str, Fact]:
    """current/max link speed and width of one PCI function, each a value or an error."""
    dev = ctx.sysfs / "bus/pci/devices" / bdf
    return {
        "current_speed": read_fact(dev / "current_link_speed", parse_speed, unit="GT/s"),
        "max_speed": read_fact(dev / "max_link_speed", parse_speed, unit="GT/s"),
        "current_width": read_fact(dev / "current_link_width", int, unit="x"),
        "max_width": read_fact(dev / "max_link_width", int, unit="x"),
    }


def pci_path(ctx: Context, bdf: str) -> list[str] | None:
    """['pci0000:15', '0000:15:01.0', ..., bdf] from the device's real sysfs path."""
    link = ctx.sysfs / "bus/pci/devices" / bdf
    try:
        real = link.resolve(strict=True)
        rel = real.relative_to((ctx.sysfs / "devices").resolve())
    except (OSError, RuntimeError, ValueError):
        return None
    parts = list(rel.parts)
    if not parts or not parts[0].startswith("pci") or parts[-1] != bdf:
        return None
    return parts


def numa_of(ctx: Context, bdf: str) -> int | None:
    try:
        return parse_numa(read(ctx.sysfs / "bus/pci/devices" / bdf / "numa_node"))
    except (ReadError, ValueError):
        return None


def _switches(path: list[str]) -> list[str]:
    """Upstream ports of the switches above a device (bridges are root port, up, down...)."""
    bridges = path[1:-1]
    return bridges[1::2]


def distance(ctx: Context, a: str, b: str) -> str | None:
    """PIX | PXB | PHB | NODE | SYS between two PCI functions; None if either is unknown."""
    pa, pb = pci_path(ctx, a), pci_path(ctx, b)
    if pa is None or pb is None:
        return None
    if pa[0] != pb[0]:
        na, nb = numa_of(ctx, a), numa_of(ctx, b)
        return "NODE" if na is not None and na == nb else "SYS"
    sa, sb = _switches(pa), _switches(pb)
    shared = 0
    while shared < min(len(sa), len(sb)) and sa[shared] == sb[shared]:
        shared += 1
    if shared == 0:
        return "PHB"
    crossed = (len(sa) - shared) + (len(sb) - shared) + 1
    return "PIX" if crossed == 1 else "PXB"


def nearest_port(ctx: Context, gpu_bdf: str) -> dict[str, Fact]:
    """The RDMA port closest to a GPU: smallest distance, then higher rate, then name."""
    source = "sysfs: PCI paths of the GPU and each RDMA port"
    ports = ctx.facts.get("rdma.ports", {})
    if "items" not in ports:
        reason = "RDMA ports unknown: " + ports.get("error", "not gathered")
        return _nearest_error(reason, source)
    best: tuple[int, float, str] | None = None
    best_rate: Fact = {}
    for port in ports["items"]:
        f = port["fields"]
        bdf = f.get("pci_bus_id", {}).get("value")
        if not bdf:
            continue
        dist = distance(ctx, gpu_bdf, bdf)
        if dist is None:
            continue
        rate = f.get("rate", {}).get("value")
        key = (DISTANCE_ORDER.index(dist), -(rate if isinstance(rate, (int, float)) else -1),
               port["id"])
        if best is None or key < best:
            best, best_rate = key, f.get("rate", error("rate not gathered"))
    if best is None:
        reason = "no RDMA port on this node" if not ports["items"] else (
            f"no RDMA port with a known PCI path relative to {gpu_bdf}")
        return _nearest_error(reason, source)
    return {
        "nearest_fabric_port": value(best[2], source=source),
        "nearest_fabric_distance": value(DISTANCE_ORDER[best[0]], source=source),
        "nearest_fabric_rate": dict(best_rate),
    }


def _nearest_error(reason: str, source: str) -> dict[str, Fact]:
    return {k: error(reason, source=source) for k in (
        "nearest_fabric_port", "nearest_fabric_distance", "nearest_fabric_rate")}


def sysfs_bdf(bus_id: str) -> str:
    """NVML '00000000:18:00.0' (8-digit domain, upper case) -> sysfs '0000:18:00.0'."""
    domain, _, rest = bus_id.strip().partition(":")
    return f"{int(domain, 16):04x}:{rest.lower()}"


def device_dir(ctx: Context, bdf: str) -> Path:
    return ctx.sysfs / "bus/pci/devices" / bdf
