"""Start the measuring tools on pairs of hosts, in parallel rounds.

For a pair ``a->b`` (``a`` sends, ``b`` receives), in this order so that the latency is
taken on an idle link:

1. latency: ``ping -c N -q`` from ``a`` to ``b``: ICMP echo needs no server, is on every
   host image, and gives the path's round trip without iperf3's queueing under load;
   NET-04 bounds one-way latency, so the fact is the average round trip / 2 (in us);
2. TCP throughput: ``iperf3 -s -1`` on ``b`` (one test, then exit; wrapped in
   ``timeout`` so that a lost client cannot leave a server behind), ``iperf3 -c -J`` on
   ``a``;
3. RDMA throughput: ``ib_write_bw`` server on ``b``, client on ``a``, when both hosts
   report an ACTIVE RDMA port. NET-01 then gates on it: iperf3 over IPoIB or one TCP
   host pair rarely reaches 400 Gb/s, ``ib_write_bw`` is the instrument for the fabric.

Every number becomes a fact with its unit, the tool and the direction; a tool that fails
becomes an error value with its reason. Collective bandwidth (nccl-tests) runs once over
the whole fleet, not per pair: see ``run_nccl``.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, cast

from validator.cluster import proc
from validator.cluster.measure import parsers
from validator.cluster.plan import Pair, Round
from validator.cluster.transports import Transport
from validator.facts.document import error, value

if TYPE_CHECKING:
    import subprocess

    from validator.report.model import JSONValue


@dataclass
class MeasureOptions:
    seconds: int = 5  # iperf3 -t / ib_write_bw -D
    streams: int = 4  # iperf3 -P
    port: int = 5201
    ping_count: int = 5
    timeout: float = 60.0  # per tool invocation, on top of its own duration
    rdma: dict[str, str] = field(default_factory=dict)  # host -> "mlx5_0:1" (ACTIVE port)
    parallel: int = 32  # pairs measured at once (--parallel): each pair holds pipes and fds
    # host -> (the address to measure to, where it came from): --fabric-address, the host
    # file's fabric= column, or --fabric-interface; an error string where it could not be had
    fabric: dict[str, tuple[str, str] | str] = field(default_factory=dict)


NOT_FOUND = 127  # the shell's exit status for a command not found


def guarded(tool: str, cmd: str) -> str:
    """``cmd``, run only where ``tool`` is on PATH; otherwise exit 127 with a marker line,
    so that a missing tool reads "ping not installed on h1 (exit 127)", not the last line
    ssh printed ("Shared connection to h1 closed.")."""
    return (f"command -v {tool} >/dev/null 2>&1 || {{ echo 'spec-check: {tool} not found on PATH' >&2; "
            f"exit {NOT_FOUND}; }}; {cmd}")


def failed(tool: str, host: str, out: proc.Outcome) -> parsers.MeasureError | None:
    """The error of a tool that could not run on ``host`` (missing, or exited with no
    output to parse), naming the host and the exit status; None when it ran."""
    if out.rc == NOT_FOUND and f"spec-check: {tool} not found" in out.stdout + out.stderr:
        return parsers.MeasureError(f"{tool} not installed on {host} (exit {NOT_FOUND})")
    return None


def target(transport: Transport, host: str, opts: MeasureOptions) -> tuple[str, str]:
    """(the address to measure ``host`` at, where it came from). Raises MeasureError where
    a fabric address was asked for and could not be had: measuring the management network
    instead would judge the wrong link."""
    got = opts.fabric.get(host)
    if isinstance(got, str):
        raise parsers.MeasureError(f"no fabric address for {host}: {got}")
    if got is not None:
        return got
    return transport.address(host), f"{getattr(transport, 'name', 'transport')} address"


def _wait_for(p: subprocess.Popen[bytes], marker: bytes, deadline: float) -> bytes:
    """Read a server's stdout until ``marker`` shows up (it is listening) or the deadline."""
    seen = b""
    stdout = cast("IO[bytes]", p.stdout)  # not None: proc.start pipes it
    sel = selectors.DefaultSelector()
    sel.register(stdout, selectors.EVENT_READ)
    try:
        while marker not in seen and time.monotonic() < deadline and p.poll() is None:
            if sel.select(timeout=0.1):
                chunk = os.read(stdout.fileno(), 4096)
                if not chunk:
                    break
                seen += chunk
    finally:
        sel.close()
    return seen


