"""What NCCL really used, from a run's ``NCCL_DEBUG=INFO`` lines.

``parse(sources)`` is pure: lines in (``(file, lines)`` pairs), structured evidence out,
one ``Process`` per NCCL process (host and pid), with the line each fact came from; a
``Parser`` takes them file by file, as the run's one reader (``validator.runs.measure``)
reads the logs. ``findings(evidence, ...)`` judges it for NET-02 and PLAT-01 (the rules
with ``against: run``, which the engine calls through ``validator.jobnodes.pairs``). The line shapes are NCCL's own
(NVIDIA/nccl@5067397c, ``src/debug.cc``: ``host:pid:tid [cudaDev] NCCL INFO msg``,
warnings ``[time] host:pid:tid [cudaDev] file:line NCCL WARN msg``), as the real runs in
``shared/recordings/h200-node/nccl_info_*.log`` and the public issue threads in
``tests/jobnodes/data/MANIFEST.tsv`` print them:

* ``NCCL version 2.28.9+cuda13.0`` (``src/init.cc``; nccl-tests prints it bare);
* ``NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>``
  (``src/transport/net_ib/init.cc``) and ``NET/IB : No device found.``; NCCL prints the
  ``Using`` line even with no device (``NET/IB : Using [RO]; OOB eth0:...``: ``[RO]`` is
  the relaxed-ordering flag, not a device), which says nothing about IB being used;
* ``NET/Socket : Using [0]eth0:192.0.2.2<0>`` (``src/transport/net_socket.cc``);
* ``Using network Socket`` / ``IB`` / a plugin's name such as ``IBext`` (``src/init.cc``);
* ``comm 0x.. rank 0 nRanks 2 nNodes 2 ...`` or ``ncclCommInitRank comm 0x.. rank 0 nranks
  2 ...`` (the rank); ``Channel 00/64 :`` (rings, ``src/graph/rings.cc``), ``Trees [0]``,
  ``N coll channels, M collnet channels, K nvls channels`` (``src/init.cc``);
  ``Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA`` (``src/transport/net.cc``);
* ``Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60`` (a WARN,
  ``src/init.cc`` ``initTransportsRank``: two ranks of one host on one GPU, the init fails
  with ``ncclInvalidUsage``).

A line that is none of these is passed over; prefixes launchers add (``[rank0]:``,
srun's ``0:``, a timestamp) are allowed before the host.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from validator.rules.rulemodel import Level

if TYPE_CHECKING:
    import os
    from collections.abc import Callable

    from validator.jobnodes.nodes import Node
    from validator.jobnodes.rules import RuleText
    from validator.report.model import Finding, JSONValue, Status

_PREFIX = r"^(?:\[[^\]]*\](?:<std(?:out|err)>)?:?\s*|\d+:\s+)*"
LINE = re.compile(
    _PREFIX + r"(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\] "
    r"(?:(?P<where>\S+:\d+)(?: \([^)]*\))? )?NCCL (?P<level>INFO|WARN|TRACE) (?P<msg>.*?)\s*$"
)
BARE_VERSION = re.compile(r"^\s*NCCL version (?P<v>\d+\.\d+\.\d+\S*)")
_VERSION = re.compile(r"^NCCL version (?P<v>\d+\.\d+\.\d+\S*)")
_NETWORK = re.compile(r"^Using network (?P<net>.+?)\s*$")
_IB_USING = re.compile(r"^NET/IB ?: Using(?P<list>.*?)(?:; OOB (?P<oob>\S+))?\s*$")
_IB_DEV = re.compile(r"\[(?P<i>\d+)\](?P<dev>[^\s:/\[]+):(?P<port>\d+)(?::[\d:]*)?/(?P<ll>[A-Za-z]+)")
_SOCKET_USING = re.compile(r"^NET/Socket ?: Using(?P<list>.*)$")
_SOCKET_DEV = re.compile(r"\[(?P<i>\d+)\](?P<ifname>[^\s:\[]+):")
_RANK = re.compile(r"\brank (?P<rank>\d+) n[Rr]anks (?P<n>\d+)")
_RING = re.compile(r"^Channel (?P<c>\d+)/(?P<n>\d+) :\s")
_VIA = re.compile(r"^(?:Channel \d+/\d+|Ring \d+) : \d+(?:\[\d+\])? -> \d+(?:\[\d+\])? (?:\[\w+\] )?"
                  r"via (?P<via>NET/[^/]+/\S+|\S+)")
_DUPLICATE = re.compile(r"^Duplicate GPU detected : rank (?P<a>\d+) and rank (?P<b>\d+) both on CUDA device "
                        r"(?P<bus>[0-9a-fA-F]+)")
_CHANNELS = re.compile(r"^(?P<coll>\d+) coll channels, (?P<collnet>\d+) collnet channels, (?P<nvls>\d+) nvls channels")


@dataclass
class Seen:
    """A value and the line it was read from."""

    value: JSONValue  # a word, a number or None, as the line gave it
    file: str
    line: int
    text: str


@dataclass
class Process:
    host: str
    pid: int
    devices: set[int] = field(default_factory=set)
    ranks: set[int] = field(default_factory=set)
    nranks: int | None = None
    version: Seen | None = None
    network: Seen | None = None  # the last "Using network X"
    ib: Seen | None = None  # (device, port, link layer) list of a "NET/IB : Using" that names one
    ib_none: Seen | None = None  # "NET/IB : No device found."
    socket: Seen | None = None  # list of interfaces from "NET/Socket : Using"
    via: dict[str, Seen] = field(default_factory=dict)  # "NET/IB/0/GDRDMA" -> first line
    warns: list[Seen] = field(default_factory=list)
    rings: int | None = None
    trees: int = 0
    nvls_channels: int | None = None

    @property
    def name(self) -> str:
        rank = ("rank " + ",".join(map(str, sorted(self.ranks)))) if self.ranks else f"pid {self.pid}"
        return f"{self.host} ({rank})"

    def transport(self) -> str | None:
        """"socket", "ib", another plugin's name, or None when the log does not say."""
        if self.network is not None:
            return classify(self.network.value)
        nets = {v.split("/")[1] for v in self.via if v.startswith("NET/") and "/" in v[4:]}
        if len(nets) == 1:
            return classify(nets.pop())
        return None


