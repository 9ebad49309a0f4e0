"""Named computations a rule may use for its expected value (a closed set).

Rules are data, but some thresholds are formulas of parameters and facts: the optimum
checkpoint interval (Young/Daly) or a rate times an efficiency. A rule names one of these
with ``{formula: NAME, args: {...}}``; arguments arrive resolved, as plain numbers in
base units (seconds, bit/s, bytes, counts), and a formula returns a number in base units
or raises ValueError with the reason (which becomes the finding's message).
"""

from __future__ import annotations

from collections.abc import Callable


def product(a: float, b: float) -> float:
    """``a * b``: e.g. the port rate times the measured-efficiency factor."""
    return a * b


FORMULAS: dict[str, Callable[..., float]] = {
    "product": product,
}
