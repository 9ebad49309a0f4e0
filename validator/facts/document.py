"""The facts document: what sources produce and the engine reads.

A facts document is plain JSON so that it can be recorded on one machine and evaluated on
another (``spec-check probe -o facts.json``; ``spec-check check --facts facts.json``).
Every fact is one of three shapes, and a fact that could not be gathered is an *error
value* with its reason, never a silent absence::

    {"value": 400, "unit": "Gb/s", "source": "/sys/class/infiniband/mlx5_0/ports/1/rate"}
    {"error": "NVML Shared Library Not Found", "source": "NVML (nvidia-smi's library): nvmlInit"}
    {"items": [{"id": "mlx5_0:1", "fields": {"rate": {"value": 400, "unit": "Gb/s"}}}],
     "source": "/sys/class/infiniband"}

Job facts add ``"location": {"file": "ds.json", "line": 12}``. Documents are kept as
dicts (not models): a fleet of 10,000 nodes must load and evaluate in seconds.
"""

from __future__ import annotations

import json
import math
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING

from validator.errors import FactsFileError
from validator.lazy import MadeBy
from validator.rules.rulemodel import SCOPES
from validator.versions import FACTS_SCHEMA as SCHEMA  # defined in one place (versions.py)
from validator.versions import unreadable

if TYPE_CHECKING:
    from collections.abc import Callable

    from validator.report.model import JSONValue

SUBJECT_KINDS = SCOPES
MAX_FACTS_BYTES = 64 * 1024 * 1024

Fact = dict[str, "JSONValue"]
Document = dict[str, "JSONValue"]


def value(v: JSONValue, *, unit: str | None = None, source: str | None = None,
          location: dict[str, JSONValue] | None = None) -> Fact:
    """A gathered fact. ``inf`` (an unlimited limit) is stored as ``"unlimited"``."""
    if isinstance(v, float) and math.isinf(v):
        v = "unlimited"
    out: Fact = {"value": v}
    if unit:
        out["unit"] = unit
    if source:
        out["source"] = source
    if location:
        out["location"] = location
    return out


def error(reason: str, *, source: str | None = None, live_only: bool = False) -> Fact:
    """A fact that could not be gathered, with the reason (never an empty string).
    ``live_only``: it can be read only on the live node (an exporter's /metrics), not from the
    trees a recording reads; a rule on it is then a skip saying so, never an error."""
    out: Fact = {"error": reason or "unknown error"}
    if source:
        out["source"] = source
    if live_only:
        out["live_only"] = True
    return out


def item(item_id: str, fields: dict[str, Fact]) -> dict[str, JSONValue]:
    """One member of a collection (a GPU, a port, a link)."""
    return {"id": item_id, "fields": fields}


def items(members: list[dict[str, JSONValue]], *, source: str | None = None) -> Fact:
    """A collection: rules over it give one finding per member."""
    out: Fact = {"items": members}
    if source:
        out["source"] = source
    return out


class MadeItems(MadeBy):
    """A collection's members made when read (``MadeBy(n, make)``), for a document too
    large to hold a dict per member: a replayed fleet's cluster document has a probe and a
    host item per host (``validator.cluster.facts.fleet_document``). ``digest`` encodes
    it a part at a time; ``json.dumps`` refuses it (never a silent ``[]``)."""

    __slots__ = ()


def new_document(kind: str, name: str, facts: dict[str, Fact], *, tool_version: str,
                 collected_at: str, address: str | None = None) -> Document:
    subject: dict[str, str] = {"kind": kind, "name": name}
    if address:
        subject["address"] = address
    return {
        "schema": SCHEMA,
        "tool_version": tool_version,
        "collected_at": collected_at,
        "subject": subject,
        "facts": facts,
    }


def digest(doc: Document) -> str:
    """A stable digest of a document's facts (what a signed result vouches for): the
    SHA-256 of ``json.dumps(facts, sort_keys=True, separators=(",", ":"))``, hashed as
    it is encoded (a fleet's cluster document holds an item per host: its text at once
    was the largest thing a 25,000-node replay held)."""
    facts = doc.get("facts", {})
    subject = doc.get("subject")
    if not (isinstance(subject, dict) and subject.get("kind") == "cluster"):
        # a node's or a job's facts (60 KB for a DGX node): the same bytes in one call of the
        # encoder, a third of the time; only a cluster document holds made items
        try:
            text = json.dumps(facts, sort_keys=True, separators=(",", ":"))
        except TypeError:  # a made collection (or a value no encoder takes): a part at a time
            pass
        else:
            return "sha256:" + sha256(text.encode()).hexdigest()
    h = sha256()
    _canonical(facts, h.update)
    return "sha256:" + h.hexdigest()


_ITEMS_AT_ONCE = 512


def _canonical(value: object, out: Callable[[bytes], object]) -> None:
    """``value`` as ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` (the same
    bytes, UTF-8), given to ``out`` in pieces: dicts and long lists a part at a time."""
    if isinstance(value, dict) and any(isinstance(v, (dict, list, MadeItems)) for v in value.values()):
        if not all(isinstance(k, str) for k in value):  # json's own key rules and order
            out(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())
            return
        out(b"{")
        for i, k in enumerate(sorted(value)):
            out((',"' if i else '"').encode() + json.dumps(k)[1:].encode() + b":")
            _canonical(value[k], out)
        out(b"}")
    elif isinstance(value, MadeItems) or (isinstance(value, list) and len(value) > _ITEMS_AT_ONCE):
        out(b"[")
        for i in range(0, len(value), _ITEMS_AT_ONCE):
            part = json.dumps(value[i : i + _ITEMS_AT_ONCE], sort_keys=True, separators=(",", ":"))
            out((b"," if i else b"") + part[1:-1].encode())
        out(b"]")
    else:
        out(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())


