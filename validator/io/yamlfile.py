"""Safe YAML loading that remembers line numbers, for errors that name file:line.

Rule packs, profiles and waivers are read by the same event reader as training configs
(``validator.io.source.parse_yaml``: one YAML loader, with its node and byte budgets
against alias bombs, ``safe_load``'s refusals, and no constructor ever run on a tag),
through the same safe opener (``validator.io.safeio``). Mappings come back as ``LineDict``
(a dict that knows the line of each key), sequences as ``LineList``, so a validation
error at ``rules[3].check.op`` can be reported at the line where that key is written; a
key written twice and any non-standard tag are errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from validator.errors import RuleFileError
from validator.io.source import LineDict, LineList  # made by the reader, read back here

if TYPE_CHECKING:
    from validator.values import JSONValue

__all__ = ["LineDict", "LineList", "line_of", "load_yaml"]


def load_yaml(path: Path, *, error: type[RuleFileError] = RuleFileError) -> JSONValue:
    """Parse one YAML file; every failure is one error naming the file and line."""
    from validator.io.safeio import CAPS, InputError, read_text

    where = str(path)
    try:
        text = read_text(path, cap=CAPS["YAML file"], what="YAML file")
    except InputError as exc:
        raise error(exc.problem, file=where, line=exc.line) from None
    from validator.io.source import ReadError, parse_yaml

    try:
        data = parse_yaml(text, where, lined=True).data
    except ReadError as exc:
        if exc.message == "empty file":  # no document at all (blank, or comments only)
            return None
        problem = exc.message
        if not problem.startswith(("invalid YAML", "not a calendar date")):
            problem = f"invalid YAML: {problem}"
        raise error(problem, file=where, line=exc.line) from None
    _refuse_beyond(data, where, error)
    return data


def _refuse_beyond(data: JSONValue, where: str, error: type[RuleFileError]) -> None:
    """The numbers rule (``validator.values.numbers``): a number beyond any real value (``.inf``,
    ``.nan``, ``1e400``, a 4,000-digit integer) is refused at its field and line."""
    from validator.values.numbers import first_beyond, problem

    found = first_beyond(data)
    if found is None:
        return
    path, v = found
    line = _line_at(data, path)
    raise error(f"{path}: {problem(v)}", file=where, line=line)


def _line_at(data: object, path: str) -> int | None:
    """The line of the value at ``path`` (as ``numbers.first_beyond`` writes it)."""
    import json
    import re

    node, line = data, getattr(data, "line", None)
    for m in re.finditer(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]', path):
        key: str | int = m.group(1) if m.group(1) is not None else (
            int(m.group(2)) if m.group(2) is not None else json.loads(m.group(3)))
        if isinstance(node, LineDict) and key in node:
            line = node.key_lines.get(key, line)
            node = node[key]
        elif isinstance(node, LineDict) and str(key) in map(str, node):
            k = next(k for k in node if str(k) == str(key))
            line = node.key_lines.get(k, line)
            node = node[k]
        elif isinstance(node, LineList) and isinstance(key, int) and key < len(node):
            line = node.item_lines[key]
            node = node[key]
        else:
            break
    return line


def line_of(data: object, loc: tuple[int | str, ...]) -> int | None:
    """The line of the deepest element of ``loc`` (a pydantic error location) found."""
    line = getattr(data, "line", None) or None
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line
