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

FAMILIES = ("loss", "throughput", "eval_throughput", "gradient_stats", "memory", "gpu_utilization",
            "collective_latency", "energy")
# Throughput measured by an evaluation loop (HF's eval_samples_per_second, a val/ or test/ name):
# logged at the evaluation cadence, it is not training throughput: it meets no MON-01 family
# and MON-02 does not judge its cadence (the evaluation interval is not the metrics interval).
EVAL_THROUGHPUT = "eval_throughput"
EVAL_ONLY = frozenset({EVAL_THROUGHPUT})
_EVAL_NAME = re.compile(r"(?i)(?:^|.*[/._-])(?:eval|evaluation|val|valid|validation|test)(?:[/._-]).*")

# The setting that changes how often a framework logs (the fix a MON-02 finding points at),
# by the framework row of tags.yaml whose names were matched.
INTERVAL_SETTING = {
    "HF transformers": "TrainingArguments.logging_steps (HF transformers; default 500)",
    "Lightning": "Trainer(log_every_n_steps=...) (Lightning; default 50)",
    "torchtitan": "[metrics] log_freq (torchtitan)",
    "Megatron-LM": "--log-interval (Megatron-LM; default 100)",
    "NeMo": "trainer.log_every_n_steps (NeMo)",
    "DeepSpeed": "steps_per_print in the DeepSpeed config (default 10)",
    "any framework": "the interval of the code that logs it",
}
# How a framework logs training throughput at every logging step (MON-01's throughput family).
THROUGHPUT_SETTING = {
    "HF transformers": ("HF Trainer logs train_samples_per_second only once training ends: log "
                        "samples or tokens per second at each logging step from a TrainerCallback "
                        "(on_log)"),
    "Lightning": "Lightning: add the ThroughputMonitor callback",
    "Megatron-LM": "Megatron-LM: --log-throughput",
    "any framework": "log samples or tokens per second at each training logging step",
}


def setting_for(framework: str, table: dict[str, str]) -> str:
    """The table's entry for a framework row name (HF transformers 5.17.0)."""
    for fw, text in table.items():
        if framework.startswith(fw):
            return text
    return table["any framework"]
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
    m = _classify(name)
    if m is not None and m.family == "throughput" and _EVAL_NAME.fullmatch(name):
        return Match(EVAL_THROUGHPUT, m.framework)
    return m


def _classify(name: str) -> Match | None:
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
