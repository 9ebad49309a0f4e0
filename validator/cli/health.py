"""``spec-check health``: check this node, then drain it in Slurm on failure and resume it
when it passes again (validator/cluster/health.py does the Slurm part)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from validator.cli.common import build, common_options, evaluate_documents, exit_code, render, run_options
from validator.cli.node import probe_document, root_options


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
           sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None, **kwargs: Any) -> None:
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
    from validator.cluster.health import act, check_subject, this_node

    opts = run_options(kwargs)
    built = build(opts, ("node",))
    name = node or this_node()
    if facts_file is not None:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        doc = load(facts_file)
        if doc["subject"]["kind"] != "node":
            raise FactsFileError(f'health judges node facts; this document is a {doc["subject"]["kind"]}',
                                 file=str(facts_file))
        check_subject(name, doc["subject"]["name"], str(facts_file))
        source = str(facts_file)
    else:
        doc = probe_document(sysfs, procfs, rootfs, nvml)
        source = "probe"
    report = evaluate_documents("check", built, opts, [doc], [source])
    from validator.cli.common import with_baseline

    report = with_baseline(report, opts)
    render(report, opts.format, opts.output)
    done = act(name, report, drain=drain)
    click.echo(f"spec-check: {done}", err=True)
    sys.exit(exit_code(report, opts.fail_on))
