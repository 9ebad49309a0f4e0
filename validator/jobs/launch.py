"""What launcher flags mean: Slurm ``#SBATCH``, torchrun, ``accelerate launch``,
``deepspeed``, torchtune's ``tune run`` (``tune.py``), Megatron-LM's ``pretrain_*.py``
arguments, and HF Trainer arguments passed on the command line. Shared by shell scripts
and Kubeflow PyTorchJob commands.

Flags arrive normalized (``--max_restarts`` and ``--max-restarts`` are one key, ``_`` ->
``-``) as ``{name: (value, line)}``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from validator.io.source import Tree
from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.coerce import typed_value
from validator.jobs.defaults import fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

Flags = dict[str, tuple[str, int]]
MEGATRON_MARKERS = (
    "micro-batch-size",
    "global-batch-size",
    "tensor-model-parallel-size",
    "save-interval",
    "pipeline-model-parallel-size",
)
HF_MARKERS = ("per-device-train-batch-size", "save-strategy", "logging-steps", "output-dir")


def apply(ctx: Ctx, flags: Flags) -> None:
    m = ctx.model
    launchers = {k.split(":", 1)[1] for k in flags if k.startswith("@launcher:")}
    if launchers:
        m.torch = True
    _slurm(ctx, flags)
    from validator.jobs import failure_detection as detection  # rule pack v1.1: crash and hang mechanisms

    detection.launcher_flags(ctx, flags, launchers)
    if "tune" in launchers:  # torchtune's tune run (torchrun's options, when given)
        from validator.jobs import tune

        tune.apply(ctx, flags)
    if "accelerate" in launchers:
        _accelerate(ctx, flags)
    elif launchers & {"torchrun", "ft_launcher"} or any(k in flags for k in ("nproc-per-node", "rdzv-backend")):
        _torchrun(ctx, flags)
    if "deepspeed" in launchers or "deepspeed-config" in flags:
        _deepspeed_launcher(ctx, flags)
    if any(k in flags for k in MEGATRON_MARKERS) or "pretrain_" in flags.get("@script", ("", 0))[0]:
        _megatron(ctx, flags)
    if any(k in flags for k in HF_MARKERS):
        _hf_args(ctx, flags)
    _script_args(ctx, flags)
    for k, (v, line) in flags.items():
        if k.startswith(("@config:", "@source:")):
            ctx.ref(v, None, line)
        elif k.startswith("@env:"):  # mpirun -x NAME=VALUE
            c.env(ctx.model, k.removeprefix("@env:"), v, ctx.file, line)
    for key in ("config-file", "config", "job.config-file", "deepspeed", "deepspeed-config"):
        if key in flags and re.search(r"\.(json|ya?ml|toml)$", flags[key][0]):
            ctx.ref(flags[key][0], "deepspeed" if "deepspeed" in key else None, flags[key][1])


def _f(flags: Flags, *names: str) -> tuple[str, int] | None:
    for n in names:
        if n in flags:
            return flags[n]
    return None


def _set_int(
    ctx: Ctx, flags: Flags, fact: str, source: str, *names: str, override: bool = False
) -> int | None:
    """Set ``fact`` from the first flag of ``names``; ``override``: the flag overrides a
    config file's value (``accelerate launch --num_processes`` over its config)."""
    hit = _f(flags, *names)
    if hit is None:
        return None
    # a flag's value in a shell script is what the line says, not a typed value (a
    # case pattern, a loop variable): what is not a number is left unknown, not an error
    n = c.as_int(hit[0])
    if n is not None:
        ctx.model.set(fact, n, ctx.file, hit[1], f"{source}: --{names[0]}", override=override)
    return n


