"""Network interfaces from /sys/class/net: speed, MTU, state, PCI function, RDMA.

Traps:
* ``speed`` is Mbit/s. It reads -1 (SPEED_UNKNOWN) with no carrier and the read fails with
  EINVAL when the interface is down; psutil turns all of these into 0. Each is an error
  value "unknown", never a speed of 0 that a rule could compare.
* IPoIB netdevs on older kernels cannot report HDR/NDR speeds at all; for IB trust
  ``rdma.ports`` rate, not this.
* Loopback is skipped; other virtual interfaces are listed, with PCI fields as errors.
"""

from __future__ import annotations

from pathlib import Path

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, ReadError, parse_numa, pci_address, read, read_fact

NAME = "net"
FACTS = ("net.interfaces",)


def collect(ctx: Context) -> dict[str, Fact]:
    root = ctx.sysfs / "class/net"
    try:
        names = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        return {"net.interfaces": error(f"cannot list {root}: {exc.strerror or exc}",
                                        source=str(root))}
    rdma_netdevs = _rdma_netdevs(ctx)
    members = [item(n, _fields(root / n, n, rdma_netdevs)) for n in names if n != "lo"]
    return {"net.interfaces": items(members, source=str(root))}


def parse_speed(raw: str) -> int:
    speed = int(raw)
    if speed <= 0:
        raise ValueError(f"speed unknown ({raw}: no carrier or not reported by the driver)")
    return speed


def _speed(path: Path) -> Fact:
    try:
        raw = read(path)
    except ReadError as exc:
        # EINVAL: the interface is administratively down; EOPNOTSUPP: no ethtool support
        return error(f"speed unknown ({exc})", source=str(path))
    try:
        return value(parse_speed(raw), unit="Mb/s", source=str(path))
    except ValueError as exc:
        return error(f"{path}: {exc}", source=str(path))


def _fields(idir: Path, name: str, rdma_netdevs: set[str]) -> dict[str, Fact]:
    devlink = idir / "device"
    bdf = pci_address(devlink)
    fields: dict[str, Fact] = {
        "speed": _speed(idir / "speed"),
        "mtu": read_fact(idir / "mtu", int, unit="B"),
        "operstate": read_fact(idir / "operstate"),
    }
    if bdf:
        fields["pci_bus_id"] = value(bdf, source=str(devlink))
        fields["numa_node"] = read_fact(devlink / "numa_node", parse_numa)
    else:
        reason = f"{name} is not a PCI device (no {devlink} link to a PCI function)"
        fields["pci_bus_id"] = error(reason, source=str(devlink))
        fields["numa_node"] = error(reason, source=str(devlink))
    has_ib = False
    if bdf:
        try:
            has_ib = any((devlink / "infiniband").iterdir())
        except OSError:
            has_ib = False
    fields["rdma"] = value(has_ib or name in rdma_netdevs, source=str(devlink / "infiniband"))
    return fields


def _rdma_netdevs(ctx: Context) -> set[str]:
    ports = ctx.facts.get("rdma.ports", {})
    return {
        p["fields"]["netdev"]["value"]
        for p in ports.get("items", [])
        if "value" in p["fields"].get("netdev", {})
    }
