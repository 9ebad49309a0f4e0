"""Telemetry exporters the platform runs on the node (MON-03), the metric families they
verifiably export (rule pack v1.1), and the endpoints named with ``--scrape`` (sampled twice).

Nothing a local user starts decides a verdict. A process counts as an exporter only when it
is what the platform runs: a systemd system unit (``/proc/PID/cgroup`` under
``system.slice/*.service``), a container or pod of the platform (a docker, containerd,
CRI-O, podman or kubepods cgroup outside ``user.slice``), or a process of a system user
(real uid below ``UID_MIN`` of ``<rootfs>/etc/login.defs``, 1000 when unset). Any other
process of that name is passed over, and the fact's source says so. An endpoint named by
``--scrape`` or the profile's ``scrape_endpoints`` counts by the same rules, applied to the
process the kernel says listens on its port (``endpoint_owner``): a login user's server on
this node, an endpoint on another host or one whose process cannot be seen is passed over
(its scrape is still judged in ``telemetry.scrapes``).

``comm`` is cut at 15 characters ("prometheus-node"), so names are matched on the basename
of argv[0] as well. Processes that vanish or deny access mid-scan are skipped, never fatal.

``telemetry.families`` backs a profile's ``platform_metric_families`` (MON-01 passes them as
provided by the platform). spec-check never connects to an address taken from another
process's arguments: a qualifying dcgm-exporter is scraped on the TCP socket the kernel says
*it* listens on (its own sockets, read with psutil; a socket bound to every address is
reached on loopback), or the families come from the named endpoints. They count for
gpu_utilization when the exposition carries ``DCGM_FI_DEV_GPU_UTIL`` or
``DCGM_FI_PROF_GR_ENGINE_ACTIVE``, for memory when it carries ``DCGM_FI_DEV_FB_USED`` (both
in dcgm-exporter's default counters); an NCCL profiler plugin set in ``/etc/nccl.conf``
(``NCCL_PROFILER_PLUGIN``, NCCL >= 2.23) counts for collective_latency. Every read goes
through ``validator.io.netfetch`` (a deadline for the whole answer, a size cap).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from validator.facts.document import Fact, error, items, value
from validator.facts.node.base import Context, ReadError, process_table, read
from validator.lazy import Pattern

NAME = "telemetry"
FACTS = ("telemetry.exporters", "telemetry.families", "telemetry.scrapes")
DCGM_FAMILIES = {"gpu_utilization": ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
                 "memory": ("DCGM_FI_DEV_FB_USED",)}
SCRAPE_TIMEOUT_S = 3.0
EXPORTERS = ("dcgm-exporter", "nv-hostengine", "node_exporter", "prometheus-node-exporter",
             "amd-metrics-exporter", "telegraf", "otelcol")
DEFAULT_UID_MIN = 1000  # shadow-utils' default UID_MIN (login.defs)
# cgroup path parts of container runtimes (docker, containerd/CRI, CRI-O, podman, Kubernetes)
_CONTAINER = Pattern(r"(^|/)(docker[-/]|cri-containerd-|crio-|libpod-|kubepods|containerd/|lxc/)")


@dataclass(frozen=True)
class Process:
    pid: int
    exporter: str
    uid: int | None
    cgroup: str


def none_named() -> Fact:
    """telemetry.scrapes where no endpoint is named (here, not in scrape.py: that loads only
    for a named endpoint)."""
    return items([], source="no endpoint named (--scrape URL, or scrape_endpoints in the profile)")


def collect(ctx: Context) -> dict[str, Fact]:
    procs = _scan(ctx.procfs)
    scrapes = None
    if ctx.scrape_endpoints:  # scrape.py and its HTTP client load only for a named endpoint
        from validator.facts.node import scrape

        scrapes = scrape.scrape_endpoints(ctx.scrape_endpoints, interval_s=ctx.scrape_interval,
                                          deadline_s=ctx.scrape_timeout)
    scrapes_fact = scrapes.fact if scrapes else none_named()
    if procs is None:  # no process directories: not a procfs, so no evidence of absence
        err = error(f"no process directories under {ctx.procfs}: not a procfs tree", source=str(ctx.procfs))
        return {"telemetry.exporters": err, "telemetry.families": err, "telemetry.scrapes": scrapes_fact}
    uid_min = login_uid_min(ctx.rootfs)
    counted: dict[str, Process] = {}
    passed: list[str] = []
    for proc in procs:
        why = platform_reason(proc, uid_min)
        if why:
            counted.setdefault(proc.exporter, proc)
        else:
            passed.append(f"{proc.exporter} pid {proc.pid} (uid {proc.uid}, {proc.cgroup or 'no cgroup'}): "
                          f"not a systemd unit, a container or a system user (uid < {uid_min})")
    names = set(counted)
    source = str(ctx.procfs)
    platform: set[str] = set()  # named endpoints served by what the platform runs
    if scrapes:
        for url, kind in scrapes.exporters.items():
            owner, unseen = endpoint_owner(url, kind, ctx.procfs)
            why = platform_reason(owner, uid_min) if owner is not None else None
            if why:
                platform.add(url)
                names.add(kind)
                source += f"; {kind} at {url} (--scrape; pid {owner.pid if owner else '?'}, {why})"
            elif owner is None:
                passed.append(f"{kind} at {url} (--scrape): {unseen}")
            else:
                passed.append(f"{kind} at {url} (--scrape), served by pid {owner.pid} (uid {owner.uid}, "
                              f"{owner.cgroup or 'no cgroup'}): not a systemd unit, a container or a system "
                              f"user (uid < {uid_min})")
    if passed:
        source += "; passed over: " + "; ".join(sorted(passed))
    return {"telemetry.exporters": value(sorted(names), source=source),
            "telemetry.families": _families(ctx, counted.get("dcgm-exporter"), scrapes, platform),
            "telemetry.scrapes": scrapes_fact}


def endpoint_owner(url: str, kind: str, procfs: Path) -> tuple[Process | None, str]:
    """The process that listens on ``url``'s TCP port on this node (the kernel's socket
    table, read with psutil), as a process found by name is seen; or None and why not. An
    endpoint on another host, or a socket whose process this user cannot see, has none:
    whose exporter it is cannot be told, so it is not the platform's."""
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    import psutil

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname or "", port, proto=socket.IPPROTO_TCP)
        ips = {ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos}
        conns = psutil.net_connections(kind="tcp")
    except (OSError, ValueError, psutil.Error) as exc:
        return None, f"whose process serves it cannot be told ({type(exc).__name__})"
    local = {ipaddress.ip_address(a.address.split("%")[0]) for addrs in psutil.net_if_addrs().values()
             for a in addrs if a.family in (socket.AF_INET, socket.AF_INET6)}
    if not any(ip.is_loopback or ip in local for ip in ips):
        return None, "not on this node: whose process serves it cannot be told"
    for c in conns:
        if c.status != psutil.CONN_LISTEN or not c.laddr or c.laddr.port != port:
            continue
        bound = ipaddress.ip_address(c.laddr.ip.split("%")[0])
        if bound.is_unspecified or bound in ips or (bound.is_loopback and any(ip.is_loopback for ip in ips)):
            if c.pid is None:
                return None, "the process listening on it cannot be seen (run as root)"
            pid = procfs / str(c.pid)
            return Process(c.pid, kind, _uid(pid), _cgroup(pid)), ""
    return None, "no process on this node listens on its port"