def _srun(ctx: Ctx, flags: Flags) -> None:
    """A step's own srun options: ``--nodes``/``-N`` and ``--gpus-per-node`` size the
    step (where the batch header does not), ``--signal=SIG@SECONDS`` warns it before its
    time limit (REC-03), as ``#SBATCH --signal`` does for the batch script."""
    m = ctx.model
    sr = {k.removeprefix("@srun:"): v for k, v in flags.items() if k.startswith("@srun:")}
    if "nodes" in sr and c.as_int(sr["nodes"][0].split("-")[0]):
        n = c.as_int(sr["nodes"][0].split("-")[0])
        m.set("job.resources.nodes", n, ctx.file, sr["nodes"][1], "srun: --nodes", override=True)
    if "gpus-per-node" in sr and c.as_int(sr["gpus-per-node"][0].split(":")[-1]):
        g = c.as_int(sr["gpus-per-node"][0].split(":")[-1])
        m.set("job.resources.gpus_per_node", g, ctx.file, sr["gpus-per-node"][1],
              "srun: --gpus-per-node", override=True)
    sig = sr.get("signal")
    if sig and "@" in sig[0] and sig[0].rsplit("@", 1)[1].isdigit():
        m.set("job.recovery.signal_lead", float(sig[0].rsplit("@", 1)[1]), ctx.file, sig[1],
              f"srun: --signal={sig[0]}")


def _slurm(ctx: Ctx, flags: Flags) -> None:
    m = ctx.model
    _srun(ctx, flags)
    sb = {k.removeprefix("#SBATCH "): v for k, v in flags.items() if k.startswith("#SBATCH ")}
    if not sb:
        return
    m.formats.append("slurm")
    if "nodes" in sb:
        n = c.as_int(sb["nodes"][0].split("-")[0])
        if n:
            m.set("job.resources.nodes", n, ctx.file, sb["nodes"][1], "sbatch: --nodes")
    gpn = None
    if "gpus-per-node" in sb:
        gpn = (sb["gpus-per-node"][0].split(":")[-1], sb["gpus-per-node"][1], "--gpus-per-node")
    elif "gres" in sb and sb["gres"][0].startswith("gpu"):
        gpn = (sb["gres"][0].split(":")[-1], sb["gres"][1], "--gres")
    if gpn and c.as_int(gpn[0]):
        m.set(
            "job.resources.gpus_per_node", c.as_int(gpn[0]), ctx.file, gpn[1], f"sbatch: {gpn[2]}"
        )
    limit = None
    if "time" in sb:
        limit = c.slurm_time(sb["time"][0])
        if limit is None and re.fullmatch(r"[\d:-]+", sb["time"][0].strip()):  # digits, but no time
            m.invalid("job.resources.time_limit", sb["time"][0], ctx.file, sb["time"][1], "sbatch: --time",
                      "a Slurm time (minutes, [d-]hh:mm:ss), at most 9 digits a field")
        if limit:
            m.set("job.resources.time_limit", limit, ctx.file, sb["time"][1], "sbatch: --time")
    if "requeue" in sb:
        m.set("job.recovery.requeue", True, ctx.file, sb["requeue"][1], "sbatch: --requeue")
    if "no-requeue" in sb:
        m.set("job.recovery.requeue", False, ctx.file, sb["no-requeue"][1], "sbatch: --no-requeue")
    if "signal" in sb:
        sig = sb["signal"][0]
        lead = int(sig.split("@", 1)[1]) if "@" in sig and sig.split("@", 1)[1].isdigit() else 60
        m.set(
            "job.recovery.signal_lead",
            float(lead),
            ctx.file,
            sb["signal"][1],
            f"sbatch: --signal={sig}" + ("" if "@" in sig else " (default 60 s)"),
        )
    elif limit:
        fill(m, "job.recovery.signal_lead", "slurm.signal", ctx.file, value=0.0,
             why=": no lead time before the limit")


