"""PyTorch Lightning (Trainer / LightningCLI / Hydra) and NVIDIA NeMo 1.x YAML.

LightningCLI writes ``trainer:`` plus ``class_path``/``init_args`` objects; Hydra uses
``_target_``; NeMo 1.x is a Lightning ``trainer:`` plus ``exp_manager:`` (which provides
the checkpoint callback and loggers) and a Megatron-style ``model:`` batch. OmegaConf
``${...}`` interpolations are left unresolved: such a value counts as not set.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

PREC = {
    "16": "fp16",
    "16-mixed": "fp16",
    "16-true": "fp16",
    "bf16": "bf16",
    "bf16-mixed": "bf16",
    "bf16-true": "bf16",
    "32": "fp32",
    "32-true": "fp32",
    "64": "fp32",
    "64-true": "fp32",
    "transformer-engine": "fp8",
    "transformer-engine-float16": "fp8",
}
LOGGERS = {
    "TensorBoardLogger": "tensorboard",
    "WandbLogger": "wandb",
    "CSVLogger": "csv",
    "MLFlowLogger": "mlflow",
    "CometLogger": "comet",
    "NeptuneLogger": "neptune",
}


def _cls(obj: JSONValue) -> tuple[str, dict[str, JSONValue]]:
    """(class name, its arguments) of a class_path/init_args or _target_ object."""
    if not isinstance(obj, dict):
        return "", {}
    if "class_path" in obj:
        args = obj.get("init_args") or {}
        return str(obj["class_path"]).rsplit(".", 1)[-1], args if isinstance(args, dict) else {}
    if "_target_" in obj:
        return str(obj["_target_"]).rsplit(".", 1)[-1], obj
    return "", {}


def _trainer_args(data: dict[str, JSONValue]) -> bool:
    """Whether most keys are Lightning ``Trainer()`` arguments (its key catalogue)."""
    from validator.jobs.keys import catalogue

    cat = catalogue("lightning")
    known = cat.sections.get("trainer", frozenset()) if cat else frozenset()
    keys = [k for k in data if isinstance(k, str) and k != "defaults"]
    hits = sum(k in known for k in keys)
    return hits >= 2 and hits * 2 >= len(keys)


def _unresolved(v: JSONValue) -> bool:
    return isinstance(v, str) and "${" in v


def _package(ctx: Ctx) -> str | None:
    from validator.jobs import hydra

    return hydra.package(ctx.path, ctx.text)


def _unplaced(ctx: Ctx) -> bool:
    from validator.jobs import hydra

    return hydra.given(ctx.path) is None


def read_nemo(ctx: Ctx) -> None:
    """A NeMo 1.x config: a Lightning trainer with NeMo's ``exp_manager`` and ``model``."""
    read(ctx, nemo=True)


def read(ctx: Ctx, *, nemo: bool = False) -> None:
    m = ctx.model
    m.formats.append("nemo" if nemo else "lightning")
    m.torch = True
    data = ctx.tree.data if ctx.tree else {}
    tpath: tuple[object, ...] | None = None
    if isinstance(data.get("trainer"), dict):
        tpath = ("trainer",)
    elif _cls(data)[0] == "Trainer":
        tpath = ()
    elif "trainer" not in data and (_package(ctx) == "trainer" or (_trainer_args(data) and _unplaced(ctx))):
        # a Hydra config-group file (configs/trainer/ddp.yaml), or a file of Trainer
        # arguments alone: its keys are the trainer's, composed under ``trainer:``
        # (unless the defaults list placed them elsewhere: ``trainer@model.teacher: big``)
        tpath = ()
    if tpath is not None:
        _trainer(ctx, tpath, nemo)
        if not nemo:  # NeMo sets model.global_batch_size (its own rule, _nemo)
            line = ctx.line(*tpath, "accumulate_grad_batches") or (ctx.line(*tpath) if tpath else None)
            m.batch_derived = (ctx.file, line,
                               "lightning: the Trainer has no global-batch setting; it derives the global batch "
                               "as the dataloader's batch size x accumulate_grad_batches x world size")
    if tpath == ("trainer",):
        from validator.jobs import keycheck

        keycheck.check(ctx, "lightning", sections=("trainer",))
    # callbacks: in the trainer, or a Hydra callbacks file (name -> {_target_: ...})
    # a Hydra composed config has groups: callbacks: {name: {_target_: ...}} (also
    # logger:), next to trainer:; a callbacks/*.yaml file has the entries at the top
    callbacks: list[tuple[tuple[object, ...], JSONValue]] = []
    groups: list[tuple[object, ...]] = [("callbacks",), ("logger",)]
    if tpath is not None:
        groups.append((*tpath, "callbacks"))
    for gp in dict.fromkeys(groups):
        seq = ctx.get(*gp)
        if isinstance(seq, list):
            callbacks += [((*gp, i), cb) for i, cb in enumerate(seq)]
        elif isinstance(seq, dict) and "_target_" not in seq and "class_path" not in seq:
            callbacks += [((*gp, k), v) for k, v in seq.items() if isinstance(v, dict)]
    callbacks += [((k,), v) for k, v in data.items() if isinstance(v, dict) and "_target_" in v]
    for path, cb in callbacks:
        _callback(ctx, path, cb)
    if data.get("ckpt_path") == "last":
        ctx.set("job.checkpoint.resume", True, ("ckpt_path",), "lightning: ckpt_path = last")
    if nemo:
        _nemo(ctx)


