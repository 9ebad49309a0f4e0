"""Rule values in words: what an expected sentence, a skip reason or a message says about
a parameter or a formula, in values and meaning rather than the rule file's internals.

A reader of a report sees "checkpoint interval in steps within 2,596 to 10,384 (Daly's
optimum for 8 GPUs, 50000 GPU-h MTBF per GPU, 60 s per write, 10 s per step, within a
factor of 2)", never "[2596 (daly_steps_min: 8 (job.gpu_count), gpu_mtbf, ...)]".
Parameter names stay in the JSON result (``parameters``) for machines, and in the one
place a person types them: ``--set NAME=VALUE``.

The engine resolves values; this module only phrases them. Leaf module: imports nothing
of validator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What an unset parameter stands for (its value is "unset": unknown until --set)
NOUNS: dict[str, str] = {
    "step_time": "the time per step",
    "gpu_count": "the job's GPU count",
}

# What a formula computes, for "cannot work out ...: <why>"
WHAT: dict[str, str] = {
    "product": "the expected value",
    "batch_product": "the expected global batch size",
    "daly_interval": "Daly's optimum checkpoint interval",
    "daly_interval_min": "Daly's optimum checkpoint interval",
    "daly_interval_max": "Daly's optimum checkpoint interval",
    "daly_steps_min": "Daly's optimum checkpoint interval in steps",
    "daly_steps_max": "Daly's optimum checkpoint interval in steps",
}

DALY = frozenset(WHAT) - {"product", "batch_product"}


def param_noun(name: str, description: str) -> str:
    """An unset parameter in words: "the time per step"; otherwise the first clause of its
    description, lower-cased ("minimum size of /dev/shm on a node")."""
    if name in NOUNS:
        return NOUNS[name]
    first = description.strip().split(";")[0].split(". ")[0].rstrip(".")
    return (first[:1].lower() + first[1:]) if first else name.replace("_", " ")


def origin_note(origin: str) -> str:
    """Where a non-default threshold came from, as an aside: " (--set)", " (profile p.yaml)";
    "" for the spec's default (the report lists every parameter and its origin)."""
    if not origin or origin == "default":
        return ""
    if origin.startswith("profile:"):
        return f" (profile {origin.split(':', 1)[1]})"
    return f" ({origin})"


def grouped(text: str) -> str:
    """A leading whole number of four or more digits with thousands separators:
    ``50000 GPU-h`` -> ``50,000 GPU-h``, ``16384`` -> ``16,384``."""
    import re

    return re.sub(r"^(\d{4,})(?![\d.])", lambda m: f"{int(m.group(1)):,}", text)


def count(value: float) -> str:
    """A count of steps or GPUs: ``2,596``."""
    return f"{round(value):,}"


class Arg:
    """One formula argument as phrased: its value as shown, and what it is (a fact's
    label; ``""`` for a parameter or a literal, whose value speaks for itself)."""

    __slots__ = ("label", "note", "shown")

    def __init__(self, shown: str, label: str = "", note: str = ""):
        self.shown, self.label, self.note = shown, label, note

    def aside(self) -> str:
        """Where the value came from, when a command line overrode a job's file."""
        return f" ({self.note})" if self.note else ""

    def words(self) -> str:
        return (f"{self.label} {self.shown}" if self.label else self.shown) + self.aside()


def product_words(args: list[Arg]) -> str:
    """``micro-batch size 4 x gradient accumulation steps 2 x data-parallel size 8`` (a literal
    1 is left out: it multiplies nothing)."""
    parts = [a.words() for a in args if a.label or a.shown not in ("1", "1.0")]
    return " x ".join(parts or ["1"])


def daly_words(args: Mapping[str, Arg]) -> str:
    """The inputs of Daly's optimum as a reader checks them: "Daly's optimum for 8 GPUs,
    50000 GPU-h MTBF per GPU, 60 s per write, 10 s per step, within a factor of 2"."""
    parts = []
    gpus = args.get("gpus")
    if gpus is not None:
        parts.append(f"{grouped(gpus.shown)} GPUs{gpus.aside()}")
    if "gpu_mtbf_h" in args:
        parts.append(f"{grouped(args['gpu_mtbf_h'].shown)} MTBF per GPU")
    if "write_time_s" in args:
        parts.append(f"{args['write_time_s'].shown} per write")
    if "step_time_s" in args:
        parts.append(f"{args['step_time_s'].shown} per step{args['step_time_s'].aside()}")
    text = "Daly's optimum for " + ", ".join(parts)
    if "tolerance" in args:
        text += f", within a factor of {args['tolerance'].shown}"
    return text


def static_daly_words(args: Mapping[str, str]) -> str:
    """The same before anything is resolved (skip and error findings, ``rules explain``):
    each argument is a value, a label or a noun ("the job's GPU count")."""
    parts = []
    if "gpus" in args:
        parts.append(f"the {args['gpus']}")
    if "gpu_mtbf_h" in args:
        parts.append(f"{grouped(args['gpu_mtbf_h'])} MTBF per GPU")
    if "write_time_s" in args:
        parts.append(f"{args['write_time_s']} per write")
    if "step_time_s" in args:
        parts.append(f"the {args['step_time_s']}")
    text = "Daly's optimum for " + ", ".join(parts)
    if "tolerance" in args:
        text += f", within a factor of {args['tolerance']}"
    return text


def value_words(values: Mapping[str, str], text: Any) -> str:
    """A coded value (``divisible``) as the catalogue explains it, else as it is; a list as
    shown (``[hw_slowdown, gpu_idle]``) item by item."""
    import re

    text = str(text)
    if text in values:
        return values[text]
    # a list as shown, possibly with an aside after it: "[gpu_utilization, memory] (--set)"
    return re.sub(r"\[([^\[\]]*)\]",
                  lambda m: "[" + ", ".join(values.get(t, t) for t in m.group(1).split(", ")) + "]", text)
