"""The normalized job model: one set of ``job.*`` facts, whichever files a job has.

Each reader puts what its file says into a ``JobModel``; the model keeps, per fact, the
value, the file and line it came from, and a ``source`` naming the framework key
("deepspeed: train_micro_batch_size_per_gpu"). Three rules make a job of many files
deterministic:

* an explicit value beats a framework default, whichever file is read first;
* an explicit command-line flag (``accelerate launch --num_processes 32``, Trainer
  arguments after the script) beats the config file it overrides, in any read order;
* two explicit values of the same standing that disagree are a conflict: listed in
  ``job.config.conflicts`` and the fact becomes an error value at the second one, so
  each rule the value feeds (world size: TOPO-03, BATCH-01, CKPT-02) reports it as an
  ``error`` naming both files and lines instead of judging one of them;
* a value the config cannot know (GPU count, step time) may come from ``--set``; it is
  recorded with source ``--set NAME`` and no file.

Every fact of ``spec/facts/job.yaml`` is always present in the document: a value that
no file sets and no framework default covers is ``null`` (rules use ``exists`` in
``when`` to skip on it), so "unset" and "not gathered" never look alike. Derived facts
(data-parallel size, the time a step interval means, missing metric families) are
computed in ``finish()``; their arithmetic is spelled out in the value or the source.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from validator.facts import document as fdoc
from validator.jobs.entries import Entry, Mechanism  # the model holds them; its derivations make them too

if TYPE_CHECKING:
    from validator.report.model import JSONValue

METRIC_FAMILIES = ("gpu_utilization", "memory", "collective_latency", "gradient_stats")

# Every fact the job model publishes (documented in spec/facts/job.yaml), with its unit.
FACTS: dict[str, str | None] = {
    "job.formats": None,
    "job.files": None,
    "job.precision.mode": None,
    "job.precision.modes": None,
    "job.precision.loss_scaling": None,
    "job.precision.problems": None,
    "job.config.ignored_keys": None,
    "job.config.conflicts": None,
    "job.batch.micro": None,
    "job.batch.accumulation": None,
    "job.batch.global": None,
    "job.batch.rule": None,
    "job.parallel.dp": None,
    "job.parallel.tp": None,
    "job.parallel.pp": None,
    "job.parallel.cp": None,
    "job.parallel.ep": None,
    "job.parallel.model_size": None,
    "job.world_size": None,
    "job.gpu_count": None,
    "job.resources.nodes": None,
    "job.resources.gpus_per_node": None,
    "job.resources.time_limit": "sec",
    "job.duration": "sec",
    "job.step_time": "sec",
    "job.train_steps": None,
    "job.checkpoint.enabled": None,
    "job.checkpoint.interval_steps": None,
    "job.checkpoint.interval_time": "sec",
    "job.checkpoint.resume": None,
    "job.logging.interval_steps": None,
    "job.logging.interval_time": "sec",
    "job.logging.sinks": None,
    "job.metrics.families": None,
    "job.metrics.missing": None,
    "job.metrics.energy": None,
    "job.metrics.measured": None,  # from a run (lint --run, validator/runs), set in jobs.document()
    "job.metrics.gpu_utilization": None,  # rule pack v1.1 (metrics.py)
    "job.metrics.memory": None,
    "job.metrics.collective_latency": None,
    "job.metrics.gradient_stats": None,
    "job.recovery.auto_restart": None,
    "job.recovery.max_restarts": None,
    "job.recovery.requeue": None,
    "job.recovery.detection_timeout": "sec",
    "job.recovery.crash_detection": "sec",  # rule pack v1.1 (failure_detection.py)
    "job.recovery.hang_detection": "sec",
    "job.recovery.signal_lead": "sec",
    "job.recovery.measured": None,  # from logs (recovery_log.py), set in jobs.document()
    "job.comm.nccl_algo": None,
    "job.comm.nccl_algo_pinned": None,
    "job.comm.nccl_discouraged": None,
    "job.comm.grad_dtype": None,
    "job.comm.env": None,
}


# Physical bounds of a job's numbers: a count (GPUs, steps, batch) beyond 10^15 or a time
# beyond a century is no real job's, and past the float range it would crash arithmetic
# and formatting (``1e400`` written as an integer); such a value is an error naming it.
MAX_NUMBER = 10**15
# a checkpoint interval in steps this long is how configs turn periodic saves off
# (``save_steps: 1000000``): with the run's length unknown, whether it fires is unknown
NEVER_STEPS = 1_000_000
_LIMIT_BY_UNIT = {"sec": 100 * 365 * 86400}


def _out_of_range(name: str, value: JSONValue) -> bool:
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    limit = _LIMIT_BY_UNIT.get(FACTS.get(name) or "", MAX_NUMBER)
    if isinstance(value, float) and not math.isfinite(value):
        return not (math.isinf(value) and value > 0 and FACTS.get(name) == "sec")  # "unlimited" time
    return abs(value) > limit


class JobModel:
    """Facts of one job as readers report them; ``document()`` turns them into facts."""

    def __init__(self, name: str):
        self.collective: Entry | None = None  # set by finish()
        self.name = name
        self.entries: dict[str, Entry] = {}
        self.conflicts: list[str] = []
        self.lists: dict[str, list[tuple[JSONValue, str | None, int | None, str]]] = {}
        self.formats: list[str] = []
        self.files: list[str] = []
        self.errors: list[dict[str, str | int | None]] = []
        self.texts: dict[str, str] = {}  # file -> text of the configs read (source lines travel in findings)
        self.kinds: dict[str, str] = {}  # file -> the format it was read as ("shell" for a script): fixes.py
        self.torch = False  # a PyTorch job: the torch.distributed defaults apply
        self.timeouts: list[Entry] = []
        self.overriding = False  # reading command-line arguments: they override files
        # rule pack v1.1: failure-detection mechanisms per mode (failure_detection.py), NCCL
        # watchdog settings, caveats per mode, and metric evidence v1.0 did not read
        self.mechanisms: list[Mechanism] = []
        self.mode_notes: dict[str, list[str]] = {}
        self.watchdog: dict[str, tuple[str, str | None, int | None]] = {}
        self.metric_evidence: list[tuple[JSONValue, str | None, int | None, str]] = []
        self.origins: dict[str, str] = {}  # parameter -> "--set" | "profile:FILE"
        # Hydra composition (hydra.py): file (real path) -> (layer, scale of its own list);
        # ``layer`` is the one of the file being read. A higher layer overrides a lower.
        self.layers: dict[str, tuple[float, float]] = {}
        # Hydra config roots found above a config naming an absolute group (hydra.follow):
        # their group files are part of the job
        self.hydra_roots: set[str] = set()
        # an experiment's primary config (real path -> the experiment's group), the groups
        # the job's experiments override (left out of the primary's list), and the files
        # composed under an experiment that run on their own too (the primary): not parts
        # of the experiment's job only (grouping.split_folder keeps them entry points)
        self.hydra_primary: dict[str, str] = {}
        self.hydra_overridden: set[str] = set()
        self.hydra_composed: set[str] = set()
        # the files the job was given, for what one says about another read before it (the
        # container image a launcher runs: pins.images)
        self.job_paths: list[str] = []
        self.layer = 0.0
        self.list_layers: dict[str, list[float]] = {}  # the layer of each list member
        # a DeepSpeed config without steps_per_print (its file, and whether "auto" values
        # say a host framework runs it): no periodic metrics line of DeepSpeed's own, so the
        # interval is another framework's of the job, the host's, or never (_logging)
        self.unlogged: tuple[str, bool] | None = None
        # a framework with no global-batch setting (HF Trainer, Lightning): its file, the
        # micro-batch key's line and the framework's rule in words; BATCH-01 is then decided
        # by that rule unless another file of the job sets a global batch (_batch)
        self.batch_derived: tuple[str | None, int | None, str] | None = None

    # -- what readers call --------------------------------------------------------------
    def set(
        self,
        name: str,
        value: JSONValue,
        file: str | None,
        line: int | None,
        source: str,
        *,
        override: bool = False,
    ) -> None:
        """An explicit value; ``None`` and the string "auto" mean "not set here".
        ``override``: a command-line flag, which beats a config file's value."""
        if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
            return
        assert name in FACTS, name
        if _out_of_range(name, value):
            limit = _LIMIT_BY_UNIT.get(FACTS[name] or "", MAX_NUMBER)
            self.invalid(name, value, file, line, source,
                         f"a finite number within +/-{limit:.3g}{' s' if FACTS[name] == 'sec' else ''} "
                         "(no real job has more)")
            return
        override = override or self.overriding
        old = self.entries.get(name)
        if old is None or old.default or (override and not old.override and old.error is None):
            self.entries[name] = Entry(value, file, line, source, override=override, layer=self.layer)
        elif old.override and not override:
            return  # the config value the flag overrides
        elif old.error is None and old.layer != self.layer and not override:
            # Hydra: a config later in composition order overrides an earlier one
            if self.layer > old.layer:
                self.entries[name] = Entry(value, file, line, source, layer=self.layer)
        elif old.error is None and old.value != value:
            where = f"{file}:{line}" if line else str(file)
            text = (
                f"{old.source} = {old.value!r} at {old.file}:{old.line}, "
                f"but {source} = {value!r} at {where}"
            )
            self.conflicts.append(f"{name}: {text}")
            if name == "job.precision.mode":
                return  # two modes: PREC-02's inconsistent-precision finding says it
            self.entries[name] = Entry(
                None, file, line, source, error=f"the job's files disagree: {text}"
            )

    def decide(self, name: str, value: JSONValue, file: str | None, line: int | None, source: str) -> None:
        """A setting that decides ``name`` whatever else set it: Megatron's
        ``--no-save-optim`` makes every checkpoint ``--save`` writes model-only, so
        "checkpoints of model and optimizer state" is false at that flag's line, not true at
        ``--save``'s. An error already recorded stays."""
        assert name in FACTS, name
        old = self.entries.get(name)
        if old is not None and old.error is not None:
            return
        self.entries[name] = Entry(value, file, line, source, override=True, layer=self.layer)

    def invalid(
        self, name: str, raw: JSONValue, file: str | None, line: int | None, source: str, expected: str
    ) -> None:
        """A key whose value has the wrong type (``steps_per_print: {"a": 1}``).

        The framework would reject it or do something nobody intended, so the value is
        neither dropped nor replaced by the default: the key becomes an ``error``
        finding at its line (LINT-00) and the fact an error value, so every rule that
        depends on it ends in ``error``, never in a pass on the default.
        """
        assert name in FACTS, name
        if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) >= 10**60:
            shown = f"an integer of {len(str(abs(raw))) if raw.bit_length() < 14000 else 'over 4,000'} digits"
        else:
            shown = repr(raw)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        reason = f"{source} = {shown}: expected {expected}"
        self.error(file or "", line, reason)
        old = self.entries.get(name)
        if old is None or old.default:
            self.entries[name] = Entry(None, file, line, source, error=reason)

    def inherited(self, name: str, file: str | None, source: str) -> None:
        """A value the file leaves to a base it cannot see (a registered TF experiment):
        unknown (null), with a source that says so, never a stand-in default."""
        assert name in FACTS, name
        if name not in self.entries:
            self.entries[name] = Entry(None, file, None, f"inherited default: {source}", default=True)

    def default(
        self, name: str, value: JSONValue, file: str | None, source: str, line: int | None = None,
        key: str | None = None,
    ) -> None:
        """A framework default, used only where no file sets the value. ``line``: the
        key that implies it (``fp16: true`` implies GradScaler's dynamic scaling), so an
        explicit value elsewhere (DeepSpeed's ``fp16.loss_scale``) wins in any read order.
        ``key``: the row of ``validator/jobs/defaults.py`` the value was read from; readers
        pass it through ``defaults.fill``, which a test requires of every framework default."""
        assert name in FACTS, name
        if name not in self.entries and value is not None:
            self.entries[name] = Entry(value, file, line, f"default: {source}", default=True, key=key)

    def add(self, name: str, value: JSONValue, file: str | None, line: int | None, source: str) -> None:
        """One member of a list fact (metric families, sinks, problems)."""
        bucket = self.lists.setdefault(name, [])
        if all(v != value for v, *_ in bucket):
            bucket.append((value, file, line, source))
            self.list_layers.setdefault(name, []).append(self.layer)

    def get(self, name: str, default: JSONValue = None) -> JSONValue:
        """The value, or ``default`` when unset or an error value."""
        e = self.entries.get(name)
        return e.value if e is not None and e.error is None else default

    def failed(self, name: str) -> Entry | None:
        """The entry of ``name`` if it is an error value."""
        e = self.entries.get(name)
        return e if e is not None and e.error is not None else None

    def _propagate(self, name: str, derived: str, why: str) -> bool:
        """Make ``derived`` an error value where ``name``, which it is computed from, is one."""
        e = self.failed(name)
        if e is None or self.has(derived):
            return e is not None
        self.entries[derived] = Entry(None, e.file, e.line, e.source, error=f"{why}: {e.error}")
        return True

    def has(self, name: str) -> bool:
        return name in self.entries

    def explicit(self, name: str) -> bool:
        e = self.entries.get(name)
        return e is not None and not e.default

    def timeout(self, seconds: float, file: str | None, line: int | None, source: str) -> None:
        """Another explicit failure-detection timeout (watchdog heartbeat, rendezvous):
        ``job.recovery.detection_timeout`` is the longest of all of them."""
        self.timeouts.append(Entry(seconds, file, line, source))

    def mechanism(self, mode: str, name: str, seconds: float, file: str | None, line: int | None,
                  origin: str) -> None:
        """A mechanism that notices a crashed or hung rank (REC-02 by failure mode, v1.1)."""
        self.mechanisms.append(Mechanism(mode, name, float(seconds), file, line, origin))

    def note(self, mode: str, text: str) -> None:
        """A caveat about a failure mode's mechanisms, shown in the finding's source."""
        if text not in self.mode_notes.setdefault(mode, []):
            self.mode_notes[mode].append(text)

    def error(self, file: str, line: int | None, message: str) -> None:
        self.errors.append({"file": file, "line": line, "message": message})

    # -- derived facts ------------------------------------------------------------------
    def finish(
        self,
        *,
        gpu_count: int | None = None,
        step_time_s: float | None = None,
        origins: dict[str, str] | None = None,
    ) -> None:
        self.origins = origins or {}
        self._from_set(gpu_count, step_time_s)
        self._parallel()
        self._batch()
        self._precision()
        self._checkpoint()
        self._logging()
        self._recovery()

    def _from_set(self, gpu_count: int | None, step_time_s: float | None) -> None:
        if gpu_count is None:
            for part in ("job.resources.nodes", "job.resources.gpus_per_node"):
                self._propagate(part, "job.world_size", "the world size is nodes x GPUs per node")
        if not self.has("job.world_size"):
            nodes, per = self.get("job.resources.nodes"), self.get("job.resources.gpus_per_node")
            if isinstance(nodes, int) and isinstance(per, int):
                e = self.entries["job.resources.nodes"]
                g = self.entries["job.resources.gpus_per_node"]
                product = f"nodes x GPUs per node = {nodes} x {per}"
                if e.default or g.default:
                    # built on a launcher's default: a default too, which --set, a profile
                    # or any file that tells the world size replaces
                    parts = [x.origin() for x in (e, g) if x.default]
                    self.entries["job.world_size"] = Entry(
                        nodes * per, e.file, e.line, "; ".join(parts) + f" ({product})", default=True,
                    )
                else:
                    self.set("job.world_size", nodes * per, e.file, e.line, product)
        if gpu_count is not None:
            self._command_line("job.world_size", int(gpu_count), "gpu_count")
        ws = self.entries.get("job.world_size")
        if ws is not None and not self.has("job.gpu_count"):
            self.entries["job.gpu_count"] = Entry(
                ws.value, ws.file, ws.line, ws.source, default=ws.default, error=ws.error
            )
        if step_time_s is not None:
            self._command_line("job.step_time", float(step_time_s), "step_time")

    def _command_line(self, name: str, value: JSONValue, param: str) -> None:
        """``--set PARAM=VALUE``: what the user passed on the command line wins over the
        job's files (the documented precedence: command line, then files, then a profile,
        then framework defaults; a profile's value fills only what no file says). Where
        a file says otherwise, the source names both values and the
        file's place, so every finding built on it says which value it used and why; a
        file that agrees keeps its place."""
        old = self.entries.get(name)
        origin = self.origins.get(param, "--set")
        if origin.startswith("profile"):
            # a profile describes the platform, not this job: it fills what no file says
            if old is None or old.default:
                file = origin.partition(":")[2]
                self.entries[name] = Entry(value, None, None, f"profile {file}: {param}")
            return
        src = f"--set {param}"
        if old is not None and not old.default:
            if old.error is None and old.value == value:
                return
            where = f" at {old.file}:{old.line}" if old.file and old.line else (
                f" in {old.file}" if old.file else "")
            was = "could not be read" if old.error is not None else f"= {old.value!r}"
            src = f"--set {param}={value:g} wins over {old.source} {was}{where}"
        self.entries[name] = Entry(value, None, None, src, override=True)

    def _parallel(self) -> None:
        for k in ("tp", "pp", "cp"):
            self._propagate(f"job.parallel.{k}", "job.parallel.model_size", "tp x pp x cp")
        for k in ("job.world_size", "job.parallel.model_size"):
            self._propagate(k, "job.parallel.dp", "dp = world size / (tp x pp x cp)")
        degrees = [self.get(f"job.parallel.{k}") for k in ("tp", "pp", "cp")]
        known = [d for d in degrees if isinstance(d, int) and d > 0]
        if known:
            size = math.prod(known)
            e = next(
                self.entries[f"job.parallel.{k}"]
                for k in ("tp", "pp", "cp")
                if self.has(f"job.parallel.{k}")
            )
            self.entries["job.parallel.model_size"] = Entry(
                size, e.file, e.line, "tensor x pipeline x context parallel"
            )
        ws = self.get("job.world_size")
        if not self.has("job.parallel.dp") and isinstance(ws, int) and ws > 0:
            size = self.get("job.parallel.model_size", 1)
            if ws % size == 0:
                e = self.entries["job.world_size"]
                self.set(
                    "job.parallel.dp",
                    ws // size,
                    e.file,
                    e.line,
                    f"world size / (tp x pp x cp) = {ws} / {size}",
                )

    def _batch(self) -> None:
        """A job whose framework derives the global batch (no file of it sets one, and no
        other framework of it has a batch rule) has ``job.batch.rule`` = ``derived``, with
        the framework's rule as its source: BATCH-01 is decided by it, not skipped."""
        if self.batch_derived is None or "job.batch.global" in self.entries or "job.batch.rule" in self.entries:
            return
        file, line, why = self.batch_derived
        self.set("job.batch.rule", "derived", file, line, why)

    def _precision(self) -> None:
        bucket = self.lists.get("job.precision.modes", [])
        layers = self.list_layers.get("job.precision.modes", [])
        if len(set(layers)) > 1 and len(layers) == len(bucket):
            # Hydra: the mode of a config an upper layer overrides is not enabled
            bucket = [b for b, layer in zip(bucket, layers, strict=True) if layer == max(layers)]
            self.lists["job.precision.modes"] = bucket
        if len(bucket) > 1:
            # reported at the second switch (the one that contradicts the first), with
            # every switch's place in the text
            where = [
                f"{v} ({src}{f' at {f}:{ln}' if f and ln else ''})" for v, f, ln, src in bucket
            ]
            _, file, line, _src = bucket[1]
            self.add(
                "job.precision.problems",
                "more than one half-precision mode enabled: " + ", ".join(where),
                file,
                line,
                "derived",
            )

    def _checkpoint(self) -> None:
        self._checkpoint_fires()
        self._propagate(
            "job.checkpoint.interval_steps", "job.checkpoint.interval_time", "steps x step time"
        )
        if not self.has("job.resources.time_limit"):
            self._propagate("job.train_steps", "job.duration", "train steps x step time")
        steps, st = self.get("job.checkpoint.interval_steps"), self.get("job.step_time")
        if (
            isinstance(steps, (int, float))
            and isinstance(st, (int, float))
            and not self.has("job.checkpoint.interval_time")
        ):
            e = self.entries["job.checkpoint.interval_steps"]
            self.entries["job.checkpoint.interval_time"] = Entry(
                steps * st, e.file, e.line, f"{e.origin()} x step time = {steps} x {st:g} s"
            )
        if not self.has("job.duration"):
            tl = self.entries.get("job.resources.time_limit")
            n, st = self.get("job.train_steps"), self.get("job.step_time")
            if tl is not None:
                self.entries["job.duration"] = Entry(
                    tl.value, tl.file, tl.line, tl.source, error=tl.error
                )
            elif isinstance(n, (int, float)) and n > 0 and isinstance(st, (int, float)):
                e = self.entries["job.train_steps"]
                steps = f"{e.origin()}: " if e.default else ""  # a framework's default step count
                self.entries["job.duration"] = Entry(
                    n * st, e.file, e.line, f"{steps}train steps x step time = {n} x {st:g} s"
                )
            else:
                self.entries["job.duration"] = Entry(
                    "unlimited",
                    None,
                    None,
                    "no time limit or step count x step time: "
                    "counted as unbounded (pass --set step_time=SECONDS or give the sbatch script)",
                )

    def _checkpoint_fires(self) -> None:
        """A periodic checkpoint whose interval is longer than the run never fires within
        it (``save_steps: 1000000`` with ``max_steps: 3000``): checkpointing is then not
        enabled for CKPT-01, which requires checkpoints a restart can resume from, at the
        interval's line. Where the run's length in steps is not known, an interval of
        ``NEVER_STEPS`` or more (the value written to turn periodic saves off) may or may
        not fire: unknown, never a pass."""
        en = self.entries.get("job.checkpoint.enabled")
        iv = self.entries.get("job.checkpoint.interval_steps")
        if en is None or en.value is not True or en.error is not None or iv is None or iv.error is not None:
            return
        every = iv.value
        if not isinstance(every, (int, float)) or isinstance(every, bool) or every <= 0:
            return
        shown = f"{every:g}" if every < 1e6 or every != int(every) else str(int(every))
        n = self.entries.get("job.train_steps")
        length = n.value if n is not None and n.error is None else None
        if isinstance(length, (int, float)) and not isinstance(length, bool) and length > 0:
            if every > length:
                self.entries["job.checkpoint.enabled"] = Entry(
                    False, iv.file, iv.line,
                    f"{iv.origin()} = {shown} steps, beyond the run's {length:g} steps ({n.origin()}): "  # type: ignore[union-attr]
                    "never checkpoints within the run", key=iv.key)
        elif every >= NEVER_STEPS:
            self.entries["job.checkpoint.enabled"] = Entry(
                None, iv.file, iv.line, f"{iv.origin()} = {shown} steps", key=iv.key,
                error=f"a checkpoint every {shown} steps ({iv.origin()}) may never fire within the run, whose "
                      "length in steps is not known (set max_steps, --train-iters or training.steps): whether "
                      "it checkpoints is unknown")

    def _logging(self) -> None:
        if self.unlogged is not None and not (
            self.has("job.logging.interval_steps") or self.has("job.logging.interval_time")
        ):
            from validator.jobs.defaults import cite, fill

            file, hosted = self.unlogged
            if hosted:
                # the host, named where the job's own files show it
                host = ("Accelerate (its config is in this job)" if "accelerate" in self.formats
                        else "the HF Trainer (its arguments are in this job)" if "hf_trainer" in self.formats
                        else None)
                why = (f"its \"auto\" values are filled in by {host}, and the metrics interval is the "
                       "training script's, which no file of this job shows" if host else
                       "its \"auto\" values are filled in by a host framework (HF Trainer, Accelerate), whose "
                       "logging interval this config does not show: lint it with the host's config")
                self.inherited("job.logging.interval_steps", file, f"{cite('deepspeed.steps_per_print')}; {why}")
            else:
                fill(self, "job.logging.interval_time", "deepspeed.steps_per_print", file,
                     value=math.inf, why=": the engine prints no periodic progress or samples/sec line")
        self._propagate(
            "job.logging.interval_steps", "job.logging.interval_time", "steps x step time"
        )
        steps, st = self.get("job.logging.interval_steps"), self.get("job.step_time")
        if (
            isinstance(steps, (int, float))
            and isinstance(st, (int, float))
            and not self.has("job.logging.interval_time")
        ):
            e = self.entries["job.logging.interval_steps"]
            self.entries["job.logging.interval_time"] = Entry(
                steps * st, e.file, e.line, f"{e.origin()} x step time = {steps} x {st:g} s"
            )
        if self.formats:
            have = {v for v, *_ in self.lists.get("job.metrics.families", [])}
            missing = [f for f in METRIC_FAMILIES if f not in have]
            self.entries["job.metrics.missing"] = Entry(
                missing,
                self.files[0] if self.files else None,
                None,
                "spec metric families not emitted by any configured knob",
            )
            if not self.has("job.metrics.energy"):
                self.default(
                    "job.metrics.energy",
                    False,
                    self.files[0] if self.files else None,
                    "no energy logging configured",
                )

    def _recovery(self) -> None:
        if self.torch:
            from validator.jobs.defaults import fill

            fill(self, "job.recovery.detection_timeout", "torch.pg_nccl_timeout",
                 self.files[0] if self.files else None)
        collective = self.entries.get("job.recovery.detection_timeout")  # before other timeouts join
        for t in self.timeouts:
            cur = self.entries.get("job.recovery.detection_timeout")
            if cur is not None and cur.error is not None:
                break
            if cur is None or not isinstance(cur.value, (int, float)) or t.value > cur.value:
                self.entries["job.recovery.detection_timeout"] = t
        for k in ("job.recovery.max_restarts", "job.recovery.requeue"):
            self._propagate(k, "job.recovery.auto_restart", "automatic restart")
        mr = self.get("job.recovery.max_restarts")
        rq = self.get("job.recovery.requeue")
        if not self.has("job.recovery.auto_restart") and (mr is not None or rq is not None):
            mr_e = self.entries.get("job.recovery.max_restarts")
            rq_e = self.entries.get("job.recovery.requeue")
            restart = bool((isinstance(mr, int) and mr > 0) or rq is True)
            # cite the mechanism that decides: a scheduler requeue restarts the job whatever
            # torchrun's --max-restarts default says, and an explicit setting beats a default
            if restart:
                e = mr_e if isinstance(mr, int) and mr > 0 and mr_e is not None else rq_e
            else:
                e = next((x for x in (mr_e, rq_e) if x is not None and not x.default), None) or mr_e or rq_e
            assert e is not None
            # derived from a default alone: keep the default's own source, which says so
            src = e.source if e.default else (
                f"{e.source} (requeue = {rq})" if e is rq_e else f"{e.source} (max restarts = {mr})")
            self.entries["job.recovery.auto_restart"] = Entry(
                restart, e.file, e.line, src, e.default, key=e.key
            )
        self.collective = collective  # the collective timeout alone: failure_detection.derive's (jobs/__init__.py)

    # -- output -------------------------------------------------------------------------
    def facts(self) -> dict[str, fdoc.Fact]:
        out: dict[str, fdoc.Fact] = {}
        for name, unit in FACTS.items():
            if name in self.lists and name not in self.entries:
                bucket = self.lists[name]
                _, file, line, _source = bucket[0]
                vals = [v for v, *_ in bucket]
                loc = {"file": file, "line": line} if file else None
                out[name] = fdoc.value(
                    vals, source="; ".join(sorted({b[3] for b in bucket})), location=loc
                )
                continue
            e = self.entries.get(name)
            if e is not None and e.error is not None:
                err = fdoc.error(e.error, source=e.source)
                if e.file:
                    err["location"] = {"file": e.file, "line": e.line}
                out[name] = err
                continue
            if e is None:
                first = {"file": self.files[0], "line": None} if self.files else None
                source = "not set"
                judged = getattr(self, "keys_judged", None)
                if name == "job.config.ignored_keys" and judged:
                    # keys judged at the release the job pins (keycheck.py): say which
                    source = "none at the release the job runs (" + "; ".join(judged[k] for k in sorted(judged)) + ")"
                out[name] = fdoc.value(None, unit=unit, source=source, location=first)
                out[name]["value"] = self._empty(name)
                continue
            loc = {"file": e.file, "line": e.line} if e.file else None
            out[name] = fdoc.value(e.value, unit=unit, source=e.origin(), location=loc)
        out["job.formats"] = fdoc.value(sorted(set(self.formats)), source="detected")
        out["job.files"] = fdoc.value(list(self.files), source="read")
        out["job.config.conflicts"] = fdoc.value(list(self.conflicts), source="files of the job")
        return out

    @staticmethod
    def _empty(name: str) -> list[str] | None:
        return (
            []
            if name
            in (
                "job.precision.problems",
                "job.config.ignored_keys",
                "job.logging.sinks",
                "job.metrics.families",
                "job.comm.nccl_discouraged",
                "job.precision.modes",
            )
            else None
        )
