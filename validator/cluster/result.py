"""The end of every ``cluster`` run, live or replayed: evaluate the documents, give each
host its own probe verdict, then hand the report to ``Output.finish``, whose value the run
returns.

validator/cluster imports nothing above it (the one direction of imports, CONTRIBUTING.md):
``validator/api/cluster.py`` passes an ``Output`` with the things only it does, turning
documents into a report (``evaluate``) and making the run's outcome (``finish``: the
baseline applied, the exit code computed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, cast

from validator.rules.rulemodel import Scope

if TYPE_CHECKING:  # types only: the API above makes them (no import at run time)
    from validator.api.options import ReportOptions
    from validator.api.steps import Built
    from validator.cluster.fleet import FleetEvaluator
    from validator.cluster.rows import HostSubjects
    from validator.report.model import Finding, JSONValue, Report, Subject

    class _Gathered(TypedDict):
        hosts: Sequence[str]  # every host asked for, in order
        docs: dict[str, dict[str, JSONValue]]  # host -> its node facts document
        failures: dict[str, str]  # host -> why it has no document
        cluster: dict[str, JSONValue]  # the cluster facts document
        interrupted: bool
        fleet: dict[str, JSONValue]  # the report's extra.fleet summary

    class RunState(_Gathered, total=False):
        """What a live run or a replay gathered, for ``write_result``."""

        fold: bool  # fold the passes (a large fleet)
        cluster_label: str  # the cluster document's source, where not "cluster"
        older: list[tuple[Path, dict[str, JSONValue]]]  # a replay's documents (older writers noted)
        sources: dict[str, str]  # a replay's host -> its facts file (each subject's source)


Outcome = TypeVar("Outcome")  # what a run returns: the API's FleetOutcome


@dataclass(frozen=True)
class Output(Generic[Outcome]):
    """``evaluate(command, built, opts, documents, sources, extra=...)`` -> Report;
    ``finish(report, opts, interrupted, save_facts, node_docs, cluster_doc)`` -> the run's
    outcome (what ``live.run`` and ``replay.replay`` return); ``note(kind, [(where, doc)])``,
    one line to say when inputs were written by an older spec-check."""

    evaluate: Callable[..., Report]
    finish: Callable[..., Outcome]
    note: Callable[..., None] = lambda kind, documents: None


def check_cluster_name(name: str, hosts: Sequence[str]) -> None:
    """The cluster subject and a host must not share a name: findings, waivers and the
    fleet summary are keyed by subject, and "cluster" is also a valid host name."""
    from validator.errors import SpecCheckError

    if name in hosts:
        raise SpecCheckError(
            f'host "{name}" has the cluster subject\'s name; give the cluster another '
            f"with --name (e.g. --name fleet)"
        )


def save_fact_files(
    directory: Path, node_docs: list[dict[str, JSONValue]], cluster_doc: dict[str, JSONValue]
) -> None:
    from validator.cluster.evidence import saved_file_stem
    from validator.io.atomic import write_atomic
    from validator.values.numbers import dumps

    directory.mkdir(parents=True, exist_ok=True)
    for doc in node_docs:
        write_atomic(
            directory / f"{saved_file_stem(doc['subject']['name'])}.json",
            dumps(doc, indent=1) + "\n",
        )
    write_atomic(directory / "cluster.json", dumps(cluster_doc, indent=1) + "\n")


def write_result(
    built: Built,
    opts: ReportOptions,
    state: RunState,
    transport: str,
    save_facts: Path | None,
    out: Output[Outcome],
) -> Outcome:
    """Evaluate, then hand the report to ``out.finish`` (which renders before the facts
    are saved: a facts directory that fails late must not cost the result) and return
    what it returns. ``state["fold"]``: fold the passes (a large fleet)."""
    hosts, docs = state["hosts"], state["docs"]
    node_docs = [docs[h] for h in hosts if h in docs]
    if state.get("fold"):
        report = _fold_live(built, opts, state, node_docs, transport, out)
    else:
        report = out.evaluate(
            "cluster",
            built,
            opts,
            [*node_docs, state["cluster"]],
            [f"{transport}:{state.get('sources', {}).get(d['subject']['name'], d['subject']['name'])}"
             for d in node_docs]
            + [state.get("cluster_label", "cluster")],
            extra={"fleet": state["fleet"]},
        )
        report = per_host(report, state["failures"], transport)
    if "older" in state:  # replayed recordings by an older spec-check
        out.note("facts", state["older"])
    else:  # hosts whose spec-check is older than this one
        out.note("probe", [(f"host {h}", docs[h]) for h in hosts if h in docs])
    return out.finish(report, opts, state["interrupted"], save_facts, node_docs, state["cluster"])


def _fold_live(
    built: Built,
    opts: ReportOptions,
    state: RunState,
    node_docs: list[dict[str, JSONValue]],
    transport: str,
    out: Output[Outcome],
) -> Report:
    """A live run's documents through the fleet evaluator (passes folded)."""
    from validator.cluster.fleet import FleetEvaluator
    from validator.facts.document import digest
    from validator.report.model import Subject

    ev = FleetEvaluator(built.ctx, built.pack, select=opts.select, ignore=opts.ignore)
    names = [d["subject"]["name"] for d in node_docs]
    findings: list[Finding] = []
    subjects = tuple(
        Subject.of_document(d, digest(d), f"{transport}:{n}", name=n)
        for n, d in zip(names, node_docs, strict=True)
    )
    for i, d in enumerate(node_docs):
        findings.extend(ev.node(i, names[i], d["facts"]))
    return fleet_report(
        built,
        opts,
        ev,
        names,
        subjects,
        findings,
        state["cluster"],
        state.get("cluster_label", "cluster"),
        state["failures"],
        transport,
        {"fleet": state["fleet"]},
        out,
    )