def _torchrun(ctx: Ctx, flags: Flags) -> None:
    """torchrun / ``python -m torch.distributed.run``. Without ``--nnodes`` torchrun runs
    one node (its default ``1:1``) and without ``--nproc-per-node`` one process: both are
    labelled defaults of torchrun, which a Slurm ``--nodes`` or an explicit flag replaces."""
    m = ctx.model
    m.formats.append("torchrun")
    hit = _f(flags, "nnodes")
    if hit:
        top = hit[0].split(":")[-1]
        if c.as_int(top):
            m.set("job.resources.nodes", c.as_int(top), ctx.file, hit[1], "torchrun: --nnodes")
    elif "nnodes?unresolved" not in flags:
        fill(m, "job.resources.nodes", "torch.nnodes", ctx.file)
    if (
        _set_int(ctx, flags, "job.resources.gpus_per_node", "torchrun", "nproc-per-node") is None
        and not any(k.startswith("nproc-per-node") for k in flags)
    ):
        fill(m, "job.resources.gpus_per_node", "torch.nproc_per_node", ctx.file)
    n = _set_int(ctx, flags, "job.recovery.max_restarts", "torchrun", "max-restarts")
    if n is None and "max-restarts?unresolved" not in flags:  # unknown is no default
        launcher = "nvrx" if "@launcher:ft_launcher" in flags else "torch"
        fill(m, "job.recovery.max_restarts", f"{launcher}.max_restarts", ctx.file)
    conf = _f(flags, "rdzv-conf")
    for kv in conf[0].split(",") if conf else []:
        k, _, v = kv.partition("=")
        if k.strip() in ("join_timeout", "read_timeout", "timeout") and c.as_float(v) is not None:
            m.timeout(
                c.as_float(v) or 0.0,
                ctx.file,
                conf[1] if conf else None,
                f"torchrun: --rdzv-conf {k.strip()}",
            )


def _accelerate(ctx: Ctx, flags: Flags) -> None:
    m = ctx.model
    # accelerate launch flags override the --config_file they come with
    al = "accelerate launch"
    _set_int(ctx, flags, "job.world_size", al, "num-processes", override=True)
    _set_int(ctx, flags, "job.resources.nodes", al, "num-machines", override=True)
    n = _set_int(ctx, flags, "job.recovery.max_restarts", al, "max-restarts", override=True)
    if n is None:
        fill(m, "job.recovery.max_restarts", "accelerate.max_restarts", ctx.file)
    mp = _f(flags, "mixed-precision")
    if mp and c.dtype_word(mp[0]):
        word = c.dtype_word(mp[0]) or ""
        m.set("job.precision.mode", word, ctx.file, mp[1], f"{al}: --mixed_precision", override=True)
        if word in c.HALF:
            m.add("job.precision.modes", word, ctx.file, mp[1], f"{al}: --mixed_precision")


def _deepspeed_launcher(ctx: Ctx, flags: Flags) -> None:
    """The ``deepspeed`` launcher: ``--num_gpus`` / ``--num_nodes`` (each defaults to all
    GPUs / all hosts of the hostfile, which the script does not show: unknown), and no
    restart of failed workers (it starts one ``deepspeed.launcher.launch`` per node and
    stops the job when a rank fails), so a restart must come from the scheduler."""
    _set_int(ctx, flags, "job.resources.gpus_per_node", "deepspeed", "num-gpus")
    _set_int(ctx, flags, "job.resources.nodes", "deepspeed", "num-nodes")
    if "@launcher:deepspeed" in flags:
        ctx.model.formats.append("deepspeed_launcher")
        fill(ctx.model, "job.recovery.max_restarts", "deepspeed.launcher_restarts", ctx.file)


