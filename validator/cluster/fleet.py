"""Node rules over a large fleet: one document at a time, passes and skips folded.

Why this exists: a fleet is nearly homogeneous, and its result must stay readable. A DGX
H100 node gives 170 findings; 25,000 of them itemized are 4.25 million findings, a
2.75 GB result and a 12 GiB process. Here

* **documents stream**: each node document is evaluated as it is read and then dropped;
  what stays per host is its subject record, the few PLAT-02 fields the cluster rules
  compare, and its itemized findings;
* **each rule remembers its findings by the exact facts it reads** (the rule's fact, the
  fields of it that the check, ``where`` and ``filter`` read, the facts its ``when``
  conditions and expected value read): a node whose GPUs, ports and links read the same as
  an earlier node's gets the same verdicts without evaluating again. The key holds every
  value, unit, source and location the rule reads (their ``marshal`` form, in which ``1``,
  ``1.0`` and ``true`` differ), so a remembered verdict is the verdict the engine would give;
* **passes and skips fold**: the passes (and the skips with one reason) of a rule across
  the fleet become one finding on the cluster subject whose ``folded`` field counts the
  hosts and verdicts, names the hosts (a Slurm host list) and gives the value range; a
  ``fail``, ``warn`` or ``error`` is always itemized, on its host and item.

A rule whose remembered verdicts include an item to itemize (a failing GPU) is evaluated
again on each node that reads the same, so item labels (GPU UUIDs) are that node's own.
A replay skips even the keys for a node file that repeats a known one
(``validator.cluster.shapes``): ``repeat`` gives its verdicts, and ``node(only=...)``
evaluates only the rules that read the fact values it has of its own.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from validator.cluster.spans import FOLDABLE, FoldAdd, FoldKey, Span, TraceStep, fold_key
from validator.lazy import Made
from validator.report.model import Finding, Status
from validator.rules.rulemodel import Rule

if TYPE_CHECKING:
    from validator.cluster.shapes import FactPath, Shapes
    from validator.evaluate.engine import Context
    from validator.report.model import JSONValue
    from validator.rules.rulemodel import RulePack

# remembered verdicts kept at most (a fleet whose nodes each read their own values, as
# energy counters are, would otherwise remember one set a node: memory growing with N)
MEMO_MAX = 2_000
# distinct value sets a fold counts before it merges them into one
SPANS_MAX = 256
# a fleet larger than this folds its passes by default (--passes auto)
FOLD_ABOVE = 100

# a fact's key in ``_Parts``: its marshal form; a column's: a small number (None: no such column)
PartKey: TypeAlias = "bytes | int | None"
ChunkFolds: TypeAlias = "dict[FoldKey, _Fold]"  # the folds of a chunk of documents (a replay's)


def _key(value: JSONValue) -> bytes:
    """A JSON value as a key: its ``marshal`` form (version 2: no back-references, so one
    value gives one form). marshal keeps types apart (``1``, ``1.0`` and ``true`` are
    different bytes, unlike equal Python keys), handles lists and dicts, and runs in C:
    twice as fast as building tuples, on the line that runs 240 times a DGX node."""
    return marshal.dumps(value, 2)


def _refs(raw: JSONValue, facts: set[str], fields: set[str]) -> None:
    """The facts and fields a rule value reads (a fact, a field, a formula's arguments)."""
    if isinstance(raw, dict):
        if "fact" in raw and isinstance(raw["fact"], str):
            facts.add(raw["fact"])
        if "field" in raw and isinstance(raw["field"], str):
            fields.add(raw["field"])
        for v in raw.values():
            _refs(v, facts, fields)
    elif isinstance(raw, list):
        for v in raw:
            _refs(v, facts, fields)


def reads(rule: Rule) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(top-level facts, fields of ``rule.fact``'s items) that ``rule`` reads."""
    whole, fields = reads_whole(rule)
    return tuple(sorted(whole | {rule.fact})), tuple(sorted(fields))


def reads_whole(rule: Rule) -> tuple[set[str], set[str]]:
    """(the facts ``rule`` reads whole: its conditions' and formulas', and its own where a
    condition names no field; the fields of ``rule.fact``'s items it reads)."""
    facts: set[str] = set()
    fields: set[str] = set()
    if rule.field:
        fields.add(rule.field)
    for cond in rule.when:
        if cond.field:
            fields.add(cond.field)
        else:
            facts.add(cond.fact or rule.fact)
        _refs(cond.value, facts, fields)
    for cond in [*rule.where, *rule.filter]:
        if cond.field:
            fields.add(cond.field)
        elif cond.fact:
            facts.add(cond.fact)
        _refs(cond.value, facts, fields)
    _refs(rule.check.value, facts, fields)
    return facts, fields


class _Parts:
    """The keys of one document's facts and fields, each made once for all rules. A
    column's key (one field over a collection's items) is turned into a small number, so
    that the rules reading it hash the number, not the values."""

    __slots__ = ("cache", "facts", "ids")

    def __init__(self, facts: Mapping[str, JSONValue], ids: dict[bytes, int]):
        self.facts = facts
        # Any: a fact's or column's key, or a collection's fields by ("[]", name); looked up
        # with ``self`` as the miss marker (one lookup on the line that runs most)
        self.cache: dict[str | tuple[str, str], Any] = {}
        self.ids = ids  # the evaluator's: one number per distinct column of values

    def fact(self, name: str) -> PartKey:
        key = self.cache.get(name, self)
        if key is self:
            f = self.facts.get(name)
            if type(f) is dict and "items" in f:  # the collection itself: its ids, not its values
                members = f["items"]
                ids = [m["id"] for m in members] if type(members) is list else members
                key = _key(({k: v for k, v in f.items() if k != "items"}, ids))
            else:
                key = _key(f)
            self.cache[name] = key
        return key

    def column(self, name: str, field: str) -> PartKey:
        ck = (name, field)
        key = self.cache.get(ck, self)
        if key is self:
            fl = self.cache.get(("[]", name), self)
            if fl is self:  # the items' fields, once per collection
                f = self.facts.get(name)
                members = f.get("items") if type(f) is dict else None
                fl = [m["fields"] for m in members] if type(members) is list else None
                self.cache[("[]", name)] = fl
            if fl is None:
                key = None
            else:
                raw = _key([x.get(field) for x in fl])
                key = self.ids.get(raw)
                if key is None:
                    key = self.ids[raw] = len(self.ids)
            self.cache[ck] = key
        return key


class _Entry:
    """The verdicts of one rule on every document that reads the same."""

    __slots__ = ("folds", "itemized", "rerun")

    def __init__(self, found: list[Finding]):
        self.rerun = any(f.item is not None and f.status not in FOLDABLE for f in found)
        self.itemized = [f for f in found if f.status not in FOLDABLE]
        groups: dict[FoldKey, list[Finding]] = {}
        for f in found:
            if f.status in FOLDABLE:
                groups.setdefault(fold_key(f), []).append(f)
        self.folds = [(k, Span.of(fs), fs[0]) for k, fs in groups.items()]


class _Fold:
    """One folded finding in the making: the hosts (document numbers, as runs: a fleet's
    passes are on nearly every host, so a fold holds a few runs, not one number a host),
    and how many times each remembered set of values (a ``Span``) was seen: merged once,
    at the end."""

    __slots__ = ("counts", "first", "last", "runs")

    def __init__(self, first: Finding):
        self.first = first
        self.runs: list[int] = []  # first, last, first, last, ...: hosts in the order added
        self.counts: dict[Span, int] = {}
        self.last = -1

    def add(self, host: int, span: Span) -> None:
        last = self.last
        if host != last:  # a host counts once, however many of its items pass
            if host == last + 1 and self.runs:
                self.runs[-1] = host
            else:
                self.runs += (host, host)
            self.last = host
        counts = self.counts
        counts[span] = counts.get(span, 0) + 1
        if len(counts) > SPANS_MAX:  # each host its own values: merged as they come
            self.counts = {self.span(): 1}

    @property
    def hosts(self) -> list[int]:
        runs = self.runs
        return [h for i in range(0, len(runs), 2) for h in range(runs[i], runs[i + 1] + 1)]

    def merge(self, other: _Fold) -> None:
        """Another chunk's fold of the same key (its hosts come after these)."""
        runs = other.runs
        for i in range(0, len(runs), 2):
            first, last = runs[i], runs[i + 1]
            if first == self.last:  # the same host: counted once
                first += 1
                if first > last:
                    continue
            if first == self.last + 1 and self.runs:
                self.runs[-1] = last
            else:
                self.runs += (first, last)
            self.last = last
        # another chunk's spans (unpickled from a worker: new objects) count on an equal
        # one of these: kept, each chunk's would be memory growing with the fleet
        mine = {span.key(): span for span in self.counts}
        for span, n in other.counts.items():
            span = mine.setdefault(span.key(), span)
            self.counts[span] = self.counts.get(span, 0) + n
        if len(self.counts) > SPANS_MAX:
            self.counts = {self.span(): 1}

    def span(self) -> Span:
        total = Span()
        for span, n in self.counts.items():
            total.merge(span, n)
        return total


class FleetEvaluator:
    """Node rules on node documents, one at a time (``node``), folds kept here."""

    def __init__(self, ctx: Context, pack: RulePack, *, select: tuple[str, ...] = (),
                 ignore: tuple[str, ...] = ()):
        from validator.evaluate.engine import Builder
        from validator.rules.selection import is_selected

        rules = [r for r in pack.rules if r.scope == "node" and is_selected(r.id, select, ignore)]
        self.rules = [(Builder(ctx, r, "", pack.level_of(r, ctx.spec)), *reads(r)) for r in rules]
        from validator.cluster.evidence import OWN_FIELD

        # whether the replay compares hosts for copies (what a host's record carries for it):
        # a selected rule reads the field it makes
        self.checks_own = any((r.fact, r.field) == OWN_FIELD and is_selected(r.id, select, ignore)
                              for r in pack.rules)
        self.memo: dict[tuple[int, tuple[PartKey, ...], tuple[PartKey, ...]], _Entry] = {}
        self.ids: dict[bytes, int] = {}
        self.folds: ChunkFolds = {}
        self.evaluated = 0  # rules evaluated by the engine (misses and reruns): for the tests
        self.shapes: Shapes | None = None  # a replay's
        self._spans: dict[tuple[FoldKey, type, JSONValue, str | None], Span] = {}  # fold()'s, by value

    def reads(self, fact: str) -> bool:
        """Whether a node rule evaluated here reads ``fact``."""
        return any(fact in facts for _, facts, _ in self.rules)

    def affected(self, paths: list[FactPath], trace: list[TraceStep]) -> set[int]:
        """The rules (by number) that read a fact at one of ``paths`` ((fact, key) or
        (fact, item number, field, key)) as their remembered verdicts are keyed
        (``reads``), and those evaluated on every node anyway (``trace``: an item to
        itemize)."""
        whole = {p[0] for p in paths if len(p) == 2}
        fields = {(p[0], p[2]) for p in paths if len(p) == 4}
        return {
            i for i, (b, fact_names, field_names) in enumerate(self.rules)
            if trace[i][0] or whole.intersection(fact_names)
            or any((b.fact_name, f) in fields for f in field_names)
        }

    def node(self, host: int, name: str, facts: Mapping[str, JSONValue],
             trace: list[TraceStep] | None = None, only: set[int] | None = None,
             given: list[TraceStep] | None = None) -> list[Finding]:
        """The itemized findings of node document number ``host``; its passes and skips
        are folded here.

        ``trace``: a list that gets, per rule, (whether it is evaluated on every node,
        its itemized findings, its fold additions), so that another node shown to read
        the same gets the same verdicts (``repeat``; ``validator.cluster.shapes``).
        ``only`` and ``given``: evaluate only the rules numbered in ``only``; every other
        rule gives what ``given`` (an earlier node's trace) says, on this host."""
        from validator.evaluate.engine import evaluate_rule

        if len(self.memo) > MEMO_MAX:  # values seen once (a counter per GPU): start over
            self.memo.clear()
            self.ids.clear()
        parts = _Parts(facts, self.ids)
        out: list[Finding] = []
        answers: dict[Any, Any] = {}  # Any: the engine's private memo of conditions (engine._Answer)
        folds, memo = self.folds, self.memo
        for i, (b, fact_names, field_names) in enumerate(self.rules):
            if only is not None and i not in only:
                _, itemized, adds = given[i]  # type: ignore[index]
                for f in itemized:
                    out.append(_on(f, name))
                self._add(host, adds)
                continue
            start = len(out)
            key = (i, tuple([parts.fact(n) for n in fact_names]),
                   tuple([parts.column(b.fact_name, f) for f in field_names]))
            entry = memo.get(key)
            if entry is None or entry.rerun:
                b.subject = name
                found: list[Finding] = []
                evaluate_rule(b, "node", facts, found, answers)
                self.evaluated += 1
                if entry is None:
                    entry = _Entry(found)
                    memo[key] = entry
                if entry.rerun:
                    taken = self._take(host, found, out)
                    if trace is not None:
                        trace.append((True, out[start:], taken))
                    continue
                for f in entry.itemized:
                    out.append(f)
            else:
                for f in entry.itemized:
                    out.append(_on(f, name))
            if trace is not None:
                trace.append((False, out[start:], entry.folds))
            for k, span, first in entry.folds:  # _Fold.add, inlined (33 times a node)
                fold = folds.get(k)
                if fold is None:
                    fold = folds[k] = _Fold(first)
                fold.add(host, span)
        return out

    def _add(self, host: int, adds: Iterable[FoldAdd]) -> None:
        folds = self.folds
        for k, span, first in adds:
            fold = folds.get(k)
            if fold is None:
                fold = folds[k] = _Fold(first)
            fold.add(host, span)

    def repeat(self, host: int, name: str, itemized: list[Finding], adds: list[FoldAdd]) -> list[Finding]:
        """Node document number ``host`` gives what an earlier one gave (its ``itemized``
        findings, on this host, and its fold additions ``adds``): the caller has shown
        that every fact the node rules read is the same (``validator.cluster.shapes``)."""
        self._add(host, adds)
        return [_on(f, name) for f in itemized]

    def _take(self, host: int, found: list[Finding], out: list[Finding]) -> list[FoldAdd]:
        """Itemize ``found``'s failures, fold its passes; returns the fold additions."""
        adds = []
        for f in found:
            if f.status in FOLDABLE:
                adds.append((fold_key(f), Span.of((f,)), f))
            else:
                out.append(f)
        self._add(host, adds)
        return adds

    def fold(self, host: int, f: Finding) -> None:
        """Fold one pass or skip of host number ``host`` (a cluster rule's, re-homed).
        Verdicts of one value share one ``Span`` (a fleet's probe passes: one, not one a
        host)."""
        k = fold_key(f)
        fold = self.folds.get(k)
        if fold is None:
            fold = self.folds[k] = _Fold(f)
        try:
            sk = (k, type(f.value), f.value, f.observed)
            span = self._spans.get(sk)
        except TypeError:  # an unhashable value (a list): its own span
            sk, span = None, None
        if span is None:
            span = Span.of((f,))
            if sk is not None:
                self._spans[sk] = span
        fold.add(host, span)

    def folded(self, names: Sequence[str], cluster: str) -> list[Finding]:
        """The folded findings, on the cluster subject; ``names[i]`` is host number i."""
        from validator.cluster.hosts import compress

        out = []
        lists: dict[tuple[int, ...], str] = {}  # most rules pass on the same hosts: one list each
        for fold in self.folds.values():
            f, span = fold.first, fold.span()
            key = tuple(fold.runs)
            count = sum(fold.runs[i + 1] - fold.runs[i] + 1 for i in range(0, len(fold.runs), 2))
            if key not in lists:
                lists[key] = compress(_Named(names, fold.runs))
            info: dict[str, JSONValue] = {
                "subjects": count,
                "verdicts": span.n,
                "names": lists[key],
            }
            observed = None
            if span.lo is not None:
                info["range"] = [span.lo, span.hi]
                observed = span.lo_text if span.lo == span.hi else f"{span.lo_text} .. {span.hi_text}"
            if span.texts:
                info["values"] = list(span.texts)
                if span.more:
                    info["more"] = len(span.more)
                shown = ", ".join(span.texts) + (f" (+{len(span.more)} more)" if span.more else "")
                observed = shown if observed is None else f"{observed}; {shown}"
            on = f"{span.n} {'verdict' if span.n == 1 else 'verdicts'} on {count} " + (
                "host" if count == 1 else "hosts")
            if f.status is Status.PASS:
                message = f"pass: {on}" + (f"; observed {observed}" if observed else "")
            else:
                message = f"{f.message} ({on})"
            # every renderer shows "observed": it says how many hosts, not only the values
            shown_hosts = f"on {count} host{'' if count == 1 else 's'}"
            observed = f"{observed} {shown_hosts}" if observed else shown_hosts
            out.append(Finding(
                f.rule, f.requirement, f.level, f.status, cluster, f.expected, message, f.remediation,
                None, observed, None, f.unit, None, None, None, info,
            ))
        return out


class _Named(Made):
    """The names of a fold's hosts (``runs``: first, last, first, last, ...), each read
    from ``names`` when asked for: ``hosts.compress`` reads them in order, without a list
    of every host number and name."""

    __slots__ = ("_names", "_runs", "_starts")

    def __init__(self, names: Sequence[str], runs: list[int]):
        self._names, self._runs = names, runs
        self._starts = [0]
        for i in range(0, len(runs), 2):
            self._starts.append(self._starts[-1] + runs[i + 1] - runs[i] + 1)

    def __len__(self) -> int:
        return self._starts[-1]

    def _made(self, i: int) -> str:
        import bisect

        run = bisect.bisect_right(self._starts, i) - 1
        return self._names[self._runs[2 * run] + i - self._starts[run]]

    def __iter__(self) -> Iterator[str]:
        names, runs = self._names, self._runs
        for i in range(0, len(runs), 2):
            for h in range(runs[i], runs[i + 1] + 1):
                yield names[h]


def _on(f: Finding, subject: str) -> Finding:
    """A remembered finding on another host (positional: cheaper than ``replace``)."""
    return Finding(f.rule, f.requirement, f.level, f.status, subject, f.expected, f.message, f.remediation,
                   f.item, f.observed, f.value, f.unit, f.source, f.location, f.waiver)
