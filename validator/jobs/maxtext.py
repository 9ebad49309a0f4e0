"""MaxText (JAX) YAML: ``base_config`` inheritance and ``models/<model_name>.yml`` merges.

MaxText loads the parent named by ``base_config`` (relative to the child, then the
configs dir), merges the child over it, then merges ``models/<model_name>.yml``. A key
is reported at the file and line of the layer that sets it; a key no layer sets takes
base.yml's default (from the reference at MaxText e591f30), with source "default". The
global batch is derived (``per_device_batch_size x devices x accumulation``), so there
is no global key to check. A run with an empty ``run_name`` gets a timestamped name,
which defeats auto-resume across restarts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validator.io.source import MISSING, ReadError, Tree, parse_yaml, read_text
from validator.jobs import common as c
from validator.jobs.base import Ctx
from validator.jobs.defaults import MAXTEXT_BASE, TABLES, fill

if TYPE_CHECKING:
    from validator.report.model import JSONValue

# base.yml's values of the keys the reader uses: rows of the maxtext table (defaults.py)
DEFAULTS: dict[str, JSONValue] = {k: TABLES["maxtext"].rows[k].value for k in MAXTEXT_BASE}


def _layers(ctx: Ctx) -> list[Tree]:
    assert ctx.tree is not None
    layers = [ctx.tree]
    seen = {ctx.path.resolve()}
    here, tree = ctx.path, ctx.tree
    while isinstance(tree.get("base_config"), str) and len(layers) < 8:
        ref = str(tree.get("base_config"))
        cand = [here.parent / ref, here.parent.parent / ref]
        nxt = next((p for p in cand if p.is_file() and p.resolve() not in seen), None)
        if nxt is None:
            break
        try:
            tree = parse_yaml(read_text(nxt), str(nxt))
        except ReadError as exc:
            ctx.model.error(str(nxt), exc.line, exc.message)
            break
        seen.add(nxt.resolve())
        layers.append(tree)
        here = nxt
    model = _lookup(layers, "model_name")[0]
    if isinstance(model, str) and model != "default":
        for d in {here.parent, ctx.path.parent}:
            p = d / "models" / f"{model}.yml"
            if p.is_file():
                try:
                    layers.insert(1, parse_yaml(read_text(p), str(p)))
                except ReadError as exc:
                    ctx.model.error(str(p), exc.line, exc.message)
                break
    return layers


def _lookup(layers: list[Tree], key: str) -> tuple[JSONValue, Tree | None]:
    for t in layers:
        v = t.get(key)
        if v is not MISSING:
            if isinstance(v, str) and v == "None":
                v = None
            return v, t
    return DEFAULTS.get(key), None


def read(ctx: Ctx) -> None:
    from validator.jobs import keycheck

    keycheck.check(ctx, "maxtext")
    m = ctx.model
    m.formats.append("maxtext")
    layers = _layers(ctx)
    for t in layers[1:]:
        if t.file not in m.files:
            m.files.append(t.file)

    def put(fact: str, key: str, value: JSONValue, explain: str = "") -> None:
        _, t = _lookup(layers, key)
        if t is None:
            fill(m, fact, f"maxtext.{key}", ctx.file, value=value, why=explain)
        else:
            m.set(fact, value, t.file, t.line(key), f"maxtext: {key}{explain}")

    def val(key: str) -> JSONValue:
        return _lookup(layers, key)[0]

    q = str(val("quantization") or "")
    if "fp8" in q:
        put("job.precision.mode", "quantization", "fp8", f" = {q}")
        m.add("job.precision.modes", "fp8", ctx.file, None, "maxtext: quantization")
        if (c.as_int(val("gradient_accumulation_steps")) or 1) > 1:
            m.add(
                "job.precision.problems",
                "fp8 quantization with gradient_accumulation_steps > 1 (MaxText rejects it)",
                ctx.file,
                None,
                "maxtext",
            )
    else:
        word = c.dtype_word(val("dtype")) or "fp32"
        put("job.precision.mode", "dtype", word)
        if word in ("bf16", "fp16"):
            m.add("job.precision.modes", word, ctx.file, None, "maxtext: dtype")
        if word == "fp16":
            put("job.precision.loss_scaling", "dtype", "none", " (JAX: no loss scaling)")
    put(
        "job.comm.grad_dtype",
        "grad_dtype",
        c.dtype_word(val("grad_dtype")) or str(val("grad_dtype")),
    )
    pdb = val("per_device_batch_size")
    if isinstance(pdb, (int, float)) and not isinstance(pdb, bool):
        put("job.batch.micro", "per_device_batch_size", pdb)
    put(
        "job.batch.accumulation",
        "gradient_accumulation_steps",
        c.as_int(val("gradient_accumulation_steps")),
    )
    for fact, axis in (
        ("job.parallel.tp", "tensor"),
        ("job.parallel.pp", "pipeline"),
        ("job.parallel.cp", "context"),
    ):
        ici, dcn = (
            c.as_int(val(f"ici_{axis}_parallelism")),
            c.as_int(val(f"dcn_{axis}_parallelism")),
        )
        if ici and dcn and ici > 0 and dcn > 0:
            put(fact, f"ici_{axis}_parallelism", ici * dcn)
    enabled = bool(c.as_bool(val("enable_checkpointing")))
    put("job.checkpoint.enabled", "enable_checkpointing", enabled)
    if c.as_int(val("checkpoint_period")):
        put(
            "job.checkpoint.interval_steps", "checkpoint_period", c.as_int(val("checkpoint_period"))
        )
    run_name = val("run_name")
    if enabled:
        put(
            "job.checkpoint.resume",
            "run_name",
            bool(run_name),
            "" if run_name else " is empty: a timestamped name defeats auto-resume",
        )
    if c.as_int(val("log_period")):
        put("job.logging.interval_steps", "log_period", c.as_int(val("log_period")))
    for key, sink in (
        ("enable_tensorboard", "tensorboard"),
        ("enable_wandb", "wandb"),
        ("gcs_metrics", "gcs"),
    ):
        if c.as_bool(val(key)):
            c.sink(m, sink, ctx.file, None, f"maxtext: {key}")
    # train.py's train_step records learning/grad_norm, raw_grad_norm and param_norm
    # (unless optimizer_memory_host_offload) and perf/per_device_tflops_per_sec with
    # perf/step_time_seconds on every step: written to every sink at log_period
    line = _lookup(layers, "log_period")[1]
    where = (line.file, line.line("log_period")) if line else (ctx.file, None)
    if not c.as_bool(val("optimizer_memory_host_offload")):
        c.metric(
            m,
            "gradient_stats",
            where[0],
            where[1],
            "maxtext: train_step logs learning/grad_norm, raw_grad_norm, param_norm (by default)",
        )
    c.metric(
        m,
        "gpu_utilization",
        where[0],
        where[1],
        "maxtext: train_step logs perf/per_device_tflops_per_sec (by default)",
    )
    if c.as_bool(val("monitor_goodput")):
        c.metric(m, "gpu_utilization", ctx.file, None, "maxtext: monitor_goodput")
    if (c.as_int(val("steps")) or 0) > 0:
        put("job.train_steps", "steps", c.as_int(val("steps")))
    if c.as_bool(val("elastic_enabled")):
        put("job.recovery.auto_restart", "elastic_enabled", True)
