"""MosaicML llm-foundry (Composer) and AI2 OLMo training YAML.

Both take a global batch (``global_train_batch_size``) split over the devices and a
per-device micro-batch (``device_train_microbatch_size``), and a Composer precision
name (``amp_bf16``, ``amp_fp16``, ``amp_fp8``, ``fp32``). Composer times carry a unit:
``1000ba`` is 1000 batches (optimizer steps), ``1ep`` an epoch, ``100tok`` tokens; only
batches are a step count. llm-foundry checkpoints only with a ``save_folder`` (every
``save_interval``, 1000ba by default) and resumes with ``autoresume``; OLMo's
``save_interval`` is in steps and a restart picks up the latest save only with
``try_load_latest_save`` (a ``load_path`` alone reloads that one checkpoint).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill, value_of

if TYPE_CHECKING:
    from validator.report.model import JSONValue

PRECISION = {"amp_bf16": "bf16", "amp_fp16": "fp16", "amp_fp8": "fp8", "fp32": "fp32",
             "bf16": "bf16", "fp16": "fp16"}
LOGGERS = {"wandb": "wandb", "tensorboard": "tensorboard", "mlflow": "mlflow", "comet_ml": "comet"}
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$", re.I)


def batches(v: JSONValue) -> int | None:
    """A Composer time in batches (``1000ba`` or a plain integer for OLMo), else None."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        mt = _TIME.match(v.replace("_", ""))
        if mt and (mt.group(2) or "ba").lower() == "ba" and float(mt.group(1)).is_integer():
            return int(float(mt.group(1)))
    return None


def read_llmfoundry(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "llm-foundry")
    _common(ctx, "llmfoundry", "llm-foundry")
    m, g = ctx.model, ctx.get
    src = "llm-foundry: "
    if g("save_folder") in (None, ""):
        fill(m, "job.checkpoint.enabled", "llm-foundry.save_folder", ctx.file, value=False)
    else:
        ctx.set("job.checkpoint.enabled", True, ("save_folder",), src + "save_folder")
        _interval(ctx, "save_interval", "llm-foundry.save_interval", src)
    if c.as_bool(g("autoresume")) is not None:
        ctx.set("job.checkpoint.resume", bool(c.as_bool(g("autoresume"))), ("autoresume",),
                src + "autoresume")
    to = ctx.float_at("job.recovery.detection_timeout", ("dist_timeout",), src + "dist_timeout")
    if to is not None:
        ctx.set("job.recovery.detection_timeout", to, ("dist_timeout",), src + "dist_timeout")
    else:
        fill(m, "job.recovery.detection_timeout", "llm-foundry.dist_timeout", ctx.file)
    logs = g("loggers")
    if isinstance(logs, dict):
        for name in logs:
            if name in LOGGERS:
                c.sink(m, LOGGERS[name], ctx.file, ctx.line("loggers", name), f"{src}loggers.{name}")
    cbs = g("callbacks")
    if isinstance(cbs, dict):
        for name in cbs:
            if name in ("speed_monitor", "runtime_estimator"):
                c.metric(m, "gpu_utilization", ctx.file, ctx.line("callbacks", name),
                         f"{src}callbacks.{name} (throughput, MFU)")
            if name == "memory_monitor":
                c.metric(m, "memory", ctx.file, ctx.line("callbacks", name), f"{src}callbacks.{name}")


