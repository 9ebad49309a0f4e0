"""The JSON result: the machine contract (schema ``spec/result.schema.json``).

The output is exactly ``json.dump(result, indent=2, ensure_ascii=False, default=str)``,
but written by :class:`_Indented`: with ``indent`` the standard library falls back to
its pure-Python encoder, which spends most of a 10,000-node cluster run (330,000
findings) in generator frames. Here every container whose members are all scalars (most
findings) is encoded in one call of the C encoder, with separators that carry the
newline and indentation of its depth; only containers holding containers are walked in
Python. The bytes are the same as the standard library's, so results and goldens do not
change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, TextIO

from validator.report.model import Finding, Report, Subject, finding_ids, gc_paused

if TYPE_CHECKING:
    from validator.report.model import JSONValue

# the types written by one call of the C encoder: these, and each subclass of str, int or
# float met (Level, Scope, Status: str enums) is added to it by _all_scalars. Both encoders
# write a str subclass as its text (PyUnicode_Check; isinstance(o, str)) and an int or float
# subclass as int.__repr__ / float.__repr__ of it, so a dict of enums written at once has
# the bytes the standard encoder gives (tests/reports/test_json_writer.py compares them).
_SCALAR_TYPES: set[type] = {str, int, float, bool, type(None)}
_INDENT = "  "


def _all_scalars(values: Collection[object]) -> bool:
    """Whether every one of ``values`` is written as a scalar (a container is not). A
    collection, not an iterator: a new subclass is looked for in a second pass."""
    if _SCALAR_TYPES.issuperset(map(type, values)):
        return True
    new = set(map(type, values)) - _SCALAR_TYPES
    if all(issubclass(t, (str, int, float)) for t in new):
        _SCALAR_TYPES.update(new)
        return True
    return False


def _key(k: object) -> str:
    """A dict key as the standard encoder writes it (str, or int/float/bool/None as text)."""
    if isinstance(k, str):
        return k
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, (int, float)):
        return json.dumps(k)  # int.__repr__ / float repr ("NaN" and "Infinity" are key strings)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _encoder(item_separator: str) -> Callable[[object], str]:
    """One container (or scalar) as ``json.dumps(..., separators=(item_separator, ": "))``.

    The C encoder object is made once and called directly: ``JSONEncoder.encode`` would
    build a new one for every finding."""
    from json import encoder as std

    from validator.values.numbers import finite

    try:  # (markers, default, encoder, indent, key_sep, item_sep, sort_keys, skipkeys, allow_nan)
        c_enc = std.c_make_encoder(  # type: ignore[attr-defined]
            None, str, std.encode_basestring, None, ": ", item_separator,
            False, False, False)
    except TypeError:  # no C accelerator (None), or another signature: the standard path
        py_enc = json.JSONEncoder(ensure_ascii=False, default=str, separators=(item_separator, ": "),
                                  allow_nan=False).encode

        def encode_py(o: object) -> str:
            try:
                return py_enc(o)
            except ValueError:  # NaN or infinity: written as a string (numbers.finite)
                return py_enc(finite(o))

        return encode_py

    def encode(o: object) -> str:
        if isinstance(o, str):
            return std.encode_basestring(o)
        try:
            return "".join(c_enc(o, 0))
        except ValueError:  # NaN or infinity: never a bare NaN/Infinity (numbers.finite)
            return "".join(c_enc(finite(o), 0))

    return encode


class _Lazy:
    """A list written as its items converted one at a time (``Finding.to_dict``,
    ``Subject.to_dict``), so that a result's 330,000 finding dicts (or a fleet's 25,000
    subject dicts) never exist all at once."""

    # Any: the items' own type (a Finding, a Subject), which convert takes
    def __init__(self, items: list[Any] | tuple[Any, ...], convert: Callable[[Any], JSONValue]):
        self.items, self.convert = items, convert


_CONTAINERS = (dict, list, tuple, _Lazy)


class _Indented:
    """``indent=2, ensure_ascii=False, default=str`` output, appended to ``out`` (plain
    recursion, no generators: a chunk is not passed up through every level); ``flush``,
    when given, takes the text so far after each item of a long list."""

    def __init__(self, flush: Callable[[str], object] | None = None) -> None:
        self._flat: dict[int, Callable[[object], str]] = {}
        self._scalar = _encoder(", ")
        self.out: list[str] = []
        self._flush = flush

    def _flat_encoder(self, depth: int) -> Callable[[object], str]:
        enc = self._flat.get(depth)
        if enc is None:
            sep = ",\n" + _INDENT * (depth + 1)
            enc = _encoder(sep)
            self._flat[depth] = enc
        return enc

    def flush(self) -> None:
        if self._flush is not None and self.out:
            self._flush("".join(self.out))
            self.out.clear()

    def write(self, o: object, depth: int) -> None:
        out = self.out
        if isinstance(o, dict):
            if not o:
                out.append("{}")
                return
            inner, outer = "\n" + _INDENT * (depth + 1), "\n" + _INDENT * depth
            if _all_scalars(o.values()):
                out.append("{" + inner + self._flat_encoder(depth)(o)[1:-1] + outer + "}")
                return
            first = True
            for k, v in o.items():
                out.append(("{" if first else ",") + inner + self._scalar(_key(k)) + ": ")
                first = False
                if isinstance(v, _CONTAINERS):
                    self.write(v, depth + 1)
                else:
                    out.append(self._scalar(v))
            out.append(outer + "}")
        elif isinstance(o, (list, tuple, _Lazy)):
            items, convert = (o.items, o.convert) if isinstance(o, _Lazy) else (o, None)
            if not items:
                out.append("[]")
                return
            inner, outer = "\n" + _INDENT * (depth + 1), "\n" + _INDENT * depth
            if convert is None and _all_scalars(items):
                out.append("[" + inner + self._flat_encoder(depth)(items)[1:-1] + outer + "]")
                return
            first = True
            flush = self._flush is not None and len(items) > 1024
            # an item that is a dict of scalars (a finding, mostly) is written here at once
            flat, scalars = self._flat_encoder(depth + 1), _all_scalars
            open_item, close_item = "{\n" + _INDENT * (depth + 2), "\n" + _INDENT * (depth + 1) + "}"
            for v in items:
                out.append("[" + inner if first else "," + inner)
                first = False
                if convert is not None:
                    v = convert(v)
                if type(v) is dict and v and scalars(v.values()):
                    out.append(open_item + flat(v)[1:-1] + close_item)
                elif isinstance(v, _CONTAINERS):
                    mark = len(out)
                    self.write(v, depth + 1)
                    # a large item (a PLAT-02 finding's value: one entry a host) is not
                    # held until 4,096 pieces are: the text of all of them grew with N
                    if self._flush is not None and sum(map(len, out[mark:])) > 65536:
                        self.flush()
                        continue
                else:
                    out.append(self._scalar(v))
                if flush and len(out) > 4096:
                    self.flush()
            out.append(outer + "]")
        else:
            out.append(self._scalar(o))


def dumps_indented(obj: object) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False, default=str)``, the same text."""
    w = _Indented()
    w.write(obj, 0)
    return "".join(w.out)


