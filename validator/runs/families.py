"""Which metric family a logged name belongs to, from the frameworks' own names (tags.yaml).

The table is data, one row per framework with the version its names were read at, so a
finding can say "train/grad_norm (HF transformers 5.17.0)". Lookups are memoised per name:
a run logs a few hundred names millions of times, and the streaming pass must stay close to
the speed of reading the event file itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import JSONValue

FAMILIES = ("loss", "throughput", "gradient_stats", "memory", "gpu_utilization", "collective_latency",
            "energy")
# MON-01's families (validator/jobs/metrics.py): gpu_utilization is met by utilization or throughput
MON01 = {"gpu_utilization": ("gpu_utilization", "throughput"), "memory": ("memory",),
         "collective_latency": ("collective_latency",), "gradient_stats": ("gradient_stats",)}
# families whose non-finite values mean the training itself went wrong (MON-02 fails them)
MUST_BE_FINITE = frozenset({"loss", "gradient_stats"})


@dataclass(frozen=True)
class Match:
    family: str
    framework: str  # "HF transformers 5.17.0"


@dataclass(frozen=True)
class _Table:
    exact: dict[str, Match]
    prefix: tuple[tuple[str, Match], ...]
    pattern: tuple[tuple[re.Pattern[str], Match], ...]


@lru_cache(maxsize=1)
def _table() -> _Table:
    from pathlib import Path

    import yaml

    # beside this module (a wheel carries the package's files): read once per process
    data: dict[str, JSONValue] = yaml.safe_load((Path(__file__).parent / "tags.yaml").read_text("utf-8"))
    exact: dict[str, Match] = {}
    prefix: list[tuple[str, Match]] = []
    pattern: list[tuple[re.Pattern[str], Match]] = []
    for fw in data["frameworks"]:
        who = f"{fw['name']} {fw['version']}" if fw["version"] != "-" else fw["name"]
        for name, fam in (fw.get("exact") or {}).items():
            exact.setdefault(str(name), Match(fam, who))
        prefix += [(str(p), Match(fam, who)) for p, fam in (fw.get("prefix") or {}).items()]
        pattern += [(re.compile(p), Match(fam, who)) for p, fam in (fw.get("pattern") or {}).items()]
    for m in (*exact.values(), *(m for _, m in prefix), *(m for _, m in pattern)):
        if m.family not in FAMILIES:
            raise ValueError(f"tags.yaml: unknown family {m.family!r}")
    return _Table(exact, tuple(prefix), tuple(pattern))


def classify(name: str) -> Match | None:
    """The family of a logged metric name, or None (learning rate, epoch, counters)."""
    t = _table()
    m = t.exact.get(name)
    if m is not None:
        return m
    for p, m in t.prefix:
        if name.startswith(p):
            return m
    for rx, m in t.pattern:
        if rx.fullmatch(name):
            return m
    return None


class Classifier:
    """classify() with a per-run memo bounded in size (a run with a million distinct names
    still reads in bounded memory: past the bound, names are classified each time)."""

    MAX = 50_000

    def __init__(self) -> None:
        self._memo: dict[str, Match | None] = {}

    def __call__(self, name: str) -> Match | None:
        try:
            return self._memo[name]
        except KeyError:
            m = classify(name)
            if len(self._memo) < self.MAX:
                self._memo[name] = m
            return m
