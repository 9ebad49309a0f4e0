"""Whether each host's facts are its own and current: what a fleet judged from recorded facts
rests on.

A replay (``cluster --facts``) judges files, not machines. Five files with one digest, one
GPU UUID in every file, a file named after one host holding another's facts, or facts dated
2019 (or next year) all read as healthy nodes unless something asks where they came from.
This module asks, for every host of a fleet (a live run's too):

* **own_facts**: "ok", or an error value naming the files: a facts file whose name is none of
  the names its document gives its host (subject name or address, reported hostname,
  ``host.hostname``); a host that is not an entry of the recorded fleet (``cluster.json``);
  two hosts with one facts file (byte for byte: the same SHA-256, which a folded replay
  records as the subject's digest; a live run has no files, and a replay of what it saved
  says what it said), one GPU UUID or one machine ID (one machine's facts twice, or a cloned machine ID: either way
  the hosts cannot be told apart).
* **facts_age**: the time from the document's ``collected_at`` to this run in hours, rounded
  up to the minute (hosts probed within one minute share one value, so a large fleet's hosts
  group; a bound in minutes is judged exactly, never a false fail of an hour's rounding); an
  error value where ``collected_at`` is missing, is not a time, or is more than
  ``freshness.FUTURE_SKEW_S`` after this run's clock.

Rules ``PLAT-02.facts-not-own`` and ``PLAT-02.facts-stale`` (pack v1.2) judge the two fields;
their findings are each host's own (``cluster.result.HOST_RULES``).

Memory: a 25,000-node replay streams its hosts; what is kept here is 12 bytes per GPU UUID,
machine ID and digest (a 64-bit hash and the host's number, in arrays) until ``finish``, and
then the problems alone. The strings themselves are not kept: a 64-bit collision among a
fleet's 200,000 UUIDs has odds of about 1 in 10^9, and its finding names both files.
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from validator.facts.document import error, value
from validator.values import identity_of

if TYPE_CHECKING:
    from validator.report.model import JSONValue

OWN_FIELD = ("cluster.hosts", "own_facts")  # what Ledger's judgement fills, for the rules that read it
AGE_SOURCE = "collected_at to this run's clock, rounded up to the minute"
OK = "ok"
_SHOWN = 3  # files named in one problem before "and N more"


def _key(kind: str, text: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{kind}\x00{text}".encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "big")


def uuid_keys(uuids: Iterable[str]) -> bytes:
    """GPU UUIDs as ``Ledger.add`` keeps them (8 bytes each): what a replay's worker sends
    back per host instead of the strings."""
    return b"".join(_key("1", u).to_bytes(8, "big") for u in uuids)


def _short(name: str) -> str:
    return name.split(".", 1)[0].lower() if not name.replace(".", "").isdigit() else name


def saved_file_stem(address: str) -> str:
    """The name ``--save-facts`` gives a host's file (without ``.json``); a replay holds each
    file to it (``file_names_host``)."""
    return re.sub(r"[^A-Za-z0-9._@-]", "_", address) or "host"


def names_of(doc: Mapping[str, JSONValue]) -> tuple[str, ...]:
    """Every name a node document gives its host: subject name and address, the hostname
    it reported, and ``host.hostname``'s value."""
    subject = doc.get("subject") or {}
    out = [subject.get(k) for k in ("name", "address", "hostname")]
    host = (doc.get("facts") or {}).get("host.hostname")
    if isinstance(host, dict):
        out.append(host.get("value"))
    return tuple(dict.fromkeys(n for n in out if isinstance(n, str) and n))


def file_problem(file: PurePath, claims: Sequence[str]) -> str | None:
    """Why a facts file's name does not say whose facts it holds (None when it does)."""
    if file_names_host(file, claims):
        return None
    said = ", ".join(f'"{c}"' for c in dict.fromkeys(claims)) or "no host name"
    return (f"{file.name} holds the facts of {said}, not of a host named "
            f'"{file.name.removesuffix(".json")}" (a file named after its host, as '
            f"`cluster --save-facts` writes them, says whose facts it holds)")


