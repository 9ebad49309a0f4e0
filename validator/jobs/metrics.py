"""MON-01 per metric family: for each family, whether the job emits it, and how.

Rule pack v1.1 judges GPU utilization (or throughput), memory, collective latency and
gradient statistics one by one (``job.metrics.<family>``), each from the evidence that
can show it:

* ``emitted``: a setting in the job's files turns it on (the source names the setting and
  where it is: "megatron: --log-throughput" at run.sh:14);
* ``logged by default``: the detected framework logs it with no setting (torchtitan's
  memory and throughput, HF's and Megatron's grad norm), named with the framework version
  and source file of ``defaults.py``;
* ``not emitted``: the source names, for the detected framework, the exact setting that
  would emit it and what the framework already logs by default.

A family a platform provides for every job (DCGM exporter, NCCL inspector) is declared in
the profile (``platform_metric_families``); the rule then passes it as "provided by the
platform", and MON-03 checks on the nodes that the exporter runs and exports it.

A torchtitan flight recorder (``comm.trace_buf_size``) is a post-mortem dump, not a
latency metric, and Lightning's ``DeviceStatsMonitor`` logs memory, not utilization: v1.1
does not count them for those families (v1.0 did; ``job.metrics.families`` is unchanged).
"""

from __future__ import annotations

from typing import Any

from validator.jobs.defaults import cite

FAMILIES = ("gpu_utilization", "memory", "collective_latency", "gradient_stats")
FACT = {f: f"job.metrics.{f}" for f in FAMILIES}

# Collective latency outside any framework: the same for every PyTorch job.
_NCCL = ("set TORCH_NCCL_ENABLE_TIMING=1 (per-collective durations), or declare the platform's NCCL "
         "profiler plugin (NCCL_PROFILER_PLUGIN, e.g. the NCCL inspector) in the profile")

# framework -> family -> the setting that emits it (what a user writes); None: no setting of
# the framework's config can (the training loop logs it or not, which no file shows)
SETTINGS: dict[str, dict[str, str | None]] = {
    "megatron": {
        "gpu_utilization": "set --log-throughput",
        "memory": "set --log-memory-to-tensorboard (with --tensorboard-dir) or --log-memory-interval N",
        "collective_latency": "set --timing-log-level 1 (all-grads-sync, params-all-gather timers) with "
                              "--log-timers-to-tensorboard",
        "gradient_stats": "set --log-params-norm or --log-num-zeros-in-grad",
    },
    "deepspeed": {
        "gpu_utilization": "set steps_per_print: N (samples/sec) or wall_clock_breakdown: true",
        "memory": "set memory_breakdown: true",
        "collective_latency": "set comms_logger: {enabled: true} (and call deepspeed.comm.log_summary())",
        "gradient_stats": None,  # no config key: engine.get_global_grad_norm() is an API call
    },
    "hf_trainer": {
        "gpu_utilization": "set include_num_input_tokens_seen: true (train_tokens_per_second)",
        "memory": "set skip_memory_metrics: false",
        "collective_latency": _NCCL,
        "gradient_stats": "set max_grad_norm > 0 (grad_norm in the logs)",
    },
    "lightning": {
        "gpu_utilization": "add the ThroughputMonitor callback",
        "memory": "add the DeviceStatsMonitor callback",
        "collective_latency": _NCCL,
        "gradient_stats": "log lightning.pytorch.utilities.grad_norm(...) in on_before_optimizer_step",
    },
    "nemo": {
        "gpu_utilization": "set exp_manager.log_tflops_per_sec_per_gpu: true",
        "memory": "add the DeviceStatsMonitor callback",
        "collective_latency": _NCCL,
        "gradient_stats": "log grad norms (lightning.pytorch.utilities.grad_norm) in the model",
    },
    "torchtitan": {
        "gpu_utilization": "keep torchtitan's metrics (tps, mfu every metrics.log_freq)",
        "memory": "keep torchtitan's metrics (memory/max_reserved every metrics.log_freq)",
        "collective_latency": _NCCL,
        "gradient_stats": "keep torchtitan's metrics (grad_norm every metrics.log_freq)",
    },
    "maxtext": {
        "gpu_utilization": "keep MaxText's perf/per_device_tflops_per_sec (every step)",
        "memory": "the platform's DCGM exporter, declared in the profile (MaxText prints memory once, "
                  "after parameter init)",
        "collective_latency": "the platform's NCCL profiler plugin, declared in the profile (MaxText's "
                              "profiler: xplane gives traces, not a time series)",
        "gradient_stats": "keep MaxText's learning/grad_norm (every step)",
    },
}

