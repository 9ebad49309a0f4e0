"""``spec-check health``'s verdict, apart from what a scheduler does with it.

A health check judges one node, the node it would drain or resume, against every node
requirement: its own recording (``--facts``, refused when it is another host's, so a
verdict never acts on the wrong node) or a fresh probe. What to do about the verdict in
Slurm (``validator.cluster.health.act``) is the caller's, after the report is written: the
library decides, the scheduler acts, and a caller without Slurm (node-problem-detector,
a test) gets the same verdict.
"""

from __future__ import annotations

from validator.api.node import probe_document
from validator.api.options import HealthOptions
from validator.api.outcome import Outcome
from validator.api.steps import Built, build, evaluate_documents, finished, stale_note


def judge_node_health(opts: HealthOptions, *, built: Built | None = None) -> Outcome:
    """The node's report and exit code with the baseline applied. ``built``: what
    ``build(opts.report, ("node",))`` returned, when the caller built first (bad options
    are refused before anything is probed)."""
    from validator.cluster.health import check_subject

    if built is None:
        built = build(opts.report, ("node",))
    if opts.facts is not None:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        doc = load(opts.facts)
        if doc["subject"]["kind"] != "node":
            raise FactsFileError(f'health judges node facts; this document is a {doc["subject"]["kind"]}',
                                 file=str(opts.facts))
        check_subject(opts.node, doc["subject"]["name"], str(opts.facts))
        source = str(opts.facts)
    else:
        doc = probe_document(opts.sysfs, opts.procfs, opts.rootfs, opts.nvml)
        source = "probe"
    report = evaluate_documents("check", built, opts.report, [doc], [source])
    stale = stale_note(built, [(doc, source)]) if opts.facts is not None else None
    report, notes = finished(report, opts.report, [stale])
    return Outcome(report, opts.report.fail_on, notes)
