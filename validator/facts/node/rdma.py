"""RDMA facts from /sys/class/infiniband: ports, their rate and state, and GDR support.

Traps:
* ``rate`` is compared by its leading number ("400 Gb/sec (4X NDR)" -> 400). RoCE ports
  print IB-style suffixes that differ for the same speed ("8X HDR" vs "4X NDR").
* ``state`` and ``phys_state`` are both needed: "2: INIT" with "5: LinkUp" is a cabled port
  that no subnet manager has configured.
* Ports map to GPUs by PCI topology (see pci.distance), never by mlx5_N index.
* GPUDirect RDMA: NCCL accepts any of three module paths; DMA-BUF can replace peermem, which
  pure Python cannot test, so a missing module is reported as false, not as an error.
"""

from __future__ import annotations

from pathlib import Path

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, ReadError, parse_numa, pci_address, read, read_fact
from validator.lazy import Pattern

NAME = "rdma"
FACTS = ("rdma.port_count", "rdma.ports", "rdma.gdr_module")

GDR_PATHS = (
    "module/nvidia_peermem/version",
    "kernel/mm/memory_peers/nv_mem/version",
    "kernel/mm/memory_peers/nv_mem_nc/version",
)
PORT_FIELDS = ("device", "port", "link_layer", "rate", "state", "phys_state", "pci_bus_id", "numa_node",
               "netdev", "fw_ver")
_RATE = Pattern(r"^(\d+(?:\.\d+)?) Gb/sec\b")


def collect(ctx: Context) -> dict[str, Fact]:
    out = _ports(ctx)
    out["rdma.gdr_module"] = _gdr(ctx)
    return out


def parse_rate(raw: str) -> float | int:
    m = _RATE.match(raw)
    if not m:
        raise ValueError(f"unrecognised rate {raw!r}")
    rate = float(m.group(1))
    return int(rate) if rate.is_integer() else rate


def parse_state(raw: str) -> str:
    """'4: ACTIVE' -> 'ACTIVE'; '5: LinkUp' -> 'LinkUp'."""
    num, sep, name = raw.partition(":")
    if not sep or not num.strip().isdigit() or not name.strip():
        raise ValueError(f"unrecognised state {raw!r}")
    return name.strip()


def _ports(ctx: Context) -> dict[str, Fact]:
    root = ctx.sysfs / "class/infiniband"
    source = str(root)
    if not root.exists():
        if not (ctx.sysfs / "class").is_dir():
            # not a sysfs at all (an empty or wrong --sysfs): absence proves nothing
            reason = f"{ctx.sysfs / 'class'} is missing: not a sysfs tree"
            return {"rdma.port_count": error(reason, source=source), "rdma.ports": error(reason, source=source)}
        # ib_core not loaded or no HCA: a node without RDMA ports, not an unknown
        return {"rdma.port_count": value(0, source=source), "rdma.ports": items([], source=source)}
    try:
        devices = sorted(p.name for p in root.iterdir())
    except OSError as exc:
        reason = f"cannot list {root}: {exc.strerror or exc}"
        return {"rdma.port_count": error(reason, source=source),
                "rdma.ports": error(reason, source=source)}
    members = []
    unreadable = []
    for dev in devices:
        ddir = root / dev
        try:
            ports = sorted((p.name for p in (ddir / "ports").iterdir()), key=_num)
        except OSError as exc:
            # one broken device is one error item: the other devices' ports keep their values
            reason = f"cannot list {ddir / 'ports'}: {exc.strerror or exc}"
            unreadable.append(reason)
            members.append(item(dev, {name: error(reason, source=str(ddir)) for name in PORT_FIELDS}))
            continue
        bdf = pci_address(ddir / "device")
        for port in ports:
            members.append(item(f"{dev}:{port}", _port_fields(ctx, ddir, dev, port, bdf)))
    if unreadable:  # how many ports the broken devices have is unknown
        count = error(f"{len(members) - len(unreadable)} port(s) readable; " + "; ".join(unreadable),
                      source=source)
    else:
        count = value(len(members), source=source)
    return {"rdma.port_count": count, "rdma.ports": items(members, source=source)}


def _num(name: str) -> tuple[int, str]:
    return (int(name), name) if name.isdigit() else (1 << 30, name)


def _port_fields(ctx: Context, ddir: Path, dev: str, port: str, bdf: str | None) -> dict[str, Fact]:
    pdir = ddir / "ports" / port
    devlink = ddir / "device"
    fields: dict[str, Fact] = {
        "device": value(dev, source=str(ddir)),
        "port": value(int(port) if port.isdigit() else port, source=str(pdir)),
        "link_layer": read_fact(pdir / "link_layer"),
        "rate": read_fact(pdir / "rate", parse_rate, unit="Gb/s"),
        "state": read_fact(pdir / "state", parse_state),
        "phys_state": read_fact(pdir / "phys_state", parse_state),
    }
    if bdf:
        fields["pci_bus_id"] = value(bdf, source=str(devlink))
        fields["numa_node"] = read_fact(devlink / "numa_node", parse_numa)
    else:
        reason = f"{devlink} does not lead to a PCI function"
        fields["pci_bus_id"] = error(reason, source=str(devlink))
        fields["numa_node"] = error(reason, source=str(devlink))
    fields["netdev"] = _netdev(ctx, ddir, pdir, port)
    fields["fw_ver"] = read_fact(ddir / "fw_ver")
    return fields


def _netdev(ctx: Context, ddir: Path, pdir: Path, port: str) -> Fact:
    """The netdev on the same PCI function; dev_port picks one on multi-port functions."""
    netdir = ddir / "device/net"
    try:
        names = sorted(p.name for p in netdir.iterdir())
    except OSError:
        names = []
    if len(names) > 1 and port.isdigit():
        for name in names:
            try:
                if int(read(ctx.sysfs / "class/net" / name / "dev_port")) == int(port) - 1:
                    return value(name, source=str(netdir / name))
            except (ReadError, ValueError):
                continue
    if names:
        return value(names[0], source=str(netdir / names[0]))
    ndev = pdir / "gid_attrs/ndevs/0"  # RoCE: the netdev bound to GID 0
    try:
        name = read(ndev)
    except ReadError:
        name = ""
    if name:
        return value(name, source=str(ndev))
    return error(f"no network interface under {netdir} or {ndev}", source=str(netdir))


def _gdr(ctx: Context) -> Fact:
    for rel in GDR_PATHS:
        if (ctx.sysfs / rel).is_file():
            return value(True, source=str(ctx.sysfs / rel))
    if not (ctx.sysfs / "module").is_dir():
        return error(f"{ctx.sysfs / 'module'} is missing: cannot tell which modules are loaded",
                     source=str(ctx.sysfs / "module"))
    return value(False, source="sysfs: " + ", ".join(str(ctx.sysfs / r) for r in GDR_PATHS))