def read_olmo(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "olmo")
    _common(ctx, "olmo", "OLMo")
    m, g = ctx.model, ctx.get
    src = "OLMo: "
    if g("save_folder") not in (None, ""):
        ctx.set("job.checkpoint.enabled", True, ("save_folder",), "OLMo: the trainer saves to save_folder")
    else:
        fill(m, "job.checkpoint.enabled", "olmo.save_folder", ctx.file, value=True)
    eph = c.as_int(g("save_interval_ephemeral"))
    main = batches(g("save_interval")) if g("save_interval") is not None else value_of("olmo.save_interval")
    if eph and (main is None or eph < main):
        # ephemeral checkpoints (only the latest kept) are what a restart resumes from
        ctx.set("job.checkpoint.interval_steps", eph, ("save_interval_ephemeral",),
                f"{src}save_interval_ephemeral = {eph} (more often than save_interval = {main})")
    else:
        _interval(ctx, "save_interval", "olmo.save_interval", src)
    # load_path alone reloads that one checkpoint on every restart, not the latest save
    tl = c.as_bool(g("try_load_latest_save"))
    if tl is not None:
        ctx.set("job.checkpoint.resume", tl, ("try_load_latest_save",),
                f"{src}try_load_latest_save = {g('try_load_latest_save')}")
    elif g("try_load_latest_save") is None:
        # OLMo's TrainConfig default: no resume from the latest save (CKPT-03 judged, not skipped)
        fill(m, "job.checkpoint.resume", "olmo.try_load_latest_save", ctx.file, value=False)
    if m.has("job.batch.global"):
        # scripts/train.py: device_train_batch_size = global_train_batch_size // world size, and
        # the accumulation = that // device_train_microbatch_size, both floor divisions: a
        # global batch that does not divide trains a smaller one, unannounced
        ctx.set("job.batch.rule", "divisible", ("global_train_batch_size",),
                "OLMo: global // world size // device_train_microbatch_size (floor divisions, scripts/train.py)")
    if g("wandb") is not None:
        c.sink(m, "wandb", ctx.file, ctx.line("wandb"), src + "wandb")
    if g("speed_monitor") is not None:
        c.metric(m, "gpu_utilization", ctx.file, ctx.line("speed_monitor"),
                 src + "speed_monitor (throughput, MFU)")
    if g("max_grad_norm") is not None:
        c.metric(m, "gradient_stats", ctx.file, ctx.line("max_grad_norm"),
                 src + "max_grad_norm logs grad/total_norm")


def _common(ctx: Ctx, fmt: str, name: str) -> None:
    m, g = ctx.model, ctx.get
    m.formats.append(fmt)
    m.torch = True
    src = f"{name}: "
    prec = g("precision")
    if prec is not None and not c.not_set(prec):
        word = PRECISION.get(str(prec).lower())
        if word is None:
            m.add("job.precision.problems", f"precision {prec!r} is not a Composer precision",
                  ctx.file, ctx.line("precision"), src + "precision")
        else:
            c.precision(m, word, ctx.file, ctx.line("precision"), f"{src}precision = {prec}")
            if word == "fp16":
                fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file, line=ctx.line("precision"),
                     why=f" ({src}precision = {prec})")
    elif fmt == "llmfoundry":
        fill(m, "job.precision.mode", "llm-foundry.precision", ctx.file, value="bf16")
    else:
        fill(m, "job.precision.mode", "olmo.precision", ctx.file, value="fp32")
    gb = ctx.int_at("job.batch.global", ("global_train_batch_size",), src + "global_train_batch_size")
    if gb is not None:
        ctx.set("job.batch.global", gb, ("global_train_batch_size",), src + "global_train_batch_size")
    mb = g("device_train_microbatch_size")
    n = c.as_int(mb)
    if n is not None:
        ctx.set("job.batch.micro", n, ("device_train_microbatch_size",),
                src + "device_train_microbatch_size")
    steps = batches(g("max_duration"))
    if steps is not None:
        ctx.set("job.train_steps", steps, ("max_duration",), f"{src}max_duration = {g('max_duration')}")
    li = g("console_log_interval")
    n = batches(li) if li is not None else None
    if n is not None:
        ctx.set("job.logging.interval_steps", n, ("console_log_interval",),
                f"{src}console_log_interval = {li}")
    elif li is None:
        table = "llm-foundry" if fmt == "llmfoundry" else "olmo"
        fill(m, "job.logging.interval_steps", f"{table}.console_log_interval", ctx.file, value=1)


def _interval(ctx: Ctx, key: str, default: str, src: str) -> None:
    """The save interval in batches; ``default``: its row in the defaults tables."""
    v = ctx.get(key)
    n = batches(v if v is not None else value_of(default))
    if v is None:
        if n is not None:
            fill(ctx.model, "job.checkpoint.interval_steps", default, ctx.file, value=n)
    elif n is not None:
        ctx.set("job.checkpoint.interval_steps", n, (key,), f"{src}{key} = {v}")