def _trainer(ctx: Ctx, t: tuple[object, ...], nemo: bool) -> None:
    m, g = ctx.model, (lambda k: ctx.get(*t, k))
    src = "nemo: trainer." if nemo else "lightning: trainer."
    prec = g("precision")
    at: tuple[object, ...] = (*t, "precision")
    named = f"{src}precision"
    if prec is None and nemo:
        prec, at, named = _megatron_precision(ctx, t, src)
    if prec is not None and not _unresolved(prec):
        word = PREC.get(str(prec).lower())
        if word is None:
            m.add(
                "job.precision.problems",
                f"precision {prec!r} is not a Lightning precision",
                ctx.file,
                ctx.line(*at),
                named,
            )
        else:
            c.precision(m, word, ctx.file, ctx.line(*at), f"{named} = {prec}")
            if word == "fp16":
                # a default: a DeepSpeed strategy's explicit fp16.loss_scale replaces it
                fill(m, "job.precision.loss_scaling", "torch.grad_scaler", ctx.file,
                     line=ctx.line(*at), why=f" ({named} = {prec})")
    else:
        fill(m, "job.precision.mode", "lightning.precision", ctx.file, value="fp32")
    acc = ctx.int_at(
        "job.batch.accumulation", (*t, "accumulate_grad_batches"), src + "accumulate_grad_batches"
    )
    if acc is not None:
        ctx.set(
            "job.batch.accumulation",
            acc,
            (*t, "accumulate_grad_batches"),
            src + "accumulate_grad_batches",
        )
    else:
        fill(m, "job.batch.accumulation", "lightning.accumulate_grad_batches", ctx.file)
    nn = ctx.int_at("job.resources.nodes", (*t, "num_nodes"), src + "num_nodes")
    if nn is not None and nn > 0:
        ctx.set("job.resources.nodes", nn, (*t, "num_nodes"), src + "num_nodes")
    # devices may also be a list of ids or "0,1": only a plain count is taken
    n = c.as_int(g("devices"))
    if n is not None and n > 0:
        ctx.set("job.resources.gpus_per_node", n, (*t, "devices"), src + "devices")
    steps = ctx.int_at("job.train_steps", (*t, "max_steps"), src + "max_steps")
    if steps is not None and steps > 0:
        ctx.set("job.train_steps", steps, (*t, "max_steps"), src + "max_steps")
    mt = c.duration_of(
        m, "job.duration", g("max_time"), ctx.file, ctx.line(*t, "max_time"), src + "max_time"
    )
    if mt is not None:
        ctx.set("job.duration", mt, (*t, "max_time"), src + "max_time")
    les = ctx.int_at("job.logging.interval_steps", (*t, "log_every_n_steps"), src + "log_every_n_steps")
    if les is not None:
        ctx.set(
            "job.logging.interval_steps", les, (*t, "log_every_n_steps"), src + "log_every_n_steps"
        )
    else:
        fill(m, "job.logging.interval_steps", "lightning.log_every_n_steps", ctx.file)
    if not nemo:
        ec = ctx.bool_at(
            "job.checkpoint.enabled", (*t, "enable_checkpointing"), src + "enable_checkpointing"
        )
        if ec is not None:
            ctx.set(
                "job.checkpoint.enabled",
                ec,
                (*t, "enable_checkpointing"),
                src + "enable_checkpointing",
            )
        elif not m.has("job.checkpoint.enabled"):
            fill(m, "job.checkpoint.enabled", "lightning.enable_checkpointing", ctx.file)
    loggers = g("logger")
    for i, lg in enumerate(loggers if isinstance(loggers, list) else [loggers]):
        name = LOGGERS.get(_cls(lg)[0])
        if name:
            c.sink(m, name, ctx.file, ctx.line(*t, "logger"), f"{src}logger[{i}]")
    sname, sargs = _cls(g("strategy"))
    if sname and "timeout" in sargs:
        spath = (*t, "strategy", *(("init_args",) if "class_path" in g("strategy") else ()))
        tline = ctx.line(*spath, "timeout")
        secs = c.duration_of(
            m,
            "job.recovery.detection_timeout",
            sargs["timeout"],
            ctx.file,
            tline,
            f"{src}strategy {sname}.timeout",
        )
        if secs is not None:
            m.set(
                "job.recovery.detection_timeout",
                secs,
                ctx.file,
                tline,
                f"{src}strategy {sname}.timeout",
            )
    plugins = g("plugins")
    for pl in plugins if isinstance(plugins, list) else [plugins]:
        name, args = _cls(pl)
        if name == "SLURMEnvironment":
            rq = c.as_bool(args.get("auto_requeue", True))
            ctx.set(
                "job.recovery.requeue",
                rq,
                (*t, "plugins"),
                f"{src}plugins SLURMEnvironment.auto_requeue",
            )


