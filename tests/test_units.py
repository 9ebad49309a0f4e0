from __future__ import annotations

import math

import pytest

from validator.errors import UnitError
from validator.values.units import format_quantity, format_value, parse_quantity


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("400 Gb/s", "Gb/s", 400.0),
    ("400Gbps", "Gb/s", 400.0),
    ("50 GB/s", "Gb/s", 400.0),        # bytes, not bits: x8
    ("400000 Mb/s", "Gb/s", 400.0),    # psutil / sysfs speed
    ("26562 MB/s", "Gb/s", 212.496),   # NVLink speed fields are megabytes
    ("1 GiB", "B", 2.0**30),
    ("1 GB", "B", 1e9),
    ("64 MB", "MiB", 61.03515625),
    ("90 s", "s", 90.0),
    ("1.5 min", "s", 90.0),
    ("1 h", "min", 60.0),
    ("50000 GPU-h", "GPU-h", 50000.0),
    ("700000 mW", "W", 700.0),
])
def test_conversions(text: str, unit: str, expected: float) -> None:
    assert parse_quantity(text).to(unit) == pytest.approx(expected)


def test_unlimited_needs_a_dimension_and_is_infinite() -> None:
    assert math.isinf(parse_quantity("unlimited", dimension="bytes").base)
    with pytest.raises(UnitError):
        parse_quantity("unlimited")


@pytest.mark.parametrize(("text", "dimension", "message"), [
    ("3 GB", "bitrate", 'is bytes, expected bitrate'),
    ("400 Gbits", None, 'unknown unit "Gbits"'),
    ("fast", None, "not a quantity"),
    (True, "bytes", "expected a quantity"),
])
def test_bad_quantities_say_why(text: object, dimension: str | None, message: str) -> None:
    with pytest.raises(UnitError, match=message):
        parse_quantity(text, dimension=dimension)


def test_cannot_convert_across_dimensions() -> None:
    with pytest.raises(UnitError, match="cannot express bitrate"):
        parse_quantity("400 Gb/s").to("GiB")


@pytest.mark.parametrize(("value", "unit", "text"), [
    (8388608, "B", "8 MiB"),
    (536870912, "B", "512 MiB"),
    (400, "Gb/s", "400 Gb/s"),
    (4e11, "b/s", "400 Gb/s"),
    (90, "s", "1.5 min"),
    (True, None, "true"),
    ([], None, "none"),
    (["hw_slowdown"], None, "[hw_slowdown]"),
    (float("inf"), "B", "unlimited"),
    (None, None, "none"),
])
def test_format_value(value: object, unit: str | None, text: str) -> None:
    assert format_value(value, unit) == text


def test_format_quantity_picks_readable_unit() -> None:
    assert format_quantity(parse_quantity("1073741824 B")) == "1 GiB"
    assert format_quantity(parse_quantity("400 Gb/s"), "Gb/s") == "400 Gb/s"


@pytest.mark.parametrize(("value", "unit", "text"), [
    (500, "B", "500 B"), (1, "B", "1 B"), (-1, "B", "-1 B"), (30, "s", "30 s"),
    (0.0005, "s", "0.5 ms"), (999, "b/s", "999 b/s"), (float("nan"), "B", "NaN"), (600, "sec", "10 min"),
])
def test_format_value_small_and_odd_values(value: float, unit: str, text: str) -> None:
    """Regression: values below the first display step used to recurse forever."""
    assert format_value(value, unit) == text


def test_unknown_unit_suggests_the_ones_meant() -> None:
    import pytest as _pytest

    from validator.errors import UnitError
    from validator.values.units import parse_quantity, suggest_units

    assert suggest_units("G", "bytes") == "GiB or GB"
    assert suggest_units("M", "bytes") == "MiB or MB"
    with _pytest.raises(UnitError, match=r'unknown unit "G" \(did you mean GiB or GB\?\)'):
        parse_quantity("1G", dimension="bytes")
    with _pytest.raises(UnitError, match=r'unknown unit "furlong" \(e\.g\.'):
        parse_quantity("1 furlong", dimension="bytes")
