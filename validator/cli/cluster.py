"""``spec-check cluster``: the options, checked and handed to the library.

This module only parses and checks options (usage errors before any host is touched)
and renders; the work is ``validator.api.run_cluster`` (probe, measure, report) or
``validator.api.replay_cluster`` (``--facts``: evaluate saved facts), each returning a
``FleetOutcome``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from validator.api.options import DEFAULT_TOOLS, KNOWN_TOOLS, ClusterOptions, ReplayOptions
from validator.api.outcome import FleetOutcome
from validator.cli.common import RunOptions, build, call, common_options, run_options, say_and_render
from validator.io.scrape_defaults import SCRAPE_INTERVAL_S


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
    "--slurm-args",
    default=None,
    metavar="ARGS",
    help="Extra srun options for every step of the slurm transport, as one shell-quoted "
    "string (e.g. '--partition=gpu --account=ops --time=10').",
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
    "--scrape-port",
    type=click.IntRange(min=1, max=65535),
    default=None,
    metavar="PORT",
    help="Sample each host's exporter at http://127.0.0.1:PORT/metrics from the host itself "
    "(its probe runs with --scrape; MON-03 measured), e.g. 9400 for dcgm-exporter.",
)
@click.option(
    "--scrape-interval",
    type=click.FloatRange(min=0),
    default=SCRAPE_INTERVAL_S,
    show_default=True,
    metavar="SECONDS",
    help="With --scrape-port: seconds between the two scrapes (above the exporter's collect interval); "
    "--timeout must leave room for it.",
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
    help=f"Comma list of {', '.join(KNOWN_TOOLS)} [default: {','.join(DEFAULT_TOOLS)}; "
    "ib_write_bw and ib_write_lat only where both hosts have an ACTIVE RDMA port (then "
    "ib_write_lat is NET-04's latency, ping's kept beside it); nccl only where every "
    "host has GPUs].",
)
@click.option(
    "--measure-seconds",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Duration of each throughput test.",
)
@click.option(
    "--fabric-address",
    "fabric_addresses",
    multiple=True,
    metavar="HOST=ADDR",
    help="Measure HOST at ADDR (its address on the training fabric), not at the address "
    "spec-check reaches it by (often the management network). Repeatable; a host file "
    "line may say the same as 'HOST fabric=ADDR'.",
)
@click.option(
    "--fabric-interface",
    metavar="IFACE",
    default=None,
    help="Measure every host without a --fabric-address at the IPv4 address of its "
    "interface IFACE (ip -o -4 addr show dev IFACE on the host).",
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
    help="Also write the facts: DIR/cluster.json and DIR/<host>.json (replay with "
    "spec-check cluster --facts DIR).",
)
@click.option(
    "--keep-facts",
    is_flag=True,
    help="With -o FILE: keep the facts judged beside the result, in a folder named after it "
    "(fleet.json -> fleet.facts/), where `lint --nodes fleet.json` reads them.",
)
@click.option(
    "--facts",
    "facts_path",
    type=click.Path(path_type=Path),  # a missing path is refused as check and lint --nodes refuse it
    multiple=True,
    metavar="FILE|DIR",
    help="Evaluate saved facts instead of probing: node facts files (one per host; several after one "
    "--facts, so a shell glob works), a folder of them (a --save-facts directory) and/or a cluster facts file.",
)
@click.option(
    "--passes",
    type=click.Choice(["auto", "itemize", "fold"]),
    default="auto",
    show_default=True,
    help="How the report shows the checks hosts passed: `itemize` lists each host's, `fold` gives one "
    "line per check with the number of hosts that passed it and their range of values (a failure "
    "or error is always listed per host); `auto` folds above 100 hosts.",
)
@common_options
def cluster(
    hosts_spec: str | None,
    transport: str | None,
    ssh_config: Path | None,
    remote_command: str | None,
    slurm_args: str | None,
    host_timeout: float,
    scrape_port: int | None,
    scrape_interval: float,
    connect_timeout: int,
    parallel: int,
    measure: bool,
    pairs: str,
    measure_tools: str | None,
    measure_seconds: int,
    iperf_port: int,
    fabric_addresses: tuple[str, ...],
    fabric_interface: str | None,
    cluster_name: str,
    save_facts: Path | None,
    keep_facts: bool,
    facts_path: tuple[Path, ...],
    passes: str,
    **kwargs: Any,  # Any: the common options as click parsed them (run_options takes them)
) -> None:
    """Check a fleet: probe every host, compare them, and optionally measure the fabric.

    Inside a Slurm allocation (`salloc -N 8 spec-check cluster --measure`) the hosts are the
    allocation's; --facts judges saved facts instead of probing (`--save-facts DIR`, or
    `probe -o` files).
    """
    from validator.api.cluster import replay_cluster, run_cluster
    from validator.cluster.hosts import parse_hosts
    from validator.cluster.live import check_outputs
    from validator.cluster.result import check_cluster_name
    from validator.cluster.transports import allocation_hosts

    opts = run_options(kwargs)
    built = build(opts.report, ("node", "cluster"))  # bad spec, rules, profile or --set fail before any host is touched
    if keep_facts:
        from validator.jobnodes.nodes import kept_facts

        if opts.output is None:
            raise click.UsageError("--keep-facts keeps the facts beside the result: give -o FILE")
        if save_facts is not None:
            raise click.UsageError("--keep-facts and --save-facts both save the facts: give one")
        save_facts = kept_facts(opts.output)
    if facts_path:
        from validator.report.model import gc_paused

        _check_replay_options(click.get_current_context())
        if keep_facts:
            assert save_facts is not None
            _keep_replayed(tuple(facts_path), save_facts)
        replay_opts = ReplayOptions(report=opts.report, facts=tuple(facts_path), cluster_name=cluster_name,
                                    passes=passes)
        with gc_paused():  # the fleet's result is rendered as it was evaluated: without cyclic GC
            _finish(call(replay_cluster, replay_opts, built=built), opts)
        return
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
    fabric = _fabric(hosts_spec, fabric_addresses, hosts)
    check_cluster_name(cluster_name, hosts)
    extra_srun = _slurm_args(slurm_args, transport)
    check_outputs(opts.output, save_facts)
    cluster_opts = ClusterOptions(
        report=opts.report,
        hosts=tuple(hosts),
        transport=transport,
        remote_command=remote_command,
        ssh_config=ssh_config,
        connect_timeout=connect_timeout,
        host_timeout=host_timeout,
        parallel=parallel,
        slurm_args=extra_srun,
        measure=measure,
        pairs=pairs,
        tools=tools,
        measure_seconds=measure_seconds,
        iperf_port=iperf_port,
        fabric=fabric,
        fabric_interface=fabric_interface,
        scrape_port=scrape_port,
        scrape_interval=scrape_interval,
        cluster_name=cluster_name,
        save_facts=save_facts,
        passes=passes,
    )
    outcome = call(run_cluster, cluster_opts, built=built)
    from validator.cluster.live import defer, on_signals

    with on_signals(defer({})):  # a signal while the result is written does not cut it half-way
        _finish(outcome, opts)


# Options that only shape a live run: given with --facts they would be silently ignored.
_LIVE_ONLY = (
    "hosts_spec",
    "transport",
    "ssh_config",
    "remote_command",
    "slurm_args",
    "host_timeout",
    "scrape_port",
    "scrape_interval",
    "connect_timeout",
    "parallel",
    "measure",
    "pairs",
    "measure_tools",
    "measure_seconds",
    "iperf_port",
    "fabric_addresses",
    "fabric_interface",
    "save_facts",
)


def _check_replay_options(ctx: click.Context) -> None:
    """``--facts`` probes and measures nothing: an option that only a live run reads is a
    usage error, not a silent no-op (``--facts DIR --save-facts OUT`` would write nothing)."""
    from click.core import ParameterSource

    given = []
    for param in ctx.command.params:
        if param.name in _LIVE_ONLY and ctx.get_parameter_source(param.name) not in (
            None,
            ParameterSource.DEFAULT,
            ParameterSource.DEFAULT_MAP,
        ):
            given.append(param.opts[0] if param.opts else param.name)
    if given:
        raise click.UsageError(
            f"--facts replays saved facts; {', '.join(given)} only apply to a live run"
        )


def _slurm_args(raw: str | None, transport: str) -> tuple[str, ...]:
    """``--slurm-args`` as srun arguments; only the slurm transport runs srun."""
    import shlex

    if raw is None:
        return ()
    if transport != "slurm":
        raise click.UsageError(f"--slurm-args needs --transport slurm (not {transport})")
    try:
        return tuple(shlex.split(raw))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--slurm-args") from None



def _fabric(
    hosts_spec: str | None, given: tuple[str, ...], hosts: list[str]
) -> dict[str, tuple[str, str]]:
    """host -> (fabric address, where it came from): the host file's ``fabric=`` column,
    then ``--fabric-address HOST=ADDR`` (which wins). A host not in the fleet, or an
    address that is not one word, is a usage error."""
    from validator.cluster.hosts import check_address, fabric_column

    out: dict[str, tuple[str, str]] = {}
    if hosts_spec and hosts_spec.strip().startswith("@"):
        path = hosts_spec.strip()[1:]
        for host, (addr, line) in fabric_column(path).items():
            out[host] = (addr, f"{path}:{line} fabric= column")
    for item in given:
        host, eq, addr = item.partition("=")
        if not eq or not host or not addr:
            raise click.BadParameter(f"{item!r} is not HOST=ADDR", param_hint="--fabric-address")
        if host not in hosts:
            raise click.BadParameter(f"{host!r} is not one of the hosts", param_hint="--fabric-address")
        check_address(addr, "--fabric-address")
        out[host] = (addr, f"--fabric-address {host}={addr}")
    return out


def _keep_replayed(paths: tuple[Path, ...], dest: Path) -> None:
    """``--keep-facts`` of a replay: the facts files it reads, copied (by name) into ``dest``
    before they are judged (a live run's are written after, as ``--save-facts`` writes them)."""
    import shutil
    import sys

    from validator.cluster.replay import facts_files

    files = list(facts_files(paths))
    names = [f.name for f in files]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        click.echo(f"spec-check: error: {dest}: cannot keep the facts: two files named {twice[0]} "
                   "(rename one)", err=True)
        sys.exit(2)
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for src in files:
            shutil.copyfile(src, dest / src.name)
    except OSError as exc:
        click.echo(f"spec-check: error: {dest}: cannot keep the facts: {exc.strerror or exc}", err=True)
        sys.exit(2)


def _finish(outcome: FleetOutcome, opts: RunOptions) -> None:
    """Render, save the facts (after: a result is never lost to a facts directory that
    fails), and exit with the outcome's code (2 when the run was interrupted)."""
    import sys

    from validator.api.cluster import save_fleet_facts

    say_and_render(outcome, opts)
    if outcome.save_facts is not None:
        try:
            save_fleet_facts(outcome)
        except OSError as exc:
            click.echo(
                f"spec-check: error: {outcome.save_facts}: cannot save the facts: {exc.strerror or exc} "
                "(the result was written)",
                err=True,
            )
            sys.exit(2)
    if outcome.interrupted:
        click.echo("spec-check: error: interrupted; the result written is partial", err=True)
        sys.exit(2)
    sys.exit(outcome.exit_code)