_PLAIN_KEYS = frozenset({"value", "unit", "source"})


def _plain(fact: object) -> bool:
    """The common fact, ``{"value": ..., "unit": "...", "source": "..."}``, checked without
    building its name: a DGX node document holds about 600 of them, and validating each
    through ``_check_fact`` (its name formatted first) took longer than parsing the file.
    (Inlined in ``_check_fact``'s loop over items; anything else takes the full check.)"""
    return (type(fact) is dict and "value" in fact and fact.keys() <= _PLAIN_KEYS
            and type(fact.get("unit", "")) is str and type(fact.get("source", "")) is str)


def _check_fact(name: str, fact: object, where: str, *, in_item: bool = False) -> None:
    if _plain(fact):
        return
    if not isinstance(fact, dict):
        raise FactsFileError(f'fact "{name}" is not an object', file=where)
    shapes = [k for k in ("value", "error", "items") if k in fact]
    if len(shapes) != 1:
        raise FactsFileError(
            f'fact "{name}" must have exactly one of value, error, items (has {shapes or "none"})',
            file=where,
        )
    for key in ("error", "unit", "source"):
        if key in fact and not isinstance(fact[key], str):
            raise FactsFileError(f'fact "{name}": {key} must be a string', file=where)
    if "live_only" in fact and (fact["live_only"] is not True or "error" not in fact):
        raise FactsFileError(f'fact "{name}": live_only must be true, and only on an error', file=where)
    loc = fact.get("location")
    if loc is not None and (not isinstance(loc, dict) or not isinstance(loc.get("file"), str)
                            or not isinstance(loc.get("line"), (int, type(None)))
                            or isinstance(loc.get("line"), bool)):
        raise FactsFileError(f'fact "{name}": location must be {{"file": string, "line": integer}}',
                             file=where)
    if "items" in fact:
        if in_item:
            raise FactsFileError(f'fact "{name}": collections cannot nest', file=where)
        members = fact["items"]
        if not isinstance(members, list):
            raise FactsFileError(f'fact "{name}": items must be a list', file=where)
        for i, member in enumerate(members):
            if (not isinstance(member, dict) or not isinstance(member.get("id"), str)
                    or not isinstance(member.get("fields"), dict)):
                raise FactsFileError(
                    f'fact "{name}": item {i} needs "id" (string) and "fields" (object)',
                    file=where,
                )
            for fname, f in member["fields"].items():
                if (type(f) is dict and "value" in f and f.keys() <= _PLAIN_KEYS  # _plain, inlined
                        and type(f.get("unit", "")) is str and type(f.get("source", "")) is str):
                    continue
                _check_fact(f"{name}[{member['id']}].{fname}", f, where, in_item=True)


def validate(doc: object, where: str) -> Document:
    """Check a parsed document's shape; raise FactsFileError naming the problem."""
    if not isinstance(doc, dict):
        raise FactsFileError("not a facts document (expected a JSON object)", file=where)
    why = unreadable("facts", doc.get("schema"))  # older versions are read; newer ones refused
    if why:
        raise FactsFileError(why, file=where)
    subject = doc.get("subject")
    if (not isinstance(subject, dict) or subject.get("kind") not in SUBJECT_KINDS
            or not isinstance(subject.get("name"), str) or not subject["name"]):
        raise FactsFileError(
            'subject must be {"kind": node|job|cluster, "name": "..."}', file=where
        )
    facts = doc.get("facts")
    if not isinstance(facts, dict):
        raise FactsFileError('"facts" must be an object', file=where)
    for name, fact in facts.items():
        _check_fact(name, fact, where)
    return doc


def load(path: str | Path) -> Document:
    """Read and validate a facts file; every failure is one FactsFileError line."""
    return read(path)[0]


def read(path: str | Path) -> tuple[Document, bytes]:
    """``load``, with the file's bytes (a fleet replay digests the file as read)."""
    raw = read_raw(path)
    return parse(raw, str(path)), raw


def read_raw(path: str | Path) -> bytes:
    """A facts file's bytes (at most ``MAX_FACTS_BYTES``); a failure is one FactsFileError."""
    from validator.io.safeio import InputError, read_bytes

    try:
        return read_bytes(path, cap=MAX_FACTS_BYTES, what="facts document")
    except InputError as exc:
        raise FactsFileError(exc.problem, file=str(path), line=exc.line) from None


def parse(raw: bytes, where: str) -> Document:
    """A facts file's bytes as a validated document; a failure is one FactsFileError."""
    try:  # as safeio.read_text decodes, keeping the bytes
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FactsFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=where,
                             line=line) from None
    if not text.strip():
        raise FactsFileError("empty file, expected a facts JSON document", file=where)
    from validator.io.jsondoc import JSONProblem
    from validator.io.jsondoc import parse as parse_json

    try:  # repeated keys, NaN, numbers beyond any real value, lone surrogates: jsondoc
        doc = parse_json(text)
    except JSONProblem as exc:
        raise FactsFileError(exc.problem, file=where, line=exc.line) from None
    return validate(doc, where)