def classify(net: str) -> str:
    n = net.strip()
    if n.lower().startswith("socket"):
        return "socket"
    if n.upper().startswith("IB"):  # IB, IBext, IBext_v8: the verbs transport (IB or RoCE)
        return "ib"
    return n


@dataclass
class Evidence:
    files: list[str]
    processes: list[Process]
    lines: int  # NCCL lines read
    bare_versions: list[Seen]


class Parser:
    """NCCL lines fed file by file (``feed``), as a run's reader reads them once; the
    evidence so far by process (``evidence``)."""

    def __init__(self) -> None:
        self.procs: dict[tuple[str, int], Process] = {}
        self.files: list[str] = []
        self.count = 0
        self.bare: list[Seen] = []

    def feed(self, file: str, lines: Iterable[str]) -> None:
        self.files.append(file)
        for no, raw in enumerate(lines, 1):
            text = raw.rstrip("\r\n")
            if "NCCL" not in text:
                continue
            m = LINE.match(text)
            if m is None:
                b = BARE_VERSION.match(text)
                if b:
                    self.bare.append(Seen(b.group("v"), file, no, text[:200]))
                continue
            self.count += 1
            key = (m.group("host"), int(m.group("pid")))
            p = self.procs.setdefault(key, Process(*key))
            p.devices.add(int(m.group("dev")))
            _read(p, m.group("level"), m.group("msg"), Seen(None, file, no, text[:200]))

    def evidence(self) -> Evidence:
        procs = sorted(self.procs.values(), key=lambda p: (p.host, min(p.ranks, default=1 << 30), p.pid))
        return Evidence(list(self.files), procs, self.count, list(self.bare))


def parse(sources: Iterable[tuple[str, Iterable[str]]]) -> Evidence:
    """Every NCCL line of every ``(file, lines)`` pair, by process."""
    parser = Parser()
    for file, lines in sources:
        parser.feed(file, lines)
    return parser.evidence()


def mentions(text: str) -> bool:
    """Whether ``text`` (a file's first bytes) holds an NCCL line of the shapes above: a
    run's reader reads such a file as a log (``validator.runs.sniff``)."""
    if "NCCL" not in text:
        return False
    return any(LINE.match(line) or BARE_VERSION.match(line) for line in text.splitlines() if "NCCL" in line)