def file_names_host(file: PurePath, names: Sequence[str]) -> bool:
    """Whether a facts file's name (without ``.json``) is one of its host's ``names``, as
    written, as ``--save-facts`` writes it, or as the short host name."""
    stem = file.name.removesuffix(".json")
    if not names:
        return False
    wanted = {stem, _short(stem)}
    return any(n in wanted or saved_file_stem(n) == stem or _short(n) in wanted for n in names)


def age(collected_at: object, now: datetime) -> dict[str, JSONValue]:
    """``facts_age``: hours from ``collected_at`` to ``now`` (rounded up to the minute), or why not."""
    from validator.facts.freshness import age_seconds

    try:
        seconds = age_seconds(collected_at, now)
    except ValueError as exc:
        return error(str(exc), source="collected_at")
    return value(math.ceil(max(seconds, 0.0) / 60) / 60, unit="h", source=AGE_SOURCE)


class Ledger:
    """The fleet's hosts as they are read (``add``, host number ``k`` in file order), then
    ``finish``: the problems of each host whose facts are not its own, by number."""

    def __init__(self) -> None:
        self._hashes = array("Q")
        self._tags = array("I")  # kind << 30 | host number; kind 0 file digest, 1 GPU UUID, 2 machine ID
        self._problems: dict[int, list[str]] = {}

    def add(self, k: int, name: str, digest: bytes | None, uuids: Iterable[str] | bytes, machine_id: str | None,
            problem: str | None = None) -> None:
        """Host ``k``, named ``name`` in the fleet: its facts file's SHA-256 (None: no file, a
        live run), its GPU UUIDs (or their ``uuid_keys``), its machine ID, and what
        ``file_problem`` found of its file's name."""
        if problem is not None:
            self._problem(k, problem)
        if k >= 1 << 30:
            raise ValueError("more than 2**30 hosts")
        keys = uuid_keys(uuids) if not isinstance(uuids, bytes) else uuids
        for i in range(0, len(keys), 8):
            self._hashes.append(int.from_bytes(keys[i : i + 8], "big"))
            self._tags.append(1 << 30 | k)
        for kind, text in ((0, digest.hex() if digest is not None else None), (2, machine_id)):
            if text:
                self._hashes.append(_key(str(kind), text))
                self._tags.append(kind << 30 | k)

    def outside(self, k: int, name: str, recorded_file: str | None) -> None:
        """Host ``k`` is no entry of the fleet a saved cluster document recorded."""
        self._problem(k, f"host {name} is not an entry of the recorded fleet"
                         f"{f' ({recorded_file})' if recorded_file else ''}")

    def _problem(self, k: int, text: str) -> None:
        self._problems.setdefault(k, []).append(text)

    def finish(self, label: Callable[[int], str]) -> dict[int, str]:
        """Host number -> why its facts are not its own (hosts whose facts are, absent).
        ``label(k)``: how a problem names host k ("node07.json (host node07)")."""
        hashes, tags = self._hashes, self._tags
        shared: dict[tuple[int, int], set[int]] = {}  # (host, kind) -> the other hosts sharing one
        counts: dict[tuple[int, int], int] = {}  # (host, kind) -> how many of its values are shared
        mask = (1 << 30) - 1
        # sorted a part at a time (by the hash's top 3 bits): the positions held at once are an
        # eighth of the fleet's values, not all of them (36 bytes each as a list of ints)
        for part in range(8):
            order = sorted((i for i, h in enumerate(hashes) if h >> 61 == part), key=hashes.__getitem__)
            i, n = 0, len(order)
            while i < n:
                j = i + 1
                while j < n and hashes[order[j]] == hashes[order[i]]:
                    j += 1
                if j - i > 1:
                    hosts = {tags[x] & mask for x in order[i:j]}
                    if len(hosts) > 1:
                        kind = tags[order[i]] >> 30
                        for k in hosts:
                            shared.setdefault((k, kind), set()).update(hosts - {k})
                            counts[(k, kind)] = counts.get((k, kind), 0) + 1
                i = j
            del order
        what = {0: ("its facts (the same bytes)", "its facts"), 1: ("a GPU UUID", "GPU UUIDs"),
                2: ("its machine ID", "its machine ID")}
        phrases: dict[int, list[str]] = {}
        for (k, kind) in sorted(shared):
            others = sorted(label(o) for o in shared[(k, kind)])  # by name: never by argument order
            more = f" and {len(others) - _SHOWN} more" if len(others) > _SHOWN else ""
            one, many = what[kind]
            count = counts[(k, kind)]
            thing = one if count == 1 else f"{count} {many}"
            phrases.setdefault(k, []).append(f"shares {thing} with {', '.join(others[:_SHOWN])}{more}")
        for k, said in phrases.items():
            self._problem(k, f"{label(k)} {'; '.join(said)}: one machine's facts twice, or hosts that "
                             f"cannot be told apart")
        self._hashes, self._tags = array("Q"), array("I")
        return {k: "; ".join(dict.fromkeys(p)) for k, p in self._problems.items()}