def _megatron(ctx: Ctx, flags: Flags) -> None:
    from validator.jobs import keycheck

    keycheck.flags(ctx, "megatron", flags)  # typos of Megatron-LM's flags (its key catalogue)
    m = ctx.model
    m.formats.append("megatron")
    m.torch = True
    src = "megatron"
    for fact, name in (
        ("job.batch.micro", "micro-batch-size"),
        ("job.batch.global", "global-batch-size"),
        ("job.parallel.tp", "tensor-model-parallel-size"),
        ("job.parallel.pp", "pipeline-model-parallel-size"),
        ("job.parallel.cp", "context-parallel-size"),
        ("job.parallel.ep", "expert-model-parallel-size"),
        ("job.train_steps", "train-iters"),
        ("job.checkpoint.interval_steps", "save-interval"),
    ):
        _set_int(ctx, flags, fact, src, name)
    for k in (
        "tensor-model-parallel-size",
        "pipeline-model-parallel-size",
        "context-parallel-size",
    ):
        if k not in flags and k + "?unresolved" not in flags:
            fill(m, "job.parallel." + {"t": "tp", "p": "pp", "c": "cp"}[k[0]],
                 "megatron." + {"t": "tensor", "p": "pipeline", "c": "context"}[k[0]] + "_parallel", ctx.file)
    if "global-batch-size" in flags:
        m.set(
            "job.batch.rule",
            "divisible",
            ctx.file,
            flags["global-batch-size"][1],
            "megatron: global % (micro x dp) == 0",
        )
    if "fp8-format" in flags:
        c.precision(m, "fp8", ctx.file, flags["fp8-format"][1], "megatron: --fp8-format")
    for name, word in (("bf16", "bf16"), ("fp16", "fp16")):
        if name in flags:
            c.precision(m, word, ctx.file, flags[name][1], f"megatron: --{name}")
    if "fp16" in flags and "deepspeed" in flags and _f(flags, "deepspeed-config", "deepspeed"):
        # Megatron-DeepSpeed with --deepspeed: DeepSpeed's fp16 block (in the config the
        # script names or writes) decides the loss scaling, not --loss-scale
        pass
    elif "fp16" in flags:
        ls = _f(flags, "loss-scale")
        static = ls is not None and (c.as_float(ls[0]) or 0) > 0
        m.set(
            "job.precision.loss_scaling",
            "static" if static else "dynamic",
            ctx.file,
            (ls or flags["fp16"])[1],
            "megatron: --loss-scale" if ls else "megatron: --fp16 (dynamic by default)",
        )
    if not any(k in flags or k + "?unresolved" in flags for k in ("bf16", "fp16", "fp8-format")):
        # (a precision flag whose branch cannot be known leaves the precision unknown)
        fill(m, "job.precision.mode", "megatron.precision", ctx.file, value="fp32")
    for name, dt in (
        ("grad-reduce-in-bf16", "bf16"),
        ("accumulate-allreduce-grads-in-fp32", "fp32"),
    ):
        if name in flags:
            m.set("job.comm.grad_dtype", dt, ctx.file, flags[name][1], f"megatron: --{name}")
    hit = _f(flags, "megatron-fsdp-grad-comm-dtype")
    if hit:
        m.set(
            "job.comm.grad_dtype",
            c.dtype_word(hit[0]) or hit[0],
            ctx.file,
            hit[1],
            "megatron: --megatron-fsdp-grad-comm-dtype",
        )
    save, load = _f(flags, "save"), _f(flags, "load")
    if save:
        m.set("job.checkpoint.enabled", True, ctx.file, save[1], "megatron: --save")
        same = load is not None and load[0] == save[0]
        m.set(
            "job.checkpoint.resume",
            same,
            ctx.file,
            (load or save)[1],
            "megatron: --load == --save"
            if same
            else "megatron: --load differs from --save or is missing",
        )
    elif "save?unresolved" in flags:
        m.set(
            "job.checkpoint.enabled",
            True,
            ctx.file,
            flags["save?unresolved"][1],
            "megatron: --save",
        )
        lu = flags.get("load?unresolved")
        same = lu is not None and lu[0] == flags["save?unresolved"][0]
        m.set(
            "job.checkpoint.resume",
            same,
            ctx.file,
            (lu or flags["save?unresolved"])[1],
            "megatron: --load == --save"
            if same
            else "megatron: --load differs from --save or is missing",
        )
    else:
        fill(m, "job.checkpoint.enabled", "megatron.save", ctx.file, value=False)
    nso = _f(flags, "no-save-optim")
    if nso and (save or "save?unresolved" in flags):
        # CKPT-01 requires periodic checkpoints of model *and optimizer* state
        m.decide("job.checkpoint.enabled", False, ctx.file, nso[1],
                 "megatron: --no-save-optim (model-only checkpoints: no optimizer state, so a "
                 "restart cannot resume training where it stopped)")
    nsr = _f(flags, "no-save-rng")
    if nsr and (save or "save?unresolved" in flags) and m.has("job.checkpoint.resume"):
        e = m.entries["job.checkpoint.resume"]
        e.source += (f"; --no-save-rng at {ctx.file}:{nsr[1]}: the RNG state is not saved, so a "
                     "resume is not exact (dropout and data order differ from an unbroken run)")
    if _set_int(ctx, flags, "job.logging.interval_steps", src, "log-interval") is None:
        fill(m, "job.logging.interval_steps", "megatron.log_interval", ctx.file)
    for name, sink in (("tensorboard-dir", "tensorboard"), ("wandb-project", "wandb")):
        hit = _f(flags, name, name + "?unresolved")
        if hit:
            c.sink(m, sink, ctx.file, hit[1], f"megatron: --{name}")
    fams = {
        "log-throughput": "gpu_utilization",
        "log-straggler": "gpu_utilization",
        "log-memory-to-tensorboard": "memory",
        "log-device-memory-used": "memory",
        # report_memory every N iterations (Megatron-LM@d98e8a6 training.py training_log)
        "log-memory-interval": "memory",
        "log-timers-to-tensorboard": "collective_latency",
        "log-params-norm": "gradient_stats",
        "log-num-zeros-in-grad": "gradient_stats",
        "log-l2-norm-grad-to-tensorboard": "gradient_stats",
    }
    for name, fam in fams.items():
        if name in flags:
            c.metric(m, fam, ctx.file, flags[name][1], f"megatron: --{name}")
    tl = _f(flags, "timing-log-level")
    if tl and (c.as_int(tl[0]) or 0) >= 1:
        c.metric(m, "collective_latency", ctx.file, tl[1], "megatron: --timing-log-level")
    if "log-energy" in flags:
        m.set(
            "job.metrics.energy", True, ctx.file, flags["log-energy"][1], "megatron: --log-energy"
        )
    hit = _f(flags, "distributed-timeout-minutes")
    if hit and c.as_float(hit[0]) is not None:
        m.set(
            "job.recovery.detection_timeout",
            (c.as_float(hit[0]) or 0) * 60,
            ctx.file,
            hit[1],
            "megatron: --distributed-timeout-minutes",
        )
    else:
        fill(m, "job.recovery.detection_timeout", "megatron.distributed_timeout", ctx.file)
    hit = _f(flags, "exit-duration-in-mins")
    limit = m.get("job.resources.time_limit")
    if hit and c.as_float(hit[0]) is not None and isinstance(limit, (int, float)):
        lead = limit - (c.as_float(hit[0]) or 0) * 60
        cur = m.get("job.recovery.signal_lead")
        if cur is None or not m.explicit("job.recovery.signal_lead") or lead > cur:
            m.entries.pop("job.recovery.signal_lead", None)
            m.set(
                "job.recovery.signal_lead",
                lead,
                ctx.file,
                hit[1],
                "megatron: --exit-duration-in-mins before the sbatch --time limit",
            )