def _read(p: Process, level: str, msg: str, at: Seen) -> None:
    def seen(v: JSONValue) -> Seen:
        return Seen(v, at.file, at.line, at.text)

    if level == "WARN":
        p.warns.append(seen(msg))
        return
    if (m := _VERSION.match(msg)) and p.version is None:
        p.version = seen(m.group("v"))
    elif m := _NETWORK.match(msg):
        p.network = seen(m.group("net"))
    elif msg.startswith("NET/IB") and "No device found" in msg:
        p.ib_none = seen(True)
    elif m := _IB_USING.match(msg):
        devs = [(d.group("dev"), int(d.group("port")), d.group("ll")) for d in _IB_DEV.finditer(m.group("list"))]
        if devs:  # "NET/IB : Using [RO]; OOB ..." after "No device found": no IB device
            p.ib = seen(devs)
    elif m := _SOCKET_USING.match(msg):
        p.socket = seen([d.group("ifname") for d in _SOCKET_DEV.finditer(m.group("list"))])
    elif m := _VIA.match(msg):
        p.via.setdefault(m.group("via"), seen(m.group("via")))
    elif m := _RING.match(msg):
        p.rings = max(p.rings or 0, int(m.group("n")))
    elif msg.startswith("Trees"):
        p.trees += 1
    elif m := _CHANNELS.match(msg):
        p.nvls_channels = int(m.group("nvls"))
    if m := _RANK.search(msg):
        p.ranks.add(int(m.group("rank")))
        p.nranks = int(m.group("n"))


def summary(ev: Evidence) -> list[dict[str, JSONValue]]:
    """One plain dict per process (the report's ``extra.nccl``)."""
    out = []
    for p in ev.processes:
        out.append({
            "host": p.host, "pid": p.pid, "ranks": sorted(p.ranks), "nranks": p.nranks,
            "version": p.version.value if p.version else (ev.bare_versions[0].value if ev.bare_versions else None),
            "network": p.network.value if p.network else None,
            "transport": p.transport(),
            "ib_devices": [f"{d}:{port}/{ll}" for d, port, ll in (p.ib.value if p.ib else [])],
            "ib_no_device": bool(p.ib_none),
            "socket_interfaces": p.socket.value if p.socket else [],
            "channel_transports": sorted(p.via),
            "rings": p.rings, "trees": p.trees, "nvls_channels": p.nvls_channels,
            "warnings": [w.value for w in p.warns],
            "at": f"{p.network.file}:{p.network.line}" if p.network else None,
        })
    return out


# -- findings --------------------------------------------------------------------------

def _names(procs: Sequence[Process]) -> str:
    from validator.jobnodes.nodes import hostlist

    by: dict[str, list[int]] = {}
    for p in procs:
        by.setdefault(p.host, []).extend(sorted(p.ranks) or [])
    parts = []
    for host, ranks in sorted(by.items()):
        parts.append(f"{host} (rank {','.join(map(str, sorted(set(ranks))))})" if ranks else host)
    if len(parts) > 6:
        return f"{hostlist(by)} ({sum(len(v) for v in by.values())} ranks)"
    return ", ".join(parts)


