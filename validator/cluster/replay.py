"""``spec-check cluster --facts``: evaluate saved node and cluster facts, as a live run
would have, without probing anything.

Hosts are named by rule, never by the order of the arguments: a node document is named
by its subject name (the address it was probed at, in a ``--save-facts`` directory);
where several documents share one (raw probe outputs of cloned hosts report one
hostname), each of them is named by its file name without ``.json``, and two such files
of one name are refused.

A large fleet (``--passes fold``, or more than ``fleet.FOLD_ABOVE`` facts files under the
default ``auto``) is streamed: each document is evaluated as it is read and dropped, and
the passes and skips fold (``validator.cluster.fleet``); a small one is itemized.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from validator.clock import now_utc
from validator.cluster.rows import FactsFiles, HostSubjects, HostTable
from validator.lazy import Made
from validator.rules.rulemodel import Scope
from validator.values.hostlist import host_names  # shared with lint --nodes (jobnodes/nodes.py)

if TYPE_CHECKING:
    import multiprocessing.pool

    from validator.api.options import ReportOptions
    from validator.api.steps import Built
    from validator.cluster.fleet import ChunkFolds, FleetEvaluator
    from validator.cluster.result import Outcome, Output, RunState
    from validator.cluster.rows import HostRecord
    from validator.cluster.spans import TraceStep
    from validator.report.model import JSONValue

# a chunk of files read (``_read_chunk``): its hosts' records, its cluster documents (position,
# file, document), its folds, and the files an older spec-check wrote (with what it was)
Chunk: TypeAlias = ("tuple[list[HostRecord], list[tuple[int, Path, dict[str, JSONValue]]], "
                    "ChunkFolds, list[tuple[Path, JSONValue]]]")


def replay(
    built: Built,
    opts: ReportOptions,
    paths: tuple[Path, ...],
    cluster_name: str,
    passes: str,
    out: Output[Outcome],
) -> Outcome:
    """``--facts``, with the cyclic GC paused (model.gc_paused): thousands of documents and
    their findings are millions of live, acyclic objects, and every collection walked them
    all again (a third of a 10,000-node replay)."""
    from validator.cluster.fleet import FOLD_ABOVE
    from validator.report.model import gc_paused

    files = facts_files(paths)
    with gc_paused():
        if passes == "fold" or (passes == "auto" and len(files) > FOLD_ABOVE + 1):
            return replay_folded(built, opts, files, paths, cluster_name, out)
        return replay_facts(built, opts, files, paths, cluster_name, out)


def facts_files(paths: tuple[Path, ...]) -> FactsFiles:
    """The files to read: each path, or a directory's ``*.json`` sorted by name."""
    from validator.errors import SpecCheckError

    files = FactsFiles()
    for path in paths:
        if path.is_dir():
            names = sorted(p.name for p in path.iterdir() if p.suffix == ".json")
            if not names:
                raise SpecCheckError("no *.json node facts in this directory (--facts)", file=str(path))
            files.add(path, names)
        elif not path.exists():
            raise SpecCheckError("no such file or directory (--facts)", file=str(path))
        else:
            files.add(path.parent, [path.name])
    return files


def _cluster_document(
    cluster_doc: dict[str, JSONValue] | None, names: Sequence[str], nodes: dict[str, JSONValue], cluster_name: str,
    files: dict[str, Path], claims: dict[str, tuple[str, ...]], digests: dict[str, bytes],
    cluster_file: str | None,
) -> tuple[dict[str, JSONValue], dict[str, str], Sequence[str]]:
    """(the cluster document, the hosts recorded as probed with no node document given,
    the hosts): the saved one as these node documents make it, or one built from them.
    Each host's facts are judged for being its own and current (``evidence``) against its
    file (``files``) and, with a saved cluster document, the fleet it recorded."""
    from validator import build_info
    from validator.cluster import facts as cfacts
    from validator.cluster.evidence import judge, recorded_hosts
    from validator.cluster.result import check_cluster_name

    recorded = recorded_hosts(cluster_doc) if cluster_doc is not None else None
    evidence = judge(nodes, files, claims=claims, digests=digests, recorded=recorded, recorded_file=cluster_file)
    if cluster_doc is not None:
        return cfacts.replay_document(cluster_doc, nodes, evidence=evidence)
    check_cluster_name(cluster_name, list(names))
    doc = cfacts.build(names, nodes, {}, name=cluster_name, tool_version=build_info.tool_version(),
                       collected_at=now_utc(), transport="replay", evidence=evidence)
    return doc, {}, names


