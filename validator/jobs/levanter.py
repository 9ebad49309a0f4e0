"""levanter (JAX) training YAML: ``trainer:`` with a jmp precision policy.

``trainer.mp`` is a jmp policy: ``p=f32,c=bfloat16`` (params fp32, compute bf16) or the
long form ``compute=bfloat16,params=float32,output=bfloat16``; a bare dtype sets all
three. The compute dtype is the training precision; TrainerConfig's default is ``f32``.
``train_batch_size`` is the global batch; with ``per_device_parallelism`` set, levanter
accumulates gradients over micro-batches of that size per device and requires the global
batch to divide. Checkpoints are time-based (``checkpointer.save_interval``, 15 min by
default), of which ``keep: [{every: N}]`` are kept for good; with
``load_checkpoint`` unset a restarted run resumes from the latest checkpoint found.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

_DUR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|d)?\s*$", re.I)
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600, "d": 86400}


def compute_dtype(policy: JSONValue) -> str | None:
    """The compute dtype of a jmp policy string, as bf16/fp16/fp32 (None if unreadable)."""
    if not isinstance(policy, str):
        return None
    parts = [p.strip() for p in policy.split(",") if p.strip()]
    if len(parts) == 1 and "=" not in parts[0]:
        return c.dtype_word(_jmp(parts[0]))
    for p in parts:
        k, _, v = p.partition("=")
        if k.strip().lower() in ("c", "compute", "compute_dtype"):
            return c.dtype_word(_jmp(v))
    return "fp32"  # jmp: an unnamed compute dtype stays float32


def _jmp(v: str) -> str:
    s = v.strip().lower()
    return {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "half": "float16",
            "full": "float32"}.get(s, s)


def duration(v: JSONValue) -> float | None:
    """``10m``, ``1h``, ``30s`` or seconds."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        mt = _DUR.match(v)
        if mt:
            return float(mt.group(1)) * _UNIT[(mt.group(2) or "s").lower()]
    return None


def read(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "levanter")
    m, g = ctx.model, ctx.get
    m.formats.append("levanter")
    t = ("trainer",)
    src = "levanter: trainer."
    mp = g(*t, "mp")
    if c.as_bool(g(*t, "quantization", "fp8")):
        # fp8 matmuls (Haliax's scaled fp8 dot products) over the jmp policy's dtypes
        c.precision(m, "fp8", ctx.file, ctx.line(*t, "quantization", "fp8"),
                    f"{src}quantization.fp8 = true (with mp = {mp})")
    elif mp is not None:
        word = compute_dtype(mp)
        if word is None:
            m.add("job.precision.problems", f"trainer.mp {mp!r} is not a jmp policy",
                  ctx.file, ctx.line(*t, "mp"), src + "mp")
        else:
            c.precision(m, word, ctx.file, ctx.line(*t, "mp"), f"{src}mp = {mp} (compute {word})")
    else:
        fill(m, "job.precision.mode", "levanter.mp", ctx.file, value="fp32")
    tbs = g(*t, "train_batch_size")
    if isinstance(tbs, list):
        pass  # a schedule ([{start: 0, value: 64}, ...]): no one global batch to check
    else:
        gb = ctx.int_at("job.batch.global", (*t, "train_batch_size"), src + "train_batch_size")
        if gb is not None:
            ctx.set("job.batch.global", gb, (*t, "train_batch_size"), src + "train_batch_size")
        else:
            fill(m, "job.batch.global", "levanter.train_batch_size", ctx.file)
    pdp = c.as_int(g(*t, "per_device_parallelism"))
    if pdp is not None and pdp > 0:
        ctx.set("job.batch.micro", pdp, (*t, "per_device_parallelism"), src + "per_device_parallelism")
        ctx.set("job.batch.rule", "divisible", (*t, "per_device_parallelism"),
                "levanter: train_batch_size % (per_device_parallelism x data axis) == 0")
    steps = ctx.int_at("job.train_steps", (*t, "num_train_steps"), src + "num_train_steps")
    if steps is not None:
        ctx.set("job.train_steps", steps, (*t, "num_train_steps"), src + "num_train_steps")
    else:
        fill(m, "job.train_steps", "levanter.num_train_steps", ctx.file)
    ck = (*t, "checkpointer")
    ctx.set("job.checkpoint.enabled", True, ck if g(*ck) is not None else t,
            "levanter: the trainer always checkpoints (checkpointer)")
    si = g(*ck, "save_interval")
    if si is not None:
        secs = duration(si)
        if secs is None:
            m.invalid("job.checkpoint.interval_time", si, ctx.file, ctx.line(*ck, "save_interval"),
                      src + "checkpointer.save_interval", "a duration (10m, 1h, 30s)")
        else:
            ctx.set("job.checkpoint.interval_time", secs, (*ck, "save_interval"),
                    f"{src}checkpointer.save_interval = {si}")
    else:
        fill(m, "job.checkpoint.interval_time", "levanter.save_interval", ctx.file)
    # checkpointer.keep ({every: N}) only says which of those checkpoints are kept for
    # good: the interval a restart loses is the time-based one
    lc = g(*t, "load_checkpoint")
    if lc is None:
        fill(m, "job.checkpoint.resume", "levanter.load_checkpoint", ctx.file, value=True)
    else:
        b = c.as_bool(lc)
        if b is not None:
            ctx.set("job.checkpoint.resume", b, (*t, "load_checkpoint"), f"{src}load_checkpoint = {lc}")
    tr = g(*t, "tracker")
    trackers = tr if isinstance(tr, list) else [tr] if tr is not None else []
    for one in trackers:
        kind = one.get("type", "wandb") if isinstance(one, dict) else None
        if isinstance(kind, str):
            c.sink(m, kind, ctx.file, ctx.line(*t, "tracker"), f"{src}tracker type {kind}")
    if g(*t, "wandb") is not None or not trackers:
        c.sink(m, "wandb", ctx.file, ctx.line(*t, "wandb") or ctx.line(*t),
               "levanter: trainer.wandb (the default tracker)")
