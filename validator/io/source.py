"""Reading one config file safely, with the line of every key.

Lint runs in CI and pre-commit on files nobody vetted, so reading is defensive: a size
cap, UTF-8 only, no binary, YAML through ``yaml.compose`` (nodes, never objects: a
``!!python/object`` tag is reported, never constructed), a node budget against alias
bombs, and RecursionError caught for deep nesting. Every failure is a ``ReadError``
naming the file and line, which the job model records as an error instead of stopping
the run, so the other files of the job are still linted.

A parsed file is a ``Tree``: plain values plus ``lines`` (path tuple -> line), so a
reader can say ``trainer.precision`` is at line 12 without a special dict type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import ModuleType

    from validator.values import JSONValue

# The largest real config seen (MaxText base.yml) is 78 KB; 4 MiB is 50x that, and keeps
# a hostile file's parse within seconds and a few hundred MB.
MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 1_000_000  # YAML nodes, each alias counted as a copy of what it names
# Scalar text, each alias counted as a copy of what it names: nodes alone let one 100 KB
# string aliased 20,000 times through (2 GB once a reader or renderer walks it)
MAX_EXPANDED_BYTES = 64 * 1024 * 1024
MISSING: object = object()
Path_ = tuple["JSONValue", ...]  # a key path: mapping keys (a YAML key is any scalar) and list indices


class ReadError(Exception):
    def __init__(self, message: str, *, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


class LineDict(dict):  # type: ignore[type-arg, unused-ignore]
    """A mapping read with ``lined=True``: its own line and each key's line."""

    line: int = 0
    key_lines: dict[JSONValue, int]


class LineList(list):  # type: ignore[type-arg, unused-ignore]
    """A sequence read with ``lined=True``: its own line and each item's line."""

    line: int = 0
    item_lines: list[int]


@dataclass
class Tree:
    """A parsed structured file: ``data`` and the line of each key path."""

    file: str
    data: JSONValue  # the parsed file: open data, before any reader validates it
    lines: dict[Path_, int] = field(default_factory=dict)
    # JSON keys written twice in one object: the lines of the occurrences json.loads ignored
    repeated: dict[Path_, list[int]] = field(default_factory=dict)
    # a multi-document YAML stream (``---``): every document and its key lines; ``data``
    # and ``lines`` are the first one until a reader picks another (``use_document``)
    docs: list[JSONValue] = field(default_factory=list)
    doc_lines: list[dict[Path_, int]] = field(default_factory=list)

    def use_document(self, i: int) -> None:
        """Read document ``i`` of a multi-document file (a Service, then the job)."""
        self.data, self.lines = self.docs[i], self.doc_lines[i]

    def get(self, *path: JSONValue, default: JSONValue = MISSING) -> JSONValue:
        node = self.data
        for part in path:
            in_dict = isinstance(node, dict) and part in node
            in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            if in_dict or in_list:
                node = node[part]
            else:
                return default
        return node

    def line(self, *path: JSONValue) -> int | None:
        for n in range(len(path), 0, -1):
            if path[:n] in self.lines:
                return self.lines[path[:n]]
        return None


