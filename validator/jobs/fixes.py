"""The edits that clear a job finding (``report.model.Fix``), or why there is none.

``plan(finding, doc, params)`` answers for a failing or erroring finding of a job: the
edits to the job's own files (the file, the key path / flag / environment variable, the
value, and why that value), or a sentence saying why no edit of its files can clear it
and what evidence would decide it. ``lint`` attaches both to the finding; ``lint --fix``
applies the edits (``edits.py``); ``tests/jobs/test_fix_proof.py`` applies every one to
every job of the public corpus and lints again.

Only settings a reader counts are proposed, each read in the framework's source at the
version the reader's table names:

* DeepSpeed ``steps_per_print: N``: ``ThroughputTimer.stop`` logs ``CurrSamplesPerSec`` and
  ``MemAllocated`` every N global steps (DeepSpeed 0.16.5, microsoft/DeepSpeed@38327e0,
  deepspeed/utils/timer.py; the default is None, no line at all: runtime/constants.py);
* HF ``include_num_input_tokens_seen: true``: ``Trainer.log`` adds ``num_input_tokens_seen``
  and ``train_tokens_per_second`` to every log (transformers 4.57.6, trainer.py ``log``;
  ``True`` is ``"all"``, training_args.py ``__post_init__``);
* the logging and checkpoint intervals, precision keys and flags the readers already
  read from the same key (the finding's own source names it).

Never proposed: a change of launcher (``ft_launcher`` for ``torchrun`` is a rewrite of the
launch, not an edit), a resume setting that fails a fresh run (torchtune's
``resume_from_checkpoint: True`` raises when no checkpoint exists), a key of another
framework than the file's, and a lower collective timeout (it kills healthy jobs at
scale: REC-02's remediation says why).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from validator.facts.document import Document
    from validator.report.model import Finding, Fix, JSONValue
    from validator.rules.spec import ParamValue

DS_TIMER = "DeepSpeed 0.16.5 (microsoft/DeepSpeed@38327e0), deepspeed/utils/timer.py ThroughputTimer.stop"
HF_TOKENS = "transformers 4.57.6, trainer.py Trainer.log"


def _num(params: Mapping[str, ParamValue], name: str) -> float | None:
    p = params.get(name)
    if p is None or p.value is None:
        return None
    v = getattr(p.value, "base", p.value)
    return float(v) if isinstance(v, (int, float)) else None


def _fact(doc: Document, name: str) -> dict[str, Any]:
    return doc["facts"].get(name) or {}


def _files_of(doc: Document, *kinds: str) -> list[str]:
    got = doc.get("file_kinds") or {}
    return [f for f, k in got.items() if k in kinds]


def _fix(file: str, kind: str, target: str, value: JSONValue, why: str, line: int | None = None) -> Fix:
    out: Fix = {"file": file, "kind": kind, "target": target, "value": value, "why": why}  # type: ignore[typeddict-item]
    if line is not None:
        out["line"] = line
    return out


def _launch_line(doc: Document, prefix: str) -> tuple[str, int] | None:
    """A line of the launch command that holds a flag read as ``prefix`` (``megatron: --``):
    a new flag of that command goes on it."""
    shells = set(_files_of(doc, "shell"))
    for fact in doc["facts"].values():
        src, loc = fact.get("source"), fact.get("location") or {}
        if isinstance(src, str) and src.startswith(prefix) and loc.get("file") in shells and loc.get("line"):
            return loc["file"], int(loc["line"])
    return None


def _where(doc: Document, file: str | None) -> str:
    return f" in {file}" if file else ""


# ---- a key the finding's own fact was read from ---------------------------------------------

_SOURCE_KEY = re.compile(r"^([\w.-]+): ((?:--)?[A-Za-z_][\w.-]*)\s*(?:=.*)?$")


def _at_source(f: Finding, doc: Document, fact: str, value: JSONValue, why: str) -> list[Fix] | None:
    """Set ``value`` where the fact was read from (its source names the key or flag, its
    location the file and line): the setting the reader reads, in the file it read it from."""
    entry = _fact(doc, fact)
    src, loc = entry.get("source"), entry.get("location") or {}
    m = _SOURCE_KEY.match(src or "")
    file, line = loc.get("file"), loc.get("line")
    if m is None or not file or not line or "(" in (src or ""):
        return None
    key = m.group(2)
    kind = (doc.get("file_kinds") or {}).get(file)
    if key.startswith("--"):
        return [_fix(file, "flag", key, value, why, line)] if kind == "shell" else None
    if kind == "shell" or kind is None:
        return None
    return [_fix(file, "key", key, value, why, line)]


# ---- per rule ---------------------------------------------------------------------------

def _monitor_interval(params: Mapping[str, ParamValue]) -> int:
    return int(_num(params, "metrics_interval_steps_max") or 100)


def _mon01(family: str) -> Callable[[Finding, Document, Mapping[str, ParamValue]], tuple[list[Fix] | None, str | None]]:
    def plan(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
        n = _monitor_interval(params)
        ds = _files_of(doc, "deepspeed")
        hf = _files_of(doc, "hf")
        formats = set(_fact(doc, "job.formats").get("value") or ())
        if family in ("gpu_utilization", "memory") and ds:
            what = "CurrSamplesPerSec" if family == "gpu_utilization" else "MemAllocated and MaxMemAllocated"
            return [_fix(ds[0], "key", "steps_per_print", n,
                         f"DeepSpeed logs {what} every steps_per_print global steps ({DS_TIMER}); "
                         f"{n} steps is the profile's metrics interval (metrics_interval_steps_max)")], None
        if family == "gpu_utilization" and hf and "hf_trainer" in formats:
            return [_fix(hf[0], "key", "include_num_input_tokens_seen", True,
                         f"HF Trainer then adds num_input_tokens_seen and train_tokens_per_second to every "
                         f"log ({HF_TOKENS})")], None
        if family == "gpu_utilization":
            at = _launch_line(doc, "megatron: --")
            if at is not None:
                return [_fix(at[0], "flag", "--log-throughput", True,
                             "Megatron-LM logs throughput per GPU (TFLOP/s/GPU) every --log-interval "
                             "(megatron/training/training.py training_log)", at[1])], None
        if family == "memory":
            at = _launch_line(doc, "megatron: --")
            if at is not None:
                return [_fix(at[0], "flag", "--log-memory-interval", n,
                             "Megatron-LM reports memory every --log-memory-interval iterations", at[1])], None
        return None, _no_metric_edit(f, doc, family)
    return plan


def _no_metric_edit(f: Finding, doc: Document, family: str) -> str:
    what = family.replace("_", " ")
    base = (f"no setting of the job's files that spec-check can verify emits {what}; evidence that would decide "
            f"it: a run's outputs showing a {what} series (lint --run DIR), or the platform's exporter declared "
            f"in the profile (parameters: {{platform_metric_families: [{family}]}}) and checked on the nodes "
            "(MON-03)")
    if family == "collective_latency":
        shells = _files_of(doc, "shell")
        place = (f"an export in {shells[0]}" if shells else
                 "the environment of the script or scheduler that launches this config (it is one config file, "
                 "with no launch script of its own)")
        return (base + f"; an NCCL profiler plugin (NCCL_PROFILER_PLUGIN) is set in {place}, and what it "
                "writes is what decides it")
    return base


def _prec01(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    why_bf16 = "bf16 mixed precision (Ampere or newer GPUs); fp16 needs loss scaling too (PREC-02)"
    kinds = doc.get("file_kinds") or {}
    for file, kind in kinds.items():
        if kind == "deepspeed":
            return [_fix(file, "key", "bf16.enabled", True, f"DeepSpeed's bf16 section: {why_bf16}")], None
    for file, kind in kinds.items():
        if kind == "hf":
            return [_fix(file, "key", "bf16", True, f"HF TrainingArguments bf16: {why_bf16}")], None
        if kind in ("lightning", "nemo"):
            mode = _fact(doc, "job.precision.mode")
            src = str(mode.get("source") or "")
            key = "trainer.precision" if "trainer.precision" in src or kind == "nemo" or "(" in src else None
            if key is None and src.endswith(": precision"):
                key = "precision"
            return [_fix(file, "key", key or "trainer.precision", "bf16-mixed",
                         f"Lightning 2.x precision='bf16-mixed': {why_bf16}")], None
    at = _launch_line(doc, "megatron: --")
    if at is not None:
        return [_fix(at[0], "flag", "--bf16", True, f"Megatron-LM --bf16: {why_bf16}", at[1])], None
    return None, ("no mixed-precision key of this framework that spec-check reads and verifies; set the "
                  "framework's bf16 mode by hand (the remediation names them)")


def _mon02(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    n = _monitor_interval(params)
    fixes = _at_source(f, doc, "job.logging.interval_steps", n,
                       f"at most {n} steps between metrics (the profile's metrics_interval_steps_max)")
    if fixes:
        return fixes, None
    return None, "the interval is not one key or flag of the job's files; lower it where it is set"


def _ckpt02(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    from validator.rules.formulas import daly_interval

    gpus = _fact(doc, "job.gpu_count").get("value")
    step = _fact(doc, "job.step_time").get("value")
    mtbf = _num(params, "gpu_mtbf")
    write = _num(params, "checkpoint_write_time")
    if f.rule == "CKPT-02.time-interval-far-from-optimum":
        return None, "the interval is a time, not a step count: set it within the expected range by hand"
    entry = _fact(doc, "job.checkpoint.interval_steps")
    if not isinstance(gpus, (int, float)) or not isinstance(step, (int, float)) or not step or mtbf is None \
            or write is None:
        fix = _at_source(f, doc, "job.checkpoint.interval_steps", None, "Daly's optimum from the step time")
        if fix:
            fix[0]["needs"] = "the step time and GPU count: pass --set step_time=SECONDS --set gpu_count=N"
            return fix, None
        return None, "pass --set step_time=SECONDS and --set gpu_count=N to compute the interval"
    tau = daly_interval(float(gpus), mtbf, write)
    steps = max(1, round(tau / float(step)))
    why = (f"Daly's optimum: {tau:.0f} s of compute between checkpoints for {gpus:g} GPUs at a per-GPU MTBF of "
           f"{mtbf / 3600:g} h and a {write:g} s write, at {float(step):g} s a step = {steps} steps")
    fixes = _at_source(f, doc, "job.checkpoint.interval_steps", steps, why)
    if fixes:
        return fixes, None
    return None, f"set the checkpoint interval to {steps} steps where it is set ({entry.get('source')})"


_NO_EDIT: dict[str, str] = {
    "REC-02.hang-detection-too-slow": (
        "no edit of the job's files is safe: a heartbeat watchdog (NVRx ft_launcher, torchft, Megatron "
        "--inprocess-restart) is a change of launcher or code, and a shorter collective timeout kills healthy "
        "jobs during long checkpoint saves; evidence that would decide it: a recovery log of a real failure "
        "(lint --recovery-log FILE) measured within the bound"),
    "REC-02.crash-detection-too-slow": (
        "no edit of these files: the job needs a launcher that watches its ranks (torchrun or ft_launcher with "
        "--max-restarts), which is a change of how it is launched; evidence that would decide it: a recovery "
        "log of a real failure (lint --recovery-log FILE) measured within the bound"),
    "REC-01.no-automatic-restart": (
        "no edit of these files alone: restarts come from the launcher (torchrun --max-restarts) or the "
        "scheduler (sbatch --requeue), which these files do not hold; lint the job's launch script with it"),
    "CKPT-03.resume-not-automatic": (
        "no edit that is safe on a fresh run: a resume setting must find the latest checkpoint and start "
        "clean when there is none (torchtune's resume_from_checkpoint: True raises without one; HF Trainer "
        "resumes only when the script passes resume_from_checkpoint to train()); evidence that would decide "
        "it: the training script's resume call, or a run's logs showing a restart that continued its step "
        "count (lint --run DIR)"),
    "CKPT-01.checkpointing-disabled": (
        "turn checkpointing on with the framework's own save setting at an interval CKPT-02 accepts; "
        "spec-check proposes no value without the step time (--set step_time=SECONDS)"),
}


_PLANS: dict[str, Callable[[Finding, Document, Mapping[str, ParamValue]], tuple[list[Fix] | None, str | None]]] = {
    "MON-01.gpu-utilization-not-emitted": _mon01("gpu_utilization"),
    "MON-01.memory-not-emitted": _mon01("memory"),
    "MON-01.collective-latency-not-emitted": _mon01("collective_latency"),
    "MON-01.gradient-stats-not-emitted": _mon01("gradient_stats"),
    "PREC-01.full-precision-training": _prec01,
    "MON-02.metrics-interval-too-many-steps": _mon02,
    "CKPT-02.interval-far-from-optimum": _ckpt02,
    "CKPT-02.time-interval-far-from-optimum": _ckpt02,
}


def plan(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    """The edits that clear ``f`` (a failing or erroring finding of job ``doc``), or why there
    are none and what evidence would decide it (None, None: not a finding a file decides)."""
    from validator.report.model import Status

    if f.status not in (Status.FAIL, Status.ERROR) or f.rule.startswith("LINT-00"):
        return None, None
    how = _PLANS.get(f.rule)
    if how is not None:
        return how(f, doc, params)
    return None, _NO_EDIT.get(f.rule)


def attach(findings: tuple[Finding, ...], docs: list[Document],
           params: Mapping[str, ParamValue]) -> tuple[Finding, ...]:
    """``findings`` with their fixes (each edit's replacement computed on the text read)
    or their no_fix."""
    from dataclasses import replace

    from validator.jobs import edits

    by_name = {d["subject"]["name"]: d for d in docs}
    out = []
    for f in findings:
        doc = by_name.get(f.subject)
        if doc is None:
            out.append(f)
            continue
        fixes, why = plan(f, doc, params)
        if fixes:
            texts = doc.get("texts") or {}
            for fx in fixes:
                text = texts.get(fx["file"])
                if fx.get("needs") or text is None:
                    continue
                try:
                    fx["replace"] = edits.replacement(text, edits.apply(text, fx))
                except edits.EditError as exc:
                    fx["needs"] = f"cannot be applied as written: {exc}; set it by hand"
            f = replace(f, fixes=fixes)
        elif why:
            f = replace(f, no_fix=why)
        out.append(f)
    return tuple(out)
