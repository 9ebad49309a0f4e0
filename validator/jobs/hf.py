"""Hugging Face ``TrainingArguments`` (YAML/JSON, as HfArgumentParser reads them) and
Accelerate config YAML.

HF's effective batch is derived (per-device x devices x accumulation), so there is no
global batch to check; save/logging counts are optimizer steps. Accelerate's
``num_processes`` is the total across machines; its ``parallelism_config`` degrees must
multiply to it. An Accelerate config naming ``deepspeed_config_file`` is followed.
"""

from __future__ import annotations

from validator.jobs import common as c
from validator.jobs import keycheck
from validator.jobs.base import Ctx
from validator.jobs.defaults import cite, fill, value_of

REPORT_TO = {
    "tensorboard",
    "wandb",
    "mlflow",
    "comet_ml",
    "clearml",
    "azure_ml",
    "dvclive",
    "swanlab",
    "trackio",
    "dagshub",
    "flyte",
    "codecarbon",
}


def read_trainer(ctx: Ctx) -> None:
    m, g = ctx.model, ctx.get
    m.formats.append("hf_trainer")
    m.torch = True
    # typos of TrainingArguments / TRL names only: a script's own dataclasses share the file
    keycheck.check(ctx, "hf", sections=("",))
    bf16, fp16 = c.as_bool(g("bf16")), c.as_bool(g("fp16"))
    if bf16:
        c.precision(m, "bf16", ctx.file, ctx.line("bf16"), "hf: bf16")
    if fp16:
        c.precision(m, "fp16", ctx.file, ctx.line("fp16"), "hf: fp16")
    if fp16:
        # GradScaler's dynamic scaling is only the default: under DeepSpeed (named here
        # or found among the job's files) its explicit fp16.loss_scale replaces it
        fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file, line=ctx.line("fp16"),
             why=" (hf: fp16)")
    if not bf16 and not fp16:
        # written false (``bf16: false`` at its line) is the user's value, not a default:
        # the finding lands on that line, and names the other key's default
        said = [k for k in ("bf16", "fp16") if g(k) is not None]
        if said:
            other = "fp16" if said[0] == "bf16" else "bf16"
            # "hf: bf16 = False ...": the key as written, first (lint --fix edits it there);
            # the other key's default named without parentheses, which the fix reader refuses
            default = value_of("hf.fp16") if other == "fp16" else value_of("hf.bf16")
            rest = (f" and {other} = {g(other)}" if other in said else
                    f"; {other} not set: {default} by default, transformers/training_args.py")
            ctx.set("job.precision.mode", "fp32", (said[0],), f"hf: {said[0]} = {g(said[0])}{rest}")
        else:
            fill(m, "job.precision.mode", "hf.precision", ctx.file, value="fp32")
    for key, fact in (
        ("per_device_train_batch_size", "job.batch.micro"),
        ("gradient_accumulation_steps", "job.batch.accumulation"),
    ):
        n = ctx.int_at(fact, (key,), f"hf: {key}")
        if n is not None:
            ctx.set(fact, n, (key,), f"hf: {key}")
        else:
            fill(m, fact, f"hf.{key}", ctx.file)
    m.batch_derived = (ctx.file, ctx.line("per_device_train_batch_size"),
                       "hf: the Trainer has no global-batch setting; it derives the global batch as "
                       "per_device_train_batch_size x devices x gradient_accumulation_steps")
    strategy = str(g("save_strategy") or value_of("hf.save_strategy")).lower()
    if strategy == "no":
        ctx.set("job.checkpoint.enabled", False, ("save_strategy",), "hf: save_strategy = no")
    else:
        src = ("save_strategy",) if g("save_strategy") is not None else ()
        if src:
            ctx.set("job.checkpoint.enabled", True, src, f"hf: save_strategy = {strategy}")
        else:
            fill(m, "job.checkpoint.enabled", "hf.save_strategy", ctx.file, value=True,
                 why=": a checkpoint every save_steps")
        if strategy == "steps":
            # an int, or a float below 1 (a ratio of the total steps: not a step count)
            ssf = ctx.float_at(
                "job.checkpoint.interval_steps", ("save_steps",), "hf: save_steps"
            )
            ss = c.as_int(ssf) if ssf is not None and ssf >= 1 else None
            if ss is not None:
                ctx.set("job.checkpoint.interval_steps", ss, ("save_steps",), "hf: save_steps")
            elif g("save_steps") is None:
                fill(m, "job.checkpoint.interval_steps", "hf.save_steps", ctx.file)
    resume(ctx)
    if c.as_bool(g("save_only_model")):
        ctx.set(
            "job.checkpoint.resume",
            False,
            ("save_only_model",),
            "hf: save_only_model = True (cannot resume)",
        )
        # model weights only: no optimizer, scheduler or RNG state (CKPT-01 requires
        # model and optimizer state)
        m.decide("job.checkpoint.enabled", False, ctx.file, ctx.line("save_only_model"),
                 "hf: save_only_model = True (model-only checkpoints: no optimizer state)")
    if str(g("logging_strategy") or value_of("hf.logging_strategy")).lower() == "steps":
        lsf = ctx.float_at("job.logging.interval_steps", ("logging_steps",), "hf: logging_steps")
        ls = c.as_int(lsf) if lsf is not None and lsf >= 1 else None
        if ls is not None:
            ctx.set("job.logging.interval_steps", ls, ("logging_steps",), "hf: logging_steps")
        elif g("logging_steps") is None:
            fill(m, "job.logging.interval_steps", "hf.logging_steps", ctx.file)
    rt = g("report_to")
    for name in rt if isinstance(rt, list) else [rt] if isinstance(rt, str) else []:
        if str(name) in REPORT_TO:
            c.sink(m, str(name), ctx.file, ctx.line("report_to"), "hf: report_to")
    grad_norm(ctx, "hf: ")
    # include_num_input_tokens_seen (True/"all"/"non_padding"): Trainer.log adds
    # num_input_tokens_seen and train_tokens_per_second to every log (transformers 4.57.6,
    # trainer.py Trainer.log; True -> "all" in training_args.py __post_init__). Not
    # skip_memory_metrics: false, whose TrainerMemoryTracker reports memory once, when train()
    # ends (trainer_utils.py), not as a series: no setting of TrainingArguments logs memory
    # during training.
    tokens = g("include_num_input_tokens_seen")
    if c.as_bool(tokens) or (isinstance(tokens, str) and tokens.strip().lower() in ("all", "non_padding")):
        c.metric(m, "gpu_utilization", ctx.file, ctx.line("include_num_input_tokens_seen"),
                 "hf: include_num_input_tokens_seen (train_tokens_per_second)")
    to = ctx.float_at("job.recovery.detection_timeout", ("ddp_timeout",), "hf: ddp_timeout")
    if to is not None:
        ctx.set("job.recovery.detection_timeout", to, ("ddp_timeout",), "hf: ddp_timeout")
    else:
        fill(m, "job.recovery.detection_timeout", "hf.ddp_timeout", ctx.file)
    steps = ctx.int_at("job.train_steps", ("max_steps",), "hf: max_steps")
    if steps is not None and steps > 0:
        ctx.set("job.train_steps", steps, ("max_steps",), "hf: max_steps")
    ds = g("deepspeed")
    if isinstance(ds, str):
        ctx.ref(ds, "deepspeed", ctx.line("deepspeed"))
    elif isinstance(ds, dict):
        from validator.jobs import deepspeed

        deepspeed.read(ctx, ("deepspeed",))