def read_text(path: Path, *, cap: int = MAX_BYTES, what: str = "training config", too_big: str = "") -> str:
    """The file's text; ReadError for unreadable, huge, binary, non-UTF-8 or non-regular files.

    Every input a job is read from goes through here (configs, and training logs with their
    own ``cap``), and from here through ``safeio`` (the one opener of every input), so each
    is bounded and refused the same way; ``what`` names the input in the messages,
    ``too_big`` says what to do about a file over the cap."""
    from validator.io.safeio import InputError, read_bytes

    try:
        raw = read_bytes(path, cap=cap, what=what, too_big=too_big)
    except InputError as exc:
        raise ReadError(exc.problem, line=exc.line) from None
    if b"\x00" in raw[:8192]:
        raise ReadError(f"binary data, not a text {what.split()[-1]}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line) from None
    return text.removeprefix("\ufeff")


# ---- YAML -------------------------------------------------------------------------------


def parse_yaml(text: str, file: str, *, lined: bool = False) -> Tree:
    """Plain values and key lines straight from libyaml's event stream.

    No node graph is composed and no constructor runs on a tag: events become values
    as they come, so time and memory follow the text (a 4 MiB file parses in seconds).
    Aliases share the anchored value and charge its size to node and byte budgets, so a
    billion laughs is stopped as an alias bomb while an alias-free file is never called one.
    What PyYAML's ``safe_load`` (what the frameworks use) rejects is a ReadError here too:
    a standard tag whose value does not construct (``!!int abc``), a merge of a
    non-mapping, a mapping or list as a key. ``lined`` (rule packs, profiles, waivers):
    containers are ``LineDict``/``LineList`` and a key written twice is an error.
    """
    import yaml

    try:
        return _EventReader(yaml, file, lined=lined).read(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ReadError(
            f"invalid YAML: {exc.problem or exc.context}", line=mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise ReadError(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ReadError("invalid YAML: nested too deeply") from None


_STD = "tag:yaml.org,2002:"
_STD_TAGS = {
    "str",
    "int",
    "float",
    "bool",
    "null",
    "map",
    "seq",
    "timestamp",
    "binary",
    "set",
    "omap",
    "pairs",
    "merge",
    "value",
}
_MAP_TAGS = {"map", "set"}  # the standard tags safe_load constructs from a mapping
_SEQ_TAGS = {"seq", "omap", "pairs"}  # and from a sequence
MAX_DEPTH = 256  # real configs nest < 20 deep; readers and str() recurse on the values


class _Frame:
    __slots__ = ("anchor", "has_key", "is_map", "key", "key_lines", "line", "merging", "path", "start",
                 "start_bytes", "value")

    def __init__(self, is_map: bool, path: Path_, anchor: str | None, start: int, line: int):
        self.is_map = is_map
        self.value: JSONValue = {} if is_map else []  # a dict or list (LineDict or LineList when lined)
        self.path = path
        self.anchor = anchor
        self.start = start
        self.start_bytes = 0  # expanded bytes when the node opened (alias budget)
        self.line = line
        self.key: JSONValue = None
        self.has_key = False
        self.merging = False
        self.key_lines: dict[JSONValue, int] = {}


class _EventReader:
    """Turns parser events into plain values, recording the line of each key path."""

    def __init__(self, yaml: ModuleType, file: str, *, lined: bool = False):
        self.yaml = yaml
        self.lined = lined
        self.tree = Tree(file, None)
        self.nodes = 0  # nodes in the text
        self.expanded = 0  # nodes counting each alias as a copy of its anchor
        self.expanded_bytes = 0  # scalar text, counting each alias as a copy of its anchor
        self.aliases = 0
        self.anchors: dict[str, tuple[JSONValue, int, dict[JSONValue, int], int]] = {}
        self.stack: list[_Frame] = []
        self.docs: list[JSONValue] = []
        self.resolver = yaml.resolver.Resolver()
        self.constructor = yaml.constructor.SafeConstructor()

    def read(self, text: str) -> Tree:
        yaml = self.yaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            while True:
                ev = loader.get_event()
                if isinstance(ev, yaml.ScalarEvent):
                    self.scalar(ev)
                elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                    self.start(ev, isinstance(ev, yaml.MappingStartEvent))
                elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    self.end()
                elif isinstance(ev, yaml.AliasEvent):
                    self.alias(ev)
                elif isinstance(ev, yaml.DocumentStartEvent):
                    self.anchors = {}
                    if self.docs:  # key lines of the next document start afresh
                        self.tree.doc_lines.append(self.tree.lines)
                        self.tree.lines = {}
                elif isinstance(ev, yaml.StreamEndEvent):
                    break
        finally:
            loader.dispose()
        if not self.docs:
            raise ReadError("empty file")
        if self.lined and len(self.docs) > 1:  # safe_load reads one document
            raise ReadError("invalid YAML: more than one document (---) in the file")
        self.tree.data = self.docs[0]
        # every document with its key lines (a manifest's job may follow a Service)
        self.tree.doc_lines.append(self.tree.lines)
        self.tree.docs = self.docs
        self.tree.use_document(0)
        return self.tree

    def count(self, n: int, line: int, size: int = 0) -> None:
        self.expanded += n
        self.expanded_bytes += size
        if self.expanded_bytes > MAX_EXPANDED_BYTES:
            raise ReadError(
                f"more than {MAX_EXPANDED_BYTES // 2**20} MiB of text once its aliases are expanded"
                + (" (alias bomb?)" if self.aliases else ""),
                line=line,
            )
        if self.expanded > MAX_NODES:
            if self.aliases:
                raise ReadError(
                    f"more than {MAX_NODES} YAML nodes once its aliases are expanded (alias bomb?)",
                    line=line,
                )
            raise ReadError(f"more than {MAX_NODES} YAML nodes; too large for a training config", line=line)

    def check_tag(self, tag: str | None, line: int) -> bool:
        """True for a local tag (``!Ref``: kept as text); error for any other non-standard tag."""
        if tag is None or tag == "!":
            return False
        if tag.startswith(_STD):
            if tag[len(_STD) :] in _STD_TAGS:
                return False
        elif tag.startswith("!") and not self.lined:  # rule packs, profiles, waivers: plain YAML
            return True
        raise ReadError(f"unsupported tag {tag!r}; only plain YAML is accepted", line=line)

    def child_path(self) -> Path_:
        if not self.stack:
            return ()
        top = self.stack[-1]
        if not top.is_map:
            return (*top.path, len(top.value))
        return (*top.path, top.key) if top.has_key else (*top.path, "?")

    def scalar(self, ev: Any) -> None:  # Any: PyYAML's events (its type stubs are not installed)
        line = ev.start_mark.line + 1
        self.nodes += 1
        self.count(1, line, len(ev.value))
        tag = ev.tag
        if self.check_tag(tag, line):
            value: JSONValue = ev.value
        else:
            if tag is None or tag == "!":
                tag = self.resolver.resolve(self.yaml.ScalarNode, ev.value, ev.implicit)
            value = self.construct(tag, ev)
        if ev.anchor:
            self.anchors[ev.anchor] = (value, 1, {}, len(ev.value))
        merge = tag == _STD + "merge"
        if merge and not (self.stack and self.stack[-1].is_map and not self.stack[-1].has_key):
            raise ReadError("invalid YAML: a merge key (<<) where no mapping key belongs", line=line)
        self.deliver(value, line, merge_key=merge)

    def construct(self, tag: str, ev: Any) -> JSONValue:  # Any: as scalar's
        if tag == _STD + "str":
            return ev.value
        fn = self.constructor.yaml_constructors.get(tag)
        if fn is None:
            return ev.value
        node = self.yaml.ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style)
        try:
            return fn(self.constructor, node)
        except Exception as exc:  # safe_load fails here too: never a silently different value
            name = tag[len(_STD):] if tag.startswith(_STD) else tag
            problem = (getattr(exc, "problem", None) or str(exc))[:120]
            if name == "timestamp":
                message = f'not a calendar date: "{ev.value[:80]}" ({problem}; write YYYY-MM-DD)'
            elif name == "int" and "digits" in problem:  # past Python's 4,300-digit limit
                from validator.values.numbers import text_problem

                message = f"invalid YAML: {text_problem(ev.value.replace('_', ''))}"
            else:
                message = f'invalid YAML: "{ev.value[:80]}" is not a valid !!{name} ({problem})'
            raise ReadError(message, line=ev.start_mark.line + 1) from None

    def start(self, ev: Any, is_map: bool) -> None:  # Any: as scalar's
        line = ev.start_mark.line + 1
        self.nodes += 1
        self.count(1, line)
        self.check_tag(ev.tag, line)
        kind = ev.tag[len(_STD):] if isinstance(ev.tag, str) and ev.tag.startswith(_STD) else None
        if kind is not None and kind not in (_MAP_TAGS if is_map else _SEQ_TAGS):
            # safe_load constructs no !!int (or !!seq) from a mapping: "expected a scalar node"
            raise ReadError(f"invalid YAML: a !!{kind} tag on a {'mapping' if is_map else 'sequence'}", line=line)
        if len(self.stack) >= MAX_DEPTH:
            raise ReadError(f"nested more than {MAX_DEPTH} levels deep", line=line)
        frame = _Frame(is_map, self.child_path(), ev.anchor, self.expanded, line)
        frame.start_bytes = self.expanded_bytes
        if self.lined:
            frame.value = LineDict() if is_map else LineList()
            frame.value.line = line
            if is_map:
                frame.value.key_lines = frame.key_lines
            else:
                frame.value.item_lines = []
        self.stack.append(frame)

    def end(self) -> None:
        frame = self.stack.pop()
        if frame.anchor:
            self.anchors[frame.anchor] = (frame.value, self.expanded - frame.start, frame.key_lines,
                                          self.expanded_bytes - frame.start_bytes)
        self.deliver(frame.value, frame.line)

    def alias(self, ev: Any) -> None:  # Any: as scalar's
        line = ev.start_mark.line + 1
        if ev.anchor not in self.anchors:
            raise ReadError(f"found undefined alias {ev.anchor!r}", line=line)
        value, size, key_lines, nbytes = self.anchors[ev.anchor]
        self.aliases += 1
        self.count(size, line, nbytes)
        self.deliver(value, line, key_lines=key_lines)

    def deliver(
        self, value: JSONValue, line: int, *, merge_key: bool = False, key_lines: dict[JSONValue, int] | None = None
    ) -> None:
        if not self.stack:
            self.docs.append(value)
            return
        top = self.stack[-1]
        lines = self.tree.lines
        if not top.is_map:
            lines.setdefault((*top.path, len(top.value)), line)
            if self.lined:
                top.value.item_lines.append(line)
            top.value.append(value)
        elif not top.has_key:
            if merge_key:
                top.merging = True
            else:
                if isinstance(value, (dict, list)):  # safe_load: "found unhashable key"
                    raise ReadError("invalid YAML: a mapping or list used as a key", line=line)
                if not isinstance(value, (str, int, float, bool)) and value is not None:
                    value = str(value)
                if self.lined and value in top.value:
                    raise ReadError(f"invalid YAML: duplicate key {value!r}", line=line)
                top.key = value
                lines[top.path + (value,)] = line
                top.key_lines[value] = line
            top.has_key = True
        else:
            if top.merging:
                # ``<<: *base`` / ``<<: [*a, *b]``: keys not written here, at the anchor's lines
                for m in value if isinstance(value, list) else [value]:
                    if not isinstance(m, dict):  # safe_load: "expected a mapping for merging"
                        raise ReadError("invalid YAML: a merge key (<<) names something that is not a "
                                        "mapping", line=line)
                    if isinstance(m, dict):
                        for k, v in m.items():
                            if k not in top.value:
                                top.value[k] = v
                                lines.setdefault((*top.path, k), (key_lines or {}).get(k, line))
                                top.key_lines.setdefault(k, (key_lines or {}).get(k, line))
                top.merging = False
            else:
                top.value[top.key] = value
            top.has_key = False


# ---- JSON -------------------------------------------------------------------------------

_JSON_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|\n|[^\s{}\[\]:,"]+')


def parse_json(text: str, file: str) -> Tree:
    if not text.strip():
        raise ReadError("empty file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadError(f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise ReadError("invalid JSON: nested too deeply") from None
    repeated: dict[Path_, list[int]] = {}
    return Tree(file, data, json_key_lines(text, repeated), repeated)


def json_key_lines(text: str, repeated: dict[Path_, list[int]] | None = None) -> dict[Path_, int]:
    """The line of every object key and array item, by scanning tokens (JSON has no marks).

    One pass with no token list: a string is remembered until the next token shows
    whether it was a key (``:``), so memory is the result, not the text's tokens. A key
    written twice in one object gets the line of its last occurrence (the value json.loads
    keeps); the earlier lines go to ``repeated`` so a reader can report them.
    """
    lines: dict[Path_, int] = {}
    stack: list[list[Any]] = []  # [kind, path, index]; Any: a mixed row, changed in place
    line = 1
    pending: JSONValue = None  # the key whose value comes next
    last_str: tuple[str, int] | None = None  # the previous token, when it was a string
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
            continue
        top = stack[-1] if stack else None
        if tok == ":" and last_str is not None and top and top[0] == "obj":
            try:
                pending = json.loads(last_str[0])
            except ValueError:
                pending = last_str[0].strip('"')
            key_path = (*top[1], pending)
            if key_path in lines and repeated is not None:  # json.loads keeps the last value
                repeated.setdefault(key_path, []).append(lines[key_path])
            lines[key_path] = last_str[1]
        last_str = (tok, line) if tok.startswith('"') else None
        if top and top[0] == "arr" and tok not in "],":
            lines.setdefault((*top[1], top[2]), line)
        if tok in "{[":
            path = top[1] if top else ()
            if top and top[0] == "obj" and pending is not None:
                path = (*path, pending)
            elif top and top[0] == "arr":
                path = (*path, top[2])
            stack.append(["obj" if tok == "{" else "arr", path, 0])
            pending = None
        elif tok in "}]":
            if stack:
                stack.pop()
        elif tok == "," and top and top[0] == "arr":
            top[2] += 1  # the next item's line is recorded when it starts
    return lines


# ---- TOML -------------------------------------------------------------------------------

_TOML_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def _toml_parts(dotted: str) -> tuple[str, ...]:
    return tuple(
        p.strip().strip("\"'")
        for p in re.split(r"\.(?=(?:[^\"']*[\"'][^\"']*[\"'])*[^\"']*$)", dotted)
    )


def parse_toml(text: str, file: str) -> Tree:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    if not text.strip():
        raise ReadError("empty file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ReadError(f"invalid TOML: {exc}", line=int(m.group(1)) if m else None) from None
    except RecursionError:
        raise ReadError("invalid TOML: nested too deeply") from None
    lines: dict[Path_, int] = {}
    table: tuple[str, ...] = ()
    for n, raw in enumerate(text.splitlines(), 1):
        m = _TOML_TABLE.match(raw)
        if m and "=" not in raw.split("#")[0]:
            table = _toml_parts(m.group(1))
            lines.setdefault(table, n)
            continue
        k = _TOML_KEY.match(raw)
        if k:
            lines.setdefault((*table, *_toml_parts(k.group(1))), n)
    return Tree(file, data, lines)
