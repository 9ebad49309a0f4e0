"""REC-02 by failure mode: how fast the job notices a crashed rank and a hung rank.

A GPU failure either kills a rank (a crash: the process exits) or stalls it (a hang: a
kernel or collective never completes, the process lives on). Each mode is judged by the
fastest mechanism the job has that notices it (rule pack v1.1):

* a crash by the launcher's worker monitor (torchrun's elastic agent, ``ft_launcher``),
  which polls the worker processes; without a launcher, by the scheduler (Slurm requeues a
  job only once the node is marked DOWN, after ``SlurmdTimeout``);
* a hang by the shortest of the collective timeout (the NCCL watchdog tears the process
  down when a collective outlives the process-group timeout, unless
  ``TORCH_NCCL_ASYNC_ERROR_HANDLING`` is 0 or 2) and any heartbeat or watchdog the job
  configures (NVRx ``ft_launcher`` rank heartbeats and sections, Megatron's in-process
  restart, torchft, NeMo's fault-tolerance callback). A hung rank looks healthy to the
  launcher's monitor, so a crash mechanism never counts for a hang.

Readers call :func:`mechanism` (via ``JobModel.mechanism``) as they meet a setting; the
model calls :func:`derive` when it finishes, which publishes
``job.recovery.crash_detection`` and ``job.recovery.hang_detection`` with the mechanism,
its timeout and the timeout's origin in the source. Every default used is a row of
``validator/jobs/defaults.py`` and is named with its framework version and source file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from validator.jobs.coerce import as_bool, as_float
from validator.jobs.defaults import cite, read_in, value_of
from validator.jobs.entries import Entry, Mechanism

if TYPE_CHECKING:
    from validator.jobs.base import Ctx
    from validator.jobs.model import JobModel
    from validator.report.model import JSONValue


def _flag(flags: dict[str, tuple[str, int]], *names: str) -> tuple[str, int] | None:
    for n in names:
        if n in flags:
            return flags[n]
    return None


def _at(file: str | None, line: int | None) -> str:
    return f" at {file}:{line}" if file and line else (f" in {file}" if file else "")


def launcher_flags(ctx: Ctx, flags: dict[str, tuple[str, int]], launchers: set[str]) -> None:
    """Mechanisms a launch line sets up: the launcher's worker monitor (crash), NVRx
    ``ft_launcher`` heartbeats and section timeouts, Megatron's in-process restart (hang)."""
    m, file = ctx.model, ctx.file
    if "ft_launcher" in launchers:
        _monitor(m, flags, file, "ft_launcher", "nvrx.monitor_interval")
        _ft_launcher(m, flags, file)
    elif "accelerate" in launchers:  # multi-process accelerate launch runs torch elastic's agent
        _monitor(m, flags, file, "accelerate launch (torch elastic)", "torch.monitor_interval")
    elif "torchrun" in launchers or any(k in flags for k in ("nproc-per-node", "rdzv-backend")):
        _monitor(m, flags, file, "torchrun", "torch.monitor_interval")
    if "inprocess-restart" in flags:
        _inprocess(m, flags, file)
    if "calc-ft-timeouts" in flags:
        m.note("hang", "Megatron --calc-ft-timeouts learns the section timeouts during the run (observed "
                       "interval x the safety factor): they are not known from the job's files")
    ft = _flag(flags, "enable-ft-package")
    if ft is not None and "ft_launcher" not in launchers:
        m.note("hang", f"Megatron --enable-ft-package{_at(file, ft[1])} reports NVRx sections, but their "
                       "timeouts are set by ft_launcher (--ft-rank-section-timeouts), not found in the job")


def _monitor(m: JobModel, flags: dict[str, tuple[str, int]], file: str, who: str, key: str) -> None:
    hit = _flag(flags, "monitor-interval")
    secs = as_float(hit[0]) if hit else None
    if hit and secs is not None:
        m.mechanism("crash", f"{who} worker monitor", secs, file, hit[1],
                    f"--monitor-interval {hit[0]}{_at(file, hit[1])}")
    else:
        m.mechanism("crash", f"{who} worker monitor", value_of(key), file, None, cite(key))


