"""Named computations a rule may use for its expected value (a closed set).

Rules are data, but some thresholds are formulas of parameters and facts: the optimum
checkpoint interval (Young/Daly) or a rate times an efficiency. A rule names one of these
with ``{formula: NAME, args: {...}}``; arguments arrive resolved, as plain numbers in
base units (seconds, bit/s, bytes, counts; GPU-hours for the ``gpu_time`` dimension,
whose base unit is the GPU-hour), and a formula returns a number in base units or raises
ValueError with the reason (which becomes the finding's message). A fact argument that
is unknown arrives as ``None``; the formula then says which ``--set`` would decide it,
so the finding is a ``skip`` that names the missing input, never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Callable

_SET_HINT = {
    "gpus": "the job's GPU count is unknown: pass --set gpu_count=N",
    "dp": "the data-parallel size is unknown (no world size in the job's files): "
    "pass --set gpu_count=N",
    "step_time_s": "the time per step is unknown: pass --set step_time=SECONDS",
}


def _need(**values: object) -> None:
    """Every unknown input is named at once (GPU count *and* step time), so one run
    says every --set that would decide the finding."""
    missing = [
        _SET_HINT.get(name, f"{name} is unknown")
        for name, v in values.items()
        if v is None or (isinstance(v, float) and math.isnan(v))
    ]
    if missing:
        raise ValueError("; ".join(missing))
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name} is not a number ({v!r})")


def product(a: float, b: float) -> float:
    """``a * b``: e.g. the port rate times the measured-efficiency factor."""
    return a * b


def daly_interval(gpus: float, gpu_mtbf_s: float, write_time_s: float) -> float:
    """Daly's (2006) higher-order optimum compute time between checkpoints, in seconds.

    ``M`` = job MTBF = per-GPU MTBF / GPU count (independent exponential failures);
    ``tau = sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d`` for ``d < 2M``, else
    ``M``. Reproduces Daly's published points (d = 5 min: M = 24 h -> 116.7 min).
    """
    _need(gpus=gpus, gpu_mtbf_s=gpu_mtbf_s, write_time_s=write_time_s)
    if gpus <= 0:
        raise ValueError(f"GPU count must be positive, got {gpus:g}")
    if gpu_mtbf_s <= 0 or write_time_s < 0:
        raise ValueError("MTBF must be positive and the write time non-negative")
    m = gpu_mtbf_s / gpus
    d = write_time_s
    if d >= 2 * m:
        return m
    r = d / (2 * m)
    return math.sqrt(2 * d * m) * (1 + math.sqrt(r) / 3 + r / 9) - d


def _bounds(
    gpus: float | None,
    gpu_mtbf_h: float | None,
    write_time_s: float | None,
    tolerance: float | None,
) -> tuple[float, float]:
    _need(gpus=gpus, gpu_mtbf_h=gpu_mtbf_h, write_time_s=write_time_s, tolerance=tolerance)
    assert (
        gpus is not None
        and gpu_mtbf_h is not None
        and write_time_s is not None
        and tolerance is not None
    )
    if tolerance < 1:
        raise ValueError(f"checkpoint_interval_tolerance must be >= 1, got {tolerance:g}")
    tau = daly_interval(gpus, gpu_mtbf_h * 3600.0, write_time_s)
    return tau / tolerance, tau * tolerance


def daly_interval_min(
    gpus: float | None,
    gpu_mtbf_h: float | None,
    write_time_s: float | None,
    tolerance: float | None,
) -> float:
    """Lower end of the accepted interval, seconds: Daly's optimum / tolerance."""
    return _bounds(gpus, gpu_mtbf_h, write_time_s, tolerance)[0]


def daly_interval_max(
    gpus: float | None,
    gpu_mtbf_h: float | None,
    write_time_s: float | None,
    tolerance: float | None,
) -> float:
    """Upper end of the accepted interval, seconds: Daly's optimum x tolerance."""
    return _bounds(gpus, gpu_mtbf_h, write_time_s, tolerance)[1]


def _in_steps(seconds: float, step_time_s: float | None) -> float:
    _need(step_time_s=step_time_s)
    assert step_time_s is not None
    if step_time_s <= 0:
        raise ValueError("step_time must be positive")
    return seconds / step_time_s


def daly_steps_min(
    gpus: float | None,
    gpu_mtbf_h: float | None,
    write_time_s: float | None,
    tolerance: float | None,
    step_time_s: float | None,
) -> float:
    """Lower end of the accepted interval in steps (needs the time per step)."""
    _need(gpus=gpus, step_time_s=step_time_s)
    return _in_steps(_bounds(gpus, gpu_mtbf_h, write_time_s, tolerance)[0], step_time_s)


def daly_steps_max(
    gpus: float | None,
    gpu_mtbf_h: float | None,
    write_time_s: float | None,
    tolerance: float | None,
    step_time_s: float | None,
) -> float:
    """Upper end of the accepted interval in steps (needs the time per step)."""
    _need(gpus=gpus, step_time_s=step_time_s)
    return _in_steps(_bounds(gpus, gpu_mtbf_h, write_time_s, tolerance)[1], step_time_s)


def batch_product(micro: float | None, accumulation: float | None, dp: float | None) -> float:
    """micro-batch x gradient accumulation x data-parallel size (the framework batch rule)."""
    _need(micro=micro, accumulation=accumulation, dp=dp)
    assert micro is not None and accumulation is not None and dp is not None
    return micro * accumulation * dp


# How formulas read in a rule's expected sentence (``rules explain``, skip and error
# findings, where nothing is resolved yet): a rule file's internals ("daly_steps_min(...)")
# mean nothing to the reader of a report. An argument reads as a parameter's name (what
# --set takes), a fact's label or a literal.

PRODUCTS = frozenset({"product", "batch_product"})
"""Formulas that multiply their arguments: read as ``a x b`` (a literal 1 left out)."""

LABELS: dict[str, str] = {
    "daly_interval": "Daly's optimum interval",
    "daly_interval_min": "the low end of Daly's optimum range",
    "daly_interval_max": "the high end of Daly's optimum range",
    "daly_steps_min": "the low end of Daly's optimum range in steps",
    "daly_steps_max": "the high end of Daly's optimum range in steps",
}
"""The others, by what they compute: read as ``LABEL (of ARGS)``."""

RANGES: dict[tuple[str, str], str] = {
    ("daly_interval_min", "daly_interval_max"): "Daly's optimum range",
    ("daly_steps_min", "daly_steps_max"): "Daly's optimum range",
}
"""Pairs a ``between`` check takes as its bounds, read as one range:
``LABEL (LOW .. HIGH of ARGS)``."""

FORMULAS: dict[str, Callable[..., float]] = {
    "product": product,
    "daly_interval": daly_interval,
    "daly_interval_min": daly_interval_min,
    "daly_interval_max": daly_interval_max,
    "daly_steps_min": daly_steps_min,
    "daly_steps_max": daly_steps_max,
    "batch_product": batch_product,
}
