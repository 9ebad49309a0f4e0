"""One rule for numbers beyond any real value, applied by every reader.

No fact, measurement, threshold or count spec-check reads is larger in magnitude than an
unsigned 64-bit counter (NVML's ECC and energy counters, byte sizes, bits per second), so
an integer or a float beyond ``LIMIT`` (a 400-digit integer, ``1e400`` read as infinity,
``1e300``), and NaN or infinity however written, is no reading of anything: a reader
refuses it with the field named (``beyond``/``first_beyond``) instead of letting it reach
arithmetic (``OverflowError: int too large to convert to float``) or a writer (a bare
``Infinity`` in JSON, which no JSON parser accepts).

The JSON readers apply it while parsing (``validator.io.jsondoc``); the YAML readers (rule
packs, profiles, waivers) to the loaded data (``validator.io.yamlfile.load_yaml``).
"""

from __future__ import annotations

import math
from typing import Any

LIMIT = 2**64  # 18,446,744,073,709,551,616: the largest unsigned 64-bit counter, plus one
_DIGITS = len(str(LIMIT))  # an integer written with fewer digits is always within LIMIT


def beyond(v: Any) -> bool:
    """True for an int or float no real value can be: NaN, infinite, or ``|v| > LIMIT``."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v > LIMIT or v < -LIMIT
    if isinstance(v, float):
        return not math.isfinite(v) or abs(v) > LIMIT
    return False


def describe(v: Any) -> str:
    """The number in words, short whatever its size ("a 400-digit integer", "1e+300", "NaN")."""
    if isinstance(v, int):
        digits = len(str(abs(v))) if v.bit_length() < 14000 else int(v.bit_length() * 0.30103) + 1
        return f"a {digits}-digit integer" if digits > 24 else str(v)
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else ("infinity" if math.isinf(v) else f"{v:g}")
    return repr(v)[:40]


def problem(v: Any) -> str:
    """Why ``v`` is refused, in one phrase."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN is not a number"
    return f"{describe(v)} is beyond any real value (the limit is 2^64 in magnitude)"


def any_beyond(data: Any) -> bool:
    """Whether ``data`` holds a number beyond LIMIT anywhere (no paths built: the check
    every rule pack and profile takes on each run)."""
    stack = [data]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        t = type(node)
        if t is dict or isinstance(node, dict):
            push(node.values())
        elif t is list or isinstance(node, list):
            push(node)
        elif ((t is float or t is int) and beyond(node)) or (t is not str and t is not bool and isinstance(node, (int, float)) and beyond(node)):
            return True
    return False


def first_beyond(data: Any, path: str = "") -> tuple[str, Any] | None:
    """(the path of the first number beyond LIMIT in ``data``, that number), else None.
    Paths read ``facts["gpu.count"].value``, ``rules[3].check.value``."""
    if not any_beyond(data):
        return None
    stack: list[tuple[str, Any]] = [(path, data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for k in reversed(list(node)):
                stack.append((join(where, k), node[k]))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                stack.append((f"{where}[{i}]", node[i]))
        elif beyond(node):
            return where or "(the document)", node
    return None


def join(path: str, key: Any) -> str:
    """``path`` and a mapping key: ``a.b``, or ``a["gpu.count"]`` where the key is no plain name."""
    k = str(key)
    if k.isidentifier():
        return f"{path}.{k}" if path else k
    import json

    return f"{path}[{json.dumps(k)[:80]}]"


def int_text(text: str) -> int:
    """A JSON integer's text as an int; ``ValueError`` (``Beyond``) past LIMIT, before any
    conversion of a long digit string (Python refuses over 4,300 digits, and converts
    fewer in quadratic time)."""
    digits = len(text) - (text[0] == "-")
    if digits < _DIGITS:
        return int(text)
    if digits > _DIGITS + 1 or beyond(v := int(text)):
        raise Beyond(text)
    return v


def float_text(text: str) -> float:
    """A JSON float's text as a float; ``Beyond`` where it is infinite or past LIMIT."""
    v = float(text)
    if beyond(v):
        raise Beyond(text)
    return v


class Beyond(ValueError):
    """A number's text beyond LIMIT (raised while parsing, before the field is known)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def describe_text(text: str) -> str:
    """A number as written, short whatever its length ("a 5000-digit integer", "1e400")."""
    digits = len(text.lstrip("-"))
    if not any(c in text for c in ".eE"):
        return f"a {digits}-digit integer" if digits > 24 else text
    return text if len(text) <= 24 else f"a {len(text)}-character number"


def text_problem(text: str) -> str:
    return f"{describe_text(text)} is beyond any real value (the limit is 2^64 in magnitude)"


def finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float written as a string (``"inf"``, ``"-inf"``,
    ``"nan"``): what a JSON writer falls back to, so that no output holds a bare ``NaN``
    or ``Infinity`` (which no JSON parser, spec-check's included, reads back)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if isinstance(obj, dict):
        return {(finite(k) if isinstance(k, float) else k): finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, **kwargs)``, never with NaN or Infinity in it (``finite``)."""
    import json

    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(finite(obj), allow_nan=False, **kwargs)