def _hf_args(ctx: Ctx, flags: Flags) -> None:
    from validator.jobs import hf

    data = {
        k.replace("-", "_"): typed_value(v)
        for k, (v, _) in flags.items()
        if not k.startswith(("@", "#")) and "?" not in k
    }
    for k in _scripts_own(ctx, flags, data):
        del data[k]  # the entry point's own arguments: read by it, no typo of HF's
    lines = {
        (k.replace("-", "_"),): line
        for k, (_, line) in flags.items()
        if not k.startswith(("@", "#")) and "?" not in k
    }
    sub = Ctx(ctx.path, ctx.file, ctx.text, ctx.model, ctx.follow, Tree(ctx.file, data, lines))
    # Trainer arguments on the command line override a config file's values
    ctx.model.overriding = True
    try:
        hf.read_trainer(sub)
    finally:
        ctx.model.overriding = False


# the launchers' own options on the same line (torchrun, deepspeed, accelerate launch): no
# flag of the script's, whatever the script is
LAUNCHER_OPTIONS = frozenset({
    "nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port", "rdzv_backend", "rdzv_endpoint",
    "rdzv_id", "standalone", "max_restarts", "monitor_interval", "include", "exclude", "num_gpus", "num_nodes",
    "hostfile", "num_processes", "num_machines", "machine_rank", "main_process_ip",
    "main_process_port", "config_file", "mixed_precision", "use_env", "local_rank"})


