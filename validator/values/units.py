"""Quantities with units: parse, convert, format.

Units are where hardware checks go wrong most often: a NIC's ``speed`` is Mbit/s, an IB
``rate`` is Gb/s, NVLink speed is MB/s (bytes), iperf3 reports bit/s. Every threshold in
the spec and every observed value carries a unit, and comparisons convert both to the
dimension's base unit first. Case matters: ``Gb/s`` is gigabits, ``GB/s`` gigabytes.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from validator.errors import UnitError
from validator.lazy import Pattern


class Unit(NamedTuple):
    dimension: str
    factor: float  # multiply by this to reach the dimension's base unit


_BIT = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BYTE_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BYTE_IEC = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}


def _build() -> dict[str, Unit]:
    table: dict[str, Unit] = {}
    # bitrate, base bit/s
    for p, f in _BIT.items():
        for spelling in (f"{p}b/s", f"{p}bit/s", f"{p}bps", f"{p}b/sec", f"{p}bit/sec"):
            table[spelling] = Unit("bitrate", f)
    for p, f in {**_BYTE_SI, **_BYTE_IEC}.items():
        for spelling in (f"{p}B/s", f"{p}Bps", f"{p}B/sec"):
            table[spelling] = Unit("bitrate", f * 8)
    # bytes, base B
    for p, f in {**_BYTE_SI, **_BYTE_IEC}.items():
        table[f"{p}B"] = Unit("bytes", f)
    # duration, base s
    table.update(
        {
            "ns": Unit("duration", 1e-9),
            "us": Unit("duration", 1e-6),
            "ms": Unit("duration", 1e-3),
            "s": Unit("duration", 1.0),
            "sec": Unit("duration", 1.0),
            "min": Unit("duration", 60.0),
            "h": Unit("duration", 3600.0),
            "d": Unit("duration", 86400.0),
        }
    )
    table.update(
        {
            "GT/s": Unit("transfer_rate", 1.0),
            "mW": Unit("power", 1e-3),
            "W": Unit("power", 1.0),
            "kW": Unit("power", 1e3),
            "J": Unit("energy", 1.0),
            "kJ": Unit("energy", 1e3),
            "Wh": Unit("energy", 3600.0),
            "kWh": Unit("energy", 3.6e6),
            "%": Unit("percent", 1.0),
            "C": Unit("temperature", 1.0),
            "GPU-h": Unit("gpu_time", 1.0),
            "steps": Unit("steps", 1.0),
            "x": Unit("count", 1.0),
            "": Unit("count", 1.0),
        }
    )
    return table


UNITS: dict[str, Unit] = _build()
# The unit each dimension is shown in when a value is formatted for people.
DISPLAY: dict[str, tuple[str, ...]] = {
    "bitrate": ("Tb/s", "Gb/s", "Mb/s", "kb/s", "b/s"),
    "bytes": ("TiB", "GiB", "MiB", "KiB", "B"),
    "duration": ("d", "h", "min", "s", "ms"),
}
_EXAMPLES = {"bitrate": "400 Gb/s", "bytes": "1 GiB", "duration": "90 s", "power": "700 W"}
UNLIMITED = "unlimited"
_QUANTITY = Pattern(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")


class Quantity(NamedTuple):
    """A number in its dimension's base unit (bit/s, B, s, ...)."""

    base: float
    dimension: str

    def to(self, unit: str) -> float:
        """This quantity expressed in ``unit`` (same dimension)."""
        u = unit_of(unit)
        if u.dimension != self.dimension:
            raise UnitError(f'cannot express {self.dimension} in "{unit}" ({u.dimension})')
        return self.base / u.factor


def unit_of(name: str) -> Unit:
    """The unit called ``name``; raises UnitError naming the known ones."""
    try:
        return UNITS[name]
    except KeyError:
        raise UnitError(f'unknown unit "{name}" (e.g. {_COMMON})') from None


def suggest_units(name: str, dimension: str | None = None) -> str:
    """'G' for a byte size -> 'GiB or GB': the units that ``name`` could have meant, in the
    wanted dimension when known (binary first: sizes in the spec are binary)."""
    if not name:
        return ""
    low = name.lower()
    found = [u for u, info in UNITS.items() if u and u.lower().startswith(low) and u != name
             and (dimension is None or info.dimension == dimension)]
    found.sort(key=lambda u: ("i" not in u, len(u), u))
    found = found[:3]
    return " or ".join(found) if len(found) <= 2 else ", ".join(found[:-1]) + " or " + found[-1]


