"""DeepSpeed's own log lines as metrics: what its engine prints every ``steps_per_print`` steps.

Read from a launcher/training log already read whole (``recovery_log.read_log``, its cap),
each line in DeepSpeed v0.19.5's format (deepspeed/utils/timer.py, deepspeed/runtime/engine.py,
deepspeed/runtime/pipe/engine.py):

* ``[Rank 0] step=10, skipped=0, lr=[...], mom=[...]`` (``DeepSpeedEngine._report_progress``):
  the optimizer step the lines after it belong to;
* ``epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=25.0, CurrSamplesPerSec=25.7,
  MemAllocated=4.32GB, MaxMemAllocated=38.49GB`` (``ThroughputTimer.stop``; before 0.9 it began
  ``0/10,``): throughput and memory at that step;
* ``steps: 10 loss: 2.3001 iter time (s): 0.512 samples/sec: 31.250`` (``PipelineEngine``):
  loss and throughput;
* ``time (ms) | fwd_microstep: 12.34 | bwd_microstep: ... | bwd_allreduce_microstep: ...``
  (``SynchronizedWallClockTimer.log``, with ``wall_clock_breakdown``): each timer at the
  step of the line before it; the allreduce timers are collective latency.

A line's wall time is its logging prefix (``[2023-11-07 01:55:23,711]``, read as UTC as the
launcher's lines are); a line without one has none. The names are DeepSpeed's (tags.yaml,
"DeepSpeed log" row).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timezone

Scalar = tuple[str, int | None, float | None, float]

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"
_PREFIX = re.compile(r"^\[?(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[,.](\d{1,6}))?\]?")
_STEP = re.compile(r"\bstep=(\d{1,12}), skipped=(\d{1,12}), lr=")
_TPUT = re.compile(r"(?:global_step=(\d{1,12})|\b\d{1,6}/(\d{1,12})),\s*RunningAvgSamplesPerSec=" + _NUM
                   + r"(?:,\s*CurrSamplesPerSec=" + _NUM + r")?(?:,\s*MemAllocated=" + _NUM
                   + r"GB)?(?:,\s*MaxMemAllocated=" + _NUM + r"GB)?")
_PIPE = re.compile(r"\bsteps: (\d{1,12}) loss: " + _NUM + r" .*?iter time \(s\): " + _NUM
                   + r" samples/sec: " + _NUM)
_TIMER = re.compile(r"\| ([A-Za-z_]+): " + _NUM)
MAX_SCALARS = 10_000_000  # a 64 MiB log holds fewer; a bound all the same


def _wall(line: str) -> float | None:
    m = _PREFIX.match(line)
    if m is None:
        return None
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int((frac or "0").ljust(6, "0")[:6]),
                     tzinfo=timezone.utc)
    except ValueError:
        return None
    return t.timestamp()


def scalars(text: str) -> Iterator[Scalar]:
    """The metrics in a log's DeepSpeed lines, in the log's order."""
    if "RunningAvgSamplesPerSec=" not in text and "samples/sec: " not in text and "time (ms) |" not in text:
        return
    step: int | None = None
    n = 0
    for line in text.splitlines():
        if "step" not in line and "time (ms)" not in line:
            continue
        m = _STEP.search(line)
        if m is not None:
            step = int(m.group(1))
            continue
        wall = _wall(line)
        m = _TPUT.search(line)
        if m is not None:
            step = int(m.group(1) or m.group(2))
            for name, x in zip(("RunningAvgSamplesPerSec", "CurrSamplesPerSec", "MemAllocated", "MaxMemAllocated"),
                               m.groups()[2:], strict=True):
                if x is not None:
                    n += 1
                    yield name, step, wall, float(x)
            continue
        m = _PIPE.search(line)
        if m is not None:
            step = int(m.group(1))
            n += 2
            yield "loss", step, wall, float(m.group(2))
            yield "samples/sec", step, wall, float(m.group(4))
            continue
        at = line.find("time (ms) |")
        if at >= 0:
            for t in _TIMER.finditer(line, at):
                n += 1
                yield t.group(1), step, wall, float(t.group(2))
        if n > MAX_SCALARS:
            return