def result_document(report: Report, *, findings: bool = True, subjects: bool = True) -> dict[str, JSONValue]:
    """The JSON result: ``Report.to_dict`` plus what the verdict covers (additive; readers
    of older results ignore it): ``summary.verdict``, the sentence people read, and
    ``summary.coverage``, the scopes and requirements evaluated (renderers/scope.py)."""
    from validator.renderers.scope import scope_of, verdict_text

    doc = report.to_dict(findings=findings, subjects=subjects)
    scope = scope_of(report)
    doc["summary"] = {**doc["summary"], "verdict": verdict_text(report, scope), "coverage": scope.to_dict()}
    return doc


def _finding_dict(pair: tuple[Finding, str]) -> JSONValue:
    return pair[0].to_dict(pair[1])


class JsonRenderer:
    def render(self, report: Report, stream: TextIO) -> None:
        doc = result_document(report, findings=False, subjects=False)
        doc["subjects"] = _Lazy(report.subjects, Subject.to_dict)  # a fleet's 25,000 hosts
        # each finding with its stable ID (finding_ids: item#2 for a repeated rule/subject/item)
        doc["findings"] = _Lazy(list(zip(report.findings, finding_ids(report.findings), strict=True)), _finding_dict)
        w = _Indented(stream.write)
        with gc_paused():  # the result's dicts and chunks: many objects, no cycles
            w.write(doc, 0)
            w.out.append("\n")
            w.flush()
