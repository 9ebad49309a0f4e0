"""The nodes a job runs on, read from what ``--nodes`` names.

Three inputs, each read by the readers the rest of spec-check uses:

* a node facts file (``spec-check probe -o``), read and validated by
  ``validator.facts.document.read`` (another schema version: exit 2, one line);
* a folder of them (``cluster --save-facts``, or files gathered by hand): every ``*.json``
  in it, by name; the folder's ``cluster.json`` (a cluster document derived from the
  node documents beside it) adds no node and is passed over;
* a ``spec-check cluster`` result (``--format json``) kept with its facts (``cluster -o
  RESULT --keep-facts``): the facts in the folder beside it (``kept_facts``);
* a ``spec-check cluster`` result alone: it holds verdicts, not facts, so
  only what its findings show per host is known (GPU count from PLAT-01, RDMA ports and
  their state from NET-02, NVLink per GPU from NET-03); everything else is *unknown*
  for those hosts, and the checks that need it say so (an ``error`` finding), never pass.
  A result of another spec version is refused: its verdicts answer another spec.

Hosts are named as ``cluster --facts`` names them: by their subject name, or by file name
where documents share one; two files of one name for one host are refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import JSONValue


@dataclass
class Node:
    """One host's facts, as ``{fact name: fact}`` (the facts document's shape)."""

    host: str
    file: str
    facts: dict[str, JSONValue]
    origin: str = "facts"  # "facts" | "cluster result"
    # fact name -> why it is unknown for this host (a cluster result does not carry it)
    unknown: dict[str, str] = field(default_factory=dict)

    def fact(self, name: str) -> dict[str, JSONValue] | None:
        f = self.facts.get(name)
        return f if isinstance(f, dict) else None

    def why_unknown(self, name: str) -> str | None:
        """Why fact ``name`` cannot be compared on this host, or None when it can."""
        if name in self.unknown:
            return self.unknown[name]
        f = self.fact(name)
        if f is None:
            return f"{self.file} has no {name} (recorded by an older spec-check?)"
        if "error" in f:
            return f"{name} could not be read on {self.host}: {f['error']}"
        return None


def _result_nodes(doc: dict[str, JSONValue], path: Path, spec_version: str) -> list[Node]:
    from validator.errors import SpecCheckError
    from validator.facts.document import error, item, items, value
    from validator.versions import unreadable

    why = unreadable("result", doc.get("schema"))
    if why:
        raise SpecCheckError(why, file=str(path))
    if doc.get("command") != "cluster":
        raise SpecCheckError(
            f'a "{doc.get("command")}" result, expected node facts or a `spec-check cluster` result',
            file=str(path))
    if str(doc.get("spec_version")) != spec_version:
        raise SpecCheckError(
            f"a cluster result of spec {doc.get('spec_version')!r}; this run checks spec "
            f"{spec_version!r} (pass --spec-version {doc.get('spec_version')} or re-run the cluster check)",
            file=str(path))
    hosts = [s["name"] for s in doc.get("subjects", []) if isinstance(s, dict) and s.get("kind") == "node"]
    if not hosts:
        raise SpecCheckError("a cluster result with no node subjects", file=str(path))
    gpus: dict[str, JSONValue] = {}
    ports: dict[str, dict[str, dict[str, JSONValue]]] = {h: {} for h in hosts}
    nvlinks: dict[str, dict[str, JSONValue]] = {h: {} for h in hosts}
    for f in doc.get("findings", []):
        if not isinstance(f, dict) or f.get("subject") not in ports:
            continue
        host, rule, src = f["subject"], f.get("rule"), f.get("source")
        if rule == "PLAT-01.driver-missing-gpus" and f.get("value") is not None:
            gpus[host] = value(f["value"], source=f"{src} (cluster result {rule})")
        elif rule == "NET-02.port-not-active" and f.get("item"):
            st = f.get("value")
            ports[host][f["item"]] = {
                "state": value(st, source=f"{src} (cluster result)") if st is not None else error(
                    f.get("message") or "not read", source=src),
            }
        elif rule == "NET-03.no-nvlink" and f.get("item") and f.get("value") is not None:
            nvlinks[host][f["item"]] = {"nvlink_count": value(f["value"], source=src)}
    out = []
    unknown_note = ("a cluster result holds verdicts, not facts: {} is not in it (pass the node facts instead: "
                    "`spec-check probe -o FILE` files, or the folder `spec-check cluster --save-facts DIR` wrote)")
    for h in hosts:
        facts: dict[str, JSONValue] = {}
        unknown: dict[str, str] = {}
        if h in gpus:
            facts["gpu.count"] = gpus[h]
        else:
            unknown["gpu.count"] = unknown_note.format("the GPU count")
        facts["rdma.ports"] = items(
            [item(pid, {"device": value(pid.split(":")[0]),
                        "port": value(int(pid.split(":")[1]) if pid.split(":")[-1].isdigit() else -1),
                        **fields})
             for pid, fields in sorted(ports[h].items())],
            source=f"cluster result {path.name}: NET-02.port-not-active")
        if not ports[h]:
            # no port finding: no ports, or the rule was not run (--select): unknown either way
            unknown["rdma.ports"] = unknown_note.format("any RDMA port (no NET-02 port finding)")
        facts["gpu.devices"] = items([item(k, v) for k, v in sorted(nvlinks[h].items())])
        if not nvlinks[h]:
            unknown["gpu.devices"] = unknown_note.format("NVLink per GPU (no NET-03 finding)")
        for name, what in (("net.interfaces", "the network interfaces"),
                           ("rdma.link_layer", "each port's link layer")):
            unknown[name] = unknown_note.format(what)
        out.append(Node(h, str(path), facts, origin="cluster result", unknown=unknown))
    return out


def kept_facts(result: Path) -> Path:
    """Where ``cluster -o RESULT --keep-facts`` keeps the facts it judged: beside the result,
    its name with ``.facts`` (``fleet.json`` -> ``fleet.facts/``)."""
    return result.with_suffix(".facts")


def _read_one(path: Path, spec_version: str) -> list[Node]:
    """The nodes of one file: a node document, a cluster result; a cluster facts document
    (``cluster.json`` of a saved-facts folder) gives none."""
    from validator.errors import SpecCheckError
    from validator.facts import document
    from validator.io.safeio import InputError, read_bytes

    try:
        raw = read_bytes(path, cap=document.MAX_FACTS_BYTES, what="node facts or cluster result")
    except InputError as exc:
        raise SpecCheckError(exc.problem, file=str(path), line=exc.line) from None
    try:
        peek = json.loads(raw.decode("utf-8", "replace").removeprefix("\ufeff"))
    except (json.JSONDecodeError, RecursionError, ValueError):
        peek = None
    schema = peek.get("schema") if isinstance(peek, dict) else None
    if isinstance(schema, str) and schema.startswith("spec-check/result/"):
        kept = kept_facts(path)
        if kept.is_dir():  # `cluster -o RESULT --keep-facts`: the facts it judged, not its verdicts
            files = sorted(q for q in kept.iterdir() if q.suffix == ".json" and q.is_file())
            return [n for f in files for n in _read_one(f, spec_version)]
        return _result_nodes(peek, path, spec_version)
    doc = document.parse(raw, str(path))  # a clear one-line error for anything else
    kind = doc["subject"]["kind"]
    if kind == "cluster":
        return []
    if kind != "node":
        raise SpecCheckError(f'a "{kind}" facts document, expected node facts (--nodes)', file=str(path))
    return [Node(str(doc["subject"]["name"]), str(path), _kept(doc["facts"]))]


# the facts the checks read (a fleet of thousands of nodes is held as these alone)
KEPT = ("gpu.count", "gpu.devices", "rdma.ports", "net.interfaces")
KEPT_GPU_FIELDS = ("nvlink_count", "nvlink_inactive", "nvlink_remote_switch", "fabric_state")


def _kept(facts: dict[str, JSONValue]) -> dict[str, JSONValue]:
    out = {k: facts[k] for k in KEPT if k in facts}
    devs = out.get("gpu.devices")
    if isinstance(devs, dict) and isinstance(devs.get("items"), list):
        out["gpu.devices"] = {**devs, "items": [
            {"id": m.get("id"), "fields": {k: v for k, v in (m.get("fields") or {}).items() if k in KEPT_GPU_FIELDS}}
            for m in devs["items"] if isinstance(m, dict)]}
    return out


def read_nodes(paths: Sequence[Path], spec_version: str) -> list[Node]:
    """Every node the ``--nodes`` paths name, in host order; exit 2 (SpecCheckError) for a
    path that does not exist, a folder with no ``*.json``, an unreadable or foreign
    document, or one host given twice."""
    from validator.errors import SpecCheckError

    nodes: list[Node] = []
    for p in paths:
        if p.is_dir():
            files = sorted(q for q in p.iterdir() if q.suffix == ".json" and q.is_file())
            if not files:
                raise SpecCheckError("no *.json node facts in this directory (--nodes)", file=str(p))
        elif p.exists():
            files = [p]
        else:
            raise SpecCheckError("no such file or directory (--nodes)", file=str(p))
        for f in files:
            nodes += _read_one(f, spec_version)
    if not nodes:
        raise SpecCheckError("no node facts in it, only a cluster document (--nodes)",
                             file=str(paths[0]) if paths else None)
    # hosts named as `cluster --facts` names them: the subject name, or the file's name where
    # node documents share one (synthesized or copied recordings); a file given twice is one
    from validator.values.hostlist import host_names

    once = list({(n.host, os.path.realpath(n.file)): n for n in nodes}.values())
    facts = [n for n in once if n.origin == "facts"]
    for n, name in zip(facts, host_names([n.host for n in facts], [Path(n.file) for n in facts]), strict=True):
        n.host = name
    seen: dict[str, str] = {}
    for n in once:
        if n.host in seen:
            raise SpecCheckError(f'two node facts documents for host "{n.host}" (the other: {seen[n.host]}); '
                                 "rename one of the files", file=n.file)
        seen[n.host] = n.file
    return sorted(once, key=lambda n: n.host)


def hostlist(names: Iterable[str]) -> str:
    """Hosts as a Slurm host list (``dgx[01-03,07]``)."""
    from validator.values.hostlist import compress

    return compress(sorted(set(names)))