def _with_server(
    transport: Transport,
    server_host: str,
    server_cmd: str,
    marker: bytes,
    client: Callable[[], proc.Outcome],
    registry: proc.Registry,
    retries: int = 3,
    tool: str = "",
) -> proc.Outcome:
    """Start a one-shot server on ``server_host``, run the client, then reap the server.
    A server that does not start is an outcome whose stderr says why, naming the host and
    its exit status ("iperf3 not installed on b (exit 127)")."""
    server = proc.start(transport.argv(server_host, server_cmd, tty=True), registry)
    try:
        early = _wait_for(server, marker, time.monotonic() + 10)
        if marker not in early:  # its output ended: let it exit, so its status is known
            with contextlib.suppress(Exception):
                server.wait(timeout=2)
        if server.poll() is not None and marker not in early:
            err = (server.stderr.read() if server.stderr else b"").decode("utf-8", "replace")
            text = early.decode("utf-8", "replace") + err
            lines = [ln for ln in text.splitlines() if ln.strip()]
            if server.returncode == NOT_FOUND and f"spec-check: {tool} not found" in text:
                why = f"{tool} not installed on {server_host} (exit {NOT_FOUND})"
            else:
                last = lines[-1].strip() if lines else "no output"
                why = f"{tool or 'server'} on {server_host}: {last} (exit {server.returncode})"
            return proc.Outcome(server.returncode, "", "server did not start: " + why, 0.0)
        out = client()
        for _ in range(retries):  # the server may still be binding: retry refused connects
            if not (
                "unable to connect" in out.stdout
                or "Connection refused" in out.stdout
                or "Couldn't connect" in out.stdout + out.stderr
            ):
                break
            time.sleep(0.5)
            out = client()
        return out
    finally:
        with contextlib.suppress(Exception):
            server.wait(timeout=3)
        proc.kill(server, grace=1)
        for f in (server.stdout, server.stderr):  # one pair of pipes per pair measured
            if f is not None:
                f.close()
        registry.discard(server)


def resolve_fabric(
    transport: Transport,
    hosts: Sequence[str],
    given: dict[str, tuple[str, str]],
    interface: str | None,
    registry: proc.Registry,
    *,
    parallel: int = 32,
    timeout: float = 30.0,
) -> dict[str, tuple[str, str] | str]:
    """Each host's measurement address: ``given`` (``--fabric-address``, the host file's
    column), else, with ``interface``, the first IPv4 address of that interface on the
    host (``ip -o -4 addr show dev IFACE``, at most ``parallel`` hosts at once), else
    nothing (the transport's address). A host whose interface has no address maps to the
    reason, and its pairs are errors: measuring the management network instead would
    judge the wrong link."""
    out: dict[str, tuple[str, str] | str] = dict(given)
    todo = [h for h in hosts if h not in given] if interface else []
    if not todo:
        return out
    assert interface is not None
    cmd = guarded("ip", f"ip -o -4 addr show dev {shlex.quote(interface)}")

    def one(host: str) -> tuple[str, str] | str:
        res = proc.run(transport.argv(host, cmd), timeout, registry)
        if res.timed_out:
            return f"ip -o -4 addr show dev {interface} timed out after {timeout:g} s"
        missing = failed("ip", host, res)
        if missing:
            return str(missing)
        for line in res.stdout.splitlines():
            parts = line.split()
            if "inet" in parts and parts.index("inet") + 1 < len(parts):
                addr = parts[parts.index("inet") + 1].split("/")[0]
                return addr, f"interface {interface} on {host} (ip -o -4 addr)"
        why = res.stderr_line() or "no IPv4 address"
        return f"interface {interface} on {host}: {why} (exit {res.rc})"

    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(todo))),
                            thread_name_prefix="spec-check-fabric") as ex:
        for host, got in zip(todo, ex.map(one, todo), strict=True):
            out[host] = got
    return out


