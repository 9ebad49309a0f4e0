"""Apply a finding's fixes (``report.model.Fix``) to a config's text, changing only the
lines the setting is on.

Each syntax is edited with the library that reads it with positions, and the text is
changed on the one line that holds the setting, or one new line is inserted where the
setting belongs, so that comments, key order, quoting and indentation stay as written
(a whole-file round trip through a YAML or JSON library rewrites ``null``, ``True``,
``1e9`` and sequence indentation on lines the fix has nothing to do with):

* YAML: the project's line-tracking reader (``validator.io.source.parse_yaml``, libyaml's
  events) gives each key's line; a value is replaced on it, and a new key is inserted at
  its parent mapping's column (a top-level key at the end of the file). ruamel.yaml's
  round trip was tried first and dropped: it rewrote lines the fix had nothing to do with in
  94 of the 228 YAML files of the corpus (``null`` to nothing, ``True`` to ``true``, the
  indentation of sequences), and took 14 ms a file against 0.25 ms;
* JSON: the key's line from ``validator.io.source``; a new key is the first member of its
  parent object, at the indentation of the member after it;
* TOML: tomlkit, which keeps everything else of the document as written;
* shell (sbatch, launcher scripts): a flag on the one line of the launch command the fix
  names (inserted before the first flag there, or its value replaced), an environment
  variable on its ``export`` line (or a new ``export`` after the script's header).

Every edit is checked by parsing the result and reading the setting back; an edit that
cannot be made so (a flow-style mapping, an inline JSON object, a value that is a
mapping) raises ``EditError`` with the reason, and the file is left for a person.
tomlkit is imported only here, on use.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from validator.report.model import Fix, JSONValue, Replacement


class EditError(Exception):
    """A fix that cannot be applied to this file as written (the message says why)."""


SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".sub")


def syntax_of(file: str) -> str:
    """The syntax a fix edits ``file`` in: json, yaml, toml, env or shell."""
    low = file.lower()
    if low.endswith(".json"):
        return "json"
    if low.endswith((".yaml", ".yml", ".yaml-template", ".yml-template")):
        return "yaml"
    if low.endswith(".toml"):
        return "toml"
    if low.endswith(".env") or low.rsplit("/", 1)[-1].startswith(".env"):
        return "env"
    return "shell"


def apply(text: str, fix: Fix) -> str:
    """``text`` with ``fix`` applied (EditError when it cannot be, as written)."""
    if fix.get("needs"):
        raise EditError(fix["needs"])
    syntax = syntax_of(fix["file"])
    kind = fix["kind"]
    line = fix.get("line")
    if kind == "key" and syntax in ("yaml", "json", "toml") and line:
        return _at_line(text, syntax, line, fix["target"].split(".")[-1], fix["value"])
    if kind == "key" and syntax in ("yaml", "json", "toml"):
        path = tuple(fix["target"].split("."))
        return {"yaml": _yaml, "json": _json, "toml": _toml}[syntax](text, path, fix["value"])
    if kind == "flag" and syntax == "shell":
        return _flag(text, fix["target"], fix["value"], fix.get("line"))
    if kind == "env" and syntax in ("shell", "env"):
        return _env(text, fix["target"], str(fix["value"]), syntax)
    raise EditError(f"a {kind} fix cannot be made in a {syntax} file")


def apply_all(text: str, fixes: list[Fix]) -> str:
    for f in fixes:
        text = apply(text, f)
    return text


def replacement(old: str, new: str) -> Replacement:
    """The whole lines of ``old`` that ``new`` changes, as one replacement: lines
    ``start``..``end`` (1-based, inclusive) become ``text``. A pure insertion takes the line
    before it along (the line after, at the top), so a replacement always spans at least
    one line of ``old`` (SARIF's fixes name the region they delete)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return {"start": 1, "end": 0, "text": ""}
    i1, i2 = ops[0][1], ops[-1][2]
    j1, j2 = ops[0][3], ops[-1][4]
    if i1 == i2 and a:  # an insertion: widen it by one unchanged line
        if i1 > 0:
            i1, j1 = i1 - 1, j1 - 1
        else:
            i2, j2 = i2 + 1, j2 + 1
    return {"start": i1 + 1, "end": i2, "text": "".join(b[j1:j2])}


# ---- values, as each syntax writes them ----------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _yaml_scalar(v: JSONValue) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    s = str(v)
    if _PLAIN.fullmatch(s) and s.lower() not in _YAML_WORDS:
        return s
    return json.dumps(s)


def _nested(path: tuple[str, ...], value: JSONValue) -> JSONValue:
    for part in reversed(path):
        value = {part: value}
    return value


def _read_back(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            raise EditError("the edited file does not hold the setting (left unchanged)")
        data = data[part]
    return data


def _check(data: Any, path: tuple[str, ...], value: JSONValue) -> None:
    got = _read_back(data, path)
    if got != value or (type(got) is not type(value) and not (isinstance(got, (int, float))
                                                               and isinstance(value, (int, float)))):
        raise EditError(f"the edited file reads {got!r}, not {value!r} (left unchanged)")


# ---- a value where the reader read it -------------------------------------------------------

def _at_line(text: str, syntax: str, line: int, key: str, value: JSONValue) -> str:
    """The value of ``key`` on line ``line`` (1-based) replaced: a setting the reader read
    there, whatever the mapping that holds it (a callback's init_args, a Hydra group file)."""
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        raise EditError(f"line {line} is not in the file")
    cur = lines[line - 1]
    k = re.escape(key)
    if syntax == "json":
        pat = re.compile(r'("' + k + r'"\s*:\s*)' + _JSON_VALUE)
        new = pat.sub(lambda m: m.group(1) + json.dumps(value), cur, count=1)
    elif syntax == "toml":
        pat = re.compile(r"^(\s*[\"']?" + k + r"[\"']?\s*=\s*)(\"[^\"]*\"|'[^']*'|[^\s#]+)")
        import tomlkit

        new = pat.sub(lambda m: m.group(1) + tomlkit.item(value).as_string(), cur, count=1)
    else:
        m = re.match(r"^(\s*(?:-\s+)?[\"']?" + k + r"[\"']?\s*:[ \t]+)", cur)
        rest = _SCALAR_REST.match(cur, m.end()) if m else None
        if m is None or rest is None or not rest.group(1).strip():
            raise EditError(f"line {line} does not hold {key} with a value on it")
        new = m.group(1) + _yaml_scalar(value) + rest.group(2).rstrip("\n") + ("\n" if cur.endswith("\n") else "")
    if new == cur and not re.search(k, cur):
        raise EditError(f"line {line} does not hold {key}")
    lines[line - 1] = new
    out = "".join(lines)
    _parses(out, syntax)
    return out


def _parses(text: str, syntax: str) -> None:
    from validator.io.source import parse_json, parse_toml

    try:
        if syntax == "json":
            parse_json(text, "")
        elif syntax == "toml":
            parse_toml(text, "")
        else:
            import yaml

            yaml.safe_load(text)
    except Exception as exc:  # ReadError, or PyYAML's YAMLError: the edit broke the file
        raise EditError(f"the edit would not parse ({type(exc).__name__}); left unchanged") from None


# ---- YAML ---------------------------------------------------------------------------------

# a scalar and what follows it on its line: a quoted string, or plain text up to a comment
_SCALAR_REST = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^#\n]*?)(\s*(?:\s#.*)?)$""")


def _yaml(text: str, path: tuple[str, ...], value: JSONValue) -> str:
    from validator.io.source import ReadError, parse_yaml

    if len(re.findall(r"^---", text, re.M)) > (1 if text.lstrip().startswith("---") else 0):
        raise EditError("a file of several YAML documents: edit it by hand")
    try:
        tree = parse_yaml(text, "")
    except ReadError as exc:
        raise EditError(exc.message) from None
    data = tree.data
    if not isinstance(data, dict):
        raise EditError("the YAML file is not a mapping at the top level")
    lines = text.splitlines(keepends=True)
    node: dict[str, Any] = data
    depth = 0
    while depth < len(path) - 1 and isinstance(node.get(path[depth]), dict):
        node = node[path[depth]]
        depth += 1
    key = path[depth]
    if depth == len(path) - 1 and key in node:
        if isinstance(node[key], (dict, list)):
            raise EditError(f"{'.'.join(path)} holds a mapping or list, not a value")
        line = tree.lines.get(path)
        if line is None:
            raise EditError(f"{'.'.join(path)}: its line is not known")
        return _at_line(text, "yaml", line, key, value)
    if key in node:  # a value where the path needs a mapping
        raise EditError(f"{'.'.join(path[:depth + 1])} is a value, not a mapping")
    rest = path[depth:]
    step = 2
    if depth == 0:
        col, at = 0, len(lines)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
    else:
        where = ".".join(path[:depth])
        if not node:
            raise EditError(f"{where} is an empty mapping")
        first = next(iter(node))
        first_line, parent_line = tree.lines.get((*path[:depth], first)), tree.lines.get(path[:depth])
        if first_line is None or first_line == parent_line:
            raise EditError(f"{where} is a flow-style mapping ({{...}}) or not one key a line")
        head = re.match(r"^([ \t]*)(-[ \t]+)?", lines[first_line - 1])
        if head is None or head.group(2) or "\t" in head.group(1):
            raise EditError(f"{where} is a list item's mapping: edit it by hand")
        col, at = len(head.group(1)), first_line - 1
    new = [" " * (col + step * i) + f"{part}:" + ("" if i < len(rest) - 1 else f" {_yaml_scalar(value)}") + "\n"
           for i, part in enumerate(rest)]
    lines[at:at] = new
    out = "".join(lines)
    try:
        _check(parse_yaml(out, "").data, path, value)
    except ReadError:
        raise EditError("the edit would not parse as YAML (left unchanged)") from None
    return out


# ---- JSON ---------------------------------------------------------------------------------

_JSON_VALUE = r'(-?\d[\d.eE+-]*|true|false|null|"(?:[^"\\]|\\.)*")'


def _json(text: str, path: tuple[str, ...], value: JSONValue) -> str:
    from validator.io.source import ReadError, parse_json

    try:
        tree = parse_json(text, "")
    except ReadError as exc:
        raise EditError(exc.message) from None
    data = tree.data
    if not isinstance(data, dict):
        raise EditError("the JSON file is not an object at the top level")
    lines = text.splitlines(keepends=True)
    depth, node = 0, data
    while depth < len(path) - 1 and isinstance(node.get(path[depth]), dict):
        node = node[path[depth]]
        depth += 1
    key = path[depth]
    if depth == len(path) - 1 and key in node:
        if isinstance(node[key], (dict, list)):
            raise EditError(f"{'.'.join(path)} holds an object or list, not a value")
        ln = (tree.lines.get(path) or 0) - 1
        pat = re.compile(r'("' + re.escape(key) + r'"\s*:\s*)' + _JSON_VALUE)
        if ln < 0 or not pat.search(lines[ln]):
            raise EditError(f"the value of {key} is not on its key's line")
        lines[ln] = pat.sub(lambda m: m.group(1) + json.dumps(value), lines[ln], count=1)
    else:
        if key in node:
            raise EditError(f"{'.'.join(path[:depth + 1])} is a value, not an object")
        if depth == 0:
            opening = next((i for i, ln in enumerate(lines) if ln.strip()), None)
            if opening is None or not lines[opening].lstrip().startswith("{"):
                raise EditError("the top-level object does not open on a line of its own")
        else:
            opening = (tree.lines.get(path[:depth]) or 0) - 1
        if opening < 0 or not lines[opening].rstrip().endswith("{"):
            raise EditError(f"{'.'.join(path[:depth]) or 'the top-level object'} is not written one member a line")
        after = next((i for i in range(opening + 1, len(lines)) if lines[i].strip()), None)
        if after is None or lines[after].lstrip().startswith("}"):
            raise EditError(f"{'.'.join(path[:depth]) or 'the top-level object'} is empty")
        indent = lines[after][: len(lines[after]) - len(lines[after].lstrip())]
        member = json.dumps(path[depth]) + ": " + json.dumps(_nested(path[depth + 1:], value)) + ",\n"
        lines[opening + 1:opening + 1] = [indent + member]
    out = "".join(lines)
    try:
        _check(json.loads(out), path, value)
    except json.JSONDecodeError:
        raise EditError("the edit would not parse as JSON (left unchanged)") from None
    return out


# ---- TOML ---------------------------------------------------------------------------------

def _toml(text: str, path: tuple[str, ...], value: JSONValue) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as exc:
        raise EditError(f"not readable as TOML ({exc})") from None
    node: Any = doc
    for part in path[:-1]:
        if part not in node:
            node[part] = tomlkit.table()
        node = node[part]
        if not isinstance(node, dict):
            raise EditError(f"{part} is a value, not a table")
    if isinstance(node.get(path[-1]), (dict, list)):
        raise EditError(f"{'.'.join(path)} holds a table or array, not a value")
    node[path[-1]] = value
    out = tomlkit.dumps(doc)
    from validator.io.source import ReadError, parse_toml

    try:
        _check(parse_toml(out, "").data, path, value)
    except ReadError:
        raise EditError("the edit would not parse as TOML (left unchanged)") from None
    return out


# ---- shell --------------------------------------------------------------------------------

def _flag_text(flag: str, value: JSONValue) -> str:
    if value is True:
        return flag
    s = str(value)
    return f"{flag} {s}" if re.fullmatch(r"[A-Za-z0-9_.,:/+=-]+", s) else f"{flag} {json.dumps(s)}"


def _flag(text: str, flag: str, value: JSONValue, line: int | None) -> str:
    """Set ``flag`` on line ``line`` (1-based), the launch command's line the fix names.
    ``flag`` may name its command ("torchrun --max-restarts"): a new flag then goes right
    after the command, before the training script's own arguments."""
    lines = text.splitlines(keepends=True)
    if line is None or not 1 <= line <= len(lines):
        raise EditError(f"no line of the launch command to add {flag} to")
    cur = lines[line - 1]
    command, _, bare = flag.rpartition(" ")
    if command:
        flag = bare
        at = re.search(r"(?:^|[\s/;&|(])" + re.escape(command) + r"(?=[ \t])", cur)
        if at is None:
            raise EditError(f"line {line} does not run {command}")
        if re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", cur) is None:
            lines[line - 1] = cur[: at.end()] + " " + _flag_text(flag, value) + cur[at.end():]
            return "".join(lines)
    have = re.search(r"(?<![\w-])" + re.escape(flag) + r"(?:(=|[ \t]+)([^\s\\\"']+))?(?![\w-])", cur)
    if have is not None:
        if value is True:
            return text  # a bare flag already there
        if have.group(2) is None or have.group(2).startswith("-"):
            raise EditError(f"line {line}: {flag} has no value to replace")
        new = cur[: have.start(2)] + str(value) + cur[have.end(2):]
    else:
        first = re.search(r"(?<![\w-])--[A-Za-z]", cur)
        if first is None:
            raise EditError(f"line {line} holds no flag of the launch command")
        new = cur[: first.start()] + _flag_text(flag, value) + " " + cur[first.start():]
    lines[line - 1] = new
    return "".join(lines)


def _env(text: str, name: str, value: str, syntax: str) -> str:
    """``export NAME=value`` (``NAME=value`` in an env file): its line if one sets it, else
    a new line after the script's header (shebang, comments, #SBATCH lines)."""
    lines = text.splitlines(keepends=True)
    q = value if re.fullmatch(r"[A-Za-z0-9_.,:/+=-]*", value) else json.dumps(value)
    pat = re.compile(r"^(\s*(?:export\s+)?" + re.escape(name) + r"=)(\"[^\"]*\"|'[^']*'|\S*)")
    for i, ln in enumerate(lines):
        if pat.match(ln):
            lines[i] = pat.sub(lambda m: m.group(1) + q, ln, count=1)
            return "".join(lines)
    at = 0
    for i, ln in enumerate(lines):
        s = ln.strip()
        if not s or s.startswith("#"):
            at = i + 1 if s.startswith(("#!", "#SBATCH", "#PBS", "#$")) or not s else at
            continue
        break
    if lines and at == len(lines) and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines[at:at] = [("export " if syntax == "shell" else "") + f"{name}={q}\n"]
    return "".join(lines)
