"""A job meets its nodes and its run (``spec-check lint JOB --nodes FACTS --run DIR``).

The rules are the pack's (``against: nodes`` / ``against: run``); this package holds the
comparisons the engine calls for them, below it and pure, and the reader of ``--nodes``:

* ``nodes``: the node facts ``--nodes`` names (facts files, a folder, a cluster result);
* ``ncclenv``: NCCL's own parsing of ``NCCL_IB_HCA`` / ``NCCL_SOCKET_IFNAME`` / GID index;
* ``checks``: the job's requests judged host by host, one finding per mismatch;
* ``nccllog``: what NCCL really used, from a run's ``NCCL_DEBUG=INFO`` lines;
* ``pairs``: each comparison by the name a rule's ``check.op`` gives (the engine's table);
* ``rules``: what a finding takes from its rule (``RuleText``), and the bundled rules.
"""

from __future__ import annotations

from validator.rules.rulemodel import Level, Spec


def levels_of(spec: Spec) -> dict[str, Level]:
    """Requirement ID -> MUST/SHOULD, from the spec the run checks."""
    return {q.id: q.level for q in spec.requirements}