def platform_reason(proc: Process, uid_min: int) -> str | None:
    """Why ``proc`` is what the platform runs, or None (a user's process: passed over)."""
    parts = [p for p in proc.cgroup.split("/") if p]
    in_user_slice = any(p == "user.slice" or p.startswith("user@") for p in parts)
    if not in_user_slice:
        if "system.slice" in parts and any(p.endswith(".service") for p in parts):
            return "a systemd unit (" + next(p for p in parts if p.endswith(".service")) + ")"
        if _CONTAINER.search(proc.cgroup):
            return f"a container ({proc.cgroup})"
    if proc.uid is not None and proc.uid < uid_min:
        return f"a system user's process (uid {proc.uid})"
    return None


def login_uid_min(rootfs: Path) -> int:
    """``UID_MIN`` of the node's login.defs: uids below it are system users."""
    try:
        text = read(rootfs / "etc" / "login.defs")
    except ReadError:
        return DEFAULT_UID_MIN
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "UID_MIN" and words[1].isdigit():
            return int(words[1])
    return DEFAULT_UID_MIN


def _families(ctx: Context, dcgm: Process | None, scrapes: object | None,
              platform: set[str] | None = None) -> Fact:
    """The metric families the platform's exporters export: a named endpoint counts when it
    is in ``platform`` (served by what the platform runs; None: every named endpoint)."""
    fams: list[str] = []
    sources: list[str] = []
    seen: dict[str, str] = {}  # metric name -> where it was seen
    named_dcgm = False
    if scrapes is not None:  # scrape.py loads only where endpoints were scraped
        from validator.facts.node import scrape

        if isinstance(scrapes, scrape.Scrapes):
            for url, metric_names in scrapes.names.items():
                if platform is not None and url not in platform:
                    continue
                named_dcgm = named_dcgm or scrapes.exporters.get(url) == "dcgm-exporter"
                for n in metric_names:
                    seen.setdefault(n, url)
    if dcgm is not None and not named_dcgm:  # the platform's exporter, unless named already
        if not ctx.live:
            return error("a dcgm-exporter runs in the recorded process tree, but its /metrics can be "
                         "scraped only on the live node (run spec-check check there)", source=str(ctx.procfs))
        own, problem = _own_endpoint(dcgm)
        if own is None:
            return error(f"dcgm-exporter (pid {dcgm.pid}) runs but {problem}", source=f"pid {dcgm.pid}")
        url = own
        from validator.facts.node import scrape

        got = scrape.read_exposition(url, deadline_s=SCRAPE_TIMEOUT_S)
        if got.problem:
            return error(f"dcgm-exporter runs but {url} could not be read: {got.problem}", source=url)
        for n in got.names:
            seen.setdefault(n, url)
    for fam, metrics in DCGM_FAMILIES.items():
        hit = [m for m in metrics if m in seen]
        if hit:
            fams.append(fam)
            sources.append(f"{fam}: {hit[0]} at {seen[hit[0]]}")
    plugin = _nccl_profiler(ctx)
    if plugin:
        fams.append("collective_latency")
        sources.append(f"collective_latency: {plugin}")
    return value(fams, source="; ".join(sources) or "no exporter of a metric family found "
                 "(dcgm-exporter, NCCL_PROFILER_PLUGIN in /etc/nccl.conf)")


