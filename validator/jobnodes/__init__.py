"""A job meets its nodes (``spec-check lint JOB --nodes FACTS --run DIR``).

* ``nodes``: the node facts ``--nodes`` names (facts files, a folder, a cluster result);
* ``ncclenv``: NCCL's own parsing of ``NCCL_IB_HCA`` / ``NCCL_SOCKET_IFNAME`` / GID index;
* ``checks``: the job's requests judged host by host, one finding per mismatch;
* ``nccllog``: what NCCL really used, from a run's ``NCCL_DEBUG=INFO`` lines;
* ``rules``: the rule descriptions these findings carry.

``add_to_report`` is the entry point ``cli/lint.py`` calls; ``waive`` applies ``--waivers``
to the whole report after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from validator.rules.rulemodel import Level, Spec

if TYPE_CHECKING:  # types only: the API's, and the result model's (not imported at run time)
    from validator.api.options import ReportOptions
    from validator.api.steps import Built
    from validator.report.model import Finding, JSONValue, Report


def levels_of(spec: Spec) -> dict[str, Level]:
    """Requirement ID -> MUST/SHOULD, from the spec the run checks."""
    return {q.id: q.level for q in spec.requirements}


def add_to_report(report: Report, built: Built, opts: ReportOptions, docs: list[dict[str, JSONValue]],
                  node_paths: Sequence[Path], run_paths: Sequence[Path]) -> Report:
    """``report`` with the findings of every job against the ``--nodes`` and ``--run``
    inputs added (selection applied), their rules described, and ``extra.nodes`` /
    ``extra.nccl`` listing what was read."""
    from dataclasses import replace

    from validator.jobnodes import checks, nccllog
    from validator.jobnodes.nodes import hostlist, read_nodes
    from validator.jobnodes.rules import rule_docs
    from validator.rules.selection import is_selected

    levels = levels_of(built.ctx.spec)
    nodes = read_nodes(list(node_paths), built.ctx.spec.spec_version) if node_paths else []
    found: list[Finding] = []
    extra: dict[str, JSONValue] = {}
    if nodes:
        dom = built.ctx.params.get("nvlink_domain_size")
        declared = None
        if dom is not None and dom.is_set and dom.origin != "default":
            declared = (int(dom.value), dom.origin.replace("profile:", "profile "))
        for d in docs:
            found += checks.judge_job(d, nodes, levels, declared)
        extra["nodes"] = {"hosts": hostlist(n.host for n in nodes), "count": len(nodes),
                          "files": sorted({n.file for n in nodes})}
    if run_paths:
        ev = nccllog.read_run(list(run_paths))
        label = "--run " + ", ".join(map(str, run_paths))
        for d in docs:
            found += nccllog.findings(ev, d["subject"]["name"], levels, nodes, run=label)
        extra["nccl"] = nccllog.summary(ev)
    found = [f for f in found if is_selected(f.rule, opts.select, opts.ignore)]
    if not found and not extra:
        return report
    findings = tuple(sorted((*_superseded(report.findings, found), *found), key=lambda f: f.sort_key()))
    known = {r.id for r in report.rules}
    docs_ = [r for r in rule_docs({f.rule for f in found}, levels) if r.id not in known]
    return replace(report, findings=findings, rules=(*report.rules, *docs_),
                   extra={**report.extra, **extra})


# a pack rule judged on a parameter (the NVLink domain a profile assumes) -> the rule that
# judges the same mismatch on the nodes' own facts: with those, one mismatch is one finding
SUPERSEDED = {"TOPO-03.tensor-parallel-exceeds-nvlink-domain": "TOPO-03.job-tensor-parallel-exceeds-node-nvlink"}


def _superseded(findings: Sequence[Finding], found: Sequence[Finding]) -> list[Finding]:
    """``findings`` with each problem that a job-against-nodes finding judges again on the
    nodes' facts turned into a skip naming that finding (a TP-16 job on 8-GPU NVLink
    domains: one warning, not one from the parameter and one from the nodes)."""
    from dataclasses import replace

    from validator.report.model import Status

    problems = (Status.FAIL, Status.WARN)
    again = {(f.subject, f.rule) for f in found if f.status in problems}
    out = []
    for f in findings:
        by = SUPERSEDED.get(f.rule)
        if by and f.status in problems and (f.subject, by) in again:
            f = replace(f, status=Status.SKIP, message=(
                f"judged against the nodes' own NVLink domains by {by} (one mismatch, one finding): "
                f"{f.message}"))
        out.append(f)
    return out


def waive(report: Report, built: Built, path: Path) -> Report:
    """``report`` under the ``--waivers`` file, as every verb applies it
    (``validator.report.waivers``), with this package's rule IDs known beside the pack's: a
    waiver names ``NET-02.run-used-sockets`` exactly, or its requirement ``NET-02``, and
    matches by subject (the job) or file like a pack finding. ``lint`` defers its waivers
    to here when ``--nodes``/``--run`` is given, so that they are applied, and a waiver
    matching only these findings reported unmatched, once."""
    from types import SimpleNamespace

    from validator.jobnodes.rules import RULES
    from validator.report.waivers import apply_waivers, load_waivers

    pack = SimpleNamespace(rules=[*built.pack.rules, *(SimpleNamespace(id=i) for i in RULES)])
    return apply_waivers(report, load_waivers(path, pack, built.ctx.spec))
