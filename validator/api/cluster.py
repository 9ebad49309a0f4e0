"""``run_cluster`` (probe a fleet live) and ``replay_cluster`` (judge its saved facts):
both return a ``FleetOutcome``.

The library half of ``spec-check cluster``: ``validator/cli/cluster.py`` parses the options
(hosts, transport, tools) and renders; ``validator/cluster/`` does the work and hands its
report to the ``Output`` made here, whose ``finish`` applies the baseline and makes the
outcome instead of ending the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from validator.api.options import ClusterOptions, OptionsError, ReplayOptions
from validator.api.outcome import FleetOutcome
from validator.api.steps import Built, build, evaluate_documents, finished, older_note, with_endpoints

if TYPE_CHECKING:  # not imported at run time: start-up
    from pathlib import Path

    from validator.api.options import ReportOptions
    from validator.cluster.result import Output
    from validator.facts.document import Document
    from validator.report.model import JSONValue, Report

SCOPES = ("node", "cluster")


def _output() -> Output[FleetOutcome]:
    """The ``result.Output`` of an API run: documents evaluated as every verb does, the
    run's notes kept in the order said, and ``finish`` returning the ``FleetOutcome``."""
    from validator.cluster.result import Output

    notes: list[str] = []

    def note(kind: str, documents: Iterable[tuple[object, Mapping[str, JSONValue]]]) -> None:
        line = older_note(kind, documents)
        if line:
            notes.append(line)

    def finish(report: Report, opts: ReportOptions, interrupted: bool, save_facts: Path | None,
               node_docs: list[Document], cluster_doc: Document) -> FleetOutcome:
        report, said = finished(report, opts, notes)
        return FleetOutcome(report, opts.fail_on, said, interrupted, save_facts, tuple(node_docs), cluster_doc)

    return Output(evaluate=evaluate_documents, finish=finish, note=note)


def replay_cluster(opts: ReplayOptions, *, built: Built | None = None) -> FleetOutcome:
    """Judge saved facts (``opts.facts``: a ``--save-facts`` directory, node facts files,
    a cluster facts file) as a live run would have, probing nothing. The evaluation (and
    the caller's rendering after it) may hold millions of objects: run it under
    ``validator.report.model.gc_paused`` as the CLI does."""
    from validator.cluster.replay import replay

    if built is None:
        built = build(opts.report, SCOPES)
    outcome: FleetOutcome = replay(built, opts.report, opts.facts, opts.cluster_name, opts.passes, _output())
    return outcome


def run_cluster(opts: ClusterOptions, *, built: Built | None = None) -> FleetOutcome:
    """Probe ``opts.hosts`` over ``opts.transport`` (and measure the fabric with
    ``opts.measure``); Ctrl-C, SIGTERM or SIGHUP ends it early with what was gathered
    (``interrupted``, exit 2). The facts of the run are in the outcome, for
    ``save_fleet_facts``."""
    from validator.cluster.fleet import FOLD_ABOVE
    from validator.cluster.live import LivePlan, check_outputs, run
    from validator.cluster.result import check_cluster_name
    from validator.cluster.transports import default_remote_command
    from validator.io.scrape_defaults import DEFAULT_DEADLINE_S

    if built is None:
        built = build(opts.report, SCOPES)  # bad spec, rules, profile or --set fail before any host is touched
    hosts = list(opts.hosts)
    check_cluster_name(opts.cluster_name, hosts)
    check_outputs(None, opts.save_facts)
    probe_args: tuple[str, ...] = ()
    if opts.scrape_port is not None:
        url = f"http://127.0.0.1:{opts.scrape_port}/metrics"
        if opts.host_timeout <= opts.scrape_interval + 2 * DEFAULT_DEADLINE_S:
            raise OptionsError(f"--timeout {opts.host_timeout:g} s leaves no room for two scrapes "
                               f"{opts.scrape_interval:g} s apart ({DEFAULT_DEADLINE_S:g} s each): give --timeout "
                               f"above {opts.scrape_interval + 2 * DEFAULT_DEADLINE_S:g}")
        probe_args = ("--scrape", url, "--scrape-interval", f"{opts.scrape_interval:g}",
                      "--scrape-timeout", f"{DEFAULT_DEADLINE_S:g}")
        built = with_endpoints(built, (url,), "--scrape-port")
    plan = LivePlan(
        transport=opts.transport,
        remote=opts.remote_command or default_remote_command(opts.transport),
        ssh_config=str(opts.ssh_config) if opts.ssh_config else None,
        connect_timeout=opts.connect_timeout,
        host_timeout=opts.host_timeout,
        parallel=opts.parallel,
        slurm_args=opts.slurm_args,
        measure=opts.measure,
        pairs=opts.pairs,
        tools=opts.tools,
        seconds=opts.measure_seconds,
        port=opts.iperf_port,
        cluster_name=opts.cluster_name,
        save_facts=opts.save_facts,
        fold=opts.passes == "fold" or (opts.passes == "auto" and len(hosts) > FOLD_ABOVE),
        fabric=dict(opts.fabric),
        fabric_interface=opts.fabric_interface,
        probe_args=probe_args,
    )
    outcome: FleetOutcome = run(built, opts.report, hosts, plan, _output())
    return outcome


def save_fleet_facts(outcome: FleetOutcome) -> None:
    """Write a live run's facts to its ``save_facts`` directory: DIR/cluster.json and
    DIR/<host>.json (replayed with ``replay_cluster``). Nothing for a replay. Raises
    OSError when the directory cannot take them."""
    if outcome.save_facts is None:
        return
    from validator.cluster.result import save_fact_files

    save_fact_files(outcome.save_facts, list(outcome.node_docs), outcome.cluster_doc)