def measure_latency(
    transport: Transport, a: str, b: str, opts: MeasureOptions, registry: proc.Registry
) -> dict[str, JSONValue]:
    try:
        addr, origin = target(transport, b, opts)
    except parsers.MeasureError as exc:
        return error(str(exc), source=f"{a}: ping")
    cmd = f"ping -n -q -c {opts.ping_count} -i 0.2 -W 2 {shlex.quote(addr)}"
    src = f"{a}: {cmd} ({origin})"
    out = proc.run(transport.argv(a, guarded("ping", cmd), tty=True), opts.timeout, registry)
    try:
        if out.timed_out:
            raise parsers.MeasureError(f"ping on {a} timed out after {opts.timeout:g} s")
        missing = failed("ping", a, out)
        if missing:
            raise missing
        rtt_ms = parsers.ping_avg_ms(out.stdout + out.stderr)
        # NET-04 bounds one-way latency: half the average round trip, in microseconds
        return value(round(rtt_ms * 1000 / 2, 2), unit="us", source=f"{src} (avg rtt / 2)")
    except parsers.MeasureError as exc:
        why = str(exc)
        if out.rc not in (0, 1, None) and "exit" not in why and not out.timed_out:
            why = f"{why} (ping on {a}: exit {out.rc})"
        return error(why, source=src)


def _perftest(
    tool: str, transport: Transport, a: str, b: str, opts: MeasureOptions, registry: proc.Registry,
    common: str, life: float,
) -> tuple[str, str]:
    """Run a perftest pair (``ib_write_bw`` / ``ib_write_lat``): server on ``b``, client on
    ``a``, over the fabric address of ``b``. Returns (the source to quote, its output);
    raises _PairError (the reason and the source) when it gave no output to parse."""
    # device and port names come from the hosts' own facts: quoted, never trusted as shell
    dev_a, _, port_a = (shlex.quote(x) for x in opts.rdma[a].partition(":"))
    dev_b, _, port_b = (shlex.quote(x) for x in opts.rdma[b].partition(":"))
    port_a = port_a if port_a != "''" else "1"
    port_b = port_b if port_b != "''" else "1"
    try:
        addr, origin = target(transport, b, opts)
    except parsers.MeasureError as exc:
        raise _PairError(str(exc), f"{a}: {tool}") from None
    server_cmd = guarded(tool, f"exec timeout {life:.0f} {tool} -d {dev_b} -i {port_b} {common}")
    client_cmd = f"{tool} -d {dev_a} -i {port_a} {common} {shlex.quote(addr)}"
    out = _with_server(
        transport, b, server_cmd, b"Waiting for client",
        lambda: proc.run(transport.argv(a, guarded(tool, client_cmd), tty=True), life, registry),
        registry, tool=tool,
    )
    src = f"{a}: {client_cmd} ({origin})"
    if out.timed_out:
        raise _PairError(f"{tool} on {a} timed out after {life:g} s", src)
    missing = failed(tool, a, out)
    if missing:
        raise _PairError(str(missing), src)
    if out.stderr.startswith("server did not start"):
        raise _PairError(out.stderr, src)
    return src, out.stdout + "\n" + out.stderr


class _PairError(Exception):
    def __init__(self, why: str, source: str):
        super().__init__(why)
        self.why, self.source = why, source


def measure_ib_write_lat(
    transport: Transport, a: str, b: str, opts: MeasureOptions, registry: proc.Registry
) -> dict[str, JSONValue]:
    """One-way RDMA latency (us) with ``ib_write_lat``, server on ``b``, client on ``a``:
    NET-04's number where both hosts have an ACTIVE RDMA port (ICMP over the management
    network says little about the fabric a collective uses)."""
    try:
        src, text = _perftest("ib_write_lat", transport, a, b, opts, registry,
                              f"-F -n 1000 -p {opts.port + 1001}", opts.timeout)
    except _PairError as exc:
        return error(exc.why, source=exc.source)
    try:
        return value(parsers.ib_write_lat_us(text), unit="us", source=f"{src} (t_typical: one-way)")
    except parsers.MeasureError as exc:
        return error(str(exc), source=src)


