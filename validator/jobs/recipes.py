"""Recipe-style YAML of the fine-tuning frameworks: torchtune and axolotl.

Both are flat YAML files whose keys look like Hugging Face's (``output_dir``,
``gradient_accumulation_steps``) but mean their own thing: torchtune names its
precision ``dtype`` and checkpoints at the end of every epoch; axolotl's ``bf16: auto``
trains in bf16 on every GPU that has it (Ampere and later) and passes the rest to the
HF Trainer. Read as HF TrainingArguments they would train "in fp32" (HF's default),
which is why detection counts their keys against their own catalogues first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import cite, fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

TUNE_LOGGERS = {
    "WandBLogger": "wandb",
    "TensorBoardLogger": "tensorboard",
    "DiskLogger": "disk",
    "StdoutLogger": "stdout",
    "CometLogger": "comet",
    "MLFlowLogger": "mlflow",
}


def _component(v: JSONValue) -> str:
    return str(v.get("_component_", "")).rsplit(".", 1)[-1] if isinstance(v, dict) else ""


def read_torchtune(ctx: Ctx, *, overrides: bool = False) -> None:
    """A torchtune recipe config. ``overrides``: the tree is ``tune run``'s ``key=value``
    words (validator/jobs/tune.py), not a file: what they do not set is left to the
    config they override (no recipe defaults from them)."""
    from validator.jobs import keycheck

    keycheck.check(ctx, "torchtune")
    m, g = ctx.model, ctx.get
    if not overrides:
        m.formats.append("torchtune")
    m.torch = True
    src = "torchtune: "
    dt = g("dtype")
    if dt is not None and not c.not_set(dt):
        word = c.dtype_word(str(dt))
        if word is None:
            m.add("job.precision.problems", f"dtype {dt!r} is not a torchtune dtype (bf16, fp32)",
                  ctx.file, ctx.line("dtype"), src + "dtype")
        else:
            c.precision(m, word, ctx.file, ctx.line("dtype"), f"{src}dtype = {dt}")
            if word == "fp16":
                m.add("job.precision.problems",
                      "dtype fp16: torchtune recipes refuse fp16 (no loss scaling); use bf16",
                      ctx.file, ctx.line("dtype"), src + "dtype")
    for key, fact in (("batch_size", "job.batch.micro"),
                      ("gradient_accumulation_steps", "job.batch.accumulation")):
        n = ctx.int_at(fact, (key,), src + key)
        if n is not None:
            ctx.set(fact, n, (key,), src + key)
    # the recipes save a checkpoint at the end of every epoch (save_checkpoint(epoch))
    if not overrides:
        ctx.set("job.checkpoint.enabled", True, (("checkpointer",) if g("checkpointer") else ()),
                src + "checkpoint at the end of every epoch")
    spe = ctx.int_at("job.checkpoint.interval_steps", ("max_steps_per_epoch",),
                     src + "max_steps_per_epoch")
    if spe is not None and spe > 0:
        ctx.set("job.checkpoint.interval_steps", spe, ("max_steps_per_epoch",),
                src + "checkpoint every epoch = max_steps_per_epoch steps")
        ep = c.as_int(g("epochs"))
        if ep:
            ctx.set("job.train_steps", spe * ep, ("max_steps_per_epoch",),
                    f"{src}epochs x max_steps_per_epoch = {ep} x {spe}")
    # resume_from_checkpoint (should_load_recipe_state) is a switch for the restart, not
    # automatic resume: set on a fresh run it raises, the recipe state missing (torchtune 0.6.1
    # training/checkpointing/_utils.py get_recipe_checkpoint_path: "ValueError: If
    # should_load_recipe_state is True and the recipe checkpoint file is missing"), so a job
    # written with it cannot start, and one without it restarts from the base weights
    rfc = g("resume_from_checkpoint")
    if c.as_bool(rfc) is not None:
        why = (" (a manual switch: True raises on a fresh run, the recipe state missing; torchtune 0.6.1 "
               "training/checkpointing/_utils.py)") if c.as_bool(rfc) else ""
        ctx.set("job.checkpoint.resume", False, ("resume_from_checkpoint",),
                f"{src}resume_from_checkpoint = {rfc}{why}")
    n = ctx.int_at("job.logging.interval_steps", ("log_every_n_steps",), src + "log_every_n_steps")
    if n is not None:
        ctx.set("job.logging.interval_steps", n, ("log_every_n_steps",), src + "log_every_n_steps")
    elif not overrides:
        fill(m, "job.logging.interval_steps", "torchtune.log_every_n_steps", ctx.file)
    lg = _component(g("metric_logger"))
    if lg in TUNE_LOGGERS:
        c.sink(m, TUNE_LOGGERS[lg], ctx.file, ctx.line("metric_logger"), f"{src}metric_logger {lg}")
    if c.as_bool(g("log_peak_memory_stats")):
        c.metric(m, "memory", ctx.file, ctx.line("log_peak_memory_stats"),
                 src + "log_peak_memory_stats")
    if g("clip_grad_norm") is not None:
        c.metric(m, "gradient_stats", ctx.file, ctx.line("clip_grad_norm"),
                 src + "clip_grad_norm logs grad_norm")


def read_axolotl(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "axolotl")
    m, g = ctx.model, ctx.get
    m.formats.append("axolotl")
    m.torch = True
    src = "axolotl: "
    bf16, fp16, fp8 = g("bf16"), g("fp16"), g("fp8")
    auto = isinstance(bf16, str) and bf16.strip().lower() == "auto"
    if c.as_bool(fp8):
        c.precision(m, "fp8", ctx.file, ctx.line("fp8"), src + "fp8")
    if c.as_bool(fp16):
        c.precision(m, "fp16", ctx.file, ctx.line("fp16"), src + "fp16")
        fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file, line=ctx.line("fp16"),
             why=" (axolotl: fp16, HF Trainer)")
    if auto and not c.as_bool(fp16):
        # "auto": bf16 wherever the GPU supports it (Ampere and later); on an older GPU
        # axolotl turns fp16 on instead (its config normalization)
        m.set("job.precision.mode", "bf16", ctx.file, ctx.line("bf16"),
              f"{src}bf16 = auto (bf16 on GPUs that support it)")
        m.add("job.precision.modes", "bf16", ctx.file, ctx.line("bf16"), src + "bf16 = auto")
    elif c.as_bool(bf16) or (isinstance(bf16, str) and bf16.lower() == "full"):
        c.precision(m, "bf16", ctx.file, ctx.line("bf16"), f"{src}bf16 = {bf16}")
    elif bf16 is None and not c.as_bool(fp16) and not c.as_bool(fp8):
        fill(m, "job.precision.mode", "axolotl.bf16", ctx.file, value="bf16")
    elif not c.as_bool(fp16) and not c.as_bool(fp8):
        fill(m, "job.precision.mode", "hf.precision", ctx.file, value="fp32", why=f" ({src}bf16 = {bf16})")
    micro = None
    for key, fact in (("micro_batch_size", "job.batch.micro"),
                      ("gradient_accumulation_steps", "job.batch.accumulation")):
        n = ctx.int_at(fact, (key,), src + key)
        if n is not None:
            ctx.set(fact, n, (key,), src + key)
            micro = n if key == "micro_batch_size" else micro
        elif key == "gradient_accumulation_steps":
            bs = c.as_int(g("batch_size"))
            if bs and micro:
                # axolotl derives it: gradient_accumulation_steps = batch_size // micro_batch_size
                ctx.set(fact, bs // micro, ("batch_size",),
                        f"axolotl: batch_size // micro_batch_size = {bs} // {micro}")
            else:
                fill(m, fact, "axolotl.gradient_accumulation_steps", ctx.file)
    strategy = str(g("save_strategy") or "").lower()
    if strategy == "no":
        ctx.set("job.checkpoint.enabled", False, ("save_strategy",), src + "save_strategy = no")
    else:
        ss = ctx.int_at("job.checkpoint.interval_steps", ("save_steps",), src + "save_steps")
        if ss is not None and ss >= 1:
            ctx.set("job.checkpoint.interval_steps", ss, ("save_steps",), src + "save_steps")
            ctx.set("job.checkpoint.enabled", True, ("save_steps",), src + "save_steps")
        elif g("saves_per_epoch") is not None:
            ctx.set("job.checkpoint.enabled", True, ("saves_per_epoch",),
                    f"{src}saves_per_epoch = {g('saves_per_epoch')} (an interval in steps "
                    "depends on the dataset size)")
        else:
            fill(m, "job.checkpoint.enabled", "hf.save_strategy", ctx.file, value=True,
                 why=" (axolotl: the HF Trainer's): a checkpoint every save_steps")
            fill(m, "job.checkpoint.interval_steps", "hf.save_steps", ctx.file, why=" (axolotl: the HF Trainer's)")
    for key in ("resume_from_checkpoint", "auto_resume_from_checkpoints"):
        v = g(key)
        if v not in (None, False, ""):
            ctx.set("job.checkpoint.resume", True, (key,), f"{src}{key}")
    ls = ctx.int_at("job.logging.interval_steps", ("logging_steps",), src + "logging_steps")
    if ls is not None and ls >= 1:
        ctx.set("job.logging.interval_steps", ls, ("logging_steps",), src + "logging_steps")
    for key, sink in (("wandb_project", "wandb"), ("use_tensorboard", "tensorboard"),
                      ("mlflow_tracking_uri", "mlflow"), ("comet_project_name", "comet")):
        v = g(key)
        if v not in (None, False, ""):
            c.sink(m, sink, ctx.file, ctx.line(key), src + key)
    if g("max_grad_norm") is None:  # the HF Trainer's default clips, and logs grad_norm
        c.metric(m, "gradient_stats", ctx.file, None,
                 f"axolotl: the HF Trainer's {cite('hf.max_grad_norm')}: grad_norm logged")
    else:
        # axolotl passes a max_grad_norm that is not None to TrainingArguments (axolotl 0.19.0,
        # axolotl/core/builders/base.py), and 0.19.0 pins transformers==5.16.1, whose Trainer logs
        # grad_norm at 0 too (validator/jobs/hf.py GRAD_NORM_UNCLIPPED, read at 5.16.1)
        v = ctx.float_at("job.metrics.gradient_stats", ("max_grad_norm",), src + "max_grad_norm")
        if v is not None and v > 0:
            c.metric(m, "gradient_stats", ctx.file, ctx.line("max_grad_norm"),
                     "axolotl: HF Trainer logs grad_norm (max_grad_norm)")
        elif v is not None:
            from validator.jobs.hf import GRAD_NORM_UNCLIPPED

            c.metric(m, "gradient_stats", ctx.file, ctx.line("max_grad_norm"),
                     f"axolotl: max_grad_norm = {g('max_grad_norm')} (axolotl 0.19.0 pins transformers==5.16.1): "
                     + GRAD_NORM_UNCLIPPED)
    to = ctx.float_at("job.recovery.detection_timeout", ("ddp_timeout",), src + "ddp_timeout")
    if to is not None:
        ctx.set("job.recovery.detection_timeout", to, ("ddp_timeout",), src + "ddp_timeout")
    else:
        fill(m, "job.recovery.detection_timeout", "hf.ddp_timeout", ctx.file, why=" (axolotl: the HF Trainer's)")
    steps = ctx.int_at("job.train_steps", ("max_steps",), src + "max_steps")
    if steps is not None and steps > 0:
        ctx.set("job.train_steps", steps, ("max_steps",), src + "max_steps")
    ds = g("deepspeed")
    if isinstance(ds, str):
        ctx.ref(ds, "deepspeed")