def _load(f: Path, cluster_doc: dict[str, JSONValue] | None) -> tuple[dict[str, JSONValue], bytes]:
    from validator.errors import SpecCheckError
    from validator.facts import document

    doc, raw = document.read(f)
    if doc["subject"]["kind"] == "cluster" and cluster_doc is not None:
        raise SpecCheckError("a second cluster facts document", file=str(f))
    return _checked(doc, f), raw


def _checked(doc: dict[str, JSONValue], f: Path) -> dict[str, JSONValue]:
    """``doc``, a node or cluster document (a job's is refused, naming the file)."""
    from validator.errors import SpecCheckError

    kind = doc["subject"]["kind"]
    if kind not in (Scope.NODE, Scope.CLUSTER):
        raise SpecCheckError(f'a "{kind}" facts document, expected node or cluster', file=str(f))
    return doc


def _pairs(cluster_doc: dict[str, JSONValue]) -> dict[tuple[str, str], JSONValue] | None:
    pair_items = (cluster_doc["facts"].get("cluster.pairs") or {}).get("items")
    return {(m["id"], ""): m["fields"] for m in pair_items} if isinstance(pair_items, list) else None


def replay_facts(
    built: Built, opts: ReportOptions, files: Sequence[Path], paths: tuple[Path, ...], cluster_name: str,
    out: Output[Outcome],
) -> Outcome:
    """``--facts``, itemized: every document in memory, every verdict its own finding."""
    import hashlib

    from validator.cluster import facts as cfacts
    from validator.cluster.evidence import names_of
    from validator.cluster.result import write_result

    docs: list[tuple[dict[str, JSONValue], Path]] = []
    cluster_doc: dict[str, JSONValue] | None = None
    loaded: list[tuple[Path, dict[str, JSONValue]]] = []
    cluster_file: str | None = None
    raws: dict[Path, bytes] = {}  # each node file's SHA-256 (evidence: two hosts with one file)
    for f in files:
        doc, raw = _load(f, cluster_doc)
        loaded.append((f, doc))
        raws[f] = hashlib.sha256(raw).digest()
        if doc["subject"]["kind"] == "cluster":
            from validator.cluster.saved import check_saved

            check_saved(doc, str(f), built.ctx.catalogue)
            cluster_doc, cluster_file = doc, str(f)
        else:
            docs.append((doc, f))
    names = host_names([d["subject"]["name"] for d, _ in docs], [f for _, f in docs])
    nodes = {
        name: d if d["subject"]["name"] == name else cfacts.rekey(d, name)
        for (d, _), name in zip(docs, names, strict=True)
    }
    saved = cluster_doc is not None
    file_of = {name: f for (_, f), name in zip(docs, names, strict=True)}
    claims = {name: names_of(d) for (d, _), name in zip(docs, names, strict=True)}
    digests = {name: raws[f] for (_, f), name in zip(docs, names, strict=True)}
    cluster_doc, failures, hosts = _cluster_document(cluster_doc, names, nodes, cluster_name, file_of, claims,
                                                     digests, cluster_file)
    if saved:
        from validator.cluster.saved import check_fleet

        check_fleet(cluster_doc["subject"]["name"], hosts, cluster_file)
    state: RunState = {
        "hosts": hosts,
        "docs": nodes,
        "failures": failures,
        "cluster": cluster_doc,
        "cluster_label": f"replay:{','.join(map(str, paths))}",
        "interrupted": False,
        "fleet": cfacts.fleet_summary(hosts, failures, _pairs(cluster_doc)),
        "older": loaded,
        "sources": {name: str(f) for (_, f), name in zip(docs, names, strict=True)},
    }
    return write_result(built, opts, state, "replay", None, out)


# Files per unit of work, and the fleet size from which a replay uses every CPU: below
# it, starting the workers costs more than it saves.
CHUNK = 256
PARALLEL_ABOVE = 2000
# chunks a worker reads before a fresh one takes over: a worker's memory is its last few
# thousand files' (remembered verdicts are cleared at fleet.MEMO_MAX, but the space they
# took stays scattered), so its peak does not grow with the fleet (nodes with their own
# GPU UUIDs: 40 MiB at 8,000 nodes and 42 at 25,000, against 42 and 51 without)
CHUNKS_PER_WORKER = 8

