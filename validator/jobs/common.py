"""Helpers every reader shares: precision names, environment variables, numbers.

Frameworks spell the same thing many ways (``bf16-mixed``, ``bfloat16``, ``--bf16``,
``mixed_precision: bf16``); these helpers fold them into the job model's vocabulary so
that rules see one word per concept.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeVar

from validator.jobs.base import bool_of as bool_of  # re-exported: every reader calls c.int_of etc.
from validator.jobs.base import float_of as float_of
from validator.jobs.base import int_of as int_of
from validator.jobs.base import not_set as not_set  # re-exported: readers call c.not_set
from validator.jobs.base import typed
from validator.jobs.coerce import as_bool as as_bool  # re-exported: every reader calls c.as_int etc.
from validator.jobs.coerce import as_float as as_float
from validator.jobs.coerce import as_int as as_int
from validator.jobs.model import JobModel
from validator.lazy import Pattern

if TYPE_CHECKING:
    from validator.jobs.base import Ctx
    from validator.report.model import JSONValue

T = TypeVar("T")

HALF = ("bf16", "fp16", "fp8")

# NCCL / torch variables the spec discourages in production, with the reason.
DISCOURAGED_ENV = {
    "NCCL_TREE_THRESHOLD": "removed in NCCL 2.5; has no effect",
    "NCCL_ASYNC_ERROR_HANDLING": "legacy name; use TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_BLOCKING_WAIT": "legacy name; use TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_DEBUG_SUBSYS": "debugging only",
    "NCCL_PROTO": "debugging only: pins the protocol for every message size",
    "CUDA_LAUNCH_BLOCKING": "debugging only: serializes every kernel launch",
    "TORCH_NCCL_DESYNC_DEBUG": "debugging only",
}


# values that restore the default behaviour, so are no debug setting: CUDA_LAUNCH_BLOCKING=0
# is asynchronous launches, as without the variable (CUDA's documented default)
DEFAULT_RESTORING = {"CUDA_LAUNCH_BLOCKING": ("0",), "TORCH_NCCL_DESYNC_DEBUG": ("0",)}


def _restores_default(name: str, value: str) -> bool:
    return value.strip().strip("'\"") in DEFAULT_RESTORING.get(name, ())


def duration_of(
    model: JobModel, fact: str, raw: JSONValue, file: str | None, line: int | None, source: str
) -> float | None:
    """A Lightning duration (``DD:HH:MM:SS``, ``H:MM:SS``, a timedelta dict or seconds)."""
    return typed(
        lambda v: as_float(v) if isinstance(v, (int, float)) else lightning_time(v),
        "a duration (DD:HH:MM:SS, or a dict of days/hours/minutes/seconds)",
        model,
        fact,
        raw,
        file,
        line,
        source,
    )


def precision(model: JobModel, mode: str, file: str | None, line: int | None, source: str) -> None:
    """Record the compute precision (bf16 | fp16 | fp8 | fp32)."""
    model.set("job.precision.mode", mode, file, line, source)
    if mode in HALF:
        model.add("job.precision.modes", mode, file, line, source)



def dtype_word(v: JSONValue) -> str | None:
    """``bfloat16``/``bf16``/``float16``/``fp32``/``float32`` -> bf16/fp16/fp32."""
    if not isinstance(v, str):
        return None
    s = v.strip().lower().replace("-", "").replace("_", "")
    if s in ("bf16", "bfloat16", "mixedbfloat16", "bf16mixed", "bf16true"):
        return "bf16"
    if s in ("fp16", "float16", "half", "16", "mixedfloat16", "16mixed", "16true"):
        return "fp16"
    if s in ("fp32", "float32", "float", "32", "32true", "no", "highest"):
        return "fp32"
    if s.startswith("fp8") or s in ("transformerengine", "float8"):
        return "fp8"
    return None


def env(model: JobModel, name: str, value: JSONValue, file: str, line: int | None) -> None:
    """An environment variable the job sets (export, PyTorchJob env, env file)."""
    value = "" if value is None else str(value)
    _v11_env(model, name, value, file, line)
    if not (
        name.startswith(("NCCL_", "TORCH_", "CUDA_LAUNCH")) or name == "TORCH_DISTRIBUTED_DEBUG"
    ):
        return
    src = f"env: {name}"
    model.add("job.comm.env", f"{name}={value}", file, line, src)
    model.torch = model.torch or name.startswith(("NCCL_", "TORCH_NCCL"))
    if name == "NCCL_ALGO":
        model.set("job.comm.nccl_algo", value, file, line, src)
        model.set("job.comm.nccl_algo_pinned", True, file, line, src)
    if name in DISCOURAGED_ENV and not _restores_default(name, value):
        model.add("job.comm.nccl_discouraged", f"{name} ({DISCOURAGED_ENV[name]})", file, line, src)
    if name == "NCCL_DEBUG" and value.upper() in ("INFO", "TRACE"):
        model.add(
            "job.comm.nccl_discouraged",
            f"NCCL_DEBUG={value} (debugging only; use WARN)",
            file,
            line,
            src,
        )
    if name == "TORCH_DISTRIBUTED_DEBUG" and value.upper() == "DETAIL":
        model.add(
            "job.comm.nccl_discouraged",
            "TORCH_DISTRIBUTED_DEBUG=DETAIL (debugging only)",
            file,
            line,
            src,
        )
    if name == "TORCH_NCCL_ENABLE_TIMING" and as_bool(value):
        model.add("job.metrics.families", "collective_latency", file, line, src)
    if name == "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC" and as_float(value) is not None:
        model.timeout(as_float(value) or 0.0, file, line, src)


def _v11_env(model: JobModel, name: str, value: str, file: str, line: int | None) -> None:
    """What rule pack v1.1 reads from the environment and v1.0 did not (so v1.0's facts stay
    as they were): NCCL watchdog and torchft settings (REC-02), an NCCL profiler plugin or
    the NCCL inspector as a collective-latency metric (MON-01)."""
    from validator.jobs import failure_detection as detection

    detection.env(model, name, value, file, line)
    # (job.metrics.families keeps one source per family: a flight recorder read first would hide these)
    if (name == "NCCL_PROFILER_PLUGIN" and value.strip() and value.strip().lower() != "none") or (
        name in ("NCCL_INSPECTOR_ENABLE", "TORCH_NCCL_ENABLE_TIMING", "NCCL_ENABLE_TIMING") and as_bool(value)
    ):
        model.metric_evidence.append(("collective_latency", file, line, f"env: {name}={value}"))


def metric(model: JobModel, family: str, file: str, line: int | None, source: str) -> None:
    model.add("job.metrics.families", family, file, line, source)
    # every source, not only the first per family: rule pack v1.1 weighs each (metrics.py)
    model.metric_evidence.append((family, file, line, source))


def sink(model: JobModel, name: str, file: str, line: int | None, source: str) -> None:
    model.add("job.logging.sinks", name, file, line, source)


# at most 9 digits a field: a 400-digit --time is no duration (and overflowed float)
_DUR = Pattern(r"^\s*(?:(\d{1,9})-)?(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?\s*$")


def slurm_time(text: str) -> float | None:
    """Seconds from a Slurm time: minutes, mm:ss, hh:mm:ss, d-hh, d-hh:mm, d-hh:mm:ss."""
    m = _DUR.match(text)
    if not m:
        return None
    d, a, b, c = m.groups()
    if d is not None:
        h, mi, s = int(a), int(b or 0), int(c or 0)
        return ((int(d) * 24 + h) * 60 + mi) * 60 + s
    if b is None:
        return int(a) * 60.0
    if c is None:
        return int(a) * 60.0 + int(b)
    return int(a) * 3600.0 + int(b) * 60 + int(c)


def lightning_time(v: JSONValue) -> float | None:
    """Lightning ``max_time``: "DD:HH:MM:SS" or a dict of timedelta fields; also a
    ``datetime.timedelta`` as text ("0:00:45", "1 day, 2:00:00"), as LightningCLI writes
    a strategy's ``timeout``."""
    if isinstance(v, dict):
        mult = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
        total = 0.0
        for k, n in v.items():
            f = as_float(n)
            if k not in mult or f is None:
                return None
            total += f * mult[k]
        return total
    if isinstance(v, str):
        text = v.strip()
        days = 0
        # str(datetime.timedelta): "0:00:45", "1 day, 2:00:00", "3 days, 0:00:00"
        dm = re.match(r"^(\d+) days?,\s*(.*)$", text)
        if dm:
            days, text = int(dm.group(1)), dm.group(2)
        parts = text.split(":")
        if len(parts) == 4 and not dm and all(p.isdigit() for p in parts):
            d, h, m, s = map(int, parts)
            return ((d * 24 + h) * 60 + m) * 60 + s
        if len(parts) == 3 and all(re.fullmatch(r"\d+(\.\d+)?", p) for p in parts):
            hf, mf, sf = (float(p) for p in parts)
            return days * 86400 + hf * 3600 + mf * 60 + sf
    return None


def duplicate_json_keys(ctx: Ctx) -> None:
    """JSON keeps the *last* value of a key written twice in one object, and the earlier
    ones are silently ignored. Report each ignored occurrence (``job.config.ignored_keys``,
    at its line); the key's own line is already the occurrence whose value is used."""
    if ctx.tree is None:
        return
    for path, ignored in ctx.tree.repeated.items():
        used = ctx.tree.lines.get(path)
        ctx.model.add(
            "job.config.ignored_keys",
            f"duplicate key {'.'.join(str(p) for p in path)} (line {', '.join(map(str, ignored))} ignored: "
            f"JSON keeps the last value, line {used})",
            ctx.file,
            ignored[0],
            "json: duplicate key",
        )