def findings(ev: Evidence, subject: str, levels: Mapping[str, Level], nodes: Sequence[Node] = (),
             run: str = "--run", *, rules: Mapping[str, RuleText] | None = None) -> list[Finding]:
    """NET-02 from the run: sockets used (fail), transports that differ between ranks
    otherwise (fail), or why the log cannot tell (error / skip). PLAT-01 where NCCL
    refused ranks sharing a GPU (its "Duplicate GPU detected" warning; no finding
    when the log has none). ``rules``: the pack's words for the rules to judge, by the ID
    each finding below gives (only those are made); without it, every bundled rule, at
    the level ``levels`` gives its requirement."""
    from validator.jobnodes.rules import texts
    from validator.report.model import Finding, Location, Status

    if rules is None:
        rules = texts(levels)
    out: list[Finding] = []

    def make(rid: str, status: Status, message: str, *, at: Seen | None = None, observed: str | None = None,
             expected: str = "", value: JSONValue = None) -> None:
        r = rules.get(rid)
        if r is None:  # a rule this call does not judge
            return
        out.append(Finding(
            rule=r.id, requirement=r.requirement, level=r.level, status=status, subject=subject,
            expected=expected or r.summary, message=message, remediation=r.remediation,
            observed=observed, value=value, source=f"NCCL_DEBUG=INFO log ({run})",
            location=Location(at.file, at.line, at.text) if at else None))

    def level_of(rid: str) -> Level:
        r = rules.get(rid)
        return r.level if r is not None else Level.MUST

    used, mixed = "NET-02.run-used-sockets", "NET-02.run-mixed-transports"
    _shared_gpus(ev, nodes, make, Status.FAIL if level_of("PLAT-01.run-ranks-share-gpu") == Level.MUST else Status.WARN)
    if not ev.processes:
        why = (f"no NCCL_DEBUG=INFO lines in {', '.join(ev.files) or run}: the transport NCCL used "
               "is not known from this run")
        make(used, Status.SKIP, why)
        make(mixed, Status.SKIP, why)
        return out
    known = [p for p in ev.processes if p.transport() is not None]
    unknown = [p for p in ev.processes if p.transport() is None]
    sock = [p for p in known if p.transport() == "socket"]
    fabric = _fabric(nodes)
    if sock:
        where = sock[0].network or next(iter(sock[0].via.values()), None)
        others = [p for p in known if p.transport() != "socket"]
        fab = _fabric_note(sock, nodes, fabric)
        rest = f"; {_names(others)} used {', '.join(sorted({str(p.transport()) for p in others}))}" if others else ""
        none = next((p.ib_none for p in sock if p.ib_none), None)
        after = f' after "NET/IB : No device found." ({none.file}:{none.line})' if none else ""
        make(used, Status.FAIL if level_of(used) == Level.MUST else Status.WARN,
             f"NCCL used TCP sockets on {_names(sock)}: \"{where.text.strip() if where else ''}\"{after}{fab}{rest}",
             at=where, observed="Socket", expected="an RDMA transport (NCCL 'Using network IB')",
             value=[p.name for p in sock])
    elif known and not unknown:
        first = known[0].network or next(iter(known[0].via.values()))
        make(used, Status.PASS, f"every rank used {known[0].network.value if known[0].network else first.value}: "
             f"{_names(known)}", at=first, observed=str(known[0].transport()))
    else:
        detail = "; ".join(f"{p.name}: " + (f"failed: {p.warns[-1].value}" if p.warns else
                                             "no 'Using network' line") for p in unknown)
        make(used, Status.ERROR, f"the log does not say which network NCCL used on {detail}",
             at=(unknown[0].warns[-1] if unknown[0].warns else None))
    kinds = {str(p.transport()) for p in known}
    if len(known) < 2:
        make(mixed, Status.SKIP, "fewer than two ranks said which network they used: nothing to compare")
    elif len(kinds - {"socket"}) > 1:
        groups = "; ".join(f"{k}: {_names([p for p in known if str(p.transport()) == k])}" for k in sorted(kinds))
        make(mixed, Status.FAIL if level_of(mixed) == Level.MUST else Status.WARN,
             f"the ranks used different transports: {groups}",
             at=known[0].network, observed=", ".join(sorted(kinds)), value=sorted(kinds))
    elif len(kinds) > 1:
        make(mixed, Status.SKIP, f"the ranks differ only in that some used sockets ({_names(sock)}): "
             "NET-02.run-used-sockets names them")
    else:
        make(mixed, Status.PASS, f"every rank that said used {kinds.pop()}: {_names(known)}",
             at=known[0].network, observed=str(known[0].transport()))
    return out