def _callback(ctx: Ctx, path: tuple[object, ...], cb: JSONValue) -> None:
    m = ctx.model
    name, args = _cls(cb)
    line = ctx.line(*path)
    if name == "ModelCheckpoint":
        # a job's checkpoints hold model and optimizer state when any of its
        # ModelCheckpoint callbacks saves the full state: weights-only ones beside it
        # (the best model by a metric) take nothing away (model.__dict__: per job)
        full = m.__dict__.setdefault("lightning_full_checkpoint", [])
        if c.as_bool(args.get("save_weights_only")):
            # weights only: no optimizer, loop or RNG state (CKPT-01 requires model and
            # optimizer state); its interval is no interval of a resumable checkpoint
            at = (*path, "init_args") if isinstance(cb, dict) and isinstance(cb.get("init_args"), dict) else path
            wline = ctx.line(*at, "save_weights_only") or line
            if not full:
                m.decide("job.checkpoint.enabled", False, ctx.file, wline,
                         "lightning: ModelCheckpoint(save_weights_only=True) (weights-only checkpoints: "
                         "no optimizer state)")
        elif not full and m.has("job.checkpoint.enabled") and m.entries["job.checkpoint.enabled"].value is False \
                and "save_weights_only" in m.entries["job.checkpoint.enabled"].source:
            m.decide("job.checkpoint.enabled", True, ctx.file, line,
                     "lightning: ModelCheckpoint callback (full state: model, optimizer and loop; the "
                     "weights-only callbacks beside it add best-model copies)")
        else:
            m.set("job.checkpoint.enabled", True, ctx.file, line, "lightning: ModelCheckpoint callback")
        weights_only = bool(c.as_bool(args.get("save_weights_only")))
        if not weights_only:
            full.append((ctx.file, line))
        steps = c.as_int(args.get("every_n_train_steps")) if not weights_only else None
        tti = args.get("train_time_interval") if not weights_only else None
        if steps:
            m.set(
                "job.checkpoint.interval_steps",
                steps,
                ctx.file,
                line,
                "lightning: ModelCheckpoint.every_n_train_steps",
            )
        secs = c.lightning_time(tti) if tti is not None else None
        if secs:
            m.set(
                "job.checkpoint.interval_time",
                secs,
                ctx.file,
                line,
                "lightning: ModelCheckpoint.train_time_interval",
            )
        set_ = [
            k
            for k in ("every_n_train_steps", "train_time_interval", "every_n_epochs")
            if args.get(k) is not None
        ]
        if len(set_) > 1:
            m.add(
                "job.config.ignored_keys",
                f"ModelCheckpoint {', '.join(set_)} are mutually exclusive "
                "(Lightning raises MisconfigurationException)",
                ctx.file,
                line,
                "lightning: ModelCheckpoint",
            )
    elif name == "DeviceStatsMonitor":
        c.metric(m, "gpu_utilization", ctx.file, line, "lightning: DeviceStatsMonitor")
        c.metric(m, "memory", ctx.file, line, "lightning: DeviceStatsMonitor")
    elif name == "ThroughputMonitor":  # rule pack v1.1 (metrics.py): batches/samples/flops per second
        m.metric_evidence.append(("gpu_utilization", ctx.file, line, "lightning: ThroughputMonitor"))
    elif name in LOGGERS:
        c.sink(m, LOGGERS[name], ctx.file, line, f"lightning: {name}")
    elif re.search(r"Grad(ient)?(Norm|Stat)", name):
        # grad_norm() is a utility called from a callback; a callback named for it is
        # taken at its word (the source says so)
        c.metric(m, "gradient_stats", ctx.file, line, f"lightning: callback {name} (by its name)")