# framework -> families it logs with no setting, and the defaults.py row that says so
BY_DEFAULT: dict[str, tuple[tuple[str, ...], str]] = {
    "megatron": (("gradient_stats",), "megatron.logs_by_default"),
    "hf_trainer": (("gradient_stats",), "hf.logs_by_default"),
    "torchtitan": (("gpu_utilization", "memory", "gradient_stats"), "torchtitan.logs_by_default"),
    "maxtext": (("gpu_utilization", "gradient_stats"), "maxtext.logs_by_default"),
    "deepspeed": ((), "deepspeed.logs_by_default"),
    "lightning": ((), "lightning.logs_by_default"),
    "nemo": ((), "lightning.logs_by_default"),
}

# formats whose files hold the job's launch (where TORCH_NCCL_ENABLE_TIMING would be set)
LAUNCH_FORMATS = frozenset({"slurm", "torchrun", "shell", "megatron", "pytorchjob", "mpijob", "rayjob", "jobset",
                            "volcano-job", "skypilot", "deepspeed_launcher", "env", "trainjob"})


def _framework(formats: list[str]) -> str | None:
    for f in ("megatron", "torchtitan", "maxtext", "nemo", "lightning", "hf_trainer", "deepspeed", "accelerate"):
        if f in formats:
            return f
    return None


def _counts(family: str, source: str) -> bool:
    """Evidence v1.1 accepts for a family: a flight recorder dump and NeMo's step timing are no
    latency metric, and
    Lightning's DeviceStatsMonitor logs memory only on CUDA (its docstring: GPU compute
    utilization is not logged; lightning 2.6.6 callbacks/device_stats_monitor.py)."""
    if family == "collective_latency" and ("trace_buf_size" in source or "log_step_timing" in source):
        return False  # NeMo's log_step_timing times the whole step, not a collective
    return not (family == "gpu_utilization" and "DeviceStatsMonitor" in source)


def derive(m: Any) -> None:
    """``job.metrics.<family>`` for the four families (only where a format was detected)."""
    from validator.jobs.entries import Entry

    if not m.formats:
        return
    fw = _framework(m.formats)
    emitted: dict[str, tuple[Any, str | None, int | None, str]] = {}
    for v, file, line, src in [*m.metric_evidence, *m.lists.get("job.metrics.families", [])]:
        if v in FAMILIES and v not in emitted and _counts(v, src):
            emitted[v] = (v, file, line, src)
    defaults, key = BY_DEFAULT.get(fw or "", ((), ""))
    first = m.files[0] if m.files else None
    for fam in FAMILIES:
        old = m.entries.get(FACT[fam])
        if old is not None and old.error:  # a reader found the setting unusable (HF max_grad_norm: null)
            continue
        if fam in emitted:
            _, file, line, src = emitted[fam]
            where = f" at {file}:{line}" if file and line else ""
            m.entries[FACT[fam]] = Entry("emitted", file, line, f"{src}{where}")
        elif fam in defaults:
            m.entries[FACT[fam]] = Entry("logged by default", first, None, cite(key), default=True)
        else:
            m.entries[FACT[fam]] = _not_shown(m, fw, fam, key, first)


def _not_shown(m: Any, fw: str | None, fam: str, key: str, first: str | None) -> Any:
    """A family no file turns on: ``not emitted`` where the job's files hold the place that
    would turn it on (the framework's config, or the launch environment for collective
    latency), else an error value saying the files cannot show it either way."""
    from validator.jobs.entries import Entry

    setting = SETTINGS.get(fw or "", {}).get(fam)
    if setting is None and fam == "collective_latency" and m.torch and set(m.formats) & LAUNCH_FORMATS:
        setting = _NCCL
    if setting:
        logs = f"; {cite(key)}" if key else ""
        return Entry("not emitted", first, None, f"{fw or 'the launch'}: to emit it, {setting}{logs}")
    what = fam.replace("_", " ")
    # written exactly as a profile takes it (docs/profile.md), so following it cannot fail
    declare = f"parameters: {{platform_metric_families: [{fam}]}}"
    if fw:
        why = (f"no {fw} setting emits {what}: whether the training loop logs it cannot be told from the "
               f"job's files (if the platform provides it, declare it in the profile: {declare})")
    else:
        why = (f"the job's files ({', '.join(sorted(set(m.formats)))}) hold no training-framework config "
               f"spec-check reads {what} from: lint the training config together with them (a directory is "
               f"one job), or, if the platform provides it, declare it in the profile: {declare}")
    return Entry(None, first, None, "spec-check's table of metric settings by framework (docs/lint.md)", error=why)
