"""The edits that clear a job finding (``report.model.Fix``), or why there is none.

``plan(finding, doc, params)`` answers for a failing or erroring finding of a job: the
edits to the job's own files (the file, the key path / flag / environment variable, the
value, and why that value), or a sentence saying why no edit of its files can clear it
and what evidence would decide it. ``lint`` attaches both to the finding; ``lint --fix``
applies the edits (``edits.py``); ``tests/jobs/test_fix_proof.py`` applies every one to
every job of the public corpus and lints again.

Only settings a reader counts are proposed: each format's ``fixes`` in ``registry.py``
(MON-01 per family, PREC-01), each read in the framework's source at the version cited
there (DeepSpeed ``steps_per_print``: ``ThroughputTimer.stop``; HF
``include_num_input_tokens_seen``: ``Trainer.log``; Megatron ``--log-throughput`` and
``--log-memory-interval``: ``training_log``), and the logging and checkpoint intervals
where the reader read them (the finding's own source names the key or flag).

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


def _command_line(doc: Document, command: str) -> tuple[str, int] | None:
    """The one line of the job's scripts that runs ``command`` (None when none or several:
    which one to edit is then not for spec-check to guess)."""
    found = []
    texts = doc.get("texts") or {}
    for file in _files_of(doc, "shell"):
        for i, line in enumerate((texts.get(file) or "").splitlines(), 1):
            if not line.lstrip().startswith("#") and re.search(
                    r"(?:^|[\s/;&|(])" + re.escape(command) + r"(?=[ \t])", line):
                found.append((file, i))
    return found[0] if len(found) == 1 else None


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

def _monitor_interval(params: Mapping[str, ParamValue], doc: Document | None = None) -> int:
    """The metrics interval in steps that MON-02 accepts: the profile's bound in steps, and
    its bound in time divided by the step time when the step time is known."""
    n = int(_num(params, "metrics_interval_steps_max") or 100)
    step = _fact(doc, "job.step_time").get("value") if doc is not None else None
    limit = _num(params, "metrics_interval_max")
    if isinstance(step, (int, float)) and step > 0 and limit is not None:
        n = min(n, max(1, int(limit // float(step))))
    return n


def _formats_of(doc: Document) -> list[Any]:
    """The job's formats that carry fix settings, the one that speaks for the job first
    (``registry.Format.precedence``)."""
    from validator.jobs import registry

    tags = set(_fact(doc, "job.formats").get("value") or ())
    return [f for f in (*registry.by_precedence(), *registry.FORMATS) if f.fixes is not None and f.job_tag in tags]


def _setting_fix(doc: Document, fmt: Any, setting: Any, params: Mapping[str, ParamValue]) -> Fix | None:
    """``setting`` of format ``fmt`` as an edit of the job's file of that format (a key), or
    of the line of its launch command (a flag); None when the job has no such file or line."""
    value = setting.value
    if value == "N":
        value = _monitor_interval(params, doc)
    elif value == "LOG":
        log = _fact(doc, "job.logging.interval_steps").get("value")
        value = int(log) if isinstance(log, int) and log > 0 else _monitor_interval(params, doc)
    why = f"{fmt.framework.display if fmt.framework else fmt.display}: {setting.why}"
    if setting.kind == "flag":
        label = fmt.framework.label if fmt.framework else fmt.name
        at = _launch_line(doc, f"{label}: --")
        return None if at is None else _fix(at[0], "flag", setting.target, value, why, at[1])
    files = _files_of(doc, fmt.name)
    if not files:
        return None
    target = setting.target
    group, _, rest = target.partition(".")
    if rest and group in fmt.hydra_groups and not _has_top_key(doc, files[0], group):
        target = rest  # a Hydra group file (trainer/ddp.yaml) holds the section's keys at its top level
    return _fix(files[0], "key", target, value, why)


def _has_top_key(doc: Document, file: str, key: str) -> bool:
    import yaml

    text = (doc.get("texts") or {}).get(file)
    try:
        data = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return True
    return not isinstance(data, dict) or key in data


def _mon01(family: str) -> Callable[[Finding, Document, Mapping[str, ParamValue]], tuple[list[Fix] | None, str | None]]:
    def plan(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
        for fmt in _formats_of(doc):
            setting = fmt.fixes.metrics.get(family)
            fix = _setting_fix(doc, fmt, setting, params) if setting is not None else None
            if fix is not None:
                return [fix], None
        return None, _no_metric_edit(f, doc, family)
    return plan


def _no_metric_edit(f: Finding, doc: Document, family: str) -> str:
    from validator.jobs import metrics, registry

    what = family.replace("_", " ")
    fw = metrics.framework_of(list(_fact(doc, "job.formats").get("value") or []))
    setting = metrics.settings(fw or "").get(family) if fw else None
    if setting and setting != registry.NCCL_TIMING:
        return (f"{fw}: {setting}: a callback, code or several settings, not one key spec-check writes; "
                f"evidence that would decide it: a run's outputs showing a {what} series (lint --run DIR)")
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
    for fmt in _formats_of(doc):
        setting = fmt.fixes.precision
        fix = _setting_fix(doc, fmt, setting, params) if setting is not None else None
        if fix is not None:
            mode = _fact(doc, "job.precision.mode")
            # an explicit fp32 setting is replaced where it is written (Lightning's trainer
            # file of a Hydra tree holds precision at its top level)
            at = _at_source(f, doc, "job.precision.mode", fix["value"], fix["why"])
            if at and fix["kind"] == "key" and at[0]["target"].split(".")[-1] == fix["target"].split(".")[-1]:
                return at, None
            if mode.get("location", {}).get("line") and fix["kind"] == "key":
                return None, (f"the precision is set at {mode['location']['file']}:{mode['location']['line']} "
                              f"({mode.get('source')}): set it to {fix['value']!r} there")
            return [fix], None
    return None, ("no mixed-precision setting of this framework that spec-check reads and verifies; set the "
                  "framework's bf16 mode by hand (the remediation names them)")


def _mon02(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    n = _monitor_interval(params, doc)
    fixes = _at_source(f, doc, "job.logging.interval_steps", n,
                       f"at most {n} steps between metrics (the profile's metrics_interval_steps_max)")
    if fixes:
        return fixes, None
    entry = _fact(doc, "job.logging.interval_steps")
    return None, f"set the logging interval to at most {n} steps: {entry.get('source')}"


_BOOL_SOURCE = re.compile(r"^[\w.-]+: ([\w.-]+) = (True|False|true|false)\b")


def _ckpt01(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    """A checkpointing switch written off (``enable = false``), or a setting that makes the
    checkpoints unusable for a restart (HF ``save_only_model: true``: no optimizer state),
    flipped where it is written: the key the reader found to be the cause."""
    entry = _fact(doc, "job.checkpoint.enabled")
    src, loc = str(entry.get("source") or ""), entry.get("location") or {}
    m = _BOOL_SOURCE.match(src)
    kind = (doc.get("file_kinds") or {}).get(loc.get("file") or "")
    if m and loc.get("line") and kind not in (None, "shell", "env"):
        value = m.group(2).lower() != "true"
        why = f"the reader found checkpointing off because of {m.group(1)} ({src}); this turns it back"
        return [_fix(loc["file"], "key", m.group(1), value, why, int(loc["line"]))], None
    return None, (f"turn checkpointing on where it is off ({src}) with a save interval CKPT-02 accepts; "
                  "spec-check proposes no interval without the step time (--set step_time=SECONDS)")


def _ckpt03(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    """Megatron-LM resumes from the latest checkpoint under --load, and starts from random
    weights when there is none yet (``load_checkpoint``: "could not find the metadata file
    ... will not load any checkpoints and will start from random", Megatron-LM@d98e8a6
    megatron/training/checkpointing.py): --load set to the --save directory is safe on a
    fresh run. Other frameworks' resume settings fail a fresh run or live in the script."""
    resume, enabled = _fact(doc, "job.checkpoint.resume"), _fact(doc, "job.checkpoint.enabled")
    texts = doc.get("texts") or {}
    if str(resume.get("source")) == "megatron: --load differs from --save or is missing" \
            and str(enabled.get("source")) == "megatron: --save":
        loc = enabled.get("location") or {}
        file, line = loc.get("file"), loc.get("line")
        lines = (texts.get(file) or "").splitlines() if file else []
        m = re.search(r"--save(?:=|[ \t]+)([^\s\\]+)", lines[line - 1]) if line and line <= len(lines) else None
        if file and line and m:
            target = m.group(1).strip("\"'")
            rl = (resume.get("location") or {}).get("line")
            at = rl if rl and rl <= len(lines) and re.search(r"--load\b", lines[rl - 1]) else line
            why = ("Megatron-LM loads the latest checkpoint under --load, and with none yet warns and starts from "
                   "random weights (Megatron-LM@d98e8a6 megatron/training/checkpointing.py load_checkpoint): the "
                   "--save directory makes a restart resume where it stopped, and a fresh run still starts")
            return [_fix(file, "flag", "--load", target, why, at)], None
    return None, _NO_EDIT["CKPT-03.resume-not-automatic"]