# what a forked worker reads (set before the pool starts); Any: built, select, ignore,
# files and its evaluator, each of its own type
_WORK: dict[str, Any] = {}


def _read_chunk(ev: FleetEvaluator, files: Sequence[Path], start: int) -> Chunk:
    """Read and evaluate ``files`` (the ``start``-th file on): (node records, cluster
    documents, the chunk's folds, the files written by an older spec-check). A host
    is numbered by its file's position; its record is (number, name, the file's SHA-256,
    collected_at, PLAT-02 fields, itemized findings): not its ``Path`` (300 bytes a host).

    A file that repeats a known document but for its host's strings (``shapes``) is
    neither parsed nor evaluated: it gets that document's verdicts, on its own name; one
    that also has some fact values of its own (value slots) gets that document's facts
    with its values patched in, and only the rules that read them are evaluated."""
    import hashlib

    from validator.cluster.evidence import file_problem, names_of, uuid_keys
    from validator.cluster.shapes import ROLE_COLLECTED, ROLE_HOSTNAME, ROLE_NAME, Shapes
    from validator.facts.document import parse, read_raw
    from validator.values import identity_of

    if ev.shapes is None:
        ev.shapes = Shapes(ev.reads("host.hostname"))
    shapes = ev.shapes
    records: list[HostRecord] = []
    clusters: list[tuple[int, Path, dict[str, JSONValue]]] = []
    older: list[tuple[Path, JSONValue]] = []
    shared: dict[bytes, dict[str, JSONValue]] = {}  # PLAT-02 fields most hosts share, kept once
    for k, f in enumerate(files):
        raw = read_raw(f)
        digest = hashlib.sha256(raw).digest()  # 32 bytes; "sha256-file:" + hex when written
        hit = shapes.match(raw)
        facts = None
        if hit is not None:
            shape, (found, values) = hit
            # values of its own: patched in; the shape's document's values: a repeat of it
            own = bool(shape.kinds) and values != shape.base
            facts = shape.patched(found, values) if own else shape.facts
        if facts is not None:
            # a shape always has its name's place (``shapes.make`` makes none without one)
            name = cast(str, shape.role(found, ROLE_NAME))
            hostname = shape.role(found, ROLE_HOSTNAME, shape.hostname) or name
            if own:  # some fact values its own: the rules that read them evaluated
                itemized = ev.node(start + k, name, facts, only=shape.affected, given=shape.trace)
                rest = _host_fields({"subject": {"name": name, "hostname": hostname}, "facts": facts},
                                    shared)[1]
            else:
                itemized = ev.repeat(start + k, name, shape.itemized, shape.adds)
                rest = shape.rest
            if shape.older is not None:
                older.append((f, shape.older))
            machine_id, serial, uuids = identity_of(facts)
            records.append((start + k, name, digest, shape.role(found, ROLE_COLLECTED, shape.collected),
                            (hostname, rest), itemized,
                            (file_problem(f, shape.claims(found, facts)) if ev.checks_own else None,
                             shape.tool_version, machine_id, serial, uuid_keys(uuids) if ev.checks_own else b"")))
            continue
        doc = _checked(parse(raw, str(f)), f)
        subject = doc["subject"]
        if subject["kind"] == "cluster":
            clusters.append((start + k, f, doc))
            continue
        name = subject["name"]
        trace: list[TraceStep] = []
        itemized = ev.node(start + k, name, doc["facts"], trace)
        note = _older(doc)
        if note is not None:  # written by an older spec-check: noted once
            older.append((f, note))
        fields = _host_fields(doc, shared)
        learnt = shapes.learn(raw, doc)
        if learnt is not None:
            learnt.itemized, learnt.older, learnt.trace = itemized, note, trace
            learnt.adds = [a for _, _, adds in trace for a in adds]
            learnt.rest = fields[1]
            wide = shapes.widen(learnt, raw)
            if wide is not None:
                wide.affected = ev.affected(wide.paths, wide.trace)
        machine_id, serial, uuids = identity_of(doc["facts"])
        records.append((start + k, name, digest, doc.get("collected_at"), fields, itemized,
                        (file_problem(f, names_of(doc)) if ev.checks_own else None, doc.get("tool_version"),
                         machine_id, serial, uuid_keys(uuids) if ev.checks_own else b"")))
    folds, ev.folds = ev.folds, {}
    return records, clusters, folds, older