def _shared_gpus(ev: Evidence, nodes: Sequence[Node], make: Callable[..., None], status: Status) -> None:
    """One PLAT-01 failure naming every pair of ranks NCCL found on one GPU (its own WARN,
    the first one cited), with the GPU count the host's facts show where given."""
    rid = "PLAT-01.run-ranks-share-gpu"
    dups = [(p, w, m) for p in ev.processes for w in p.warns if (m := _DUPLICATE.match(str(w.value)))]
    if not dups:
        return
    pairs: dict[tuple[str, str], set[int]] = {}
    for p, _, m in dups:
        pairs.setdefault((p.host, m.group("bus")), set()).update((int(m.group("a")), int(m.group("b"))))
    said = "; ".join(f"{host}: ranks {', '.join(map(str, sorted(r)))} on one GPU (CUDA device {bus})"
                     for (host, bus), r in sorted(pairs.items()))
    by_host = {n.host: n for n in nodes}
    have = []
    for host in sorted({h for h, _ in pairs} & set(by_host)):
        n = by_host[host]
        why = n.why_unknown("gpu.count")
        have.append(f"{host} has {n.facts['gpu.count'].get('value')} GPU(s) (gpu.count, {n.file})" if not why
                    else f"{host}'s GPU count is unknown ({why})")
    first = dups[0][1]
    make(rid, status, f'NCCL refused ranks that share a GPU: {said}: "{first.text.strip()}"'
         + (f"; {'; '.join(have)}" if have else ""),
         at=first, observed=f"{len(set().union(*pairs.values()))} ranks on {len(pairs)} GPU(s)",
         expected="one rank per GPU", value=sorted(f"{h}:{b}" for h, b in pairs))


def _fabric_note(sock: Sequence[Process], nodes: Sequence[Node], fabric: str) -> str:
    """What the nodes given say about the fabric the socket ranks' hosts have: by host
    name where the log's host is one of them, else of the fleet as a whole."""
    if not nodes:
        return ""
    names = {n.host for n in nodes}
    on = {p.host for p in sock if p.host in names}
    if on:
        with_rdma = set(fabric_hosts(nodes)) & on
        parts = []
        if with_rdma:
            parts.append(f"{', '.join(sorted(with_rdma))} {'has' if len(with_rdma) == 1 else 'have'} ACTIVE RDMA ports")
        if on - with_rdma:
            parts.append(f"{', '.join(sorted(on - with_rdma))} {'has' if len(on - with_rdma) == 1 else 'have'} "
                         "no ACTIVE RDMA port either (the node's NET-02.no-rdma-fabric / port-not-active)")
        return "; " + "; ".join(parts)
    if fabric:
        return f"; the nodes given have ACTIVE RDMA ports ({fabric})"
    return "; the nodes given have no ACTIVE RDMA port either (the node's NET-02.no-rdma-fabric)"


def fabric_hosts(nodes: Sequence[Node]) -> list[str]:
    """The hosts among ``nodes`` with an ACTIVE RDMA port."""
    hosts = []
    for n in nodes:
        if n.why_unknown("rdma.ports"):
            continue
        for m in n.facts["rdma.ports"].get("items") or []:
            if str((m.get("fields", {}).get("state") or {}).get("value", "")).upper() == "ACTIVE":
                hosts.append(n.host)
                break
    return hosts


def _fabric(nodes: Sequence[Node]) -> str:
    """The nodes with an ACTIVE RDMA port, as a host list ('' when none or not given)."""
    from validator.jobnodes.nodes import hostlist

    hosts = fabric_hosts(nodes)
    return hostlist(hosts) if hosts else ""


def read_run(paths: Sequence[str | os.PathLike[str]], cap: int = 64 * 1024 * 1024) -> Evidence:
    """Every regular file under ``paths`` (a folder walked in name order), read through
    ``validator.io.safeio``; files that hold no NCCL line add nothing. Files are told by
    content (the NCCL line shape), never by name; a file with a NUL byte in its first
    8 KiB is binary (TensorBoard events, checkpoints), and a file over ``cap`` bytes or one
    that cannot be read adds nothing.

    For a folder of NCCL logs alone (the tests, a caller outside a lint run). ``lint
    --run`` does not call it: the run's one reader (``validator.runs.measure.read_runs``)
    feeds the logs it reads to a ``Parser``."""
    import io
    from pathlib import Path

    from validator.io.safeio import InputError, read_bytes

    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.is_file() and not q.is_symlink())
        elif p.is_file():
            files.append(p)

    def lines(f: Path) -> Iterable[str]:
        try:
            raw = read_bytes(f, cap=cap, what="log")
        except InputError:
            return []
        if b"\0" in raw[:8192]:
            return []  # a binary file (event file, checkpoint): no NCCL text lines
        return io.StringIO(raw.decode("utf-8", errors="replace"), newline=None)  # lines as open() splits them

    return parse((str(f), lines(f)) for f in files)
