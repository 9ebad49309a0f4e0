"""``spec-check health``: check this node, then drain it in Slurm on failure and resume it
when it passes again (validator/cluster/health.py does the Slurm part)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from validator.cli.common import build, call, common_options, render, run_options
from validator.cli.node import root_options


@click.command()
@click.option("--node", default=None, metavar="NAME",
              help="The Slurm node to drain or resume [default: $SLURMD_NODENAME, else the short hostname].")
@click.option("--facts", "facts_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Judge recorded facts (spec-check probe -o FILE) instead of probing.")
@click.option("--drain/--no-drain", default=True, show_default=True,
              help="Drain the node on a MUST failure or error (--no-drain: only report; a node "
                   "spec-check drained is still resumed when it passes).")
@click.option("--npd", is_flag=True, default=False,
              help="Run as a node-problem-detector custom plugin: no Slurm; one status line of at most "
                   "80 characters; exit 0 OK, 1 problem, 2 unknown, within 5 s (docs/node-health.md).")
@click.option("--kernel-log", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Judge the GPU error events of a saved dmesg / journalctl -k output (with --npd).")
@root_options
@common_options
def health(node: str | None, facts_file: Path | None, drain: bool, npd: bool, kernel_log: Path | None,
           sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None, **kwargs: Any) -> None:  # Any: click's options
    """Slurm health check: drain this node when it fails the spec, resume it when it passes.

    \b
    Run it as Slurm's HealthCheckProgram, a prolog or an epilog (slurm.conf):
      HealthCheckProgram=/usr/local/sbin/spec-check-health
    (the wrapper deploy/slurm/spec-check-health, installed there: docs/health.md)
    A node drained by anyone else, down, failing or not responding is never touched; the
    drain reason starts with "spec-check:" and names the failing rules, and the node is
    resumed only when every one of them was checked again in this run and passes.
    --facts must be the facts of the node acted on. Exit 0 passes, 1 fails, 2 when the check
    or slurmctld could not be done or reached.
    """
    if kernel_log is not None and not npd:
        raise click.UsageError("--kernel-log goes with --npd (the Slurm health check reads this node's log)")
    if npd:  # node-problem-detector's contract, not Slurm's (validator/cli/npd.py)
        from validator.cli.npd import run as run_npd

        sys.exit(run_npd(facts_file, sysfs, procfs, rootfs, nvml, kernel_log, kwargs))
    from validator.api.health import judge_node_health
    from validator.api.options import HealthOptions
    from validator.cluster.health import act, this_node

    opts = run_options(kwargs)
    built = build(opts, ("node",))  # bad options are refused before anything is probed
    name = node or this_node()
    outcome = call(judge_node_health, HealthOptions(name, opts.report, facts_file, sysfs, procfs, rootfs, nvml),
                   built=built)
    for line in outcome.notes:
        click.echo(line, err=True)
    render(outcome.report, opts.format, opts.output)
    done = act(name, outcome.report, drain=drain)  # the scheduler acts once the report is written
    click.echo(f"spec-check: {done}", err=True)
    sys.exit(outcome.exit_code)