def resume(ctx: Ctx) -> None:
    """CKPT-03 as the Trainer does it (transformers/trainer.py, ``Trainer.train``): ``True``
    loads the last checkpoint in output_dir (``get_last_checkpoint``), a path loads that one
    checkpoint however old (a restart goes back to it: not the latest), and left out the
    Trainer starts from step 0 (the default, cited)."""
    rfc = ctx.get("resume_from_checkpoint")
    flag = c.as_bool(rfc)
    key = ("resume_from_checkpoint",)
    if flag is True:
        ctx.set("job.checkpoint.resume", True, key,
                "hf: resume_from_checkpoint = True (the last checkpoint in output_dir)")
    elif flag is False or (rfc is None and ctx.line("resume_from_checkpoint")):
        ctx.set("job.checkpoint.resume", False, key, f"hf: resume_from_checkpoint = {rfc}")
    elif rfc is not None:
        ctx.set("job.checkpoint.resume", False, key,
                f"hf: resume_from_checkpoint = {rfc} (one fixed checkpoint, not the latest: a restart "
                "reloads it and loses every step after it; True resumes from the latest in output_dir)")
    else:
        fill(ctx.model, "job.checkpoint.resume", "hf.resume_from_checkpoint", ctx.file, value=False,
             why=": a restart trains from step 0")


# Whether the Trainer logs grad_norm at max_grad_norm 0 depends on the release, read in
# transformers' own source. Up to 5.2.0 (read at 4.57.6, 5.0.0, 5.1.0, 5.2.0:
# Trainer._inner_training_loop) the norm is computed only inside ``if args.max_grad_norm is not
# None and args.max_grad_norm > 0``: at 0 (or None) nothing is logged. From 5.3.0 (read at 5.3.0,
# 5.16.1, 5.23.0: Trainer._run_epoch) ``if self.args.max_grad_norm > 0`` clips, and
# Trainer._get_grad_norm otherwise computes the unclipped norm (clip_grad_norm_ with max_norm
# inf); _maybe_log_save_evaluate logs it as grad_norm either way. A None there is compared with 0
# and raises TypeError. A config names no transformers version, so the reader judges at the
# newest release the hf table was read at (5.23.0), as the DeepSpeed reader does for
# steps_per_print, and its source says so.
GRAD_NORM_UNCLIPPED = ("grad_norm logged without clipping (transformers 5.3.0-5.23.0, "
                       "transformers/trainer.py, Trainer._run_epoch and Trainer._get_grad_norm; "
                       "up to 5.2.0 nothing is logged at 0)")