def _older(doc: dict[str, JSONValue]) -> dict[str, JSONValue] | None:
    from validator.facts.document import SCHEMA

    if doc.get("schema") == SCHEMA:
        return None
    return {"schema": doc.get("schema"), "tool_version": doc.get("tool_version")}


def _host_fields(doc: dict[str, JSONValue], shared: dict[bytes, dict[str, JSONValue]]
                 ) -> tuple[str, dict[str, JSONValue]]:
    """(hostname, the other PLAT-02 fields): the other fields as one shared dict where
    hosts read the same (a fleet keeps one copy, not one a host)."""
    import marshal

    from validator.cluster import facts as cfacts

    fields = cfacts.host_fields(doc)
    rest = {key: v for key, v in fields.items() if key != "hostname"}
    return fields["hostname"]["value"], shared.setdefault(marshal.dumps(rest, 2), rest)


def _worker_chunk(start: int) -> Chunk | tuple[str, str | None, int | None]:
    """One chunk in a worker process; a bad file comes back as (problem, file, line)."""
    from validator.cluster.fleet import FleetEvaluator
    from validator.errors import SpecCheckError

    ev = _WORK.get("ev")
    if ev is None:
        built, select, ignore = _WORK["built"], _WORK["select"], _WORK["ignore"]
        ev = _WORK["ev"] = FleetEvaluator(built.ctx, built.pack, select=select, ignore=ignore)
    try:
        return _read_chunk(ev, _WORK["files"][start : start + CHUNK], start)
    except SpecCheckError as exc:
        return (exc.problem, exc.file, exc.line)


