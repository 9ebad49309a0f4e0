"""DeepSpeed JSON (``ds_config.json``), also when nested in HF/Accelerate configs.

DeepSpeed checks ``train_batch_size == micro * grad_acc * dp`` itself, where dp is the
data-parallel size (not the process count), and infers a missing one of the three with
integer division; so with all three given the rule is a product, with the accumulation
inferred it is a divisibility. ``"auto"`` (filled in by HF Trainer / Accelerate) counts
as not set. There is no save interval in DeepSpeed JSON: cadence lives in the script or
the host framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

KNOWN_IGNORED = {
    "monitor_config": "DeepSpeed reads monitors only from top-level "
    "tensorboard/wandb/csv_monitor/comet",
    "comms_config": "DeepSpeed's comms logging key is comms_logger",
    "cpu_offload": "deprecated; use zero_optimization.offload_optimizer",
}


def read(ctx: Ctx, prefix: tuple[object, ...] = ()) -> None:
    m, g = ctx.model, (lambda *p: ctx.get(*prefix, *p))
    ln = lambda *p: ctx.line(*prefix, *p)  # noqa: E731
    m.formats.append("deepspeed")
    m.torch = True
    if not prefix:
        c.duplicate_json_keys(ctx)
    from validator.jobs import keycheck

    keycheck.check(ctx, "deepspeed", prefix)
    for key, why in KNOWN_IGNORED.items():
        if g(key) is not None:
            m.add(
                "job.config.ignored_keys", f"{key} ({why})", ctx.file, ln(key), f"deepspeed: {key}"
            )
    nums: list[int | None] = []
    for fact, key in (
        ("job.batch.global", "train_batch_size"),
        ("job.batch.micro", "train_micro_batch_size_per_gpu"),
        ("job.batch.accumulation", "gradient_accumulation_steps"),
    ):
        n = c.int_of(m, fact, g(key), ctx.file, ln(key), f"deepspeed: {key}")
        nums.append(n)
        if n is not None:
            m.set(fact, n, ctx.file, ln(key), f"deepspeed: {key}")
    gas = g("gradient_accumulation_steps")
    explicit = [n is not None for n in nums]
    if explicit[0] and not explicit[1] and explicit[2]:
        # DeepSpeed infers micro = train // (grad_acc x dp), then asserts the product
        m.set(
            "job.batch.rule",
            "divisible_accumulation",
            ctx.file,
            ln("train_batch_size"),
            "deepspeed: train_micro_batch_size_per_gpu inferred as train // (grad_acc x dp)",
        )
    elif explicit[0] and not explicit[2] and c.not_set(gas):
        m.set(
            "job.batch.rule",
            "divisible",
            ctx.file,
            ln("train_batch_size"),
            "deepspeed: gradient_accumulation_steps inferred as train // (micro x dp)",
        )
    elif explicit[0]:
        m.set(
            "job.batch.rule",
            "product",
            ctx.file,
            ln("train_batch_size"),
            "deepspeed: train_batch_size = micro x grad_acc x dp",
        )
    if c.not_set(gas) and not (explicit[0] and explicit[1]):
        # with both batch sizes given DeepSpeed infers the accumulation (the rule above);
        # with one of them it sets 1 (runtime/config.py _set_batch_related_parameters)
        fill(m, "job.batch.accumulation", "deepspeed.gradient_accumulation_steps", ctx.file)
    _precision(ctx, g, ln)
    cdt = g("communication_data_type")
    if isinstance(cdt, str):
        m.set(
            "job.comm.grad_dtype",
            c.dtype_word(cdt) or cdt.lower(),
            ctx.file,
            ln("communication_data_type"),
            "deepspeed: communication_data_type",
        )
    # "auto" values are filled in by a host (HF Trainer, Accelerate), which logs metrics on
    # its own schedule (HF's logging_steps): under it, steps_per_print is DeepSpeed's own
    # console line, not the job's metrics interval (docs/lint.md), so such a config alone
    # cannot show the interval
    hosted = any(isinstance(v, str) and v.strip().lower() == "auto" for v in (
        g("train_batch_size"), g("train_micro_batch_size_per_gpu"), g("gradient_accumulation_steps"),
        g("fp16", "enabled"), g("bf16", "enabled"), g("gradient_clipping")))
    spp = None if hosted else c.int_of(
        m,
        "job.logging.interval_steps",
        g("steps_per_print"),
        ctx.file,
        ln("steps_per_print"),
        "deepspeed: steps_per_print",
    )
    if spp is not None:
        m.set(
            "job.logging.interval_steps",
            spp,
            ctx.file,
            ln("steps_per_print"),
            "deepspeed: steps_per_print",
        )
    elif m.failed("job.logging.interval_steps") is None:
        # None from DeepSpeed 0.15.2: no periodic print at all. Recorded last (JobModel.finish),
        # so that a host framework's own interval (HF Trainer's logging_steps) counts first.
        m.unlogged = (ctx.file, hosted)
    for sink in ("tensorboard", "wandb", "csv_monitor", "comet"):
        if c.as_bool(g(sink, "enabled")):
            c.sink(m, sink, ctx.file, ln(sink), f"deepspeed: {sink}.enabled")
    # steps_per_print: N makes ThroughputTimer.stop log CurrSamplesPerSec (throughput) and
    # MemAllocated / MaxMemAllocated every N global steps, unless timers.throughput.enabled is
    # false (DeepSpeed 0.16.5, microsoft/DeepSpeed@38327e0, deepspeed/utils/timer.py and
    # utils/config.py); a host framework's "auto" values do not change that line
    every = c.as_int(g("steps_per_print"))
    if every is not None and every > 0 and c.as_bool(g("timers", "throughput", "enabled")) is not False:
        for fam in ("gpu_utilization", "memory"):
            c.metric(m, fam, ctx.file, ln("steps_per_print"), "deepspeed: steps_per_print (ThroughputTimer)")
    # memory_breakdown: see_memory_usage(force=True) around every forward, backward and step
    # (runtime/engine.py, runtime/utils.py: MA / Max_MA on rank 0)
    if c.as_bool(g("memory_breakdown")):
        c.metric(m, "memory", ctx.file, ln("memory_breakdown"), "deepspeed: memory_breakdown")
    if c.as_bool(g("wall_clock_breakdown")) or c.as_bool(g("flops_profiler", "enabled")):
        key = "wall_clock_breakdown" if c.as_bool(g("wall_clock_breakdown")) else "flops_profiler"
        c.metric(m, "gpu_utilization", ctx.file, ln(key), f"deepspeed: {key}")
    if c.as_bool(g("comms_logger", "enabled")):
        c.metric(m, "collective_latency", ctx.file, ln("comms_logger"), "deepspeed: comms_logger")


def _precision(ctx: Ctx, g: Callable[..., JSONValue], ln: Callable[..., int | None]) -> None:
    m = ctx.model
    fp16, bf16 = g("fp16", "enabled"), g("bf16", "enabled")
    bf16_key = "bf16"
    if bf16 is None and g("bfloat16", "enabled") is not None:
        bf16, bf16_key = g("bfloat16", "enabled"), "bfloat16"
    amp = g("amp", "enabled")
    auto = any(isinstance(v, str) and v.lower() == "auto" for v in (fp16, bf16))
    if c.as_bool(fp16):
        c.precision(m, "fp16", ctx.file, ln("fp16", "enabled"), "deepspeed: fp16.enabled")
    if c.as_bool(fp16) or (isinstance(fp16, str) and fp16.lower() == "auto"):
        # with "auto" the host (HF Trainer, Accelerate) turns fp16 on or off, but the
        # scaling is DeepSpeed's own: its loss_scale is explicit, and the host's
        # GradScaler is recorded only as a default, so this wins in any read order.
        ls = c.as_float(g("fp16", "loss_scale"))
        if ls is None or ls == 0:
            m.set(
                "job.precision.loss_scaling",
                "dynamic",
                ctx.file,
                ln("fp16", "loss_scale") or ln("fp16"),
                "deepspeed: fp16.loss_scale = 0 (dynamic)",
            )
        else:
            m.set(
                "job.precision.loss_scaling",
                "static",
                ctx.file,
                ln("fp16", "loss_scale"),
                f"deepspeed: fp16.loss_scale = {ls:g} (static)",
            )
    if c.as_bool(bf16) and not (isinstance(bf16, str) and bf16.lower() == "auto"):
        c.precision(m, "bf16", ctx.file, ln(bf16_key, "enabled"), f"deepspeed: {bf16_key}.enabled")
    if c.as_bool(amp):
        c.precision(m, "fp16", ctx.file, ln("amp", "enabled"), "deepspeed: amp.enabled (apex)")
        m.set("job.precision.loss_scaling", "dynamic", ctx.file, ln("amp"), "deepspeed: amp (apex)")
        if c.as_bool(fp16):
            m.add(
                "job.precision.problems",
                "amp and fp16 both enabled (DeepSpeed: not combinable)",
                ctx.file,
                ln("amp", "enabled"),
                "deepspeed: amp.enabled",
            )
        if c.as_int(g("zero_optimization", "stage")):
            m.add(
                "job.precision.problems",
                "amp with ZeRO (DeepSpeed: not compatible)",
                ctx.file,
                ln("amp", "enabled"),
                "deepspeed: amp.enabled",
            )
    if not auto and not any(c.as_bool(v) for v in (fp16, bf16, amp)):
        fill(m, "job.precision.mode", "deepspeed.precision", ctx.file, value="fp32")