GRAD_NORM_NONE = ("a number (transformers 5.3.0-5.23.0 compare it with 0 on every optimizer step, "
                  "transformers/trainer.py Trainer._run_epoch: None raises TypeError; up to 5.2.0 "
                  "None meant no clipping and no grad_norm logged); 0 turns clipping off")


def grad_norm(ctx: Ctx, src: str) -> None:
    """Gradient statistics from ``max_grad_norm``: unset, the default (1.0) clips and the
    Trainer logs the norm it clipped at; above 0 the same; 0 or below, logged unclipped (from
    transformers 5.3.0, GRAD_NORM_UNCLIPPED); an explicit null an error (the Trainer fails)."""
    from validator.io.source import MISSING

    m = ctx.model
    assert ctx.tree is not None
    raw = ctx.tree.get("max_grad_norm")
    line = ctx.line("max_grad_norm")
    if raw is MISSING:  # the default clips, and a clipping Trainer logs grad_norm
        c.metric(m, "gradient_stats", ctx.file, None, f"{cite('hf.max_grad_norm')}: grad_norm logged")
    elif raw is None:
        m.invalid("job.metrics.gradient_stats", None, ctx.file, line, f"{src}max_grad_norm", GRAD_NORM_NONE)
    else:
        v = ctx.float_at("job.metrics.gradient_stats", ("max_grad_norm",), f"{src}max_grad_norm")
        if v is not None and v > 0:
            c.metric(m, "gradient_stats", ctx.file, line, f"{src}max_grad_norm logs grad_norm")
        elif v is not None:
            c.metric(m, "gradient_stats", ctx.file, line, f"{src}max_grad_norm = {raw}: {GRAD_NORM_UNCLIPPED}")


def read_accelerate(ctx: Ctx) -> None:
    m, g = ctx.model, ctx.get
    m.formats.append("accelerate")
    m.torch = True
    keycheck.check(ctx, "accelerate", sections=("",))
    mp = g("mixed_precision")
    if mp is not None:
        word = c.dtype_word(str(mp)) or ("fp8" if str(mp).lower() == "fp8" else None)
        if word:
            c.precision(
                m,
                word,
                ctx.file,
                ctx.line("mixed_precision"),
                f"accelerate: mixed_precision = {mp}",
            )
            if word == "fp16":
                # a default: a DeepSpeed config's explicit fp16.loss_scale replaces it
                fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file,
                     line=ctx.line("mixed_precision"), why=" (accelerate: mixed_precision = fp16)")
    elif g("deepspeed_config", "deepspeed_config_file") is None:
        fill(m, "job.precision.mode", "accelerate.mixed_precision", ctx.file, value="fp32")
    n = ctx.int_at("job.world_size", ("num_processes",), "accelerate: num_processes")
    if n is not None and n > 0:
        ctx.set("job.world_size", n, ("num_processes",), "accelerate: num_processes (total)")
    nm = ctx.int_at("job.resources.nodes", ("num_machines",), "accelerate: num_machines")
    if nm is not None and nm > 0:
        ctx.set("job.resources.nodes", nm, ("num_machines",), "accelerate: num_machines")
        if n and n > 0 and n % nm == 0:
            ctx.set(
                "job.resources.gpus_per_node",
                n // nm,
                ("num_processes",),
                "accelerate: num_processes / num_machines",
            )
    pc = ("parallelism_config",)
    degrees = {
        k: c.as_int(g(*pc, f"parallelism_config_{k}_size"))
        for k in ("dp_replicate", "dp_shard", "tp", "cp")
    }
    for k, fact in (("tp", "job.parallel.tp"), ("cp", "job.parallel.cp")):
        if degrees[k] is not None:
            ctx.set(
                fact,
                degrees[k],
                (*pc, f"parallelism_config_{k}_size"),
                f"accelerate: parallelism_config_{k}_size",
            )
    if degrees["dp_replicate"] is not None or degrees["dp_shard"] is not None:
        dp = (degrees["dp_replicate"] or 1) * (degrees["dp_shard"] or 1)
        ctx.set(
            "job.parallel.dp",
            dp,
            (*pc, "parallelism_config_dp_replicate_size"),
            "accelerate: dp_replicate x dp_shard",
        )
    ga = c.as_int(g("deepspeed_config", "gradient_accumulation_steps"))
    if ga is not None:
        ctx.set(
            "job.batch.accumulation",
            ga,
            ("deepspeed_config", "gradient_accumulation_steps"),
            "accelerate: deepspeed_config.gradient_accumulation_steps",
        )
    ctx.ref(g("deepspeed_config", "deepspeed_config_file"), "deepspeed",
            ctx.line("deepspeed_config", "deepspeed_config_file"))
    if isinstance(g("fp8_config"), dict) and g("fp8_config") and str(mp).lower() != "fp8":
        # accelerate reads fp8_config only under mixed_precision: fp8 (launch's
        # setup_fp8_env): under any other precision the block does nothing
        m.add("job.config.ignored_keys",
              f"fp8_config at line {ctx.line('fp8_config')}: read only with mixed_precision: fp8 "
              f"(this config: {mp})", ctx.file, ctx.line("fp8_config"), "accelerate: fp8_config")
