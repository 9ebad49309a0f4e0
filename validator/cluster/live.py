"""A live fleet run: probe every host, then measure the fabric, keeping what was
gathered when Ctrl-C, SIGTERM or SIGHUP ends it early.

``run`` is what ``validator.api.run_cluster`` calls with a ``LivePlan``: hosts ->
transport -> probe every host (bounded, with deadlines) -> optional pairwise
measurements in rounds -> one cluster facts document + one node document per host ->
``result.write_result``, whose ``Output`` makes the outcome. A signal at any point still
gives the result, with the unfinished hosts as errors, marked interrupted (exit 2).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from validator.clock import now_utc

if TYPE_CHECKING:  # types only: rich and the API are not imported at run time here
    from types import FrameType

    from rich.progress import Progress, TaskID

    from validator.api.options import ReportOptions
    from validator.api.steps import Built
    from validator.cluster.plan import Round
    from validator.cluster.proc import Registry
    from validator.cluster.result import Outcome, Output, RunState
    from validator.cluster.transports import Transport
    from validator.report.model import JSONValue

    Handler = Callable[[int, FrameType | None], None]  # a signal handler


class _Bar:
    """A rich progress bar on stderr, only when stderr is a terminal (never in logs)."""

    def __init__(self, label: str):
        self.label = label
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> _Bar:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
        return self

    def start(self, total: int, label: str | None = None) -> None:
        if self.progress is not None:
            self.task = self.progress.add_task(label or self.label, total=total)

    def advance(self, _what: object = None) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.advance(self.task)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
@contextlib.contextmanager
def on_signals(handler: Handler) -> Iterator[None]:
    """SIGTERM, SIGHUP and Ctrl-C (SIGINT) go to ``handler`` for the block, then back to what
    they were (validator/entry.py's, which ends the run at once).

    Slurm prologs, ``timeout`` and scancel send SIGTERM, a closed terminal SIGHUP. While
    gathering, ``interrupt`` ends the run as Ctrl-C does (children killed, partial result,
    exit 2); without it the run died with no result and its children, each in its own
    session, lived on. While the result is written, ``defer`` only marks the run
    interrupted: the gathering is done, and the result must not be cut half-way."""
    sigs = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
    old = {s: signal.signal(s, handler) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
def interrupt(registry: Registry) -> Handler:
    """A handler that raises KeyboardInterrupt in the main thread, naming the signal."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        registry.why = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        raise KeyboardInterrupt(registry.why)

    return handler
def defer(state: RunState | dict[str, bool]) -> Handler:
    """A handler that marks ``state`` interrupted (exit 2) and lets the work finish."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        state["interrupted"] = True

    return handler
def check_outputs(output: Path | None, save_facts: Path | None) -> None:
    """Refuse an unwritable -o or --save-facts before any host is touched: a fleet run
    must not end in "cannot write" after an hour of probing."""
    from validator.errors import SpecCheckError

    if output is not None and str(output) != "-":
        if output.is_dir():
            raise SpecCheckError("the output is a directory", file=str(output))
        parent = output.parent if str(output.parent) else Path(".")
        if not parent.is_dir():
            raise SpecCheckError("cannot write the result: no such directory", file=str(parent))
        if not os.access(parent, os.W_OK | os.X_OK) or (
            output.exists() and not os.access(output, os.W_OK)
        ):
            raise SpecCheckError("cannot write the result: permission denied", file=str(output))
    if save_facts is not None:
        try:
            save_facts.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise SpecCheckError(
                "--save-facts: exists and is not a directory", file=str(save_facts)
            ) from None
        except OSError as exc:
            raise SpecCheckError(
                f"--save-facts: cannot create the directory: {exc.strerror or exc}",
                file=str(save_facts),
            ) from None
        if not os.access(save_facts, os.W_OK | os.X_OK):
            raise SpecCheckError("--save-facts: permission denied", file=str(save_facts))


@dataclass(frozen=True)
class LivePlan:
    """How a live run reaches, probes and measures its hosts: what ``run`` and ``collect``
    read (one value, not the same twelve keywords handed on twice). ``fabric``: host ->
    (fabric address, where it came from); ``fold``: fold the passes
    (``validator.cluster.fleet``); ``probe_args``: extra arguments of each host's probe."""

    transport: str
    remote: str
    ssh_config: str | None = None
    connect_timeout: int = 10
    host_timeout: float = 120.0
    parallel: int = 32
    slurm_args: tuple[str, ...] = ()
    measure: bool = False
    pairs: str = "ring"
    tools: tuple[str, ...] = ()
    seconds: int = 5
    port: int = 5201
    cluster_name: str = "cluster"
    save_facts: Path | None = None
    fold: bool = False
    fabric: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    fabric_interface: str | None = None
    probe_args: tuple[str, ...] = ()


def run(built: Built, opts: ReportOptions, hosts: list[str], plan: LivePlan, out: Output[Outcome]) -> Outcome:
    """Probe and measure ``hosts`` as ``plan`` says, then hand the result to ``out``
    (``result.Output``) and return what its ``finish`` returns."""
    from validator.cluster import proc
    from validator.cluster.result import write_result
    from validator.cluster.transports import make_transport

    engine = make_transport(
        plan.transport,
        ssh_config=plan.ssh_config,
        connect_timeout=plan.connect_timeout,
        parallel=plan.parallel,
        slurm_args=plan.slurm_args,
    )
    registry = proc.Registry()
    late: dict[str, bool] = {}
    try:
        with on_signals(interrupt(registry)):
            state = collect(engine, hosts, registry, plan)
    finally:
        with on_signals(defer(late)):  # stopping 1,000 ssh masters takes a moment
            engine.close()
    state["interrupted"] = state["interrupted"] or bool(late.get("interrupted"))
    state["fold"] = plan.fold
    with on_signals(defer(state)):
        return write_result(built, opts, state, plan.transport, plan.save_facts, out)


def collect(engine: Transport, hosts: list[str], registry: Registry, plan: LivePlan) -> RunState:
    """Probe, then measure; Ctrl-C (or SIGTERM/SIGHUP) in either phase keeps what was
    gathered, and what was planned but not measured becomes an "interrupted" error."""
    from validator import build_info
    from validator.cluster import facts as cfacts
    from validator.cluster.gather import Progress, probe_all
    from validator.cluster.measure.runner import (
        MeasureOptions,
        resolve_fabric,
        run_nccl,
        run_rounds,
        run_torch,
    )
    from validator.cluster.plan import PLANS
    from validator.facts.document import error

    with _Bar("probing hosts") as bar:
        results, interrupted = probe_all(
            engine,
            hosts,
            remote_command=plan.remote,
            timeout=plan.host_timeout,
            parallel=plan.parallel,
            registry=registry,
            progress=Progress(start=bar.start, advance=bar.advance),
            probe_args=plan.probe_args,
        )
    docs = {h: cfacts.rekey(r.document, h) for h, r in results.items() if r.document is not None}
    failures = {h: r.error or "no facts" for h, r in results.items() if r.document is None}
    measured: dict[tuple[str, str], dict[str, JSONValue]] | None = None
    collectives: dict[str, dict[str, JSONValue]] | None = None
    status: dict[str, str] | None = None
    rounds: list[Round] = []
    if plan.measure:
        probed = [h for h in hosts if h in docs]
        rounds = PLANS[plan.pairs](probed)
        pair_tools = [t for t in plan.tools if t != "nccl"]
        status = measure_status(plan.tools, probed, docs)
        measured = {} if pair_tools else None  # nccl alone measures the fleet, not pairs
        try:
            if interrupted:
                raise KeyboardInterrupt
            rdma = {h: p for h in probed if (p := cfacts.rdma_port(docs[h])) is not None}
            opts = MeasureOptions(
                seconds=plan.seconds,
                port=plan.port,
                rdma=rdma,
                timeout=max(30.0, plan.host_timeout / 2),
                parallel=plan.parallel,
            )
            if measured is not None and (plan.fabric or plan.fabric_interface):
                opts.fabric = resolve_fabric(
                    engine,
                    probed,
                    dict(plan.fabric),
                    plan.fabric_interface,
                    registry,
                    parallel=plan.parallel,
                    timeout=opts.timeout,
                )
            if measured is not None:
                with _Bar("measuring pairs") as bar:
                    bar.start(sum(len(r) for r in rounds))
                    run_rounds(
                        engine,
                        rounds,
                        opts,
                        registry,
                        pair_tools,
                        on_pair=bar.advance,
                        results=measured,
                    )
            if status["collectives"] == cfacts.RUN:
                gpus = _gpu_counts(probed, docs)
                fields, why = run_nccl(
                    engine, probed, min(gpus), registry, interface=plan.fabric_interface
                )
                if fields is None:  # no nccl-tests: torch.distributed, where installed
                    fields, why_torch = run_torch(
                        engine, probed, min(gpus), registry, plan.port + 2000, parallel=plan.parallel
                    )
                    why = f"{why}; {why_torch.removeprefix('not run: ')}" if why_torch else why
                if fields is None:
                    status["collectives"] = why or "not run"
                else:
                    collectives = {"all_reduce": fields}
        except KeyboardInterrupt:
            interrupted = True
            registry.kill_all()
        if interrupted:
            _mark_unmeasured(rounds, measured, plan.tools, registry.why)
            if status["collectives"] == cfacts.RUN and collectives is None:
                why = f"interrupted ({registry.why}) before measurement"
                collectives = {"all_reduce": {"busbw_per_gpu": error(why)}}
    doc = cfacts.build(
        hosts,
        docs,
        failures,
        name=plan.cluster_name,
        tool_version=build_info.tool_version(),
        collected_at=now_utc(),
        pairs=measured,
        collectives=collectives,
        probe_seconds={h: r.seconds for h, r in results.items()},
        transport=engine.name,
        measure_status=status,
        measured=plan.measure,
    )
    return {
        "hosts": hosts,
        "docs": docs,
        "failures": failures,
        "cluster": doc,
        "interrupted": interrupted,
        "fleet": cfacts.fleet_summary(hosts, failures, measured, len(rounds), interrupted),
    }


def _gpu_counts(probed: list[str], docs: dict[str, JSONValue]) -> list[int]:
    from validator.cluster import facts as cfacts

    out = []
    for h in probed:
        v = cfacts.host_fields(docs[h])["gpu_count"].get("value")
        out.append(v if isinstance(v, int) and not isinstance(v, bool) else 0)
    return out


def measure_status(
    tools: tuple[str, ...], probed: list[str], docs: dict[str, JSONValue]
) -> dict[str, str]:
    """``run`` or why not, per measurement: the rules skip with this reason."""
    from validator.cluster.facts import RUN

    asked = f"not requested (--measure-tools {','.join(tools)})"
    status = {
        "throughput": RUN if {"iperf3", "ib_write_bw"} & set(tools) else asked,
        "latency": RUN if {"ping", "ib_write_lat"} & set(tools) else asked,
    }
    if "nccl" not in tools:
        status["collectives"] = asked
    elif len(probed) < 2:
        status["collectives"] = "not run: fewer than two hosts probed"
    else:
        no_gpu = [h for h, n in zip(probed, _gpu_counts(probed, docs), strict=True) if n <= 0]
        if no_gpu:
            more = f" (+{len(no_gpu) - 5} more)" if len(no_gpu) > 5 else ""
            verb = "has" if len(no_gpu) == 1 else "have"
            status["collectives"] = (
                f"not run: {', '.join(no_gpu[:5])}{more} {verb} no GPUs (or none counted)"
            )
        else:
            status["collectives"] = RUN
    return status


def _mark_unmeasured(
    rounds: list[Round],
    measured: dict[tuple[str, str], dict[str, JSONValue]] | None,
    tools: tuple[str, ...],
    why: str,
) -> None:
    """Planned pairs that an interruption left unmeasured are errors, never absent: an
    empty collection would read as "nothing to measure" (unknown is never pass)."""
    from validator.facts.document import error, value

    if measured is None:
        return
    reason = error(f"interrupted ({why}) before measurement")
    for rnd in rounds:
        for a, b in rnd:
            if (a, b) in measured:
                continue
            fields: dict[str, JSONValue] = {
                "direction": value(f"{a}->{b}"),
                "sender": value(a),
                "receiver": value(b),
            }
            if {"iperf3", "ib_write_bw"} & set(tools):
                fields["throughput"] = dict(reason)
            if {"ping", "ib_write_lat"} & set(tools):
                fields["latency"] = dict(reason)
            measured[(a, b)] = fields