def _ft_launcher(m: JobModel, flags: dict[str, tuple[str, int]], file: str) -> None:
    """NVRx fault tolerance: a rank that misses a heartbeat or section deadline is killed;
    the rank monitor checks every ``workload_check_interval`` (added to the timeout)."""
    chk = _flag(flags, "ft-workload-check-interval")
    poll = as_float(chk[0]) if chk else None
    poll_text = (f"+ --ft-workload-check-interval {chk[0]}{_at(file, chk[1])}" if chk and poll is not None
                 else f"+ {cite('nvrx.workload_check_interval')}")
    if poll is None:
        poll = value_of("nvrx.workload_check_interval")
    found = False
    hb = _flag(flags, "ft-rank-heartbeat-timeout")
    if hb and as_float(hb[0]) is not None:
        secs = as_float(hb[0]) or 0.0
        m.mechanism("hang", "NVRx ft_launcher rank heartbeat", secs + poll, file, hb[1],
                    f"--ft-rank-heartbeat-timeout {hb[0]}{_at(file, hb[1])} {poll_text}")
        found = True
    sec = _flag(flags, "ft-rank-section-timeouts")
    if sec:
        for part in sec[0].split(","):
            name, _, v = part.partition(":")
            if name.strip() == "step" and as_float(v) is not None:
                secs = as_float(v) or 0.0
                m.mechanism("hang", "NVRx ft_launcher step-section timeout", secs + poll, file, sec[1],
                            f"--ft-rank-section-timeouts step:{v.strip()}{_at(file, sec[1])} {poll_text}")
                found = True
    if any(k.startswith("ft-param-") for k in flags):
        m.note("hang", "ft_launcher --ft-param-* flags were removed in nvidia-resiliency-ext 0.5 "
                       "(0.7.0 defines --ft-<name>); they are not read as timeouts")
    if not found:
        m.note("hang", "ft_launcher without heartbeat or step-section timeouts: "
                       f"{cite('nvrx.rank_heartbeat_timeout')}, so it never declares a rank hung")


def _inprocess(m: JobModel, flags: dict[str, tuple[str, int]], file: str) -> None:
    """Megatron ``--inprocess-restart``: the NVRx in-process wrapper notices no progress
    after the soft timeout, and a rank that stops heart-beating after the heartbeat timeout."""
    for flag, key, what in (
        ("inprocess-soft-timeout", "megatron.inprocess_soft_timeout", "soft timeout"),
        ("inprocess-heartbeat-timeout", "megatron.inprocess_heartbeat_timeout", "heartbeat timeout"),
    ):
        hit = _flag(flags, flag)
        secs = as_float(hit[0]) if hit else None
        line = flags["inprocess-restart"][1]
        if hit and secs is not None:
            m.mechanism("hang", f"Megatron in-process restart ({what})", secs, file, hit[1],
                        f"--{flag} {hit[0]}{_at(file, hit[1])}")
        else:
            m.mechanism("hang", f"Megatron in-process restart ({what})", value_of(key), file, line,
                        f"--inprocess-restart{_at(file, line)}; {cite(key)}")


def env(m: JobModel, name: str, value: str, file: str, line: int | None) -> None:
    """Environment variables that change what the NCCL watchdog does on a timeout."""
    if name in ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING",
                "TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT"):
        m.watchdog[name] = (value.strip(), file, line)
    elif name == "TORCHFT_TIMEOUT_SEC" and as_float(value) is not None:
        m.mechanism("hang", "torchft Manager timeout", as_float(value) or 0.0, file, line,
                    f"TORCHFT_TIMEOUT_SEC={value}{_at(file, line)}")


def torchft(m: JobModel, timeout_ms: JSONValue, file: str, line: int | None, enable_line: int | None) -> None:
    """torchtitan ``fault_tolerance.enable``: torchft's fault-tolerant process group times
    out a collective after ``process_group_timeout_ms``; the lighthouse drops a replica that
    stops heart-beating."""
    ms = as_float(timeout_ms)
    if ms is not None:
        m.mechanism("hang", "torchft process-group timeout", ms / 1000.0, file, line,
                    f"fault_tolerance.process_group_timeout_ms = {timeout_ms}{_at(file, line)}")
    else:
        key = "torchtitan.ft_process_group_timeout"
        m.mechanism("hang", "torchft process-group timeout", value_of(key), file, enable_line,
                    f"fault_tolerance.enable{_at(file, enable_line)}; {cite(key)}")


