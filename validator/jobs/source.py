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
from typing import Any

MAX_BYTES = 16 * 1024 * 1024
MAX_NODES = 500_000  # YAML nodes after alias expansion
MISSING: Any = object()
Path_ = tuple[Any, ...]


class ReadError(Exception):
    def __init__(self, message: str, *, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Tree:
    """A parsed structured file: ``data`` and the line of each key path."""

    file: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def get(self, *path: Any, default: Any = MISSING) -> Any:
        node = self.data
        for part in path:
            in_dict = isinstance(node, dict) and part in node
            in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
            if in_dict or in_list:
                node = node[part]
            else:
                return default
        return node

    def line(self, *path: Any) -> int | None:
        for n in range(len(path), 0, -1):
            if path[:n] in self.lines:
                return self.lines[path[:n]]
        return None


def read_text(path: Path) -> str:
    """The file's text; ReadError for unreadable, huge, binary or non-UTF-8 files."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ReadError(f"larger than {MAX_BYTES // 2**20} MiB; not a training config")
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except ReadError:
        raise
    except IsADirectoryError:
        raise ReadError("is a directory") from None
    except OSError as exc:
        raise ReadError(f"cannot read: {exc.strerror or exc}") from None
    if b"\x00" in raw[:8192]:
        raise ReadError("binary data, not a text config")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=line) from None
    return text.removeprefix("\ufeff")


# ---- YAML -------------------------------------------------------------------------------


def parse_yaml(text: str, file: str) -> Tree:
    import yaml

    try:
        docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ReadError(
            f"invalid YAML: {exc.problem or exc.context}", line=mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise ReadError(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ReadError("invalid YAML: nested too deeply") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        raise ReadError("empty file")
    tree = Tree(file, None)
    conv = _YamlConverter(tree)
    try:
        tree.data = conv.convert(docs[0], ())
    except RecursionError:
        raise ReadError("invalid YAML: nested too deeply") from None
    return tree


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


class _YamlConverter:
    """Nodes to plain values, recording key lines; counts nodes to stop alias bombs."""

    def __init__(self, tree: Tree):
        import yaml

        self.yaml = yaml
        self.tree = tree
        self.count = 0
        self.scalar_loader = yaml.SafeLoader("")

    def convert(self, node: Any, path: Path_) -> Any:
        yaml = self.yaml
        self.count += 1
        if self.count > MAX_NODES:
            raise ReadError(
                f"more than {MAX_NODES} YAML nodes after alias expansion (alias bomb?)",
                line=node.start_mark.line + 1,
            )
        tag = node.tag or ""
        if tag.startswith("tag:yaml.org,2002:"):
            if tag.rsplit(":", 1)[1] not in _STD_TAGS:
                raise ReadError(
                    f"unsupported tag {tag!r}; only plain YAML is accepted",
                    line=node.start_mark.line + 1,
                )
        elif tag.startswith("!"):
            # a local tag (!Ref, !include): keep the scalar as text, never interpret it
            if isinstance(node, yaml.ScalarNode):
                return node.value
        else:
            raise ReadError(
                f"unsupported tag {tag!r}; only plain YAML is accepted",
                line=node.start_mark.line + 1,
            )
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for k_node, v_node in node.value:
                if k_node.tag.endswith(":merge"):
                    merged = self.convert(v_node, path)
                    for m in merged if isinstance(merged, list) else [merged]:
                        if isinstance(m, dict):
                            for k, v in m.items():
                                out.setdefault(k, v)
                    continue
                key = self.convert(k_node, path)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    key = str(key)
                self.tree.lines[tuple(path) + (key,)] = k_node.start_mark.line + 1
                out[key] = self.convert(v_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, child in enumerate(node.value):
                self.tree.lines.setdefault((*path, i), child.start_mark.line + 1)
                items.append(self.convert(child, (*path, i)))
            return items
        try:
            return self.scalar_loader.construct_object(node, deep=False)
        except Exception:
            return node.value


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
    return Tree(file, data, json_key_lines(text))


def json_key_lines(text: str) -> dict[Path_, int]:
    """The line of every object key and array item, by scanning tokens (JSON has no marks)."""
    lines: dict[Path_, int] = {}
    stack: list[list[Any]] = []  # [kind, path, index/pending key]
    line = 1
    pending: Any = None
    tokens = list(_JSON_TOKEN.finditer(text))
    for i, m in enumerate(tokens):
        tok = m.group()
        if tok == "\n":
            line += 1
            continue
        top = stack[-1] if stack else None
        if top and top[0] == "arr" and tok not in "],":
            item: Path_ = (*top[1], top[2])
            lines.setdefault(item, line)
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
        elif tok == ",":
            if top and top[0] == "arr":
                top[2] += 1
                # the next item's line is recorded when it starts
        elif tok.startswith('"'):
            nxt = next((t.group() for t in tokens[i + 1 : i + 3] if t.group() != "\n"), "")
            if top and top[0] == "obj" and nxt == ":":
                try:
                    pending = json.loads(tok)
                except ValueError:
                    pending = tok.strip('"')
                lines.setdefault((*top[1], pending), line)
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