def _megatron_precision(ctx: Ctx, t: tuple[object, ...], src: str) -> tuple[JSONValue, tuple[object, ...], str]:
    """A NeMo 2 recipe's precision where ``trainer.precision`` is not set: the
    ``MegatronMixedPrecision`` plugin's ``precision`` (nemo/lightning/pytorch/plugins/
    mixed_precision.py; NeMo 2 passes precision to the trainer only through it), else the
    Megatron optimizer's ``model.optim.config.bf16``/``fp16`` (megatron.core
    OptimizerConfig: the half-precision the optimizer keeps parameters and gradients in)."""
    found: list[tuple[tuple[object, ...], dict[str, JSONValue]]] = []
    # the trainer's plugins, or a recipe's top-level plugins: (SageMaker HyperPod's recipes
    # write the trainer's arguments beside it: plugins:, strategy:, callbacks:)
    for base in dict.fromkeys(((*t, "plugins"), ("plugins",))):
        plugins = ctx.get(*base)
        if isinstance(plugins, dict):
            found.append((base, plugins))
        elif isinstance(plugins, list):
            found += [((*base, i), p) for i, p in enumerate(plugins) if isinstance(p, dict)]
    for path, plug in found:
        shown = ".".join(str(p) for p in path)
        cls = str(plug.get("_target_") or plug.get("class_path") or "")
        if cls.rsplit(".", 1)[-1] == "MegatronMixedPrecision" and plug.get("precision") is not None:
            return plug["precision"], (*path, "precision"), f"nemo: {shown} MegatronMixedPrecision precision"
        inner = plug.get("MegatronMixedPrecision")
        if isinstance(inner, dict) and inner.get("precision") is not None:
            return (inner["precision"], (*path, "MegatronMixedPrecision", "precision"),
                    f"nemo: {shown} MegatronMixedPrecision precision")
    for cfg in (("model", "optim", "config"), ("optim", "config")):
        for key, word in (("bf16", "bf16-mixed"), ("fp16", "16-mixed")):
            if c.as_bool(ctx.get(*cfg, key)) is True:
                return (word, (*cfg, key),
                        f"nemo: {'.'.join(cfg)}.{key}: True (Megatron OptimizerConfig), precision")
    return None, (*t, "precision"), f"{src}precision"


