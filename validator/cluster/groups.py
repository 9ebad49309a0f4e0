"""Cluster rules over a large fleet: the per-host collections as value groups.

Why this exists: a cluster document holds an item per host in ``cluster.probes`` and
``cluster.hosts``. Evaluated as it is, every host costs an item, a probe finding and an
entry in each PLAT-02 comparison's value map: 1.5 KB a host at the peak of a 25,000-node
replay, memory growing with the fleet. Nearly every host reads the same there. Here the
hosts whose items read the same in every field a selected rule reads become one item,
named by their Slurm host list and counting them (an ``engine.GroupItem``: the engine's
``all_equal`` weighs it by its ``members``), so the cluster rules run on a document the
size of the fleet's distinct values, not of the fleet.

A per-item verdict on a group is each member's: the fleet report expands it
(``Grouped.members``): its passes fold host by host, anything else is itemized on each
member, as if the hosts had been evaluated one by one. A collection that some rule reads
whole (not field by field) is left as it is.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from validator.cluster.fleet import reads_whole
from validator.lazy import Made, MadeBy

if TYPE_CHECKING:
    from validator.report.model import JSONValue
    from validator.rules.rulemodel import Rule

PER_HOST = ("cluster.probes", "cluster.hosts")
# the fields engine.item_label names an item by: a group keeps them, so its label is its id
_LABEL_FIELDS = ("name", "uuid")


@dataclass
class Grouped:
    """``doc``: the document with its per-host collections grouped; ``members``: for
    (collection, a group's item label: its id), the member ids and their positions in
    the collection."""

    doc: dict[str, JSONValue]
    members: dict[tuple[str, str], _Members] = field(default_factory=dict)


class _Members(Made):
    """A group's members: (id, position in the collection), each id read from the
    collection when asked for (its items may be made when read: no ``str`` kept a host)."""

    __slots__ = ("_items", "_positions")

    def __init__(self, items: Sequence[dict[str, JSONValue]], positions: array):
        self._items, self._positions = items, positions

    def __len__(self) -> int:
        return len(self._positions)

    def _made(self, i: int) -> tuple[str, int]:
        k = self._positions[i]
        return self._items[k]["id"], k

    def ids(self) -> Sequence[str]:
        return MadeBy(len(self), lambda i: self._made(i)[0])


def read_fields(rules: Iterable[Rule]) -> dict[str, tuple[str, ...]]:
    """For each per-host collection that can be grouped, the fields the rules read of its
    items (with the item-label fields); one a rule reads whole is not given."""
    whole: set[str] = set()
    fields: dict[str, set[str]] = {c: set(_LABEL_FIELDS) for c in PER_HOST}
    for rule in rules:
        facts, item_fields = reads_whole(rule)
        whole |= facts
        if rule.fact in fields:
            fields[rule.fact] |= item_fields
    return {c: tuple(sorted(f)) for c, f in fields.items() if c not in whole}


def grouped(doc: dict[str, JSONValue], rules: Iterable[Rule]) -> Grouped:
    """``doc`` with each groupable per-host collection (``read_fields``) as one item per
    value group: ``GroupItem({"id": host list, "fields": the fields read}, count)``, in the
    order of each group's first member. The document's other facts are shared, not
    copied."""
    from validator.cluster.hosts import compress, listable
    from validator.evaluate.engine import GroupItem, item_label

    out = Grouped({**doc, "facts": dict(doc["facts"])})
    for coll, kept in read_fields(rules).items():
        fact = doc["facts"].get(coll)
        if not isinstance(fact, dict) or "items" not in fact:
            continue
        items = fact["items"]
        by_key: dict[bytes, tuple[dict[str, JSONValue], array]] = {}
        odd = False  # a name no host list can carry ("a,b", "n[1-2]"): host by host
        for k, m in enumerate(items):
            odd = not listable(m["id"])
            if odd:
                break
            fields = m["fields"]
            mine = {f: fields[f] for f in kept if f in fields}
            key = marshal.dumps(mine, 2)
            group = by_key.get(key)
            if group is None:
                group = by_key[key] = (mine, array("I"))
            group[1].append(k)
        if odd:
            continue
        members, found = [], {}
        for mine, positions in by_key.values():
            of = _Members(items, positions)
            gid = items[positions[0]]["id"] if len(positions) == 1 else compress(of.ids())
            made = GroupItem({"id": gid, "fields": mine}, len(positions))
            found[(coll, item_label(made))] = of
            members.append(made)
        if len(found) < len(members):  # two groups one label (a host named like a host list)
            continue
        out.members.update(found)
        out.doc["facts"][coll] = {**{k: v for k, v in fact.items() if k != "items"}, "items": members}
    return out
