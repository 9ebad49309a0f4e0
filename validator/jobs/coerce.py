"""A config value as a number or a flag: the readers' one reading of ``"1_000"``, ``"yes"``,
``4.0`` and ``"true"``.

A leaf of jobs/ (no other module of it imported): the model, the common helpers, detection
and the launcher readers all read values this way, and none of them may import another
just for it (tests/test_import_layers.py: no import circle).
"""

from __future__ import annotations

import re


def as_int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        s = v.strip().replace("_", "")
        if re.fullmatch(r"[-+]?\d+", s):
            return int(s)
        if re.fullmatch(r"[-+]?\d+(\.0*)?([eE]\+?\d+)?", s):
            f = float(s)
            return int(f) if f.is_integer() else None
    return None


def as_float(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip().replace("_", ""))
        except ValueError:
            return None
    return None


def as_bool(v: object) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return bool(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "yes", "1", "on"):
            return True
        if s in ("false", "no", "0", "off", "none", ""):
            return False
    return None


def typed_value(v: str) -> object:
    n = as_int(v)
    if n is not None:
        return n
    b = v.lower()
    return True if b == "true" else False if b == "false" else v