PROBE_RULE = "PLAT-02.host-not-probed"
# the cluster rules whose verdict on an item of cluster.probes or cluster.hosts is that
# host's own (subject: the host): whether it was probed, and whether its facts are its own
# and current (validator/cluster/evidence.py)
HOST_RULES = frozenset({PROBE_RULE, "PLAT-02.facts-not-own", "PLAT-02.facts-stale"})


def fleet_report(
    built: Built,
    opts: ReportOptions,
    ev: FleetEvaluator,
    names: Sequence[str],
    subjects: tuple[Subject, ...] | HostSubjects,  # a replay's is made when read
    findings: list[Finding],
    cluster_doc: dict[str, JSONValue],
    cluster_label: str,
    failures: dict[str, str],
    transport: str,
    extra: dict[str, JSONValue],
    out: Output[Outcome],
    *,
    aligned: bool = False,
) -> Report:
    """The report of a folded fleet: the cluster rules on the cluster document's value
    groups (``validator.cluster.groups``), each host's probe verdict its own (its pass
    folded), the node findings itemized by ``ev`` and its folds. Waivers apply as for
    any report. ``names[i]`` is host number i; ``aligned``: the cluster document's probe
    item k is host number k (no table from name to number is needed)."""
    from validator.cluster.groups import grouped
    from validator.facts.document import digest
    from validator.report.model import Finding, Status
    from validator.rules.selection import is_selected

    rules = [r for r in built.pack.rules
             if r.scope == "cluster" and is_selected(r.id, opts.select, opts.ignore)]
    groups = grouped(cluster_doc, rules)
    report = out.evaluate(
        "cluster", built, replace(opts, waivers=None), [groups.doc], [cluster_label], extra=extra
    )
    # the cluster subject vouches for the whole document, not its groups
    whole = digest(cluster_doc)
    report = replace(report, subjects=tuple(replace(s, facts_digest=whole) for s in report.subjects))
    fact_of = {r.id: r.fact for r in rules}
    index: dict[str, int] = {}

    def number(name: str, k: int) -> int | None:
        if aligned and k >= 0:
            return k
        if not index:  # made once, only where the probe items are not in host order
            index.update((n, i) for i, n in enumerate(names) if n)
        return index.get(name)

    kept = []
    for f in report.findings:
        group = groups.members.get((fact_of.get(f.rule, ""), f.item)) if f.item is not None else None
        if group is not None:  # a value group's verdict: each member's
            members: Sequence[tuple[str, int]] = group
        elif f.rule in HOST_RULES and f.item:  # probes not grouped: one host's
            members = [(f.item, -1)]
        else:
            kept.append(f)
            continue
        for name, k in members:
            # each probed host's probe pass folds at once (not re-homed first: one finding a host)
            i = number(name, k) if f.rule in HOST_RULES and f.status in (Status.PASS, Status.SKIP) else None
            if i is not None:
                ev.fold(i, f)
            else:
                kept.append(_on_member(f, name))
    report = per_host(replace(report, findings=tuple(kept)), failures, transport)
    cluster = cluster_doc["subject"]["name"]
    every = sorted([*report.findings, *findings, *ev.folded(names, cluster)], key=Finding.sort_key)
    # a replay's subjects are made when read (rows.HostSubjects): + keeps them so, and the
    # report holds them where it holds a tuple (a Sequence of Subject, equal to the tuple)
    all_subjects = cast("tuple[Subject, ...]", subjects + report.subjects)
    report = replace(report, findings=tuple(every), subjects=all_subjects)
    if opts.waivers is not None:
        from validator.report.waivers import apply_waivers, load_waivers

        report = apply_waivers(
            report, load_waivers(opts.waivers, built.pack, built.ctx.spec)
        )
    return report


def _on_member(f: Finding, name: str) -> Finding:
    """A value group's finding as its member ``name``'s: the item, and the words that name
    it (the engine's "duration of ITEM was not gathered"), as if evaluated on that host
    alone, not the group's host list once a member."""
    if f.item == name:
        return f
    return replace(f, item=name, message=f.message.replace(f.item or "", name))


def write_fleet_result(args: list[Any], aligned: bool = False) -> Any:  # Any: fleet_report's arguments, in order
    """``fleet_report(*args)``, ended by ``out.finish`` (a replay: nothing to save, never
    interrupted), whose value is returned. ``args`` is emptied first: the cluster document it holds is not kept
    while the result is written."""
    report = fleet_report(*args, aligned=aligned)
    opts, out = args[1], args[-1]
    args.clear()
    return out.finish(report, opts, False, None, [], {})


def per_host(report: Report, failures: dict[str, str], transport: str) -> Report:
    """A host's probe finding belongs to that host: subject = the host, not the cluster.

    The engine gives ``PLAT-02.host-not-probed`` (and each of ``HOST_RULES``) one finding per
    item of the cluster subject; here each becomes the host's own (and failed hosts are listed as subjects),
    so a report grouped by subject shows an unreachable host as an error on that host.
    """
    from validator.report.model import Finding, Subject

    findings = tuple(
        replace(f, subject=f.item, item=None)
        if f.rule in HOST_RULES and f.item
        else f
        for f in report.findings
    )
    findings = tuple(sorted(findings, key=Finding.sort_key))
    extra_subjects = tuple(
        Subject(h, Scope.NODE, None, None, f"{transport}:{h} (probe failed)") for h in failures
    )
    return replace(report, findings=findings, subjects=report.subjects + extra_subjects)
