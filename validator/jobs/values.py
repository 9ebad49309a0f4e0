"""A config value as a number or a flag, the way frameworks read them (``"1_000"``,
``"1e3"``, ``"yes"``): a leaf module, so that the failure-detection mechanisms and the
readers' helpers (``common.py``) share it without importing each other."""

from __future__ import annotations

import re
from typing import Any


def as_int(v: Any) -> int | None:
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


def as_float(v: Any) -> float | None:
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


def as_bool(v: Any) -> bool | None:
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