def own_facts(problem: str | None, *, checked: bool = True) -> dict[str, JSONValue]:
    """The ``own_facts`` field of a host: "ok", or an error value with its problem (or that
    it was not checked: no selected rule reads it)."""
    if not checked:
        return _UNCHECKED
    return _OK if problem is None else error(problem, source="facts files of the fleet")


_OK: dict[str, JSONValue] = value(OK, source="facts files of the fleet")
_UNCHECKED: dict[str, JSONValue] = error("not checked: no selected rule reads it", source="facts files of the fleet")


def now_of_run() -> datetime:
    """This run's clock (``validator.clock``: SOURCE_DATE_EPOCH when pinned)."""
    from validator.clock import now

    return now()


def judge(documents: Mapping[str, Mapping[str, JSONValue] | None], files: Mapping[str, PurePath] | None = None,
          *, claims: Mapping[str, Sequence[str]] | None = None, digests: Mapping[str, bytes] | None = None,
          recorded: Iterable[str] | None = None, recorded_file: str | None = None,
          now: datetime | None = None) -> dict[str, dict[str, JSONValue]]:
    """``own_facts`` and ``facts_age`` of every host with a document (the whole fleet in
    memory: a live run, or an itemized replay with ``files``, host -> its facts file,
    ``claims``, host -> the names its document gave it as read, before the replay named it,
    and ``digests``, host -> its file's SHA-256: a replay compares files byte for byte, as a
    folded one does)."""
    now = now or now_of_run()
    ledger = Ledger()
    hosts = [h for h, d in documents.items() if d is not None]
    outside = set(hosts) - set(recorded) if recorded is not None else set()
    for k, h in enumerate(hosts):
        if h in outside:
            ledger.outside(k, h, recorded_file)
        doc = documents[h]
        assert doc is not None
        machine_id, _, uuids = identity_of(doc.get("facts") or {})
        file = files.get(h) if files is not None else None
        said = claims[h] if claims is not None and h in claims else names_of(doc)
        ledger.add(k, h, digests.get(h) if digests is not None else None, uuids, machine_id,
                   file_problem(file, said) if file is not None else None)
    problems = ledger.finish(lambda k: _label(hosts[k], files.get(hosts[k]) if files is not None else None))
    return {h: {"own_facts": own_facts(problems.get(k)),
                "facts_age": age((documents[h] or {}).get("collected_at"), now)}
            for k, h in enumerate(hosts)}


def recorded_hosts(cluster_doc: Mapping[str, JSONValue]) -> tuple[str, ...]:
    """The hosts a saved cluster document recorded (its ``cluster.probes`` items)."""
    probes = (cluster_doc.get("facts") or {}).get("cluster.probes") or {}
    return tuple(m["id"] for m in probes.get("items") or [] if isinstance(m, dict) and isinstance(m.get("id"), str))


def _label(name: str, file: PurePath | None) -> str:
    if file is None:
        return f"host {name}"
    return file.name if file.name.removesuffix(".json") == name else f"{file.name} (host {name})"


def label_of(names: Sequence[str], files: Sequence[PurePath]) -> Callable[[int], str]:
    """``Ledger.finish``'s label for a replay whose host k is ``names[k]`` from ``files[k]``."""
    return lambda k: _label(names[k], files[k])