def measure_iperf3(
    transport: Transport, a: str, b: str, opts: MeasureOptions, registry: proc.Registry
) -> tuple[dict[str, JSONValue], dict[str, JSONValue] | None]:
    """(throughput fact in Gb/s, mean TCP RTT fact in us or None)."""
    life = opts.seconds + opts.timeout
    try:
        addr, origin = target(transport, b, opts)
    except parsers.MeasureError as exc:
        return error(str(exc), source=f"{a}: iperf3"), None
    server_cmd = guarded("iperf3", f"exec timeout {life:.0f} iperf3 -s -1 -p {opts.port} --forceflush")
    client_cmd = (
        f"iperf3 -c {shlex.quote(addr)} -p {opts.port} -J -t {opts.seconds} -P {opts.streams} "
        f"-O 1 --connect-timeout 5000"
    )
    out = _with_server(
        transport,
        b,
        server_cmd,
        b"listening",
        lambda: proc.run(transport.argv(a, guarded("iperf3", client_cmd), tty=True), life, registry),
        registry,
        tool="iperf3",
    )
    src = f"{a}: {client_cmd} ({origin})"
    try:
        if out.timed_out:
            raise parsers.MeasureError(f"iperf3 on {a} timed out after {life:g} s")
        missing = failed("iperf3", a, out)
        if missing:
            raise missing
        if out.rc not in (0, 1) and not out.stdout.strip():
            raise parsers.MeasureError(
                out.stderr_line() or f"iperf3 on {a}: no output (exit {out.rc})"
            )
        bps = parsers.iperf3_bits_per_second(out.stdout)
    except parsers.MeasureError as exc:
        return error(str(exc), source=src), None
    rtt = parsers.iperf3_mean_rtt_us(out.stdout)
    return (
        value(round(bps / 1e9, 4), unit="Gb/s", source=src),
        value(rtt, unit="us", source=src) if rtt is not None else None,
    )


def measure_ib_write_bw(
    transport: Transport, a: str, b: str, opts: MeasureOptions, registry: proc.Registry
) -> dict[str, JSONValue]:
    try:
        src, text = _perftest("ib_write_bw", transport, a, b, opts, registry,
                              f"--report_gbits -F -D {opts.seconds} -p {opts.port + 1000}",
                              opts.seconds + opts.timeout)
    except _PairError as exc:
        return error(exc.why, source=exc.source)
    try:
        return value(round(parsers.ib_write_bw_gbits(text), 4), unit="Gb/s", source=src)
    except parsers.MeasureError as exc:
        return error(str(exc), source=src)