def parse_quantity(text: object, *, dimension: str | None = None) -> Quantity:
    """Parse ``"400 Gb/s"``, ``"1 GiB"``, ``"90s"`` or ``"unlimited"``.

    ``dimension`` makes a bare number (or a unit of another dimension) an error, so a
    profile that writes ``shm_min: 1`` is told to say ``1 GiB``.
    """
    if isinstance(text, bool):
        raise UnitError(f"expected a quantity with a unit, got {text!r}")
    if isinstance(text, str) and text.strip().lower() in (UNLIMITED, "infinity", "inf"):
        if dimension is None:
            raise UnitError('"unlimited" needs a known dimension')
        return Quantity(math.inf, dimension)
    try:
        if isinstance(text, (int, float)):
            number, unit_name = float(text), ""
        elif isinstance(text, str):
            m = _QUANTITY.match(text)
            if not m:
                # the example is in the unit the value needs: a duration is not "400 Gb/s"
                example = (f'"{_EXAMPLES[dimension]}"' if dimension in _EXAMPLES
                           else '"400 Gb/s", "1 GiB" or "90 s"')
                raise UnitError(f'not a quantity: "{text[:80]}" (write a number and a unit, e.g. {example})')
            number, unit_name = float(m.group(1)), m.group(2)
        else:
            raise UnitError(f"expected a quantity, got {type(text).__name__}")
    except (OverflowError, ValueError):  # an integer past the float range (or its digit limit)
        number, unit_name = math.inf, ""
    if not math.isfinite(number):  # "1e400 s" is no measurement: say "unlimited" if meant
        raise UnitError(f'"{str(text)[:40]}{"..." if len(str(text)) > 40 else ""}" is outside the range of '
                        'any real quantity (write "unlimited" for no limit)')
    if unit_name not in UNITS:
        hint = suggest_units(unit_name, dimension)
        raise UnitError(f'unknown unit "{unit_name}" ' + (f"(did you mean {hint}?)" if hint else f"(e.g. {_COMMON})"))
    u = unit_of(unit_name)
    if dimension is not None and u.dimension != dimension:
        example = _EXAMPLES.get(dimension, dimension)
        raise UnitError(f'"{text}" is {u.dimension}, expected {dimension} (e.g. "{example}")')
    return Quantity(number * u.factor, u.dimension)


def _num(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


_AUTOSCALE = {"B", "s", "sec", "b/s"}
_COMMON = "Gb/s, GB/s, Mb/s, B, MiB, GiB, s, min, h, W, GT/s, %"


def _plain(x: float, unit: str | None) -> str:
    if not unit:
        return _num(x)
    return f"{_num(x)}{unit}" if unit in ("%", "x") else f"{_num(x)} {unit}"


def format_value(value: object, unit: str | None) -> str:
    """A value for people: ``400 Gb/s``, ``8 MiB``, ``unlimited``, ``true``.

    Values stored in a base unit (bytes, seconds, bit/s) are shown in the most readable
    unit of their dimension: 536870912 B reads as 512 MiB.
    """
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return UNLIMITED if value > 0 else "-infinity"
        if unit in _AUTOSCALE and value != 0:
            u = UNITS[unit]
            return format_quantity(Quantity(float(value) * u.factor, u.dimension))
        return _plain(float(value), unit)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v, None) for v in value[:20]) + (", ...]" if len(value) > 20 else "]") \
            if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(v, None)}" for k, v in list(value.items())[:20])
    return str(value)


def format_quantity(q: Quantity, unit: str | None = None) -> str:
    """A quantity in ``unit``, or in the most readable display unit of its dimension."""
    if not math.isfinite(q.base):
        return UNLIMITED if q.base > 0 else format_value(q.base, None)
    if unit:
        return _plain(q.to(unit), unit) if unit not in _AUTOSCALE else format_value(q.to(unit), unit)
    for name in DISPLAY.get(q.dimension, ()):
        if abs(q.base) >= UNITS[name].factor:
            return _plain(q.base / UNITS[name].factor, name)
    smallest = DISPLAY.get(q.dimension)
    if smallest:
        return _plain(q.base / UNITS[smallest[-1]].factor, smallest[-1])
    return _plain(q.base, _first_unit(q.dimension))


def _first_unit(dimension: str) -> str:
    for name, u in UNITS.items():
        if u.dimension == dimension and u.factor == 1.0:
            return name
    return ""


def parse_duration_text(text: str) -> float:
    """Seconds from ``"90 s"``, ``"1h"``, ``"2 min"``; raises UnitError otherwise."""
    return parse_quantity(text, dimension="duration").base
