"""torchtitan TOML train configs, both schemas.

The current schema (up to the TOML removal in Feb 2026) has ``[parallelism]`` and
``[checkpoint] enable``; the older one (early 2025) has ``enable_checkpoint`` and the
degrees under ``[training]``/``[experimental]``. torchtitan requires
``global_batch_size % (local_batch_size x dp) == 0`` and derives the accumulation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def _first(ctx: Ctx, *paths: tuple[str, ...]) -> tuple[JSONValue, tuple[str, ...]]:
    for p in paths:
        v = ctx.get(*p)
        if v is not None:
            return v, p
    return None, paths[0]


# sections of torchtitan's older schema the reader still reads (not in the 0.2.x catalogue)
LEGACY_SECTIONS = frozenset({"float8"})


def fork_sections(data: JSONValue) -> list[str]:
    """Sections no catalogued torchtitan release has (``[my_offload]``): a fork whose
    config_manager adds its own. Its keys, in those sections and in torchtitan's, are then
    the fork's to define, so a near miss of a torchtitan key is no typo (issue 33)."""
    from validator.jobs.keys import releases

    if not isinstance(data, dict):
        return []
    known = set(LEGACY_SECTIONS)
    for cat in releases("torchtitan"):
        known |= set(cat.sections)
    return [k for k, v in data.items() if isinstance(v, dict) and k not in known]


