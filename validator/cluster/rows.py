"""What a streamed replay keeps per host, packed: the only part of ``cluster --facts``
whose memory grows with the fleet.

Why packed: a Python ``str`` costs 49 bytes before its first character and a ``Path``
about 300; a 25,000-node replay kept one of each per host and more (7 KB a host, before
this). Here a host is its file's name and its subject name as UTF-8 bytes in one buffer
each, its file's SHA-256 (32 bytes), a reference to its ``collected_at`` (most hosts
share one string) and the number of its PLAT-02 values among the fleet's distinct ones:
about 60 bytes a host. Every ``str`` and ``Path`` is made when asked for.
"""

from __future__ import annotations

import bisect
import marshal
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, overload

from validator.lazy import Made
from validator.rules.rulemodel import Scope

if TYPE_CHECKING:
    from validator.report.model import Finding, JSONValue, Subject

# what ``replay._read_chunk`` records of a host: (position, name, file digest, collected_at,
# (hostname, the other PLAT-02 values), itemized findings, (why its file's name does not say
# whose facts it holds, or None: evidence.file_problem; the probe's tool_version, machine ID,
# board serial, its GPU UUIDs' keys: evidence.uuid_keys))
HostRecord: TypeAlias = ("tuple[int, str, bytes, JSONValue, tuple[str, dict[str, JSONValue]], list[Finding], "
                         "tuple[str | None, JSONValue, str | None, str | None, bytes]]")