def _nemo(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    # typos only: exp_manager's keys moved between NeMo releases
    keycheck.check(ctx, "nemo", sections=("exp_manager",), misplaced=False)
    m, e = ctx.model, (lambda *k: ctx.get("exp_manager", *k))
    for key, fact in (
        ("micro_batch_size", "job.batch.micro"),
        ("global_batch_size", "job.batch.global"),
        ("tensor_model_parallel_size", "job.parallel.tp"),
        ("pipeline_model_parallel_size", "job.parallel.pp"),
        ("context_parallel_size", "job.parallel.cp"),
        ("expert_model_parallel_size", "job.parallel.ep"),
    ):
        n = c.as_int(ctx.get("model", key))
        if n is not None:
            ctx.set(fact, n, ("model", key), f"nemo: model.{key}")
    if m.has("job.batch.global"):
        ctx.set(
            "job.batch.rule",
            "divisible",
            ("model", "global_batch_size"),
            "nemo: global = micro x dp x grad_acc (grad_acc derived)",
        )
    tl = ctx.get("run", "time_limit")
    secs = c.slurm_time(tl) if isinstance(tl, str) else None
    if secs:
        ctx.set(
            "job.resources.time_limit", secs, ("run", "time_limit"), "nemo launcher: run.time_limit"
        )
    if c.as_bool(ctx.get("model", "fp8")):
        c.precision(m, "fp8", ctx.file, ctx.line("model", "fp8"), "nemo: model.fp8")
    auto = ctx.get("resume")
    if isinstance(auto, dict):
        # NeMo 2's AutoResume (a recipe's resume: block, llm.train(resume=...)) decides how the
        # job resumes, not exp_manager's NeMo 1 default
        rie = c.as_bool(auto.get("resume_if_exists"))
        if rie is not None:
            ctx.set("job.checkpoint.resume", rie, ("resume", "resume_if_exists"),
                    "nemo: resume.resume_if_exists (AutoResume)")
        else:
            fill(m, "job.checkpoint.resume", "nemo.autoresume_if_exists", ctx.file, line=ctx.line("resume"))
    if ctx.get("exp_manager") is None:
        return
    ccb = e("create_checkpoint_callback")
    enabled = c.as_bool(ccb) if ccb is not None else True
    if ccb is not None:
        ctx.set(
            "job.checkpoint.enabled",
            enabled,
            ("exp_manager", "create_checkpoint_callback"),
            "nemo: exp_manager.create_checkpoint_callback",
        )
    else:
        fill(m, "job.checkpoint.enabled", "nemo.create_checkpoint_callback", ctx.file)
    p = ("exp_manager", "checkpoint_callback_params")
    steps = c.as_int(ctx.get(*p, "every_n_train_steps"))
    if steps:
        ctx.set(
            "job.checkpoint.interval_steps",
            steps,
            (*p, "every_n_train_steps"),
            "nemo: checkpoint_callback_params.every_n_train_steps",
        )
    elif enabled and ctx.get(*p, "monitor") is not None:
        vci = c.as_int(ctx.get("trainer", "val_check_interval"))
        if vci and vci > 1:
            ctx.set(
                "job.checkpoint.interval_steps",
                vci,
                ("trainer", "val_check_interval"),
                "nemo: checkpoint on validation (monitor set, no every_n_train_steps): "
                "trainer.val_check_interval",
            )
    rie = e("resume_if_exists")
    if isinstance(auto, dict):
        pass  # AutoResume decided above
    elif c.as_bool(rie) is not None:
        ctx.set(
            "job.checkpoint.resume",
            c.as_bool(rie),
            ("exp_manager", "resume_if_exists"),
            "nemo: exp_manager.resume_if_exists",
        )
    else:
        fill(m, "job.checkpoint.resume", "nemo.resume_if_exists", ctx.file)
    tb = e("create_tensorboard_logger")
    if c.as_bool(tb) is not False:
        c.sink(
            m,
            "tensorboard",
            ctx.file,
            ctx.line("exp_manager", "create_tensorboard_logger") or ctx.line("exp_manager"),
            "nemo: exp_manager.create_tensorboard_logger",
        )
    for key, sink in (
        ("create_wandb_logger", "wandb"),
        ("create_mlflow_logger", "mlflow"),
        ("create_neptune_logger", "neptune"),
    ):
        if c.as_bool(e(key)):
            c.sink(m, sink, ctx.file, ctx.line("exp_manager", key), f"nemo: exp_manager.{key}")
    if c.as_bool(e("log_step_timing")) is not False:
        c.metric(
            m,
            "collective_latency",
            ctx.file,
            ctx.line("exp_manager", "log_step_timing") or ctx.line("exp_manager"),
            "nemo: exp_manager.log_step_timing (step timing)",
        )
    if c.as_bool(e("log_tflops_per_sec_per_gpu")) is not False:
        c.metric(
            m,
            "gpu_utilization",
            ctx.file,
            ctx.line("exp_manager", "log_tflops_per_sec_per_gpu") or ctx.line("exp_manager"),
            "nemo: exp_manager.log_tflops_per_sec_per_gpu",
        )
    if c.as_bool(e("create_fault_tolerance_callback")):
        line = ctx.line("exp_manager", "create_fault_tolerance_callback")
        m.set(
            "job.recovery.auto_restart",
            True,
            ctx.file,
            line,
            "nemo: exp_manager.create_fault_tolerance_callback",
        )
        hb = c.as_float(e("fault_tolerance", "rank_heartbeat_timeout"))
        m.set(
            "job.recovery.detection_timeout",
            hb if hb is not None else 2700.0,
            ctx.file,
            line,
            "nemo: fault_tolerance.rank_heartbeat_timeout"
            + ("" if hb is not None else " (default 2700 s)"),
        )
