"""The rules ``lint --nodes`` and ``lint --run`` add: one per mismatch between a job and
its nodes, each under the requirement it serves (the spec's requirement IDs; no new requirement).

They are code, not rule-pack YAML: each compares two documents (the job's and every
node's), which the pack's closed set of operators over one subject cannot express. Their
descriptions travel in the report like the pack's (``RuleDoc``), so SARIF, HTML and
``--select/--ignore`` treat them alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.rules.rulemodel import Level, Scope

if TYPE_CHECKING:
    from validator.report.model import RuleDoc


@dataclass(frozen=True)
class JobNodeRule:
    id: str
    summary: str
    why: str
    remediation: str

    @property
    def requirement(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split(".", 1)[1]


RULES = {
    r.id: r
    for r in (
        JobNodeRule(
            "PLAT-01.job-gpus-per-node-exceed-node",
            "The job starts more GPU processes per node than a node has GPUs",
            "A rank without its own GPU shares one (out of memory, or NCCL refuses two ranks on one "
            "GPU) or the launcher fails; on a mixed fleet only the smaller nodes break.",
            "Lower the processes / GPUs per node (torchrun --nproc-per-node, --gpus-per-node, devices) "
            "to the nodes' GPU count, or run on nodes that have as many GPUs (exclude the named hosts).",
        ),
        JobNodeRule(
            "PLAT-02.job-nodes-exceed-fleet",
            "The job asks for more nodes than the fleet given to --nodes",
            "A job sized for more nodes than exist waits in the queue forever, or its rendezvous "
            "never completes.",
            "Lower the node count (--nodes, --nnodes, num_nodes, replicas) to the fleet's size, or "
            "pass the facts of every node the job will run on.",
        ),
        JobNodeRule(
            "NET-02.job-ib-hca-not-on-nodes",
            "NCCL_IB_HCA names an HCA or port the nodes do not have ACTIVE",
            "NCCL keeps only ACTIVE ports that NCCL_IB_HCA matches; a name that matches none leaves "
            "that rail unused, and when no port is left NCCL silently falls back to TCP sockets.",
            "Set NCCL_IB_HCA to the nodes' HCAs (see `ibv_devinfo` or the node facts' rdma.ports), "
            "or leave it unset so that NCCL uses every ACTIVE port.",
        ),
        JobNodeRule(
            "NET-02.job-socket-ifname-not-on-nodes",
            "NCCL_SOCKET_IFNAME matches no up interface of a node",
            "NCCL bootstraps over the interfaces NCCL_SOCKET_IFNAME matches; with none, every rank "
            "fails at init with 'Bootstrap : no socket interface found'.",
            "Set NCCL_SOCKET_IFNAME to a prefix of the nodes' up interfaces (the node facts' "
            "net.interfaces), or a list of them.",
        ),
        JobNodeRule(
            "NET-02.job-ib-gid-index-unusable",
            "NCCL_IB_GID_INDEX cannot be used on the nodes' RoCE ports",
            "On RoCE NCCL uses the GID index it is given instead of finding the RoCE v2 one; a "
            "wrong index fails the connection ('incorrect GID index forced by NCCL_IB_GID_INDEX').",
            "Leave NCCL_IB_GID_INDEX unset (-1: NCCL picks the RoCE v2 GID) or set it to an index "
            "every node's ports have (`show_gids`).",
        ),
        JobNodeRule(
            "NET-02.job-expects-ib-no-active-port",
            "The job asks for the IB transport on a node with no ACTIVE RDMA port",
            "NCCL_NET=IB makes NCCL fail at init where no port is ACTIVE; NCCL_IB_DISABLE=0 lets "
            "it fall back to TCP sockets silently, far below the fabric's bandwidth.",
            "Bring the nodes' RDMA ports up (ibstat), or run on nodes with an ACTIVE fabric.",
        ),
        JobNodeRule(
            "TOPO-03.job-tensor-parallel-exceeds-node-nvlink",
            "A tensor-parallel group does not fit in the nodes' NVLink domain",
            "Tensor parallelism runs collectives in every layer; a group larger than a node's "
            "NVLink domain (or one that straddles two) sends them over the network.",
            "Keep the tensor-parallel size a divisor of the GPUs per NVLink domain the nodes have "
            "and move the rest of the model parallelism to pipeline or context parallelism.",
        ),
        JobNodeRule(
            "TOPO-03.job-model-parallel-exceeds-fleet",
            "One model replica (tensor x pipeline x context parallel) needs more GPUs than the fleet has",
            "A replica that does not fit in the GPUs of the nodes given cannot start: the parallel "
            "layout asks for GPUs the fleet does not have.",
            "Lower the tensor, pipeline or context parallel sizes so that their product fits in the "
            "fleet's GPUs, or run on more nodes (and pass their facts).",
        ),
        JobNodeRule(
            "PLAT-01.run-ranks-share-gpu",
            "NCCL found two ranks of one host on one GPU (\"Duplicate GPU detected\")",
            "NCCL allows one rank per GPU per communicator: more processes on a node than it has "
            "GPUs (or ranks that pick the same device) fail at init with ncclInvalidUsage.",
            "Start at most one process per GPU (torchrun --nproc-per-node up to the node's GPU "
            "count) and have each rank select its own device (torch.cuda.set_device(LOCAL_RANK)).",
        ),
        JobNodeRule(
            "NET-02.run-used-sockets",
            "NCCL used TCP sockets where the nodes have an RDMA fabric",
            "NCCL falls back to sockets silently when it finds no usable IB device (a wrong "
            "NCCL_IB_HCA, a missing driver in the container); the job runs at a fraction of the "
            "fabric's bandwidth.",
            "Find why NCCL found no IB device (its 'NET/IB' lines; NCCL_IB_HCA; the container's "
            "/dev/infiniband and libibverbs), then pin NCCL_NET=IB so that a fallback fails loudly.",
        ),
        JobNodeRule(
            "NET-02.run-mixed-transports",
            "The ranks of one run used different network transports",
            "A collective runs at the speed of its slowest link: one rank on sockets slows every "
            "rank on IB.",
            "Make every node's fabric and environment alike (the named hosts and ranks differ).",
        ),
    )
}


def rule_docs(ids: set[str], levels: dict[str, Level]) -> list[RuleDoc]:
    """RuleDoc of each rule id given (for the report's ``rules``)."""
    from validator.report.model import RuleDoc

    return [RuleDoc(r.id, r.requirement, r.name, levels.get(r.requirement, Level.MUST), Scope.JOB,
                    r.summary, r.why, r.remediation) for r in RULES.values() if r.id in ids]
