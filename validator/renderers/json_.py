"""The JSON result: the machine contract (schema ``spec/result.schema.json``).

The output is exactly ``json.dump(result, indent=2, ensure_ascii=False, default=str)``,
but written by :func:`iter_indented`: with ``indent`` the standard library falls back to
its pure-Python encoder, which spends most of a 10,000-node cluster run (330,000
findings) in generator frames. Here every container whose members are all scalars (most
findings) is encoded in one call of the C encoder, with separators that carry the
newline and indentation of its depth; only containers holding containers are walked in
Python. The bytes are the same as the standard library's, so results and goldens do not
change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from validator.model import Report, gc_paused

# exact types: a str or int subclass (an enum) takes the walked path, which writes it as
# the standard encoder does
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_INDENT = "  "


def _key(k: Any) -> str:
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
        return json.dumps(k)  # int.__repr__ / float repr, NaN and Infinity as json writes them
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _encoder(item_separator: str) -> Callable[[Any], str]:
    """One container (or scalar) as ``json.dumps(..., separators=(item_separator, ": "))``.

    The C encoder object is made once and called directly: ``JSONEncoder.encode`` would
    build a new one for every finding."""
    from json import encoder as std

    try:  # (markers, default, encoder, indent, key_sep, item_sep, sort_keys, skipkeys, allow_nan)
        c_enc = std.c_make_encoder(  # type: ignore[attr-defined]
            None, str, std.encode_basestring, None, ": ", item_separator,
            False, False, True)
    except TypeError:  # no C accelerator (None), or another signature: the standard path
        return json.JSONEncoder(ensure_ascii=False, default=str, separators=(item_separator, ": ")).encode

    def encode(o: Any) -> str:
        if isinstance(o, str):
            return std.encode_basestring(o)
        return "".join(c_enc(o, 0))

    return encode


class _Indented:
    """``indent=2, ensure_ascii=False, default=str`` output, chunk by chunk."""

    def __init__(self) -> None:
        self._flat: dict[int, Callable[[Any], str]] = {}
        self._scalar = _encoder(", ")

    def _flat_encoder(self, depth: int) -> Callable[[Any], str]:
        enc = self._flat.get(depth)
        if enc is None:
            sep = ",\n" + _INDENT * (depth + 1)
            enc = _encoder(sep)
            self._flat[depth] = enc
        return enc

    def chunks(self, o: Any, depth: int) -> Iterator[str]:
        if isinstance(o, dict):
            if not o:
                yield "{}"
                return
            inner, outer = "\n" + _INDENT * (depth + 1), "\n" + _INDENT * depth
            if _SCALAR_TYPES.issuperset(map(type, o.values())):
                yield "{" + inner + self._flat_encoder(depth)(o)[1:-1] + outer + "}"
                return
            first = True
            for k, v in o.items():
                yield ("{" if first else ",") + inner + self._scalar(_key(k)) + ": "
                first = False
                if isinstance(v, (dict, list, tuple)):
                    yield from self.chunks(v, depth + 1)
                else:
                    yield self._scalar(v)
            yield outer + "}"
        elif isinstance(o, (list, tuple)):
            if not o:
                yield "[]"
                return
            inner, outer = "\n" + _INDENT * (depth + 1), "\n" + _INDENT * depth
            if _SCALAR_TYPES.issuperset(map(type, o)):
                yield "[" + inner + self._flat_encoder(depth)(o)[1:-1] + outer + "]"
                return
            first = True
            for v in o:
                yield "[" + inner if first else "," + inner
                first = False
                if isinstance(v, (dict, list, tuple)):
                    yield from self.chunks(v, depth + 1)
                else:
                    yield self._scalar(v)
            yield outer + "]"
        else:
            yield self._scalar(o)


def iter_indented(obj: Any) -> Iterator[str]:
    """The text of ``json.dumps(obj, indent=2, ensure_ascii=False, default=str)``, in chunks."""
    return _Indented().chunks(obj, 0)


def dumps_indented(obj: Any) -> str:
    return "".join(iter_indented(obj))


class JsonRenderer:
    def render(self, report: Report, stream: TextIO) -> None:
        batch: list[str] = []
        with gc_paused():  # the result's dicts and chunks: many objects, no cycles
            for chunk in iter_indented(report.to_dict()):
                batch.append(chunk)
                if len(batch) >= 4096:
                    stream.write("".join(batch))
                    batch.clear()
            batch.append("\n")
            stream.write("".join(batch))
