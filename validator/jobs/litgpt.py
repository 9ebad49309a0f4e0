"""litgpt ``pretrain``/``finetune`` YAML (the CLI's ``--config``): top-level
``precision`` (Lightning Fabric names), ``devices``/``num_nodes`` and a ``train:`` block.

``train.global_batch_size`` is split over the devices and accumulated in micro-batches of
``train.micro_batch_size``: accumulation = global / (devices x nodes) // micro, a floor
division litgpt does not check, so a global batch that does not divide is silently
changed. ``train.save_interval`` is in optimizer steps (1000 unless set; ``null`` saves only
the final weights). ``resume: auto`` resumes from the latest checkpoint in ``out_dir``.
"""

from __future__ import annotations

from validator.io.source import MISSING
from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill
from validator.jobs.lightning import PREC

LOGGERS = {"tensorboard": "tensorboard", "wandb": "wandb", "csv": "csv", "mlflow": "mlflow",
           "litlogger": "litlogger"}


def read(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "litgpt")
    m, g = ctx.model, ctx.get
    m.formats.append("litgpt")
    m.torch = True
    prec = g("precision")
    if prec is not None:
        word = PREC.get(str(prec).lower())
        if word is None:
            m.add("job.precision.problems", f"precision {prec!r} is not a Lightning Fabric precision",
                  ctx.file, ctx.line("precision"), "litgpt: precision")
        else:
            c.precision(m, word, ctx.file, ctx.line("precision"), f"litgpt: precision = {prec}")
            if word == "fp16":
                fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file, line=ctx.line("precision"),
                     why=f" (litgpt: precision = {prec}, Fabric)")
    t = ("train",)
    for key, fact in (("global_batch_size", "job.batch.global"), ("micro_batch_size", "job.batch.micro")):
        n = ctx.int_at(fact, (*t, key), f"litgpt: train.{key}")
        if n is not None:
            ctx.set(fact, n, (*t, key), f"litgpt: train.{key}")
    if c.as_int(g(*t, "global_batch_size")) and c.as_int(g(*t, "micro_batch_size")):
        ctx.set("job.batch.rule", "divisible", (*t, "global_batch_size"),
                "litgpt: accumulation = global / devices // micro (floor division)")
    nodes = c.as_int(g("num_nodes"))
    if nodes:
        ctx.set("job.resources.nodes", nodes, ("num_nodes",), "litgpt: num_nodes")
    dev = c.as_int(g("devices"))
    if dev and dev > 0:
        ctx.set("job.resources.gpus_per_node", dev, ("devices",), "litgpt: devices")
    written = ctx.tree is not None and ctx.tree.get(*t, "save_interval") is not MISSING
    n = ctx.int_at("job.checkpoint.interval_steps", (*t, "save_interval"), "litgpt: train.save_interval")
    if n is not None and n > 0:
        ctx.set("job.checkpoint.interval_steps", n, (*t, "save_interval"), "litgpt: train.save_interval")
        ctx.set("job.checkpoint.enabled", True, (*t, "save_interval"), "litgpt: train.save_interval")
    elif written and g(*t, "save_interval") is None:
        ctx.set("job.checkpoint.enabled", False, (*t, "save_interval"),
                "litgpt: train.save_interval = null (only the final weights are saved)")
    elif not written:
        fill(m, "job.checkpoint.enabled", "litgpt.save_interval", ctx.file, value=True)
        fill(m, "job.checkpoint.interval_steps", "litgpt.save_interval", ctx.file)
    rs = g("resume")
    if rs not in (None, ""):
        on = rs is True or (isinstance(rs, str) and rs.lower() not in ("false", "no"))
        ctx.set("job.checkpoint.resume", bool(on), ("resume",), f"litgpt: resume = {rs}")
    li = ctx.int_at("job.logging.interval_steps", (*t, "log_interval"), "litgpt: train.log_interval")
    if li is not None:
        ctx.set("job.logging.interval_steps", li, (*t, "log_interval"), "litgpt: train.log_interval")
    else:
        fill(m, "job.logging.interval_steps", "litgpt.log_interval", ctx.file)
    ln = g("logger_name")
    if isinstance(ln, str) and ln in LOGGERS:
        c.sink(m, LOGGERS[ln], ctx.file, ctx.line("logger_name"), "litgpt: logger_name")
    # Fabric's DDP/FSDP strategies pass torch's default_pg_timeout (30 min) to
    # init_process_group, which then replaces NCCL's own 10 min
    fill(m, "job.recovery.detection_timeout", "lightning.fabric_timeout", ctx.file)
    ms = ctx.int_at("job.train_steps", (*t, "max_steps"), "litgpt: train.max_steps")
    if ms is not None and ms > 0:
        ctx.set("job.train_steps", ms, (*t, "max_steps"), "litgpt: train.max_steps")
