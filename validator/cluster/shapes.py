"""Node documents that repeat an earlier one's bytes but for the strings naming the host.

Why this exists: most nodes of a fleet are recorded from one image, and their facts files
differ only in the host's name (``subject.name``, ``subject.hostname``,
``subject.address``, the value of ``host.hostname``) and ``collected_at``. Parsing such a
file is the cost a replay cannot avoid; validating its 600 facts and keying them for the
remembered verdicts (``validator.cluster.fleet``) cost as much again. A file whose bytes
are a known document's bytes with other host names in those places is that document with
those strings replaced, so it gets that document's verdicts on its own host without being
parsed, validated or evaluated. Any other file takes the full path.

Why a match is exact (no guessing): a *shape* is made only from a document that was
parsed and validated, and only when

* its bytes hold no ``\\"`` (so every ``"`` byte delimits a JSON string) and no ``\\u``
  (the only escape that spells one of the characters below: a host string written
  escaped in its place and plainly elsewhere would be counted at the wrong token);
* each masked string is made of ``[A-Za-z0-9._:@+-]`` (no quote, no backslash, no
  space), and ``"that string"`` occurs in the bytes exactly as many times as the places
  above that hold it. With no escaped quote, ``"x"`` in valid JSON is the whole string
  token ``x`` (after a closing quote JSON allows only ``, : ] }`` or white space), so
  every occurrence is one of those places, and the bytes between them (the *segments*)
  hold the rest of the document;
* no node rule reads ``host.hostname`` (otherwise its value is not masked, and a host
  named after it gets no shape: the count differs);
* and, against any token this argument overlooks, a probe: the shape's bytes with other
  strings in its slots must parse to the document with those strings in those places and
  nothing else changed (``_probed_hosts``: one parse per shape made).

A file matches when it is the segments, in order, with a string of the same characters
(non-empty) in each slot, and the same string in slots that held one string. Then its
JSON tokens are the shape's tokens but for those strings: it is valid UTF-8 and valid
JSON exactly when the shape's document was, parses to that document with the host's
strings in those places, and every fact a node rule reads is byte for byte the same, so
its verdicts are the same (each finding re-homed on this host, as remembered verdicts
are). Shapes are few and bounded (``KEEP``): memory does not grow with the fleet.

**Value slots** (``widen``). Recorded nodes also differ in a few fact values and sources:
each GPU's UUID and energy counter, the pid of the slurmd whose limits MEM-02 read. From
two shapes of two parsed documents A and B whose segments have equal lengths, the bytes
that differ (found with one XOR) must each lie inside a fact's value or source token
(after ``"value": ``: a string without escapes, or a JSON number; after ``"source": ``: such
a string) spanning the same bytes in both, and the parsed facts must differ in exactly as
many values and sources, of the same kinds, in the same (document) order; each such token
becomes a value slot, holding the value (or source) at that path. The shape must then
read B back and give exactly B's facts (its values patched into A's, compared type for
type), and a document with distinct values in the slots must parse to the facts the
shape patches, which proves each slot's path (reading B back alone does not: a key given
twice puts its last value at the first key's place, and two equal values of B can be
swapped). A file that matches has A's tokens but for
host strings and value slots, each still one token of its kind (a string's text without
quote, backslash or control character, UTF-8; a JSON number): it is valid as A was
(validation checks neither a value's type nor a source but for being a string), and its
facts are A's with its own values at those paths. The rules that read a slotted fact (by
the facts and fields their remembered verdicts are keyed by, ``FleetEvaluator.affected``)
are evaluated on those facts; every other rule reads exactly what it read of A and
repeats A's verdicts on this host.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from validator.cluster.spans import FoldAdd, TraceStep
    from validator.report.model import Finding, JSONValue

# where a fact value sits: (fact, key) or (fact, item number, field, key)
FactPath: TypeAlias = "tuple[str, str] | tuple[str, int, str, str]"

# the characters of host names, addresses and timestamps: no quote, backslash or space
_SLOT = re.compile(rb"[A-Za-z0-9._:@+-]+")
# a value slot: a string's text with no escape (no quote, backslash or control character),
# or a JSON number (at most 30 characters: json's own reading of longer ones may refuse)
_TEXT = re.compile(rb'[^"\\\x00-\x1f]*')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]{0,20})(?:\.[0-9]{1,20})?(?:[eE][+-]?[0-9]{1,3})?")
_ANCHOR = b'"value": '
_SOURCE = b'"source": '

KEEP = 8  # distinct shapes remembered (the healthy image and a few faulty variants)

ROLE_NAME, ROLE_HOSTNAME, ROLE_ADDRESS, ROLE_FACT_HOSTNAME, ROLE_COLLECTED = range(5)


class Shape:
    """A validated, evaluated node document with its host's strings cut out: the
    ``segments`` between the slots, which string (``groups``) fills each slot, and what the
    document gave (its itemized findings and fold additions, PLAT-02 fields but hostname,
    and the schema note of an older spec-check)."""

    __slots__ = ("address", "adds", "affected", "base", "collected", "facts", "groups", "hostname", "itemized",
                 "kinds", "older", "paths", "rest", "roles", "segments", "strings", "texts", "tool_version", "trace")

    def __init__(self, segments: list[bytes], groups: list[int], roles: dict[int, int],
                 strings: list[bytes]):
        self.segments = segments
        self.groups = groups  # slot i holds string number groups[i] (-1 - v: value slot v)
        self.roles = roles  # ROLE_NAME etc. -> string number
        self.strings = strings  # this document's strings, by number
        self.texts = [b.decode("ascii") for b in strings]  # the same, as text (shared)
        self.itemized: list[Finding] = []
        self.adds: list[FoldAdd] = []
        self.rest: dict[str, JSONValue] = {}
        self.hostname: str | None = None  # subject.hostname where it is not a slot
        self.collected: str | None = None  # collected_at where it is not a slot
        self.tool_version: JSONValue = None  # the document's tool_version (the probe's spec-check)
        self.address: JSONValue = None  # subject.address where it is not a slot
        self.older: dict[str, JSONValue] | None = None
        # a shape with value slots (``widen``): each slot's kind ("s" string, "n" number)
        # and the fact value it holds (fact,) or (fact, item number, field); the facts it
        # patches, the rules that read a slot, the per-rule verdicts the others repeat
        self.kinds: list[str] = []
        self.base: list[bytes] = []  # the slots' texts in the document the facts are
        self.paths: list[FactPath] = []
        self.facts: dict[str, JSONValue] = {}
        self.affected: set[int] = set()
        self.trace: list[TraceStep] = []

    def match(self, raw: bytes) -> tuple[list[bytes], list[bytes]] | None:
        """(the strings ``raw`` has in the host slots, the texts in the value slots), or
        None when it is not this shape."""
        segs = self.segments
        if not raw.startswith(segs[0]):
            return None
        pos = len(segs[0])
        found: list[bytes | None] = [None] * len(self.strings)
        values: list[bytes] = []
        fullmatch = _SLOT.fullmatch
        for i, g in enumerate(self.groups):
            if g < 0:  # a value slot: a string's text without escapes, or a JSON number
                if self.kinds[-1 - g] == "s":
                    end = raw.find(b'"', pos)
                    if end < 0 or _TEXT.fullmatch(raw, pos, end) is None:
                        return None
                else:
                    m = _NUMBER.match(raw, pos)
                    if m is None:
                        return None
                    end = m.end()
                values.append(raw[pos:end])
            else:
                end = raw.find(b'"', pos)
                if end < 0:
                    return None
                s = raw[pos:end]
                if found[g] is None:
                    if fullmatch(s) is None:
                        return None
                    found[g] = s
                elif found[g] != s:
                    return None
            seg = segs[i + 1]
            if not raw.startswith(seg, end):
                return None
            pos = end + len(seg)
        if pos != len(raw):
            return None
        return found, values  # type: ignore[return-value]

    def patched(self, found: list[bytes], values: list[bytes]) -> dict[str, JSONValue] | None:
        """This shape's facts with the host's strings and the value slots' texts in their
        places (copied where changed, never mutated): the facts of the file ``match``
        read them from. None when a text is not UTF-8."""
        facts = dict(self.facts)
        if ROLE_FACT_HOSTNAME in self.roles:
            facts["host.hostname"] = {**facts["host.hostname"],
                                      "value": self.role(found, ROLE_FACT_HOSTNAME)}
        copied: dict[Any, Any] = {}  # Any: copies of facts, items and fields, by name or path
        for kind, path, text in zip(self.kinds, self.paths, values, strict=True):
            if kind == "s":
                try:
                    v: JSONValue = text.decode("utf-8")
                except UnicodeDecodeError:
                    return None
            else:  # the numbers rule of every reader: beyond any real value, parsed in full
                from validator.values.numbers import Beyond, float_text, int_text

                try:
                    word = text.decode("ascii")
                    v = float_text(word) if any(c in word for c in ".eE") else int_text(word)
                except Beyond:
                    return None  # read as a whole document, which refuses it naming the field
            name = path[0]
            fact = copied.get(name)
            if fact is None:
                fact = copied[name] = dict(facts[name])
                facts[name] = fact
            if len(path) == 2:  # (fact, key)
                fact[path[1]] = v
                continue
            key = (name, path[1])
            member = copied.get(key)
            if member is None:
                if (name, "items") not in copied:
                    fact["items"] = list(fact["items"])
                    copied[(name, "items")] = True
                member = copied[key] = dict(fact["items"][path[1]])
                member["fields"] = dict(member["fields"])
                fact["items"][path[1]] = member
            fields = member["fields"]
            field = copied.get((name, path[1], path[2]))
            if field is None:
                field = copied[(name, path[1], path[2])] = fields[path[2]] = dict(fields[path[2]])
            field[path[3]] = v
        return facts

    def claims(self, found: list[bytes], facts: dict[str, JSONValue]) -> tuple[str, ...]:
        """The names the matched file's document gives its host, as
        ``evidence.names_of`` reads them from a parsed one: subject name, address and
        hostname, and ``host.hostname``'s value (the host's strings where they are slots)."""
        fact = facts.get("host.hostname")
        told = fact.get("value") if isinstance(fact, dict) else None
        said = (self.role(found, ROLE_NAME), self.role(found, ROLE_ADDRESS, _text(self.address)),
                self.role(found, ROLE_HOSTNAME, self.hostname), self.role(found, ROLE_FACT_HOSTNAME, _text(told)))
        return tuple(dict.fromkeys(n for n in said if n))

    def role(self, found: list[bytes], role: int, default: str | None = None) -> str | None:
        g = self.roles.get(role)
        if g is None:
            return default
        b = found[g]
        return self.texts[g] if b == self.strings[g] else b.decode("ascii")


def _text(v: JSONValue) -> str | None:
    return v if isinstance(v, str) else None


def make(raw: bytes, doc: dict[str, JSONValue], hostname_read: bool) -> Shape | None:
    """The shape of a parsed, validated node document, or None when one cannot be made
    exactly (module docstring)."""
    if b'\\"' in raw or b"\\u" in raw:  # a \u escape may spell a host string another way
        return None
    subject = doc["subject"]
    places: dict[int, JSONValue] = {
        ROLE_NAME: subject.get("name"),
        ROLE_HOSTNAME: subject.get("hostname"),
        ROLE_ADDRESS: subject.get("address"),
        ROLE_COLLECTED: doc.get("collected_at"),
    }
    if not hostname_read:
        fact = doc["facts"].get("host.hostname")
        places[ROLE_FACT_HOSTNAME] = fact.get("value") if type(fact) is dict else None
    strings: list[bytes] = []
    roles: dict[int, int] = {}
    wanted: list[int] = []  # how many places hold each string
    for role, text in places.items():
        if type(text) is not str:
            if role == ROLE_NAME:
                return None
            continue
        b = text.encode("utf-8")
        if _SLOT.fullmatch(b) is None:
            if role == ROLE_NAME:
                return None
            continue  # not masked: it must then be the same bytes in a matching file
        if b in strings:
            roles[role] = strings.index(b)
            wanted[roles[role]] += 1
        else:
            roles[role] = len(strings)
            strings.append(b)
            wanted.append(1)
    slots: list[tuple[int, int, int]] = []  # (start, end, string number)
    for g, b in enumerate(strings):
        token = b'"' + b + b'"'
        at = raw.find(token)
        while at >= 0:
            slots.append((at + 1, at + 1 + len(b), g))
            # overlapping: in '"k":":"' the token '":"' is the separator's and the value's
            at = raw.find(token, at + 1)
        if sum(1 for s in slots if s[2] == g) != wanted[g]:
            return None
    slots.sort()
    segments, pos = [], 0
    for start, end, _ in slots:
        segments.append(raw[pos:start])
        pos = end
    segments.append(raw[pos:])
    shape = Shape(segments, [g for _, _, g in slots], roles, strings)
    return shape if _probed_hosts(shape, doc) else None


def _leaves(fa: dict[str, JSONValue], fb: dict[str, JSONValue]) -> list[tuple[FactPath, str]] | None:
    """Where ``fb``'s facts differ from ``fa``'s, in document order: (path, kind), a path
    being (fact, key) or (fact, item number, field, key), the key "value" (kind "s": both
    strings, "n": both numbers, not booleans) or "source" (both strings); None when they
    differ anywhere else."""
    def kind(key: str, x: JSONValue, y: JSONValue) -> str | None:
        if type(x) is str and type(y) is str:
            return "s"
        if key == "value" and type(x) in (int, float) and type(y) in (int, float):
            return "n"
        return None

    def fact(path: tuple[str] | tuple[str, int, str], x: JSONValue, y: JSONValue,
             out: list[tuple[FactPath, str]]) -> bool:
        """A fact's differing keys (a collection's items, one level down)."""
        if type(x) is not dict or type(y) is not dict or list(x) != list(y):
            return False
        for key in x:
            if x[key] == y[key]:
                continue
            k = kind(key, x[key], y[key]) if key in ("value", "source") else None
            if k is not None:
                out.append(((*path, key), k))
                continue
            if len(path) > 1 or key != "items" or type(x[key]) is not list or type(y[key]) is not list:
                return False
            if len(x[key]) != len(y[key]):
                return False
            for i, (ma, mb) in enumerate(zip(x[key], y[key], strict=True)):
                if ma == mb:
                    continue
                if (type(ma) is not dict or type(mb) is not dict or list(ma) != list(mb)
                        or ma.get("id") != mb.get("id") or type(ma.get("fields")) is not dict
                        or type(mb.get("fields")) is not dict or list(ma["fields"]) != list(mb["fields"])):
                    return False
                for fname, va in ma["fields"].items():
                    vb = mb["fields"][fname]
                    if va != vb and not fact((path[0], i, fname), va, vb, out):
                        return False
        return True

    out: list[tuple[FactPath, str]] = []
    if list(fa) != list(fb):
        return None
    for name, x in fa.items():
        # (1 == 1.0 == true: such a difference is no difference here, shows in the bytes,
        # and refuses the shape)
        if x != fb[name] and not fact((name,), x, fb[name], out):
            return None
    return out


def _token(seg: bytes, other: bytes, lo: int, hi: int) -> tuple[int, int, str] | None:
    """The fact value or source token of ``seg`` (a segment) that holds bytes ``lo:hi``, as
    (start, end, kind) of its text, when it spans the same bytes in ``other``; else None."""
    at_value, at_source = seg.rfind(_ANCHOR, 0, lo), seg.rfind(_SOURCE, 0, lo)
    if at_value < 0 and at_source < 0:
        return None
    t = at_value + len(_ANCHOR) if at_value > at_source else at_source + len(_SOURCE)
    if seg[t : t + 1] == b'"':
        end = seg.find(b'"', t + 1)
        if lo < t + 1 or hi > end or other[t : t + 1] != b'"' or other.find(b'"', t + 1) != end:
            return None
        return t + 1, end, "s"
    if at_source > at_value:
        return None
    m, n = _NUMBER.match(seg, t), _NUMBER.match(other, t)
    if m is None or n is None or m.end() != n.end() or lo < t or hi > m.end():
        return None
    return t, m.end(), "n"


def widen(a: Shape, b: Shape, b_facts: dict[str, JSONValue]) -> Shape | None:
    """A shape with value slots from two shapes (host slots only) of two documents that
    differ only in some fact values of the same kind (a GPU's UUID, an energy counter):
    ``a``'s segments cut at each value that differs, each cut a value slot. None when
    they differ in anything else, or in a way the bytes and the parsed facts do not
    agree on (bytes of equal length, differing only inside such values, one to one and in
    order with the parsed differences)."""
    if a.groups != b.groups or not a.facts or any(g < 0 for g in a.groups):
        return None
    if [len(x) for x in a.segments] != [len(x) for x in b.segments]:
        return None
    leaves = _leaves(a.facts, b_facts)
    if leaves and ROLE_FACT_HOSTNAME in a.roles:  # a host slot already
        leaves = [x for x in leaves if x[0] != ("host.hostname", "value")]
    if not leaves:
        return None
    cuts: list[tuple[int, int, int, str]] = []  # (segment, start, end, kind)
    for k, (sa, sb) in enumerate(zip(a.segments, b.segments, strict=True)):
        if sa == sb:
            continue
        diff = (int.from_bytes(sa, "big") ^ int.from_bytes(sb, "big")).to_bytes(len(sa), "big")
        for m in re.finditer(rb"[^\x00]+", diff):
            tok = _token(sa, sb, m.start(), m.end())
            if tok is None:
                return None
            if not cuts or cuts[-1][:3] != (k, tok[0], tok[1]):
                cuts.append((k, *tok))
    if len(cuts) != len(leaves) or any(c[3] != kind for c, (_, kind) in zip(cuts, leaves, strict=True)):
        return None
    segments: list[bytes] = []
    groups: list[int] = []
    v = 0
    for k, seg in enumerate(a.segments):
        pos = 0
        for ck, lo, hi, _ in cuts:
            if ck == k:
                segments.append(seg[pos:lo])
                groups.append(-1 - v)
                v += 1
                pos = hi
        segments.append(seg[pos:])
        if k < len(a.groups):
            groups.append(a.groups[k])
    wide = Shape(segments, groups, a.roles, a.strings)
    # what ``a`` holds in the slots: a file with the same is ``a`` but for its host strings
    wide.base = [a.segments[k][lo:hi] for k, lo, hi, _ in cuts]
    wide.itemized, wide.adds, wide.rest = a.itemized, a.adds, a.rest
    wide.kinds = [kind for _, kind in leaves]
    wide.paths = [path for path, _ in leaves]
    wide.facts = a.facts
    wide.trace, wide.older, wide.hostname, wide.collected = a.trace, a.older, a.hostname, a.collected
    wide.tool_version, wide.address = a.tool_version, a.address
    return wide


class Shapes:
    """The shapes seen, most recently matched first (at most ``KEEP``).

    Where files stop repeating (each node's GPUs recorded with their own UUIDs and
    counters), making a shape of every file costs about half a parse and never pays: after
    ``2 * KEEP`` misses in a row, one file in ``RETRY`` is made a shape (so a run of
    repeated files later in the fleet is still found)."""

    RETRY = 64

    def __init__(self, hostname_read: bool):
        self.hostname_read = hostname_read
        self.known: list[Shape] = []
        self.hits = 0  # files that matched a shape: for the tests
        self.misses = 0  # files in a row that matched none

    def match(self, raw: bytes) -> tuple[Shape, tuple[list[bytes], list[bytes]]] | None:
        """The shape ``raw`` matches (the most recently matched first)."""
        known = self.known
        for i, shape in enumerate(known):
            found = shape.match(raw)
            if found is not None:
                if i:
                    known.insert(0, known.pop(i))
                self.hits += 1
                self.misses = 0
                return shape, found
        self.misses += 1
        return None

    def learn(self, raw: bytes, doc: dict[str, JSONValue]) -> Shape | None:
        """Make and keep ``doc``'s shape (the caller fills in what it gave: ``itemized``,
        ``adds``, ``trace``, ``rest``, ``hostname``, ``older``); None when files have
        stopped repeating (class docstring) or no shape can be made."""
        if self.misses > 2 * KEEP and self.misses % self.RETRY:
            return None
        shape = make(raw, doc, self.hostname_read)
        if shape is not None:
            shape.facts = doc["facts"]
            shape.hostname, shape.collected = doc["subject"].get("hostname"), doc.get("collected_at")
            shape.tool_version, shape.address = doc.get("tool_version"), doc["subject"].get("address")
            self.known.insert(0, shape)
            del self.known[KEEP:]
        return shape

    def widen(self, shape: Shape, raw: bytes) -> Shape | None:
        """A shape with value slots from ``shape`` (just learnt from ``raw``) and the
        shape learnt before it with host slots only, kept first when it reads ``raw`` back
        as its own document (checked: the facts it patches are ``raw``'s, type for type)."""
        import marshal

        earlier = next((s for s in self.known[1:] if not s.kinds), None)
        wide = None if earlier is None else widen(earlier, shape, shape.facts)
        if wide is None:
            return None
        got = wide.match(raw)
        facts = None if got is None else wide.patched(*got)
        if facts is None or marshal.dumps(facts, 2) != marshal.dumps(shape.facts, 2) or not _probed(wide):
            return None
        self.known.insert(0, wide)
        del self.known[KEEP:]
        return wide


def _probed(wide: Shape) -> bool:
    """Whether each value slot of ``wide`` is the fact value at its path, as the parser
    places it: a document whose slots hold distinct values parses to the facts ``patched``
    gives. (Reading ``raw`` back proves less: with a key given twice, JSON keeps the last
    value at the first key's place, so the bytes' order is not the facts' order, and two
    slots of equal values in ``raw`` may be swapped.) One parse, once per shape made."""
    import marshal

    from validator.errors import SpecCheckError
    from validator.facts.document import parse

    parts = [wide.segments[0]]
    for i, g in enumerate(wide.groups):
        if g < 0:
            v = -1 - g
            parts.append(b"%d" % (1_000_000_007 + v) if wide.kinds[v] == "n" else b"probe-%d" % v)
        else:
            parts.append(wide.strings[g])
        parts.append(wide.segments[i + 1])
    probe = b"".join(parts)
    got = wide.match(probe)
    facts = None if got is None else wide.patched(*got)
    if facts is None:
        return False
    try:
        doc = parse(probe, "probe")
    except SpecCheckError:
        return False
    return marshal.dumps(facts, 2) == marshal.dumps(doc["facts"], 2)


def _probed_hosts(shape: Shape, doc: dict[str, JSONValue]) -> bool:
    """Whether ``shape``'s host slots are exactly the places the module docstring names:
    its bytes with another string in each slot parse to ``doc`` with those strings in
    those places, and nothing else changed. (The argument above says so; this checks it
    once per shape made, at the cost of one parse, against any token it overlooked.)"""
    import marshal

    from validator.errors import SpecCheckError
    from validator.facts.document import parse

    texts = [b"probe-%d" % g for g in range(len(shape.strings))]
    parts = [shape.segments[0]]
    for i, g in enumerate(shape.groups):
        parts += (texts[g], shape.segments[i + 1])
    try:
        got = parse(b"".join(parts), "probe")
    except SpecCheckError:
        return False
    want = {**doc, "subject": dict(doc["subject"]), "facts": dict(doc["facts"])}
    for role, g in shape.roles.items():
        text = texts[g].decode("ascii")
        if role == ROLE_COLLECTED:
            want["collected_at"] = text
        elif role == ROLE_FACT_HOSTNAME:
            want["facts"]["host.hostname"] = {**want["facts"]["host.hostname"], "value": text}
        else:
            key = ("name", "hostname", "address")[(ROLE_NAME, ROLE_HOSTNAME, ROLE_ADDRESS).index(role)]
            want["subject"][key] = text
    return marshal.dumps(got, 2) == marshal.dumps(want, 2)