def read(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    own = fork_sections(ctx.tree.data if ctx.tree else None)
    if own:
        # a fork's config manager defines its keys: not judged against torchtitan's
        ctx.model.__dict__.setdefault("keys_judged", {}).setdefault(
            "torchtitan", "torchtitan: keys not judged: a fork's config (sections torchtitan does not have: "
            + ", ".join(f"[{s}]" for s in own[:4]) + "); its config_manager defines its keys")
    else:
        keycheck.check(ctx, "torchtitan", misplaced=False)
    m = ctx.model
    m.formats.append("torchtitan")
    m.torch = True
    g = ctx.get
    # precision: float8 converters win; else FSDP mixed_precision_param (default bfloat16)
    conv = g("model", "converters")
    mpp, p = _first(ctx, ("training", "mixed_precision_param"))
    old_fp8 = c.as_bool(g("float8", "enable_float8_linear"))
    if isinstance(conv, list) and any("float8" in str(x) for x in conv):
        c.precision(
            m,
            "fp8",
            ctx.file,
            ctx.line("model", "converters"),
            "torchtitan: model.converters float8",
        )
    elif old_fp8:
        # the older schema (early 2025): [float8] enable_float8_linear = true
        c.precision(
            m,
            "fp8",
            ctx.file,
            ctx.line("float8", "enable_float8_linear"),
            "torchtitan: float8.enable_float8_linear (older schema)",
        )
    elif mpp is not None and c.dtype_word(mpp) is None:
        m.invalid(
            "job.precision.mode",
            mpp,
            ctx.file,
            ctx.line(*p),
            "torchtitan: training.mixed_precision_param",
            "bfloat16 or float32",
        )
    elif mpp is not None:
        c.precision(
            m,
            c.dtype_word(mpp) or str(mpp),
            ctx.file,
            ctx.line(*p),
            "torchtitan: training.mixed_precision_param",
        )
    else:
        fill(m, "job.precision.mode", "torchtitan.mixed_precision_param", ctx.file, value="bf16")
    red, p = _first(ctx, ("training", "mixed_precision_reduce"))
    if red is not None:
        ctx.set(
            "job.comm.grad_dtype",
            c.dtype_word(red) or str(red),
            p,
            "torchtitan: training.mixed_precision_reduce",
        )
    else:
        fill(m, "job.comm.grad_dtype", "torchtitan.mixed_precision_reduce", ctx.file, value="fp32")
    # batch
    _lbs, p = _first(ctx, ("training", "local_batch_size"), ("training", "batch_size"))
    n = ctx.int_at("job.batch.micro", p, "torchtitan: training." + p[-1])
    if n is not None:
        ctx.set("job.batch.micro", n, p, "torchtitan: training." + p[-1])
    gbs = ctx.int_at(
        "job.batch.global",
        ("training", "global_batch_size"),
        "torchtitan: training.global_batch_size",
    )
    if gbs is not None and gbs > 0:
        ctx.set(
            "job.batch.global",
            gbs,
            ("training", "global_batch_size"),
            "torchtitan: training.global_batch_size",
        )
        ctx.set(
            "job.batch.rule",
            "divisible",
            ("training", "global_batch_size"),
            "torchtitan: global % (local x dp) == 0",
        )
    steps = ctx.int_at("job.train_steps", ("training", "steps"), "torchtitan: training.steps")
    if steps is not None:
        ctx.set("job.train_steps", steps, ("training", "steps"), "torchtitan: training.steps")
    for key, fact in (
        ("tensor_parallel_degree", "job.parallel.tp"),
        ("pipeline_parallel_degree", "job.parallel.pp"),
        ("context_parallel_degree", "job.parallel.cp"),
        ("expert_parallel_degree", "job.parallel.ep"),
    ):
        v, p = _first(ctx, ("parallelism", key), ("training", key), ("experimental", key))
        if c.as_int(v) is not None:
            ctx.set(fact, c.as_int(v), p, f"torchtitan: {'.'.join(p)}")
    rep, _p1 = _first(
        ctx,
        ("parallelism", "data_parallel_replicate_degree"),
        ("training", "data_parallel_replicate_degree"),
    )
    shard, p2 = _first(
        ctx,
        ("parallelism", "data_parallel_shard_degree"),
        ("training", "data_parallel_shard_degree"),
    )
    r, s = c.as_int(rep), c.as_int(shard)
    if r is not None and s is not None and s > 0 and r > 0:
        ctx.set("job.parallel.dp", r * s, p2, "torchtitan: dp_replicate x dp_shard")
    # checkpoint (two schemas)
    _en, p = _first(ctx, ("checkpoint", "enable"), ("checkpoint", "enable_checkpoint"))
    enb = ctx.bool_at("job.checkpoint.enabled", p, f"torchtitan: checkpoint.{p[-1]}")
    if enb is not None:
        ctx.set("job.checkpoint.enabled", enb, p, f"torchtitan: checkpoint.{p[-1]}")
    else:
        fill(m, "job.checkpoint.enabled", "torchtitan.checkpoint_enable", ctx.file)
    iv = ctx.int_at(
        "job.checkpoint.interval_steps", ("checkpoint", "interval"), "torchtitan: checkpoint.interval"
    )
    itype = str(g("checkpoint", "interval_type") or "steps").lower()
    if iv is not None and itype == "steps":
        ctx.set(
            "job.checkpoint.interval_steps",
            iv,
            ("checkpoint", "interval"),
            "torchtitan: checkpoint.interval",
        )
    elif iv is not None and itype == "seconds":
        ctx.set(
            "job.checkpoint.interval_time",
            float(iv),
            ("checkpoint", "interval"),
            "torchtitan: checkpoint.interval (seconds)",
        )
    else:
        fill(m, "job.checkpoint.interval_steps", "torchtitan.checkpoint_interval", ctx.file)
    if m.get("job.checkpoint.enabled"):
        fill(m, "job.checkpoint.resume", "torchtitan.load_step", ctx.file, value=True)
    # metrics
    lf = ctx.int_at("job.logging.interval_steps", ("metrics", "log_freq"), "torchtitan: metrics.log_freq")
    if lf is not None:
        ctx.set(
            "job.logging.interval_steps",
            lf,
            ("metrics", "log_freq"),
            "torchtitan: metrics.log_freq",
        )
    else:
        fill(m, "job.logging.interval_steps", "torchtitan.log_freq", ctx.file)
    line = ctx.line("metrics") or ctx.line("training")
    for fam, what in (
        ("gpu_utilization", "tps, mfu(%)"),
        ("memory", "memory/max_reserved"),
        ("gradient_stats", "grad_norm"),
    ):
        c.metric(m, fam, ctx.file, line, f"torchtitan: metrics ({what}) every log_freq")
    for key, sink in (("enable_tensorboard", "tensorboard"), ("enable_wandb", "wandb")):
        if c.as_bool(g("metrics", key)):
            c.sink(m, sink, ctx.file, ctx.line("metrics", key), f"torchtitan: metrics.{key}")
    tbs = c.as_int(g("comm", "trace_buf_size"))
    if tbs is None or tbs > 0:
        c.metric(
            m,
            "collective_latency",
            ctx.file,
            ctx.line("comm", "trace_buf_size") or line,
            "torchtitan: comm.trace_buf_size (flight recorder)",
        )
    tto = ctx.float_at(
        "job.recovery.detection_timeout",
        ("comm", "train_timeout_seconds"),
        "torchtitan: comm.train_timeout_seconds",
    )
    if tto is not None:
        ctx.set(
            "job.recovery.detection_timeout",
            tto,
            ("comm", "train_timeout_seconds"),
            "torchtitan: comm.train_timeout_seconds",
        )
    else:
        fill(m, "job.recovery.detection_timeout", "torchtitan.train_timeout", ctx.file)
    if c.as_bool(g("fault_tolerance", "enable")):
        from validator.jobs import failure_detection as detection  # rule pack v1.1: torchft notices a hung replica

        detection.torchft(m, g("fault_tolerance", "process_group_timeout_ms"), ctx.file,
                          ctx.line("fault_tolerance", "process_group_timeout_ms"),
                          ctx.line("fault_tolerance", "enable"))
        ctx.set(
            "job.recovery.auto_restart",
            True,
            ("fault_tolerance", "enable"),
            "torchtitan: fault_tolerance.enable (TorchFT)",
        )