class StringTable(Made):
    """Strings in one UTF-8 buffer, each ``str`` made when read. ``surrogatepass``: any
    ``str`` (a name a JSON document spelled with a lone surrogate escape) comes back as
    it went in."""

    __slots__ = ("_blob", "_ends")

    def __init__(self, strings: Iterable[str] = ()):
        self._blob = bytearray()
        self._ends = array("Q")
        self.extend(strings)

    def append(self, s: str) -> None:
        self._blob += s.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._blob))

    def extend(self, strings: Iterable[str]) -> None:
        for s in strings:
            self.append(s)

    def __len__(self) -> int:
        return len(self._ends)

    def _made(self, i: int) -> str:
        ends = self._ends
        return self._blob[ends[i - 1] if i else 0 : ends[i]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        blob, start = self._blob, 0
        for end in self._ends:
            yield blob[start:end].decode("utf-8", "surrogatepass")
            start = end


class FactsFiles(Made):
    """The facts files, in order, each ``Path`` made when asked for (an item or a slice:
    a list): what is kept of a file is its name's bytes."""

    __slots__ = ("_names", "_parents", "_starts")

    def __init__(self) -> None:
        self._names = StringTable()
        self._parents: list[Path] = []
        self._starts: list[int] = []

    def add(self, parent: Path, names: list[str]) -> None:
        self._starts.append(len(self._names))
        self._parents.append(parent)
        self._names.extend(names)

    def __len__(self) -> int:
        return len(self._names)

    def _made(self, i: int) -> Path:
        return self._parents[bisect.bisect_right(self._starts, i) - 1] / self._names[i]


class HostTable:
    """A streamed replay's hosts, in file order (``add``, a chunk of ``_read_chunk``
    records at a time): subject name, file digest, ``collected_at``, the PLAT-02 values
    (one dict per distinct set, a number a host) and the hostname only where it is not
    the name. Itemized findings (a failing host's) are kept as they come; a host with
    none keeps nothing for them."""

    __slots__ = ("_ages", "_checked", "_final", "_hostnames", "_itemized", "_key", "_now", "_problems", "_rests",
                 "_same", "collected", "digests", "machine_ids", "names", "probe_versions", "rest_ids", "serials")

    def __init__(self) -> None:
        self.names = StringTable()
        self.digests = bytearray()
        self.collected: list[JSONValue] = []  # each host's collected_at, as its document had it
        self.rest_ids = array("I")
        self._rests: list[dict[str, JSONValue]] = []
        self._key: dict[bytes, int] = {}
        self._same: dict[str, str] = {}
        self._hostnames: dict[int, str] = {}
        self._itemized: list[tuple[int, list[Finding]]] = []
        self._final: Sequence[str] = ()
        # the machine's identity as its document recorded it ("" where unread), and the
        # spec-check that probed it (one str per distinct version)
        self.probe_versions: list[JSONValue] = []
        self.machine_ids = StringTable()
        self.serials = StringTable()
        self._problems: dict[int, str] = {}  # host number -> why its facts are not its own
        self._now: datetime | None = None
        self._checked = True
        self._ages: dict[str, dict[str, JSONValue]] = {}

    def add(self, records: list[HostRecord]) -> None:
        """A chunk's records (position, name, digest, collected_at, (hostname, PLAT-02
        values), itemized findings): its hosts share value dicts, each looked up once."""
        seen: dict[int, int] = {}  # id of a chunk's value dict -> its number (records hold them)
        for _, name, digest, collected, (hostname, rest), itemized, ident in records:
            k = len(self.names)
            r = seen.get(id(rest))
            if r is None:
                key = marshal.dumps(rest, 2)
                r = self._key.get(key)
                if r is None:
                    r = self._key[key] = len(self._rests)
                    self._rests.append(rest)
                seen[id(rest)] = r
            self.names.append(name)
            self.digests += digest
            if isinstance(collected, str):  # one str for the fleet, not one a chunk
                collected = self._same.setdefault(collected, collected)
            self.collected.append(collected)
            self.rest_ids.append(r)
            _, version, machine_id, serial, _ = ident
            self.probe_versions.append(self._same.setdefault(version, version) if isinstance(version, str)
                                       else version)
            self.machine_ids.append(machine_id or "")
            self.serials.append(serial or "")
            if hostname != name:
                self._hostnames[k] = hostname
            if itemized:
                self._itemized.append((k, itemized))

    def final_names(self, rename: Callable[[Sequence[str]], Sequence[str]]) -> Sequence[str]:
        """The hosts' names as ``rename`` gives them (``replay.host_names``); a renamed
        host's hostname is its subject name, whatever hostname it recorded (as
        ``cluster.facts.rekey`` makes it on the itemized path)."""
        names = rename(self.names)
        if names is not self.names:
            for k, (was, final) in enumerate(zip(self.names, names, strict=True)):
                if was != final:
                    self._hostnames[k] = was
        self._final = names
        return names

    def judged(self, problems: dict[int, str], now: datetime, *, checked: bool = True) -> None:
        """What ``evidence.Ledger.finish`` found (host number -> why its facts are not its
        own; ``checked``: whether it looked), and this run's clock, for each host's
        ``own_facts`` and ``facts_age``."""
        self._problems, self._now, self._checked = problems, now, checked

    def fields(self, k: int) -> dict[str, JSONValue]:
        """Host k's PLAT-02 fields (``cluster.facts.host_fields``) and its facts' evidence
        fields (``cluster.evidence``), made when asked for."""
        from validator.cluster.evidence import age, own_facts
        from validator.facts.document import value

        hostname = self._hostnames.get(k)
        out = {"hostname": value(hostname if hostname is not None else self._final[k]),
               **self._rests[self.rest_ids[k]]}
        if self._now is not None:
            collected = self.collected[k]
            if isinstance(collected, str):  # most hosts share a few: judged once each
                got = self._ages.get(collected)
                if got is None:
                    got = self._ages[collected] = age(collected, self._now)
            else:  # not a time (a number, a list): its error, never a cache key
                got = age(collected, self._now)
            out["own_facts"] = own_facts(self._problems.get(k), checked=self._checked)
            out["facts_age"] = got
        return out

    def identity(self, k: int) -> tuple[str | None, str | None, str | None]:
        """Host k's (probe version, machine ID, board serial), None where not recorded."""
        version = self.probe_versions[k]
        return (version if isinstance(version, str) and version else None,
                self.machine_ids[k] or None, self.serials[k] or None)

    def gpu_hosts(self) -> int:
        """How many hosts count GPUs."""
        from validator.cluster.facts import has_gpus

        return sum(n for r, n in Counter(self.rest_ids).items() if has_gpus(self._rests[r]))

    def itemized(self) -> list[Finding]:
        """The itemized findings, each on its host's final name."""
        out: list[Finding] = []
        names = self._final
        for k, found in self._itemized:
            name = names[k]
            out.extend(f if f.subject == name else replace(f, subject=name) for f in found)
        self._itemized = []
        return out


class HostSubjects(Made):
    """A replayed fleet's subject records, each made when read (a report's ``subjects``):
    what is kept per host is its name (in a ``StringTable``), the 32 bytes of its file's
    SHA-256 and a reference to its ``collected_at``, not a ``Subject`` and its two
    strings. ``files``: host k's facts file, named as its source (``replay:FILE``; the
    host's name where not given). ``+`` another sequence of subjects (the cluster's) gives
    them after the hosts'."""

    __slots__ = ("_collected", "_digests", "_files", "_identity", "_names", "_tail")

    def __init__(self, names: Sequence[str], digests: bytes | bytearray, collected: list[JSONValue],
                 tail: tuple[Subject, ...] = (), files: Sequence[object] | None = None,
                 identity: Callable[[int], tuple[str | None, str | None, str | None]] | None = None):
        self._names, self._digests, self._collected, self._tail = names, digests, collected, tail
        self._files, self._identity = files, identity

    def __len__(self) -> int:
        return len(self._names) + len(self._tail)

    def _host(self, i: int, name: str) -> Subject:
        from validator.report.model import Subject

        digest = "sha256-file:" + self._digests[32 * i : 32 * i + 32].hex()
        file = self._files[i] if self._files is not None and i < len(self._files) else name
        ident = self._identity(i) if self._identity is not None else (None, None, None)
        collected = self._collected[i]
        return Subject(name, Scope.NODE, digest, collected if isinstance(collected, str) else None,
                       f"replay:{file}", *ident)

    @overload
    def __getitem__(self, i: int) -> Subject: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Subject, ...]: ...

    def __getitem__(self, i: int | slice) -> Subject | tuple[Subject, ...]:
        got = super().__getitem__(i)
        return tuple(got) if isinstance(i, slice) else got  # as a report's subjects

    def _made(self, i: int) -> Subject:
        n = len(self._names)
        return self._host(i, self._names[i]) if i < n else self._tail[i - n]

    def __iter__(self) -> Iterator[Subject]:
        for i, name in enumerate(self._names):
            yield self._host(i, name)
        yield from self._tail

    def __add__(self, other: Iterable[Subject]) -> HostSubjects:
        return HostSubjects(self._names, self._digests, self._collected, (*self._tail, *other), self._files,
                            self._identity)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (HostSubjects, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HostSubjects({len(self._names)} hosts, {len(self._tail)} more)"