def _collective(m: JobModel, entry: Entry | None) -> Mechanism | None:
    """The collective timeout as a hang detector: the PG timeout the job sets (or its
    framework's default), unless the watchdog is told not to tear the process down."""
    if entry is None or entry.error is not None or not isinstance(entry.value, (int, float)):
        return None
    bw = m.watchdog.get("TORCH_NCCL_BLOCKING_WAIT") or m.watchdog.get("NCCL_BLOCKING_WAIT")
    if bw is not None and as_bool(bw[0]):
        m.note("hang", f"TORCH_NCCL_BLOCKING_WAIT=1{_at(bw[1], bw[2])}: no watchdog thread runs; the timeout is "
                       "raised in the training thread only when it waits on the collective")
    aeh = m.watchdog.get("TORCH_NCCL_ASYNC_ERROR_HANDLING") or m.watchdog.get("NCCL_ASYNC_ERROR_HANDLING")
    if aeh is not None and aeh[0] in ("0", "2"):
        m.note("hang", f"{'TORCH_NCCL_ASYNC_ERROR_HANDLING'}={aeh[0]}{_at(aeh[1], aeh[2])}: the NCCL "
                       "watchdog does not end the process on a timeout, so the collective timeout "
                       f"restarts nothing (1 or 3 tear down; {value_of('torch.async_error_handling')} is the "
                       f"default, read in {read_in('torch.async_error_handling')})")
        return None
    origin = (cite(entry.key) if entry.key else _cite_default(entry.source)) if entry.default else entry.source
    where = _at(entry.file, entry.line) if not entry.default else ""
    if entry.default and entry.key == "torch.pg_nccl_timeout":
        # the framework passes its own timeout over torch's (v1.0 counted torch's 10 min)
        from validator.jobs import registry

        for f in registry.by_precedence():
            ct = f.collective_timeout
            if ct is not None and ct.replaces_torch and f.job_tag in m.formats:
                return Mechanism("hang", "NCCL watchdog (collective timeout)", float(value_of(ct.row)),
                                 entry.file, None, cite(ct.row))
    if "heartbeat" in entry.source:  # NeMo's fault-tolerance callback sets this fact from its heartbeat
        return Mechanism("hang", "NeMo fault-tolerance rank heartbeat", float(entry.value), entry.file,
                         entry.line, f"{origin}{where}")
    return Mechanism("hang", "NCCL watchdog (collective timeout)", float(entry.value), entry.file, entry.line,
                     f"{origin}{where}")


TORCH_COLLECTIVE_DEFAULT = ("torch.distributed", "torch.pg_nccl_timeout")


def collective_defaults() -> tuple[tuple[str, str], ...]:
    """A reader's default of the collective timeout (by its source's prefix) -> the
    defaults.py row it is: each format's own (``Format.collective_timeout``), then torch's."""
    from validator.jobs import registry

    own = tuple((f.collective_timeout.source, f.collective_timeout.row) for f in registry.FORMATS
                if f.collective_timeout is not None and f.collective_timeout.source)
    return (*own, TORCH_COLLECTIVE_DEFAULT)


def _cite_default(source: str) -> str:
    """A collective-timeout default as the defaults table names it (framework, version,
    source file); a default no row covers keeps the reader's words, marked as a default."""
    text = source.removeprefix("default: ")
    for prefix, key in collective_defaults():
        if text.startswith(prefix):
            return cite(key)
    return f"default: {text}"


def derive(m: JobModel, collective: Entry | None) -> None:
    """``job.recovery.crash_detection`` and ``job.recovery.hang_detection``: the fastest
    mechanism per mode, with every other one found and any caveat in the source."""
    mechs: list[Mechanism] = list(m.mechanisms)
    coll = _collective(m, collective)
    if coll is not None:
        mechs.append(coll)
    if m.get("job.recovery.requeue") is True and not any(x.mode == "crash" for x in mechs):
        e = m.entries["job.recovery.requeue"]
        mechs.append(Mechanism("crash", "Slurm requeue (node marked DOWN)", value_of("slurm.slurmd_timeout"),
                               e.file, e.line, f"{e.source}{_at(e.file, e.line)}; {cite('slurm.slurmd_timeout')}"))
    for mode, fact, none_why in (
        ("crash", "job.recovery.crash_detection",
         "no launcher (torchrun, ft_launcher) watches the ranks and no scheduler requeue is set "
         "in the job's files: nothing notices a crashed rank to restart it (see REC-01)"),
        ("hang", "job.recovery.hang_detection",
         "no collective timeout, heartbeat or watchdog is known for this job (not a PyTorch job "
         "spec-check can read)"),
    ):
        found = sorted((x for x in mechs if x.mode == mode), key=lambda x: x.seconds)
        notes = m.mode_notes.get(mode, [])
        if not found and mode == "hang" and m.torch and notes:
            # a PyTorch job whose only detector is switched off never notices a hang
            m.entries[fact] = Entry("unlimited", m.files[0] if m.files else None, None,
                                    "hang: nothing notices a hung rank; " + "; ".join(notes))
            continue
        if not found:
            m.entries[fact] = Entry(None, m.files[0] if m.files else None, None,
                                    "; ".join([none_why, *notes]), default=True)
            continue
        best = found[0]
        text = f"{mode}: {best.name}, {best.seconds:g} s ({best.origin})"
        others = [f"{x.name} {x.seconds:g} s" for x in found[1:]]
        if others:
            text += "; slower: " + ", ".join(others)
        if mode == "hang" and not best.name.startswith(("NVRx", "Megatron", "torchft", "NeMo")):
            text += "; no heartbeat watchdog configured"
        if notes:
            text += "; " + "; ".join(notes)
        m.entries[fact] = Entry(best.seconds, best.file, best.line, text)