def measure_pair(
    transport: Transport,
    pair: Pair,
    opts: MeasureOptions,
    registry: proc.Registry,
    tools: Sequence[str],
) -> dict[str, JSONValue]:
    """The fields of one ``cluster.pairs`` item."""
    a, b = pair
    fields: dict[str, JSONValue] = {
        "direction": value(f"{a}->{b}"),
        "sender": value(a),
        "receiver": value(b),
    }
    got = opts.fabric.get(b)
    if isinstance(got, tuple):  # where the measurements went, and why there
        fields["address"] = value(got[0], source=got[1])
    elif isinstance(got, str):
        fields["address"] = error(f"no fabric address for {b}: {got}")
    rdma_pair = a in opts.rdma and b in opts.rdma
    if "ib_write_lat" in tools and rdma_pair:  # NET-04 on the fabric itself
        fields["latency"] = measure_ib_write_lat(transport, a, b, opts, registry)
        fields["latency_tool"] = value("ib_write_lat")
        if "ping" in tools:
            fields["icmp_latency"] = measure_latency(transport, a, b, opts, registry)
    elif "ping" in tools:
        fields["latency"] = measure_latency(transport, a, b, opts, registry)
        fields["latency_tool"] = value("ping")
    elif "ib_write_lat" in tools:  # asked for RDMA latency only, and this pair has no RDMA port
        fields["latency"] = error(
            "no ACTIVE RDMA port on both hosts for ib_write_lat, and ping was not requested"
        )
    if "iperf3" in tools:
        tcp, rtt = measure_iperf3(transport, a, b, opts, registry)
        fields["tcp_throughput"] = tcp
        if rtt is not None:
            fields["tcp_rtt"] = rtt
    use_rdma = "ib_write_bw" in tools and a in opts.rdma and b in opts.rdma
    if use_rdma:
        fields["rdma_throughput"] = measure_ib_write_bw(transport, a, b, opts, registry)
    primary = "rdma_throughput" if use_rdma else "tcp_throughput"
    if primary in fields:
        fields["throughput"] = fields[primary]
        fields["tool"] = value("ib_write_bw" if use_rdma else "iperf3")
    elif "ib_write_bw" in tools:  # asked for RDMA only, and this pair has no RDMA port
        fields["throughput"] = error(
            "no ACTIVE RDMA port on both hosts for ib_write_bw, and iperf3 was not requested"
        )
    return fields


def run_rounds(
    transport: Transport,
    rounds: Sequence[Round],
    opts: MeasureOptions,
    registry: proc.Registry,
    tools: Sequence[str],
    on_pair: Callable[[Pair], None] = lambda p: None,
    results: dict[Pair, dict[str, JSONValue]] | None = None,
) -> dict[Pair, dict[str, JSONValue]]:
    """Each round's pairs at once (no host is in two), the rounds one after another.

    ``results`` is filled as pairs finish, so that a caller interrupted by Ctrl-C still
    holds every pair measured so far.
    """
    results = {} if results is None else results
    for rnd in rounds:
        if registry.closed:
            break
        # at most opts.parallel pairs in flight: a round of 600 pairs must not open 600
        # pairs' worth of pipes at once ("Too many open files")
        ex = ThreadPoolExecutor(
            max_workers=max(1, min(opts.parallel, len(rnd))), thread_name_prefix="spec-check-pair"
        )
        futures = {ex.submit(measure_pair, transport, p, opts, registry, tools): p for p in rnd}
        try:
            pending = set(futures)
            while pending:  # short waits, so that Ctrl-C is seen at once
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                for f in done:
                    p = futures[f]
                    exc = f.exception()
                    results[p] = (
                        {
                            "direction": value(f"{p[0]}->{p[1]}"),
                            "throughput": error(f"internal error: {type(exc).__name__}: {exc}"),
                        }
                        if exc
                        else f.result()
                    )
                    on_pair(p)
        except KeyboardInterrupt:
            # end the tools first, then the threads (which now return at once); pairs cut
            # short are left out rather than reported as failed measurements
            registry.kill_all()
            ex.shutdown(wait=True, cancel_futures=True)
            raise
        ex.shutdown(wait=True)
    return results


NCCL_TOOL = "nccl-tests all_reduce_perf"
TORCH_TOOL = "torch.distributed all_reduce"


def collective_fields(
    tool: str,
    measured: dict[str, JSONValue] | parsers.MeasureError,
    source: str,
    label: str,
    gpus_per_host: int,
    n_hosts: int,
) -> dict[str, JSONValue]:
    """The ``cluster.collectives`` "all_reduce" fields, for either tool, measured or not.

    ``measured`` is the parser's ``{"busbw_gbs", "size"}`` or the error that stopped it;
    ``label`` starts the per-GPU number's source (the command, or the tool's name where the
    command is too long to quote). The same tool name whether it succeeded or failed."""
    fields: dict[str, JSONValue] = {
        "tool": value(tool),
        "gpus_per_host": value(gpus_per_host),
        "hosts": value(n_hosts),
    }
    if isinstance(measured, parsers.MeasureError):
        why = str(measured)
        fields["busbw"] = error(why, source=source)
        fields["busbw_per_gpu"] = error(why, source=source)
        return fields
    total = measured["busbw_gbs"] * 8
    fields["busbw"] = value(round(total, 3), unit="Gb/s", source=source)
    fields["busbw_per_gpu"] = value(
        round(total / gpus_per_host, 3),
        unit="Gb/s",
        source=f"{label} (busbw x 8 / {gpus_per_host} GPUs per node)",
    )
    fields["size"] = value(measured["size"], unit="B")
    return fields


