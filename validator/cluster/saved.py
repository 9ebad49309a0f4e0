"""A saved cluster document (``cluster --save-facts DIR`` wrote ``DIR/cluster.json``) is
input like any other: a replay refuses in it what a live run would never have produced.

* the cluster subject's name equal to a host's (live, ``--name n01`` is refused: findings
  and waivers are keyed by subject, so a waiver for host n01 would waive the fleet-wide
  PLAT-02 finding too);
* no hosts at all (live, an empty ``--hosts`` is refused: an empty fleet is no conformance);
* a host listed twice in ``cluster.probes`` (live, hosts are de-duplicated: here it was
  counted twice when itemized and once when folded);
* a recorded value of the wrong type, or a negative count, duration or rate, for the facts
  the catalogue types (``spec/facts/cluster.yaml``): a text throughput was a TypeError in
  the fleet summary's ``min()``.

Each refusal is one ``SpecCheckError`` naming the file and the field (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from validator.errors import SpecCheckError
from validator.values.numbers import join

if TYPE_CHECKING:
    from validator.report.model import JSONValue

_NUMBER_TYPES = {"int": (int,), "quantity": (int, float)}


def check_saved(doc: Mapping[str, JSONValue], where: str, catalogue: Mapping[str, JSONValue]) -> None:
    """Refuse a saved cluster document's repeated hosts and mistyped values."""
    facts = doc["facts"]
    probes = facts.get("cluster.probes")
    if probes is not None and not isinstance(probes.get("items"), list):
        raise SpecCheckError('facts["cluster.probes"]: expected a collection of hosts', file=where)
    for name in ("cluster.probes", "cluster.hosts"):
        members = (facts.get(name) or {}).get("items") or []
        seen: dict[str, int] = {}
        for i, m in enumerate(members):
            if m["id"] in seen:
                raise SpecCheckError(
                    f'facts["{name}"].items[{i}].id: host "{m["id"][:80]}" listed twice (also '
                    f"items[{seen[m['id']]}]); a live run probes each host once", file=where)
            seen[m["id"]] = i
    for name, fact in facts.items():
        info = catalogue.get(name)
        if info is None or not isinstance(fact, dict):
            continue
        path = join("facts", name)
        if isinstance(fact.get("items"), list):
            for i, m in enumerate(fact["items"]):
                for fname, f in m["fields"].items():
                    sub = info.fields.get(fname) if info.fields else None
                    if sub is not None:
                        _typed(f, sub.type, join(f"{path}.items[{i}].fields", fname), where)
        else:
            _typed(fact, info.type, path, where)


def _typed(fact: JSONValue, kind: str, path: str, where: str) -> None:
    if not isinstance(fact, dict) or "value" not in fact:
        return  # an error value, or no value: the rules say error, never pass
    v = fact["value"]
    if kind in _NUMBER_TYPES:
        if v == "unlimited" and kind == "quantity":
            return
        if isinstance(v, bool) or not isinstance(v, _NUMBER_TYPES[kind]):
            want = "an integer" if kind == "int" else "a number"
            got = f'"{v[:40]}"' if isinstance(v, str) else type(v).__name__
            raise SpecCheckError(f"{path}.value: expected {want}, got {got}", file=where)
        if v < 0:
            raise SpecCheckError(f"{path}.value: {v:g} is out of range (no count, duration or rate is "
                                 "negative)", file=where)
    elif kind == "bool" and not isinstance(v, bool):
        raise SpecCheckError(f"{path}.value: expected true or false, got {type(v).__name__}", file=where)


def check_fleet(cluster_name: str, hosts: Sequence[str], where: str | None) -> None:
    """The fleet a saved cluster document and the node documents make: not empty, and no
    host with the cluster subject's name."""
    if not hosts:
        raise SpecCheckError("no hosts: the saved cluster document lists none and no node facts "
                             "were given (a live run refuses an empty fleet)", file=where)
    if cluster_name in hosts:
        raise SpecCheckError(f'host "{cluster_name[:80]}" has the cluster subject\'s name (a live run '
                             "refuses --name equal to a host name: a waiver for the host would waive "
                             "the cluster's findings)", file=where)