def _own_endpoint(proc: Process) -> tuple[str | None, str]:
    """The URL of the TCP socket the kernel says ``proc`` listens on (never its arguments)."""
    import psutil

    try:
        p = psutil.Process(proc.pid)
        conns = p.net_connections(kind="tcp") if hasattr(p, "net_connections") else p.connections(kind="tcp")
    except (psutil.Error, OSError) as exc:
        return None, (f"its listening sockets cannot be read ({type(exc).__name__}; run as root, or name "
                      "its endpoint with --scrape URL)")
    ports = sorted({(c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN and c.laddr},
                   key=lambda a: a[1])
    if not ports:
        return None, "it listens on no TCP socket (name its endpoint with --scrape URL)"
    ip, port = ports[0]
    if ip in ("0.0.0.0", ""):
        ip = "127.0.0.1"
    elif ip == "::":
        ip = "::1"
    host = f"[{ip}]" if ":" in ip else ip
    return f"http://{host}:{port}/metrics", ""


def _nccl_profiler(ctx: Context) -> str | None:
    path = ctx.rootfs / "etc" / "nccl.conf"
    try:
        text = read(path)
    except ReadError:
        return None
    for line in text.splitlines():
        key, _, val = line.strip().partition("=")
        if key.strip() == "NCCL_PROFILER_PLUGIN" and val.strip() and val.strip().lower() != "none":
            return f"NCCL_PROFILER_PLUGIN={val.strip()} in {path}"
    return None


def match(name: str, argv0: str) -> str | None:
    for candidate in (os.path.basename(argv0), name):
        for exporter in EXPORTERS:
            if candidate == exporter or candidate.startswith(exporter + "-"):  # otelcol-contrib
                return exporter
    return None


def _scan(procfs: Path) -> list[Process] | None:
    """Exporter processes under ``procfs`` (this node's /proc, or a recorded tree)."""
    table = process_table(procfs)  # each comm read once a probe: limits scans it too
    if not table:
        return None
    found: list[Process] = []
    for number, name, comm in table:
        if comm is None:
            continue
        pid = procfs / name
        try:
            argv0 = read(pid / "cmdline").split("\0")[0]
        except ReadError:
            continue
        hit = match(comm, argv0)
        if hit:
            found.append(Process(number, hit, _uid(pid), _cgroup(pid)))
    return found


def _uid(pid: Path) -> int | None:
    try:
        for line in read(pid / "status").splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (ReadError, ValueError, IndexError):
        pass
    return None


def _cgroup(pid: Path) -> str:
    """The process's cgroup path (the v2 line, else the systemd or first v1 line)."""
    try:
        lines = read(pid / "cgroup").splitlines()
    except ReadError:
        return ""
    v2, systemd, other = "", "", ""
    for ln in lines:
        hier, _, rest = ln.partition(":")
        ctrl, _, path = rest.partition(":")
        if not path or path == "/":
            continue
        if hier == "0" and not ctrl:
            v2 = v2 or path
        elif ctrl == "name=systemd":
            systemd = systemd or path
        else:
            other = other or path
    return v2 or systemd or other
