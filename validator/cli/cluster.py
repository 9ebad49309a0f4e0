"""``spec-check cluster``: probe a fleet, measure it, evaluate node and cluster rules.

The verb only wires parts together (validator/cluster/ does the work): hosts -> transport
-> probe every host (bounded, with deadlines) -> optional pairwise measurements in rounds
-> one cluster facts document + one node document per host -> engine -> one result.
Ctrl-C at any point still writes the result, with the unfinished hosts as errors, and
exits 2 (the run was not completed).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from validator.cli.common import build, common_options, evaluate_documents, now_utc, run_options

DEFAULT_TOOLS = ("ping", "iperf3", "ib_write_bw")
KNOWN_TOOLS = ("ping", "iperf3", "ib_write_bw", "nccl")


class _Bar:
    """A rich progress bar on stderr, only when stderr is a terminal (never in logs)."""

    def __init__(self, label: str):
        self.label = label
        self.progress: Any = None
        self.task: Any = None

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


def _tools(raw: str | None) -> tuple[str, ...]:
    if not raw:
        return DEFAULT_TOOLS
    tools = tuple(t.strip() for t in raw.split(",") if t.strip())
    bad = [t for t in tools if t not in KNOWN_TOOLS]
    if bad:
        raise click.BadParameter(
            f"unknown tool {bad[0]!r} (known: {', '.join(KNOWN_TOOLS)})",
            param_hint="--measure-tools",
        )
    return tools


def _safe_name(address: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@-]", "_", address) or "host"


def _save_facts(
    directory: Path, node_docs: list[dict[str, Any]], cluster_doc: dict[str, Any]
) -> None:
    from validator.cli.common import write_atomic

    directory.mkdir(parents=True, exist_ok=True)
    for doc in node_docs:
        write_atomic(
            directory / f"{_safe_name(doc['subject']['name'])}.json",
            json.dumps(doc, indent=1) + "\n",
        )
    write_atomic(directory / "cluster.json", json.dumps(cluster_doc, indent=1) + "\n")


@click.command()
@click.option(
    "--hosts",
    "hosts_spec",
    metavar="LIST|@FILE",
    default=None,
    help="Hosts to check: a,b,node[01-16] or @FILE (one per line). Inside a Slurm "
    "allocation, defaults to its nodes.",
)
@click.option(
    "--transport",
    type=click.Choice(["ssh", "slurm", "local"]),
    default=None,
    help="How to reach hosts [default: slurm inside an allocation without --hosts, else ssh].",
)
@click.option(
    "--ssh-config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="An ssh_config file for the ssh transport (ssh -F).",
)
@click.option(
    "--remote-command",
    default=None,
    metavar="CMD",
    help="How spec-check is invoked on a host (a shell command) [default: spec-check; "
    "local: this Python].",
)
@click.option(
    "--timeout",
    "host_timeout",
    type=click.FloatRange(min=1),
    default=120.0,
    show_default=True,
    help="Seconds each host's probe may take before it is reported as an error.",
)
@click.option(
    "--connect-timeout",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Seconds to wait for an SSH connection.",
)
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Hosts probed at once.",
)
@click.option(
    "--measure/--no-measure",
    default=False,
    show_default=True,
    help="Measure pairwise throughput and latency (NET-01 measured, NET-04).",
)
@click.option(
    "--pairs",
    type=click.Choice(["ring", "all"]),
    default="ring",
    show_default=True,
    help="ring: each host with its neighbour (2-3 rounds); all: every pair (N-1 rounds).",
)
@click.option(
    "--measure-tools",
    default=None,
    metavar="LIST",
    help="Comma list of ping, iperf3, ib_write_bw, nccl [default: ping,iperf3,ib_write_bw; "
    "ib_write_bw only where both hosts have an ACTIVE RDMA port].",
)
@click.option(
    "--measure-seconds",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Duration of each throughput test.",
)
@click.option(
    "--iperf-port",
    type=click.IntRange(1, 65535),
    default=5201,
    show_default=True,
    help="TCP port for iperf3 servers (ib_write_bw uses this + 1000).",
)
@click.option(
    "--name",
    "cluster_name",
    default="cluster",
    show_default=True,
    help="The cluster subject's name in the result.",
)
@click.option(
    "--save-facts",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Also write the facts: DIR/cluster.json and DIR/<host>.json (replay with check --facts).",
)
@common_options
def cluster(
    hosts_spec: str | None,
    transport: str | None,
    ssh_config: Path | None,
    remote_command: str | None,
    host_timeout: float,
    connect_timeout: int,
    parallel: int,
    measure: bool,
    pairs: str,
    measure_tools: str | None,
    measure_seconds: int,
    iperf_port: int,
    cluster_name: str,
    save_facts: Path | None,
    **kwargs: Any,
) -> None:
    """Check a fleet: probe every host, compare them, and optionally measure the fabric.

    \b
    Examples:
      spec-check cluster --hosts node[01-16] --measure
      spec-check cluster --hosts @hosts.txt --ssh-config fleet.conf --format json -o out.json
      salloc -N 8 spec-check cluster --transport slurm --measure
    """
    from validator.cluster import proc
    from validator.cluster.hosts import parse_hosts
    from validator.cluster.transports import (
        allocation_hosts,
        default_remote_command,
        make_transport,
    )

    opts = run_options(kwargs)
    built = build(opts, ("node", "cluster"))  # bad spec, rules, profile or --set fail before any host is touched
    tools = _tools(measure_tools)
    if transport is None:
        transport = "slurm" if hosts_spec is None and os.environ.get("SLURM_JOB_ID") else "ssh"
    if hosts_spec is None:
        if transport == "local":
            hosts = ["localhost"]
        elif transport == "slurm":
            hosts = allocation_hosts()
        else:
            raise click.UsageError("--hosts is required (or run inside a Slurm allocation)")
    else:
        hosts = parse_hosts(hosts_spec)
    remote = remote_command or default_remote_command(transport)
    engine = make_transport(
        transport,
        ssh_config=str(ssh_config) if ssh_config else None,
        connect_timeout=connect_timeout,
    )
    registry = proc.Registry()
    try:
        state = _collect(
            engine,
            hosts,
            remote,
            registry,
            host_timeout=host_timeout,
            parallel=parallel,
            measure=measure,
            pairs=pairs,
            tools=tools,
            seconds=measure_seconds,
            port=iperf_port,
            cluster_name=cluster_name,
        )
    finally:
        engine.close()
    _report(built, opts, state, transport, save_facts)


def _collect(
    engine: Any,
    hosts: list[str],
    remote: str,
    registry: Any,
    *,
    host_timeout: float,
    parallel: int,
    measure: bool,
    pairs: str,
    tools: tuple[str, ...],
    seconds: int,
    port: int,
    cluster_name: str,
) -> dict[str, Any]:
    """Probe, then measure; Ctrl-C in either phase keeps what was gathered."""
    from validator import __version__
    from validator.cluster import facts as cfacts
    from validator.cluster.gather import Progress, probe_all
    from validator.cluster.measure.runner import MeasureOptions, run_nccl, run_rounds
    from validator.cluster.plan import PLANS

    with _Bar("probing hosts") as bar:
        results, interrupted = probe_all(
            engine,
            hosts,
            remote_command=remote,
            timeout=host_timeout,
            parallel=parallel,
            registry=registry,
            progress=Progress(start=bar.start, advance=bar.advance),
        )
    docs = {h: cfacts.rekey(r.document, h) for h, r in results.items() if r.document is not None}
    failures = {h: r.error or "no facts" for h, r in results.items() if r.document is None}
    measured: dict[tuple[str, str], dict[str, Any]] | None = None
    collectives: dict[str, dict[str, Any]] | None = None
    rounds: list[Any] = []
    if measure and not interrupted:
        probed = [h for h in hosts if h in docs]
        rounds = PLANS[pairs](probed)
        rdma = {h: p for h in probed if (p := cfacts.rdma_port(docs[h])) is not None}
        opts = MeasureOptions(
            seconds=seconds, port=port, rdma=rdma, timeout=max(30.0, host_timeout / 2)
        )
        pair_tools = [t for t in tools if t != "nccl"]
        try:
            if pair_tools:  # nccl alone measures the fleet at once, not pairs
                measured = {}
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
            gpus = [int(cfacts.host_fields(docs[h])["gpu_count"].get("value") or 0) for h in probed]
            if "nccl" in tools and len(probed) >= 2 and min(gpus) > 0:
                collectives = {"all_reduce": run_nccl(engine, probed, min(gpus), registry)}
        except KeyboardInterrupt:
            interrupted = True
            registry.kill_all()
    doc = cfacts.build(
        hosts,
        docs,
        failures,
        name=cluster_name,
        tool_version=__version__,
        collected_at=now_utc(),
        pairs=measured,
        collectives=collectives,
        probe_seconds={h: r.seconds for h, r in results.items()},
        transport=engine.name,
    )
    return {
        "hosts": hosts,
        "docs": docs,
        "failures": failures,
        "cluster": doc,
        "interrupted": interrupted,
        "fleet": cfacts.fleet_summary(hosts, failures, measured, len(rounds), interrupted),
    }


def _report(
    built: Any, opts: Any, state: dict[str, Any], transport: str, save_facts: Path | None
) -> None:
    from validator.cli.common import exit_code, render

    hosts, docs = state["hosts"], state["docs"]
    node_docs = [docs[h] for h in hosts if h in docs]
    if save_facts is not None:
        _save_facts(save_facts, node_docs, state["cluster"])
    report = evaluate_documents(
        "cluster",
        built,
        opts,
        [*node_docs, state["cluster"]],
        [f"{transport}:{d['subject']['name']}" for d in node_docs] + ["cluster"],
        extra={"fleet": state["fleet"]},
    )
    report = _per_host(report, state["failures"], transport)
    render(report, opts.format, opts.output)
    if state["interrupted"]:
        click.echo("spec-check: error: interrupted; the result written is partial", err=True)
        sys.exit(2)
    sys.exit(exit_code(report, opts.fail_on))


def _per_host(report: Any, failures: dict[str, str], transport: str) -> Any:
    """A host's probe finding belongs to that host: subject = the host, not the cluster.

    The engine gives ``PLAT-02.host-not-probed`` one finding per item of the cluster
    subject; here each becomes the host's own (and failed hosts are listed as subjects),
    so a report grouped by subject shows an unreachable host as an error on that host.
    """
    from validator.model import Finding, Subject

    findings = tuple(
        replace(f, subject=f.item, item=None)
        if f.rule == "PLAT-02.host-not-probed" and f.item
        else f
        for f in report.findings
    )
    findings = tuple(sorted(findings, key=Finding.sort_key))
    extra_subjects = tuple(
        Subject(h, "node", None, None, f"{transport}:{h} (probe failed)") for h in failures
    )
    return replace(report, findings=findings, subjects=report.subjects + extra_subjects)
