"""Slurm health checks: drain a node that fails the spec, resume it when it passes again.

``spec-check health`` runs where Slurm's own health tools run (``HealthCheckProgram``, a
prolog or an epilog, as LBNL NHC does): it checks this node and then

* on a MUST failure or error, drains the node with a reason naming the failing rules,
  marked ``spec-check:`` so that it, and people, can tell the drain is spec-check's;
* resumes the node only if spec-check drained it (the reason carries the mark) *and* every
  rule that reason names was evaluated in this run and passes: a run narrowed by
  ``--select``/``--ignore`` re-checks only what it selected, so it cannot lift a drain for
  a rule it never looked at;
* never touches a node drained by anyone else, nor one that is down, failing, not
  responding or in any state it does not know, whatever the result (an administrator's
  "RMA ticket 42" stays as it is);
* exits 2 with one line when slurmctld cannot be reached: a health check that cannot act
  must not look like a healthy node.

Node state and reason come from ``sinfo -h -N -n NODE -O StateComplete:0|,Reason:0``
(the base state with every flag, ``down+drain``: ``%T`` shows a downed and drained node
as just ``drained``); changes are made with ``scontrol update NodeName=NODE State=DRAIN|RESUME``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import Report

from validator.errors import SpecCheckError

MARK = "spec-check:"
# Slurm refuses RPC strings over 1024 bytes ("parameter too long") and ``sinfo -R`` shows
# reasons in a narrow column: spec-check's reasons stay within this many characters.
REASON_MAX = 200
TIMEOUT = 30.0

# The states spec-check may change: a node in service (its base state) with no flag but
# these. Anything else (down, fail, failing, not_responding, maint, reboot_*, power_*,
# unknown, future, or a state this list does not know) is left as it is.
_IN_SERVICE = frozenset({"idle", "allocated", "mixed", "completing", "planned", "reserved"})
_HARMLESS_FLAGS = frozenset({"drain", "completing", "planned", "reserved"})
_MORE = re.compile(r" \(\+(\d+) more\)$")


@dataclass(frozen=True)
class NodeState:
    state: str  # sinfo StateComplete: idle, idle+drain, down+drain, idle+fail+not_responding, ...
    reason: str  # sinfo Reason: "none" when there is none

    @property
    def drained(self) -> bool:
        base, *flags = self.state.lower().split("+")
        return "drain" in flags or base.startswith(("drained", "draining"))

    @property
    def ours(self) -> bool:
        return self.reason.startswith(MARK)

    @property
    def in_service(self) -> bool:
        """Up and known: a base state of _IN_SERVICE and no flag outside _HARMLESS_FLAGS."""
        base, *rest = self.state.lower().split("+")
        if base in ("drained", "draining"):  # %T's long form of a drained node in service
            return not rest
        return base in _IN_SERVICE and set(rest) <= _HARMLESS_FLAGS


def _run(argv: list[str], what: str) -> str:
    exe = shutil.which(argv[0])
    if exe is None:
        raise SpecCheckError(f"{argv[0]} not found on PATH: {what} needs the Slurm client tools")
    try:
        p = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=TIMEOUT,
                           check=False, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        raise SpecCheckError(f"{what}: {argv[0]} did not answer in {TIMEOUT:g} s "
                             "(slurmctld unreachable?)") from None
    if p.returncode != 0:
        lines = [ln.strip() for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
        raise SpecCheckError(f"{what}: {lines[-1] if lines else f'{argv[0]} exit {p.returncode}'}"
                             f" (exit {p.returncode}; is slurmctld reachable?)")
    return p.stdout


def node_state(node: str) -> NodeState:
    """The node's state and reason as slurmctld has them; unknown node or no controller:
    SpecCheckError (exit 2)."""
    out = _run(["sinfo", "-h", "-N", "-n", node, "-O", "StateComplete:0|,Reason:0"],
               f"cannot read node {node}'s state")
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if not lines:
        raise SpecCheckError(f'node "{node}" is unknown to Slurm (sinfo -n {node} lists nothing)')
    state, _, reason = lines[0].partition("|")  # a state holds no "|"; a reason may
    return NodeState(state.strip(), reason.strip())


def reason_for(rules: Sequence[str], unnamed: int = 0) -> str:
    """``spec-check: MEM-02.memlock-limited, NET-02.port-not-active (+3 more)``: the rules
    sorted, as many as fit in REASON_MAX characters; ``unnamed`` rules already left out of
    an earlier reason count among the "more"."""
    ids = sorted(set(rules))
    for k in range(len(ids), 0, -1):
        more = len(ids) - k + unnamed
        text = f"{MARK} {', '.join(ids[:k])}" + (f" (+{more} more)" if more else "")
        if len(text) <= REASON_MAX:
            return text
    return f"{MARK} {ids[0]}"[:REASON_MAX] if ids else f"{MARK} (+{unnamed} more)"


def named_in(reason: str) -> tuple[list[str], int]:
    """(the rules a spec-check reason names, how many it left out as "(+N more)")."""
    body = reason[len(MARK):].strip() if reason.startswith(MARK) else ""
    more = _MORE.search(body)
    unnamed = int(more.group(1)) if more else 0
    if more:
        body = body[: more.start()]
    return [r.strip() for r in body.split(",") if r.strip()], unnamed


def failing_rules(report: Report) -> list[str]:
    """The rules that make the node not conformant (a fail, or an error on a MUST rule)."""
    return [f.rule for f in report.findings if f.against_verdict]


def rechecked(report: Report) -> set[str]:
    """The rules this run evaluated and found passing: at least one ``pass`` and every
    finding ``pass`` or ``skip`` (an error, a warning or a waived failure is no pass)."""
    seen: dict[str, bool] = {}
    passed: set[str] = set()
    for f in report.findings:
        status = getattr(f.status, "value", f.status)
        ok = status in ("pass", "skip") and not f.waived
        seen[f.rule] = seen.get(f.rule, True) and ok
        if status == "pass":
            passed.add(f.rule)
    return {r for r, ok in seen.items() if ok and r in passed}


def _complete(report: Report) -> bool:
    """Every rule of the pack was selected (no --select, no --ignore)."""
    sel = getattr(report, "selection", None) or {}
    return not sel.get("select") and not sel.get("ignore")


def act(node: str, report: Report, *, drain: bool = True) -> str:
    """Drain or resume ``node`` as the report says; returns what was done and why, in words."""
    current = node_state(node)
    failing = failing_rules(report)
    was = f"{current.state}, reason: {current.reason}"
    if not current.in_service:
        verdict = "fails the spec" if failing else "passes"
        return f"{node} {verdict} but is left as it is: it is {was} (spec-check changes only a node in service)"
    if current.drained and not current.ours:
        verdict = "fails the spec" if failing else "passes"
        return f"{node} {verdict} but is left as it is: drained by someone else ({current.reason})"
    evaluated = {f.rule for f in report.findings}
    if failing:
        carried: list[str] = []
        unnamed = 0
        if current.drained and current.ours:  # keep what this run did not look at
            named, unnamed = named_in(current.reason)
            carried = [r for r in named if r not in evaluated]
            if _complete(report):
                unnamed = 0
        reason = reason_for([*failing, *carried], unnamed)
        if current.drained and current.reason == reason:
            return f"{node} stays drained: {reason}"
        if not drain:
            return f"{node} fails the spec (--no-drain: not drained, nothing changed): {reason}"
        _run(["scontrol", "update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}"],
             f"cannot drain {node}")
        return f"drained {node}: {reason}"
    if current.drained:  # ours: resume only when every rule of the drain passes now
        named, unnamed = named_in(current.reason)
        passing = rechecked(report)
        missing = [r for r in named if r not in passing]
        if missing:
            why = ", ".join(missing[:5]) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
            return (f"{node} passes this run but stays drained: {why} of its drain "
                    f"({current.reason}) not re-checked and passing in this run")
        if unnamed and not _complete(report):
            return (f"{node} passes this run but stays drained: its drain ({current.reason}) "
                    f"names {unnamed} more rule(s) that only a run of every rule re-checks "
                    "(no --select/--ignore)")
        _run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], f"cannot resume {node}")
        return f"resumed {node}: every rule of spec-check's drain passes in this run ({current.reason})"
    return f"{node} passes"


def check_subject(node: str, subject: str, where: str) -> None:
    """Recorded facts are judged only for the node they were recorded on: ``subject`` (the
    document's host name) must be ``node`` or ``node.<domain>`` (Slurm's NodeName is the
    short host name); else one error naming both (exit 2)."""
    import ipaddress

    from validator.errors import FactsFileError

    try:
        ipaddress.ip_address(subject)
        short = subject  # an address has no short form
    except ValueError:
        short = subject.split(".", 1)[0]
    if node in (subject, short):
        return
    raise FactsFileError(f'these facts are of host "{subject}", not of node "{node}": health acts only '
                         "on the node its facts describe (give --node for that host, or its own facts)",
                         file=where)


def this_node() -> str:
    """``$SLURMD_NODENAME`` (set for HealthCheckProgram, prologs and epilogs), else the
    short hostname (Slurm's default NodeName)."""
    import socket

    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
