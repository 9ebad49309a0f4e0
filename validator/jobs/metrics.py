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

Each framework's settings and what it logs by default are its descriptor's ``metrics``
(``registry.py``); which framework speaks for a job of several, its ``precedence``.

A family a platform provides for every job (DCGM exporter, NCCL inspector) is declared in
the profile (``platform_metric_families``); the rule then passes it as "provided by the
platform", and MON-03 checks on the nodes that the exporter runs and exports it.

A torchtitan flight recorder (``comm.trace_buf_size``) is a post-mortem dump, not a
latency metric, and Lightning's ``DeviceStatsMonitor`` logs memory, not utilization: v1.1
does not count them for those families (v1.0 did; ``job.metrics.families`` is unchanged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validator.jobs import registry
from validator.jobs.defaults import cite

if TYPE_CHECKING:
    from validator.jobs.entries import Entry
    from validator.jobs.model import JobModel
    from validator.report.model import JSONValue

FAMILIES = ("gpu_utilization", "memory", "collective_latency", "gradient_stats")
FACT = {f: f"job.metrics.{f}" for f in FAMILIES}

# Collective latency outside any framework: the same for every PyTorch job.
_NCCL = registry.NCCL_TIMING


def settings(tag: str) -> dict[str, str | None]:
    """Framework (its ``job.formats`` tag) -> family -> the setting that emits it (what a
    user writes); None: no setting of the framework's config can (``Format.metrics``)."""
    fmt = _by_tag(tag)
    return fmt.metrics.settings if fmt is not None and fmt.metrics is not None else {}


def by_default(tag: str) -> tuple[tuple[str, ...], str]:
    """Framework -> families it logs with no setting, and the defaults.py row that says so."""
    fmt = _by_tag(tag)
    found = fmt.metrics.by_default if fmt is not None and fmt.metrics is not None else None
    return found if found is not None else ((), "")


def _by_tag(tag: str) -> registry.Format | None:
    return next((f for f in registry.by_precedence() if f.job_tag == tag), None)


def framework_of(formats: list[str]) -> str | None:
    """The framework (its ``job.formats`` tag) that speaks for a job's metrics."""
    return _framework(formats)


def _framework(formats: list[str]) -> str | None:
    """The framework that speaks for the job's metrics (``Format.precedence``)."""
    for f in registry.by_precedence():
        if f.job_tag in formats:
            return f.job_tag
    return None


def _counts(family: str, source: str) -> bool:
    """Evidence v1.1 accepts for a family: a flight recorder dump and NeMo's step timing are no
    latency metric, and
    Lightning's DeviceStatsMonitor logs memory only on CUDA (its docstring: GPU compute
    utilization is not logged; lightning 2.6.6 callbacks/device_stats_monitor.py)."""
    if family == "collective_latency" and ("trace_buf_size" in source or "log_step_timing" in source):
        return False  # NeMo's log_step_timing times the whole step, not a collective
    return not (family == "gpu_utilization" and "DeviceStatsMonitor" in source)


def derive(m: JobModel) -> None:
    """``job.metrics.<family>`` for the four families (only where a format was detected)."""
    from validator.jobs.entries import Entry

    if not m.formats:
        return
    fw = _framework(m.formats)
    emitted: dict[str, tuple[JSONValue, str | None, int | None, str]] = {}
    for v, file, line, src in [*m.metric_evidence, *m.lists.get("job.metrics.families", [])]:
        if v in FAMILIES and v not in emitted and _counts(v, src):
            emitted[v] = (v, file, line, src)
    defaults, key = by_default(fw or "")
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


def _not_shown(m: JobModel, fw: str | None, fam: str, key: str, first: str | None) -> Entry:
    """A family no file turns on: ``not emitted`` where the job's files hold the place that
    would turn it on (the framework's config, or the launch environment for collective
    latency), else an error value saying the files cannot show it either way."""
    from validator.jobs.entries import Entry

    setting = settings(fw or "").get(fam)
    if setting is None and fam == "collective_latency" and m.torch and set(m.formats) & registry.launch_tags():
        setting = _NCCL
    if setting == _NCCL and not set(m.formats) & registry.launch_tags():
        # environment variables, and the job is config files only: say where they go
        setting += (" (environment variables: export them in the script or scheduler that launches this "
                    "config; its files have no launch environment)")
    if setting:
        logs = f"; {cite(key)}" if key else ""
        return Entry("not emitted", first, None, f"{fw or 'the launch'}: to emit it, {setting}{logs}")
    what = fam.replace("_", " ")
    # written exactly as a profile takes it (docs/profile.md), so following it cannot fail
    declare = f"parameters: {{platform_metric_families: [{fam}]}}"
    configs = sorted(set(m.formats) - registry.launch_tags())
    if fw or configs:
        # a training config of its own (a torchtune or axolotl YAML alone): it is the config,
        # so asking to lint "the training config together with them" would be a dead end
        who = fw or ", ".join(configs)
        why = (f"no {who} setting that spec-check reads emits {what}: whether the training loop logs it cannot "
               f"be told from the job's files; a run's outputs would decide it (lint --run DIR), or, if the "
               f"platform provides it, declare it in the profile: {declare}")
    else:
        why = (f"the job's files ({', '.join(sorted(set(m.formats)))}) hold no training-framework config "
               f"spec-check reads {what} from: lint the training config together with them (a directory is "
               f"one job), or, if the platform provides it, declare it in the profile: {declare}")
    return Entry(None, first, None, "spec-check's table of metric settings by framework (docs/lint.md)", error=why)
