"""TensorFlow Model Garden experiment YAML: an overlay on a registered experiment.

A YAML file only overrides the experiment factory's values (``--experiment`` picks the
factory; each ``--config_file`` is applied strictly on top). A key the file does not
set therefore takes the factory's value, which the file cannot show; the linter uses
the ``config_definitions.py`` dataclass default and says so in the source ("default:
... inherited from the registered experiment unless it overrides it").
"""

from __future__ import annotations

from validator.jobs import common as c
from validator.jobs.base import Ctx

INHERITED = " (dataclass default; the registered experiment may override it)"


def read(ctx: Ctx) -> None:
    m, g = ctx.model, ctx.get
    m.formats.append("tf_model_garden")
    mpd = g("runtime", "mixed_precision_dtype")
    word = c.dtype_word(mpd) if mpd is not None else None
    if word:
        c.precision(
            m,
            word,
            ctx.file,
            ctx.line("runtime", "mixed_precision_dtype"),
            f"tf-model-garden: runtime.mixed_precision_dtype = {mpd}",
        )
    else:
        c.precision_default(
            m, "fp32", ctx.file, "tf-model-garden: runtime.mixed_precision_dtype = None" + INHERITED
        )
    ls = g("runtime", "loss_scale")
    if word == "fp16":
        if ls in (None, "", 0):
            m.set(
                "job.precision.loss_scaling",
                "none",
                ctx.file,
                ctx.line("runtime", "mixed_precision_dtype"),
                "tf-model-garden: float16 without runtime.loss_scale (no LossScaleOptimizer)",
            )
        else:
            kind = "dynamic" if str(ls).lower() == "dynamic" else "static"
            m.set(
                "job.precision.loss_scaling",
                kind,
                ctx.file,
                ctx.line("runtime", "loss_scale"),
                f"tf-model-garden: runtime.loss_scale = {ls}",
            )
    elif ls not in (None, ""):
        m.add(
            "job.precision.problems",
            f"runtime.loss_scale = {ls} has no effect unless mixed_precision_dtype is float16",
            ctx.file,
            ctx.line("runtime", "loss_scale"),
            "tf-model-garden: runtime.loss_scale",
        )
    for part in ("train_data", "validation_data"):
        dt = g("task", part, "dtype")
        if word and dt is not None and c.dtype_word(dt) not in (word, None) and word != "fp32":
            m.add(
                "job.precision.problems",
                f"task.{part}.dtype = {dt} differs from runtime.mixed_precision_dtype = {mpd}",
                ctx.file,
                ctx.line("task", part, "dtype"),
                f"tf-model-garden: task.{part}.dtype",
            )
    gbs = c.as_int(g("task", "train_data", "global_batch_size"))
    if gbs:
        ctx.set(
            "job.batch.global",
            gbs,
            ("task", "train_data", "global_batch_size"),
            "tf-model-garden: task.train_data.global_batch_size",
        )
        ctx.set(
            "job.batch.rule",
            "divisible",
            ("task", "train_data", "global_batch_size"),
            "tf-model-garden: global % replicas == 0 (per-replica batch = global / replicas)",
        )
        ctx.set(
            "job.batch.micro",
            1,
            ("task", "train_data", "global_batch_size"),
            "tf-model-garden: per-replica batch is derived; "
            "the unit of divisibility is 1 x replicas",
        )
    m.default("job.batch.accumulation", 1, ctx.file, "tf-model-garden: no gradient accumulation")
    ngpu = c.as_int(g("runtime", "num_gpus"))
    if ngpu:
        ctx.set(
            "job.resources.gpus_per_node",
            ngpu,
            ("runtime", "num_gpus"),
            "tf-model-garden: runtime.num_gpus",
        )
    ci = g("trainer", "checkpoint_interval")
    if ci is not None:
        n = c.as_int(ci)
        ctx.set(
            "job.checkpoint.enabled",
            bool(n),
            ("trainer", "checkpoint_interval"),
            "tf-model-garden: trainer.checkpoint_interval"
            + (" = 0 disables every save" if not n else ""),
        )
        if n:
            ctx.set(
                "job.checkpoint.interval_steps",
                n,
                ("trainer", "checkpoint_interval"),
                "tf-model-garden: trainer.checkpoint_interval",
            )
    else:
        m.default(
            "job.checkpoint.enabled",
            True,
            ctx.file,
            "tf-model-garden: checkpoint_interval = 1000" + INHERITED,
        )
        m.default(
            "job.checkpoint.interval_steps",
            1000,
            ctx.file,
            "tf-model-garden: trainer.checkpoint_interval = 1000" + INHERITED,
        )
    m.default(
        "job.checkpoint.resume",
        True,
        ctx.file,
        "tf-model-garden: the trainer restores the latest checkpoint in model_dir",
    )
    si = c.as_int(g("trainer", "summary_interval"))
    if si:
        ctx.set(
            "job.logging.interval_steps",
            si,
            ("trainer", "summary_interval"),
            "tf-model-garden: trainer.summary_interval",
        )
    else:
        m.default(
            "job.logging.interval_steps",
            1000,
            ctx.file,
            "tf-model-garden: trainer.summary_interval = 1000" + INHERITED,
        )
    c.sink(m, "tensorboard", ctx.file, ctx.line("trainer"), "tf-model-garden: trainer summaries")
    steps = c.as_int(g("trainer", "train_steps"))
    if steps:
        ctx.set(
            "job.train_steps",
            steps,
            ("trainer", "train_steps"),
            "tf-model-garden: trainer.train_steps",
        )