def _rec01(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    """torchrun's elastic agent restarts the worker group after a failure only with
    --max-restarts N > 0 (default 0: torch/distributed/run.py); the flag goes right after
    ``torchrun`` on its line, never among the training script's arguments."""
    at = _command_line(doc, "torchrun")
    if at is None:
        return None, _NO_EDIT["REC-01.no-automatic-restart"]
    why = ("torchrun's elastic agent restarts the worker group after a failed rank up to N times (default 0, "
           "torch/distributed/run.py --max-restarts); 3 lets the job survive three failures before it gives up "
           "(set N to the failures it should survive)")
    return [_fix(at[0], "flag", "torchrun --max-restarts", 3, why, at[1])], None


def _mon02_time(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    step = _fact(doc, "job.step_time").get("value")
    limit = _num(params, "metrics_interval_max")
    entry = _fact(doc, "job.logging.interval_steps")
    if not isinstance(step, (int, float)) or not step or limit is None or entry.get("value") is None:
        return None, "the interval is set in time, or the step time is unknown: lower it where it is set"
    n = max(1, int(limit // float(step)))
    why = f"at most {limit:g} s between metrics (metrics_interval_max) at {float(step):g} s a step = {n} steps"
    fixes = _at_source(f, doc, "job.logging.interval_steps", n, why)
    if fixes:
        return fixes, None
    return None, f"set the logging interval to at most {n} steps: {entry.get('source')}"


def _more_often(doc: Document, fix: Fix, steps: int, why: str) -> list[Fix]:
    """A second interval of the same name that saves more often (OLMo's
    ``save_interval_ephemeral`` beside ``save_interval``: the reader takes the shorter, so
    both must move for the interval to become ``steps``)."""
    text = (doc.get("texts") or {}).get(fix["file"]) or ""
    key = fix["target"].split(".")[-1]
    out: list[Fix] = []
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(" + re.escape(key) + r"_\w+)\s*:\s*(\d+)\s*(?:#.*)?$", line)
        if m and i != fix.get("line") and int(m.group(2)) < steps and "ephemeral" in m.group(1):
            out.append(_fix(fix["file"], "key", m.group(1), steps, why + " (this interval saves more often)", i))
    return out


def _ckpt02(f: Finding, doc: Document, params: Mapping[str, ParamValue]) -> tuple[list[Fix] | None, str | None]:
    from validator.rules.formulas import daly_interval

    gpus = _fact(doc, "job.gpu_count").get("value")
    step = _fact(doc, "job.step_time").get("value")
    mtbf = _num(params, "gpu_mtbf")  # hours, as the rule's formulas take it (formulas.py)
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
    tau = daly_interval(float(gpus), mtbf * 3600.0, write)
    steps = max(1, round(tau / float(step)))
    why = (f"Daly's optimum: {tau:.0f} s of compute between checkpoints for {gpus:g} GPUs at a per-GPU MTBF of "
           f"{mtbf:g} h and a {write:g} s write, at {float(step):g} s a step = {steps} steps")
    fixes = _at_source(f, doc, "job.checkpoint.interval_steps", steps, why)
    if fixes:
        return fixes + _more_often(doc, fixes[0], steps, why), None
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
        "no edit of these files: restarts come from the launcher (torchrun --max-restarts) or the scheduler "
        "(sbatch --requeue), and no torchrun line is among them; lint the job's launch script with them"),
    "CKPT-03.resume-not-automatic": (
        "no edit that is safe on a fresh run: a resume setting must find the latest checkpoint and start "
        "clean when there is none (torchtune's resume_from_checkpoint: True raises without one; HF Trainer "
        "resumes only when the script passes resume_from_checkpoint to train()); evidence that would decide "
        "it: the training script's resume call, or a run's logs showing a restart that continued its step "
        "count (lint --run DIR)"),
    "TOPO-03.degrees-do-not-divide-world-size": (
        "no single edit: which parallel degree or node count to change is a choice of the model's layout; "
        "make tensor x pipeline x context (x expert) parallel sizes divide the world size"),
    "TOPO-03.tensor-parallel-exceeds-nvlink-domain": (
        "no single edit: moving model parallelism from tensor to pipeline or context parallelism changes "
        "the layout; --set nvlink_domain_size=N states a larger domain if the nodes have one"),
    "COMM-01.nccl-algo-ring-pinned-at-scale": (
        "remove the NCCL_ALGO pin where it is exported (an edit of the launch environment spec-check does not "
        "make: unsetting a variable may be what another script relies on)"),
    "COMM-01.nccl-algo-tree-pinned-single-node": (
        "remove the NCCL_ALGO pin where it is exported (spec-check does not delete lines)"),
    "COMM-02.grad-comm-dtype-below-floor": (
        "no edit that keeps the job's numerics: raising the gradient communication precision is a choice "
        "of the framework's setting the finding names"),
    "REC-02.measured-recovery-too-slow": (
        "measured from the recovery log given: no edit of the files changes a measured time; evidence that "
        "would decide it: a recovery log after the launch is changed"),
    "REC-03.preemption-signal-too-late": (
        "no edit without the checkpoint write time of this job: set sbatch --signal=B:USR1@SECONDS with SECONDS "
        "at least the write time (--set checkpoint_write_time)"),
    "PREC-02.fp16-without-dynamic-loss-scaling": (
        "turn dynamic loss scaling on with the framework's key the finding names (or use bf16): spec-check "
        "does not choose between them"),
    "PREC-02.ignored-config-keys": (
        "remove or rename the keys the finding lists: spec-check does not delete a user's keys"),
    "PREC-02.inconsistent-precision-settings": (
        "keep one half-precision mode: which one to keep is the user's choice (bf16 on Ampere or newer)"),
    "BATCH-01.global-batch-mismatch": (
        "no single edit: the global batch, micro-batch, accumulation and data-parallel size must agree, and "
        "which of them to change is a choice of the training recipe"),
    "BATCH-01.global-batch-not-divisible": (
        "no single edit: make the global batch a multiple of micro-batch x data-parallel size; which to "
        "change is a choice of the training recipe"),
    "BATCH-01.global-batch-not-divisible-by-accumulation": (
        "no single edit: make the global batch a multiple of the accumulation steps; which to change is a "
        "choice of the training recipe"),
    "MON-02.measured-interval-too-long": (
        "measured in the run given: lower the logging interval in the job's config and run again"),
    "MON-02.measured-interval-too-many-steps": (
        "measured in the run given: lower the logging interval in the job's config and run again"),
    "MON-02.measured-gap-too-long": (
        "a gap measured in the run given (a stall or a restart): no edit of the files; the run's logs around "
        "the gap decide its cause"),
    "MON-02.metrics-stalled": (
        "the run given stopped emitting metrics: no edit of the files; the run's logs decide why"),
    "MON-02.nonfinite-values": (
        "NaN or Inf values in the run given: a training problem (learning rate, precision), no config edit"),
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
    "CKPT-01.checkpointing-disabled": _ckpt01,
    "REC-01.no-automatic-restart": _rec01,
    "CKPT-03.resume-not-automatic": _ckpt03,
    "MON-02.metrics-interval-too-many-steps": _mon02,
    "MON-02.metrics-interval-too-long": _mon02_time,
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
