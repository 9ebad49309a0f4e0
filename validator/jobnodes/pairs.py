"""The two-document comparisons the engine calls, by the name a rule's ``check.op`` gives.

A rule with ``against: nodes`` compares a job document with the nodes ``--nodes`` names
(``NodesSide``); one with ``against: run`` compares it with what NCCL said in the run's
logs (``RunSide``). The rule itself (ID, requirement, level, summary, remediation, and so
``--select``, waivers and baselines) is the pack's; the comparison decides the status
and says what it saw on both sides. Pure: the sides were read before the engine runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.jobnodes.nccllog import Evidence
    from validator.jobnodes.nodes import Node
    from validator.jobnodes.rules import RuleText
    from validator.report.model import Finding, JSONValue
    from validator.rules.spec import ParamValue


@dataclass(frozen=True)
class NodesSide:
    """The nodes a job runs on (``lint --nodes``), in host order."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class RunSide:
    """What NCCL said in a run's logs (``lint --run``), with the nodes given beside it."""

    evidence: Evidence
    label: str  # "--run DIR": where the finding's source says the log came from
    nodes: tuple[Node, ...] = ()


Judge = Callable[["RuleText", "dict[str, JSONValue]", object, "Mapping[str, ParamValue]"], "list[Finding]"]

# comparison -> (the Judge method, the rule ID that method gives its findings)
_NODE_CHECKS: dict[str, tuple[str, str]] = {
    "gpus_per_node_fit": ("gpus_per_node", "PLAT-01.job-gpus-per-node-exceed-node"),
    "nodes_fit_fleet": ("node_count", "PLAT-02.job-nodes-exceed-fleet"),
    "ib_hca_on_nodes": ("ib_hca", "NET-02.job-ib-hca-not-on-nodes"),
    "socket_ifname_on_nodes": ("socket_ifname", "NET-02.job-socket-ifname-not-on-nodes"),
    "gid_index_usable": ("gid_index", "NET-02.job-ib-gid-index-unusable"),
    "ib_port_active": ("expects_ib", "NET-02.job-expects-ib-no-active-port"),
    "tp_in_nvlink_domain": ("tensor_parallel", "TOPO-03.job-tensor-parallel-exceeds-node-nvlink"),
    "model_fits_fleet": ("model_parallel", "TOPO-03.job-model-parallel-exceeds-fleet"),
}
# comparison -> the rule ID nccllog.findings gives its findings
_RUN_CHECKS: dict[str, str] = {
    "run_ranks_own_gpu": "PLAT-01.run-ranks-share-gpu",
    "run_used_rdma": "NET-02.run-used-sockets",
    "run_one_transport": "NET-02.run-mixed-transports",
}


def declared_domain(params: Mapping[str, ParamValue]) -> tuple[int, str] | None:
    """``nvlink_domain_size`` where the run declares it (``--set`` or a profile), and how."""
    dom = params.get("nvlink_domain_size")
    if dom is None or not dom.is_set or dom.origin == "default":
        return None
    return int(dom.value), dom.origin.replace("profile:", "profile ")


def _nodes_judge(name: str) -> Judge:
    method, rid = _NODE_CHECKS[name]

    def judge(rule: RuleText, doc: dict[str, JSONValue], other: object,
              params: Mapping[str, ParamValue]) -> list[Finding]:
        from validator.jobnodes.checks import Judge as Checks

        assert isinstance(other, NodesSide)
        checks = Checks(doc, other.nodes, {rid: rule}, declared_domain(params))
        getattr(checks, method)()
        return checks.findings

    return judge


def _run_judge(name: str) -> Judge:
    rid = _RUN_CHECKS[name]

    def judge(rule: RuleText, doc: dict[str, JSONValue], other: object,
              params: Mapping[str, ParamValue]) -> list[Finding]:
        from validator.jobnodes.nccllog import findings

        assert isinstance(other, RunSide)
        return findings(other.evidence, doc["subject"]["name"], {}, other.nodes, run=other.label,
                        rules={rid: rule})

    return judge


JUDGES: dict[str, Judge] = {
    **{name: _nodes_judge(name) for name in _NODE_CHECKS},
    **{name: _run_judge(name) for name in _RUN_CHECKS},
}
"""Every comparison of ``validator.rules.operators.COMPARISONS``, by name."""


def judge(rule: RuleText, op: str, doc: dict[str, JSONValue], other: object,
          params: Mapping[str, ParamValue]) -> list[Finding]:
    """The findings of one two-document rule on one job document."""
    return JUDGES[op](rule, doc, other, params)


def sides(nodes: Sequence[Node] = (), evidence: Evidence | None = None,
          label: str = "--run") -> dict[str, object]:
    """The second documents of a run, by the ``against`` that names them."""
    out: dict[str, object] = {}
    if nodes:
        out["nodes"] = NodesSide(tuple(nodes))
    if evidence is not None:
        out["run"] = RunSide(evidence, label, tuple(nodes))
    return out