def srun_extra(transport: Transport) -> str:
    """The user's ``--slurm-args``, shell-quoted, for the srun lines built here."""
    args = getattr(transport, "extra_args", None) or ()
    return "".join(f"{shlex.quote(a)} " for a in args)


def nccl_command(
    hosts: Sequence[str],
    gpus_per_host: int,
    transport: str,
    size: str = "16G",
    srun_args: str = "",
    interface: str | None = None,
) -> str:
    """One all_reduce over the fleet at one large size (gate on it, not on the average).
    ``interface`` (``--fabric-interface``): NCCL's sockets use it (``NCCL_SOCKET_IFNAME``),
    as the pair measurements do; its RDMA traffic takes the HCAs whatever this says."""
    test = f"all_reduce_perf -b {size} -e {size} -g 1 -n 20 -w 5"
    env = f"NCCL_SOCKET_IFNAME={shlex.quote(interface)}" if interface else ""
    if transport == "slurm":  # srun passes the environment on (--export=ALL)
        return (
            f"{env + ' ' if env else ''}srun --nodes={len(hosts)} --ntasks-per-node={gpus_per_host} "
            f"--nodelist={','.join(hosts)} {srun_args}{test}"
        )
    spec = ",".join(f"{h}:{gpus_per_host}" for h in hosts)
    export = f"-x {env} " if env else ""
    return f"mpirun --host {spec} -np {len(hosts) * gpus_per_host} {export}{test}"




def nccl_preflight(transport: str) -> str:
    """Shell that exits 127 naming the missing program: nccl-tests that are not installed
    are a skip with that reason, not a failed measurement."""
    launcher = "srun" if transport == "slurm" else "mpirun"
    checks = [launcher] if transport == "slurm" else [launcher, "all_reduce_perf"]
    return "".join(
        f"command -v {p} >/dev/null 2>&1 || {{ echo 'spec-check: {p} not found on PATH' >&2; "
        f"exit {NOT_FOUND}; }}; "
        for p in checks
    )


def run_nccl(
    transport: Transport,
    hosts: Sequence[str],
    gpus_per_host: int,
    registry: proc.Registry,
    timeout: float = 600,
    interface: str | None = None,
) -> tuple[dict[str, JSONValue] | None, str | None]:
    """(fields of the ``cluster.collectives`` "all_reduce" item, None), or (None, why it
    could not run) when the launcher or all_reduce_perf is missing.

    ``busbw`` is the fleet's all_reduce bus bandwidth at the one large size (GB/s x 8, in
    Gb/s); ``busbw_per_gpu`` divides it by the GPUs of one node: with one NIC per GPU,
    a cross-node ring all_reduce is bounded by the sum of a node's NICs (nccl-tests:
    "46-48 GB/s per NIC" at NDR 400G), so per GPU it is comparable with one port's rate.
    """
    cmd = nccl_command(
        [transport.address(h) for h in hosts],
        gpus_per_host,
        transport.name,
        srun_args=srun_extra(transport),
        interface=interface,
    )
    script = nccl_preflight(transport.name) + cmd
    argv = (
        ["/bin/sh", "-c", script]
        if transport.name == "slurm"
        else transport.argv(hosts[0], script, tty=True)
    )
    out = proc.run(argv, timeout, registry)
    if out.rc == NOT_FOUND:
        text = (out.stderr + "\n" + out.stdout).strip().splitlines()
        missing = [ln for ln in text if "not found" in ln]
        where = "" if transport.name == "slurm" else f" on {hosts[0]}"
        why = (missing[-1].replace("spec-check: ", "") if missing else "not found") + where
        return None, f"not run: {why.strip()}"
    try:
        if out.timed_out:
            raise parsers.MeasureError(f"all_reduce_perf timed out after {timeout:g} s")
        r: dict[str, JSONValue] | parsers.MeasureError = parsers.nccl_busbw(out.stdout)
    except parsers.MeasureError as exc:
        r = exc
    return collective_fields(NCCL_TOOL, r, cmd, cmd, gpus_per_host, len(hosts)), None