def _worker_signals() -> None:
    """A worker ends quietly: the pool stops its workers with SIGTERM when the replay is
    done (spec-check's own handler would print a traceback from each), and Ctrl-C is the
    parent's to handle (it stops the pool)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _pool(n: int) -> multiprocessing.pool.Pool:
    """``n`` forked workers that end quietly (``_worker_signals``)."""
    import multiprocessing

    return multiprocessing.get_context("fork").Pool(n, _worker_signals, maxtasksperchild=CHUNKS_PER_WORKER)


def _chunks(built: Built, opts: ReportOptions, files: Sequence[Path], ev: FleetEvaluator) -> Iterator[Chunk]:
    """Each chunk's result, in file order: in this process, or, for a large fleet on a
    machine with more than one CPU, in forked workers (one per CPU, at most 8)."""
    import os
    import threading

    from validator.errors import SpecCheckError

    starts = range(0, len(files), CHUNK)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # fork only from a single-threaded process (a thread's locks would be copied held)
    if len(files) < PARALLEL_ABOVE or cpus < 2 or threading.active_count() > 1:
        for start in starts:
            yield _read_chunk(ev, files[start : start + CHUNK], start)
        return
    _WORK.update(built=built, select=opts.select, ignore=opts.ignore, files=files, ev=None)
    try:
        with _pool(min(cpus, 8)) as pool:
            for out in pool.imap(_worker_chunk, starts):
                if len(out) == 3 and isinstance(out[0], str):  # (problem, file, line)
                    problem, file, line = out
                    raise SpecCheckError(problem, file=file, line=line)
                yield out
    finally:
        _WORK.clear()


def replay_folded(
    built: Built, opts: ReportOptions, files: Sequence[Path], paths: tuple[Path, ...], cluster_name: str,
    out: Output[Outcome],
) -> Outcome:
    """``--facts``, streamed: each document evaluated as read, then dropped; what stays
    per host is a row of ``rows.HostTable`` (its name, file digest, PLAT-02 values) and its
    itemized findings, if any. Without a saved cluster document, the cluster document's
    per-host items are made when read (``cfacts.fleet_document``) and the cluster rules
    run on its value groups (``validator.cluster.groups``): nothing of the cluster stage
    holds an object per host either.

    A subject's ``facts_digest`` is ``sha256-file:`` + the SHA-256 of the facts file as read
    (``verify --facts`` accepts it): the canonical digest would serialize every document
    again, as long as parsing it."""
    from validator import build_info
    from validator.cluster import facts as cfacts
    from validator.cluster.evidence import Ledger, label_of, now_of_run, recorded_hosts
    from validator.cluster.fleet import FleetEvaluator
    from validator.cluster.result import check_cluster_name, write_fleet_result
    from validator.errors import SpecCheckError

    ev = FleetEvaluator(built.ctx, built.pack, select=opts.select, ignore=opts.ignore)
    folds: ChunkFolds = {}
    table = HostTable()
    cluster_doc: dict[str, JSONValue] | None = None
    cluster_at: int | None = None  # the cluster document's place among the files
    cluster_file: str | None = None
    older: list[tuple[Path, JSONValue]] = []
    ledger = Ledger()
    for chunk_records, clusters, chunk_folds, chunk_older in _chunks(built, opts, files, ev):
        base = len(table.names)
        for i, (_, name, digest, _, _, _, (problem, _, machine_id, _, keys)) in enumerate(chunk_records):
            if ev.checks_own:
                ledger.add(base + i, name, digest, keys, machine_id, problem)
        table.add(chunk_records)
        older.extend(chunk_older)
        for pos, f, doc in clusters:
            if cluster_doc is not None:
                raise SpecCheckError("a second cluster facts document", file=str(f))
            from validator.cluster.saved import check_saved

            check_saved(doc, str(f), built.ctx.catalogue)
            cluster_doc, cluster_at, cluster_file = doc, pos, str(f)
        for k, fold in chunk_folds.items():
            mine = folds.get(k)
            if mine is None:
                folds[k] = fold
            else:
                mine.merge(fold)
    ev.folds = folds
    names = table.final_names(lambda read: host_names(read, _Skipping(files, cluster_at)))
    if cluster_doc is not None and ev.checks_own:  # hosts that are no entry of the fleet it recorded
        recorded = frozenset(recorded_hosts(cluster_doc))
        for number, name in enumerate(names):
            if name not in recorded:
                ledger.outside(number, name, cluster_file)
    table.judged(ledger.finish(label_of(names, _Skipping(files, cluster_at))), now_of_run(),
                 checked=ev.checks_own)
    subjects = HostSubjects(names, table.digests, table.collected, files=_Skipping(files, cluster_at),
                            identity=table.identity)
    label = f"replay:{','.join(map(str, paths))}"
    if cluster_doc is None:
        check_cluster_name(cluster_name, names)
        cluster_doc = cfacts.fleet_document(
            names, table.fields, table.gpu_hosts(), name=cluster_name, tool_version=build_info.tool_version(),
            collected_at=now_utc(), transport="replay",
        )
        failures: dict[str, str] = {}
        hosts: Sequence[str] = names
    else:
        fields = {name: table.fields(k) for k, name in enumerate(names)}
        cluster_doc, failures, hosts = cfacts.replay_document(cluster_doc, fields, fields)
        del fields
        from validator.cluster.saved import check_fleet

        check_fleet(cluster_doc["subject"]["name"], hosts, cluster_file)
    out.note("facts", older)
    summary = cfacts.fleet_summary(hosts, failures, _pairs(cluster_doc))
    args = [built, opts, ev, _Skipping(names, cluster_at, by_position=True), subjects, table.itemized(),
            cluster_doc, label, failures, "replay", {"fleet": summary}, out]
    del cluster_doc, subjects, table  # only args holds them: emptied before the writing
    return write_fleet_result(args, aligned=cluster_at is None)


class _Skipping(Made):
    """``items`` without the cluster document's place among the files (``at``):
    ``_Skipping(files, at)[k]`` is host k's file. ``by_position``: the other way, host
    names by file position (the fleet evaluator numbers hosts by file), ``""`` at ``at``."""

    __slots__ = ("_at", "_by_position", "_items")

    def __init__(self, items: Sequence[object], at: int | None, by_position: bool = False):
        self._items, self._at, self._by_position = items, at, by_position

    def __len__(self) -> int:
        n = len(self._items)
        if self._at is None:
            return n
        return n + 1 if self._by_position else n - 1

    def _made(self, k: int) -> object:
        at = self._at
        if at is None:
            return self._items[k]
        if self._by_position:
            return "" if k == at else self._items[k - (k > at)]
        return self._items[k + (k >= at)]


