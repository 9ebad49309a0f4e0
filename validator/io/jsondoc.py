"""One way to parse a JSON document spec-check reads (facts, results), so that every
reader refuses the same things, the same way:

* a key written twice in one object: JSON parsers disagree on which copy counts (Python
  keeps the last, others the first), so a file with one means two different things to two
  readers, and a signature or a digest over it vouches for neither;
* ``NaN``, ``Infinity`` and ``-Infinity``: not JSON numbers;
* a number beyond any real value (``validator.values.numbers``): a 400-digit integer, ``1e400``;
* a string holding a lone UTF-16 surrogate (``"\\ud800"``): not Unicode text.

``parse`` raises ``JSONProblem`` (a problem and, where known, a line); each reader wraps
it in its own error naming the file. The field of a refused number is named: the first
pass raises as soon as one is seen, and only then a second pass finds where it was.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, NoReturn

from validator.values.numbers import Beyond, float_text, int_text, join, text_problem

if TYPE_CHECKING:
    from collections.abc import Callable

    from validator.values import JSONValue

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JSONProblem(ValueError):
    def __init__(self, problem: str, line: int | None = None):
        super().__init__(problem)
        self.problem = problem
        self.line = line


class _Repeated(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique(items: list[tuple[str, JSONValue]]) -> dict[str, JSONValue]:
    out = dict(items)
    if len(out) != len(items):
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return out


def _constant(name: str) -> NoReturn:
    raise Beyond(name)


def parse(text: str, *, duplicates: list[str] | None = None) -> JSONValue:
    """``text`` as JSON, or ``JSONProblem``. With ``duplicates`` (``verify``, which reports
    a repeated key as a changed document, exit 1), repeated keys are collected there
    instead of refused."""
    hook = _unique if duplicates is None else _collecting(duplicates)
    try:
        data = json.loads(text, object_pairs_hook=hook, parse_int=int_text, parse_float=float_text,
                          parse_constant=_constant)
        if "\\" in text and _SURROGATE_ESCAPE.search(text):
            json.dumps(data, ensure_ascii=False).encode("utf-8")  # lone surrogates raise
        return data
    except json.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise JSONProblem(f"invalid JSON: {exc.msg}{hint} (column {exc.colno})", exc.lineno) from None
    except _Repeated as exc:
        raise JSONProblem(f'invalid JSON: key "{exc.key[:80]}" written twice in one object (JSON '
                          "parsers disagree on which counts)", _line_of_second(text, exc.key)) from None
    except Beyond as exc:
        raise _where_beyond(text, exc.text) from None
    except RecursionError:
        raise JSONProblem("invalid JSON: nested too deeply") from None
    except UnicodeEncodeError:
        raise JSONProblem("invalid JSON: a string holds a lone surrogate (not Unicode text)") from None


def _collecting(duplicates: list[str]) -> Callable[[list[tuple[str, JSONValue]]], dict[str, JSONValue]]:
    def pairs(items: list[tuple[str, JSONValue]]) -> dict[str, JSONValue]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    duplicates.append(key)
                seen.add(key)
        return out

    return pairs


class _Marker:
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _where_beyond(text: str, first: str) -> JSONProblem:
    """The refusal of a number beyond any real value, naming its field: a second parse that
    keeps such numbers as markers, then a walk to the first of them."""
    if first in ("NaN", "Infinity", "-Infinity"):
        why = f"{first} is not a JSON number"
    else:
        why = text_problem(first)

    def keep(t: str) -> int | float | _Marker:
        try:
            return int_text(t) if t.lstrip("-").isdigit() else float_text(t)
        except Beyond:
            return _Marker(t)

    try:
        data = json.loads(text, parse_int=keep, parse_float=keep, parse_constant=_Marker)
    except (ValueError, RecursionError):
        return JSONProblem(f"invalid JSON: {why}")
    stack: list[tuple[str, object]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((join(path, k), node[k]) for k in reversed(list(node)))
        elif isinstance(node, list):
            stack.extend((f"{path}[{i}]", node[i]) for i in range(len(node) - 1, -1, -1))
        elif isinstance(node, _Marker):
            where = path or "(the document)"
            line = _line_of_number(text, node.text)
            if first in ("NaN", "Infinity", "-Infinity"):  # not JSON at all
                return JSONProblem(f"invalid JSON: {why} ({where})", line)
            return JSONProblem(f"{where}: {why}", line)
    return JSONProblem(f"invalid JSON: {why}")


def _line_of_number(text: str, number: str) -> int | None:
    m = re.search(r"(?<![\w.\"])" + re.escape(number) + r"(?![\w.])", text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _line_of_second(text: str, key: str) -> int | None:
    quoted = json.dumps(key)
    first = text.find(quoted + ":")
    if first < 0:
        return None
    second = text.find(quoted, first + len(quoted))
    return text.count("\n", 0, second) + 1 if second >= 0 else None