# The torch.distributed fallback: one process per GPU (torchrun), a timed all_reduce of one
# large float32 tensor, the slowest rank's time; rank 0 prints one marked JSON line.
_TORCH_SCRIPT = """
import json, os, time
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
n, size, iters = dist.get_world_size(), SIZE, 20
x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
dist.barrier()
t0 = time.perf_counter()
for _ in range(iters):
    dist.all_reduce(x)
torch.cuda.synchronize()
t = torch.tensor([(time.perf_counter() - t0) / iters], device="cuda")
dist.all_reduce(t, op=dist.ReduceOp.MAX)
if dist.get_rank() == 0:
    busbw = size / t.item() / 1e9 * 2 * (n - 1) / n
    print("MARK" + json.dumps({"size": size, "busbw_gbs": busbw, "world": n}), flush=True)
dist.destroy_process_group()
"""

TORCH_SIZE = 4 * 2**30  # bytes; bus bandwidth has long saturated at this size


def torch_command(
    n_hosts: int, gpus_per_host: int, master: str, port: int, node_rank: str
) -> str:
    script = _TORCH_SCRIPT.replace("SIZE", str(TORCH_SIZE)).replace("MARK", parsers.TORCH_MARK)
    return (
        f"torchrun --nnodes={n_hosts} --node-rank={node_rank} --nproc-per-node={gpus_per_host} "
        f"--master-addr={shlex.quote(master)} --master-port={port} --no-python "
        f"python3 -c {shlex.quote(script)}"
    )


_TORCH_MISSING = "spec-check-no-torchrun:"


def _named(hosts: Sequence[str], limit: int = 5) -> str:
    more = f" (+{len(hosts) - limit} more)" if len(hosts) > limit else ""
    return ", ".join(hosts[:limit]) + more


def torch_preflight(
    transport: Transport,
    hosts: Sequence[str],
    registry: proc.Registry,
    parallel: int = 32,
    timeout: float = 30,
) -> tuple[list[str], dict[str, str]]:
    """(hosts without torchrun, {host: why it could not be checked}), before any rank starts.

    Without it a host lacking torchrun was found only when its rank failed, and rank 0 then
    waited out the whole rendezvous (600 s) for a peer that never came. The check is one
    ``command -v torchrun`` per host, at most ``parallel`` at once, with a short deadline;
    under Slurm one step over the nodes, each naming itself when torchrun is missing.
    """
    check = "command -v torchrun >/dev/null 2>&1"
    if transport.name == "slurm":
        script = f'{check} || echo "{_TORCH_MISSING}$SLURMD_NODENAME"'
        argv = [
            "/bin/sh",
            "-c",
            f"srun --nodes={len(hosts)} --ntasks-per-node=1 --nodelist={','.join(hosts)} "
            f"--quiet {srun_extra(transport)}/bin/sh -c {shlex.quote(script)}",
        ]
        out = proc.run(argv, timeout, registry)
        missing = [
            ln.split(_TORCH_MISSING, 1)[1].strip()
            for ln in out.stdout.splitlines()
            if _TORCH_MISSING in ln
        ]
        if out.timed_out or (out.rc != 0 and not missing):
            why = "timed out" if out.timed_out else out.stderr_line() or f"exit {out.rc}"
            return missing, {h: f"srun: {why}" for h in hosts}
        return missing, {}
    from validator.cluster.gather import run_all

    def job(host: str) -> proc.Outcome:
        return proc.run(transport.argv(host, f"{check} || exit {NOT_FOUND}"), timeout, registry)

    outs, interrupted = run_all(
        hosts,
        job,
        parallel=parallel,
        registry=registry,
        on_missing=lambda h, why: proc.Outcome(-1, "", why, 0.0),
    )
    if interrupted:
        raise KeyboardInterrupt
    missing = [h for h, o in outs.items() if o.rc == NOT_FOUND]
    failed = {
        h: "timed out" if o.timed_out else o.stderr_line() or f"exit status {o.rc}"
        for h, o in outs.items()
        if o.rc not in (0, NOT_FOUND)
    }
    return missing, failed