def _scripts_own(ctx: Ctx, flags: Flags, data: dict[str, JSONValue]) -> list[str]:
    """The flags of ``data`` that are the Python entry point's own, not HF's
    TrainingArguments (``entrypoint``): the fields of its dataclasses where it is in the
    job's folder; every flag HF does not have where it is not there (unknown: the
    script may take any), unless it is one of HF's own example scripts."""
    from validator.jobs import entrypoint
    from validator.jobs.keys import catalogue

    script = flags.get("@script", ("", 0))[0]
    cat = catalogue("hf")
    if not script or cat is None:
        return []
    entry = entrypoint.read(script, ctx.path.parent, ctx.path.parent)
    hf_keys = cat.top()
    if entry.found is not None:
        own = [k for k in data if k not in hf_keys and k in entry.fields]
        why = (f"{script}'s own arguments ("
               + ", ".join(f"--{k} of {entry.fields[k]}" for k in own[:4]) + (" ..." if len(own) > 4 else "")
               + "), read from its dataclasses")
    elif entry.hf_example:
        return []
    else:
        own = [k for k in data if k not in hf_keys]
        shown = [k for k in own if k not in LAUNCHER_OPTIONS] or own
        why = (f"{script} is not in the job's folder, so its own flags ("
               + ", ".join(f"--{k}" for k in shown[:4]) + (" ..." if len(shown) > 4 else "")
               + ") are unknown, not judged as HF's")
    if own:
        # the PREC-02 finding says which flags were not judged as HF's, and why
        ctx.model.__dict__.setdefault("keys_judged", {}).setdefault("entry point", why)
    return own


def _script_args(ctx: Ctx, flags: Flags) -> None:
    """Common training-script arguments whose meaning is plain from the name."""
    m = ctx.model
    for name in ("checkpoint-freq", "checkpoint-every", "save-every-n-steps"):
        hit = _f(flags, name)
        if hit and c.as_int(hit[0]):
            m.set("job.checkpoint.enabled", True, ctx.file, hit[1], f"script argument --{name}")
            m.set(
                "job.checkpoint.interval_steps",
                c.as_int(hit[0]),
                ctx.file,
                hit[1],
                f"script argument --{name} (steps)",
            )
    for name in ("resume-from-checkpoint", "auto-resume", "autoresume", "resume"):
        # srun python train.py --resume / --auto-resume: the script resumes from its
        # latest checkpoint when restarted (a path or "auto" says the same)
        hit = _f(flags, name)
        if hit and hit[0].lower() not in ("false", "none", "", "0", "no"):
            m.set("job.checkpoint.resume", True, ctx.file, hit[1], f"script argument --{name}")
            break
    hit = _f(flags, "max-steps")
    if hit and (c.as_int(hit[0]) or 0) > 0:
        m.set("job.train_steps", c.as_int(hit[0]), ctx.file, hit[1], "script argument --max-steps")