def run_torch(
    transport: Transport,
    hosts: Sequence[str],
    gpus_per_host: int,
    registry: proc.Registry,
    port: int = 29541,
    timeout: float = 600,
    parallel: int = 32,
) -> tuple[dict[str, JSONValue] | None, str | None]:
    """The torch.distributed all_reduce fallback, where nccl-tests is not installed: the
    same fields as ``run_nccl`` (tool "torch.distributed all_reduce"), or why not.

    Every host is checked for torchrun first (``torch_preflight``): no rank starts unless
    all can, so a missing torchrun is a skip naming the hosts, and a host that cannot be
    checked is an error, both at once rather than after the rendezvous timeout."""
    missing_hosts, unchecked = torch_preflight(transport, hosts, registry, parallel)
    if missing_hosts:
        return None, f"not run: torchrun not found on PATH on {_named(missing_hosts)}"
    if unchecked:
        first = next(iter(unchecked.values()))
        why = f"could not check for torchrun on {_named(list(unchecked))}: {first}"
        return collective_fields(
            TORCH_TOOL, parsers.MeasureError(why), "command -v torchrun", TORCH_TOOL,
            gpus_per_host, len(hosts),
        ), None
    master = transport.address(hosts[0])
    pre = (
        "command -v torchrun >/dev/null 2>&1 || { echo 'spec-check: torchrun not found on "
        f"PATH' >&2; exit {NOT_FOUND}; }}; "
    )
    if transport.name == "slurm":
        cmd = torch_command(len(hosts), gpus_per_host, master, port, "$SLURM_NODEID")
        argv = [
            "/bin/sh",
            "-c",
            f"srun --nodes={len(hosts)} --ntasks-per-node=1 --nodelist={','.join(hosts)} "
            f"{srun_extra(transport)}/bin/sh -c {shlex.quote(pre + cmd)}",
        ]
        outs = [proc.run(argv, timeout, registry)]
        src = cmd
    else:
        cmds = [torch_command(len(hosts), gpus_per_host, master, port, str(i)) for i in range(len(hosts))]
        src = cmds[0]
        # every rank at once (a collective needs them all): one launcher per host
        ex = ThreadPoolExecutor(max_workers=len(hosts), thread_name_prefix="spec-check-torch")
        try:
            outs = list(
                ex.map(
                    lambda hc: proc.run(transport.argv(hc[0], pre + hc[1], tty=True), timeout, registry),
                    zip(hosts, cmds, strict=True),
                )
            )
        except BaseException:  # Ctrl-C/SIGTERM: end the launchers so the threads return
            registry.kill_all()
            raise
        finally:
            ex.shutdown(wait=True)
    missing = [
        (h, o) for h, o in zip(hosts, outs, strict=False) if o.rc == NOT_FOUND and "not found" in o.stderr + o.stdout
    ]
    if missing:
        where = "" if transport.name == "slurm" else f" on {missing[0][0]}"
        return None, f"not run: torchrun not found on PATH{where}"
    try:
        if outs[0].timed_out:
            raise parsers.MeasureError(f"{TORCH_TOOL} timed out after {timeout:g} s")
        r: dict[str, JSONValue] | parsers.MeasureError = parsers.torch_allreduce(outs[0].stdout)
    except parsers.MeasureError as exc:
        r = exc
    # the torchrun command carries the whole script: the per-GPU evidence names the tool
    return collective_fields(TORCH_TOOL, r, src, TORCH_TOOL, gpus_per_host, len(hosts)), None
