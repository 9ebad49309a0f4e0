"""Measured recovery from training logs (``spec-check lint --recovery-log FILE``): REC-02.

REC-02 bounds the time from a GPU failure to resumed training (``recovery_bound``). A
config can only say whether recovery is *possible*; a log of a real failure says how long
it *took*. This module reads one or more logs and finds incidents:

* a **failure**: the first line of one (later failure lines before training resumes are
  the same incident's cascade): torch elastic's ``failed (exitcode: N) local_rank: ...``
  (``torch.distributed.elastic.multiprocessing.api``) and ``Worker group FAILED`` (the
  agent), the NCCL watchdog's ``Watchdog caught collective operation timeout``, ``CUDA
  error``, an NVIDIA ``NVRM: Xid (PCI:...)`` line;
* the **resume**: the first training-step line after it that shows a restart (a restart
  marker after the failure, or a step number not past the last one before it; a
  straggling rank's next step is not a resume). The spec says resumed *training*, so a
  rendezvous or a checkpoint load ends no incident by itself: Megatron-LM's
  ``iteration N/ M |`` (also NeMo's ``iteration N/M |``), torchtitan's ``step: N  loss:``,
  HF Trainer's ``{'loss': ...}`` dict line.

Only lines with a timestamp are timed (others are passed over): ``[2024-05-01
12:00:00,123]`` (torch elastic before 2.4, Megatron ``[2024-05-01 12:00:00]``), ISO
``2024-05-01 12:00:00,123`` / ``2024-05-01T12:00:00.123Z`` anywhere near the start of the
line (after ``[rank0]:[titan] `` or an ``srun -l`` label), and glog's ``E0724
20:47:36.140000`` (torch >= 2.4, ProcessGroupNCCL), which has no year: it takes the year
of the nearest dated line before it in the same file (else the file's first dated line).
Times with an offset (``Z``, ``+02:00``) are converted to UTC; others are taken as
written, so logs of one run should share one clock.

The events of all logs are merged in time order, so a restart that writes a new log file
(Slurm requeue, a torchrun attempt directory) still pairs with the failure before it.
A failure not followed by a step line is "not resumed in these logs": an error value,
never a pass. A log that cannot be read is an error item naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from validator.facts.document import Fact, error, item, items, value
from validator.lazy import Pattern

# a log is read whole; real logs are often larger than a config (source.MAX_BYTES), so the
# cap is higher, and a bigger log is an error naming how to cut the excerpt around a failure
MAX_LOG_BYTES = 64 * 1024 * 1024
HEAD = 96  # a timestamp is looked for in the first characters of a line only

NOT_GIVEN = "no training log given (--recovery-log FILE)"
MAX_INCIDENTS = 200  # failures measured per run; real excerpts hold a handful

_ANSI = Pattern(r"\x1b\[[0-9;]*[A-Za-z]")
ISO_TIME = Pattern(
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?"
)
# glog: severity letter, MMDD, time; at line start or after "[rank0]:[" / ":" / space
_GLOG = Pattern(r"(?:^|[\[:\s])[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d+)\b")

FAILURE = Pattern(
    r"failed \(exitcode: -?\d+\)"
    r"|Worker group FAILED"
    r"|\[\w+\] Worker group failed"
    r"|Watchdog caught collective operation timeout"
    r"|CUDA error"
    r"|\bNVRM: Xid \(|\bXid \(PCI:"
)
STEP = Pattern(
    r"\biteration\s+\d+\s*/\s*\d+\s*\|"      # Megatron-LM, NeMo
    r"|(?<!validate )\bstep:\s*\d+\s+loss:"  # torchtitan (not its validation line)
    r"|\{'loss': "                           # HF Trainer's logged dict
)


# the job restarted: torch elastic's agent, checkpoint loads (Megatron, torchtitan), HF
# Trainer's resume. Used only to tell a resumed step from a straggler's last step.
RESTART = Pattern(
    r"Rendezvous complete for workers|Starting worker group"
    r"|[Ll]oading (?:the )?checkpoint|successfully loaded checkpoint"
    r"|Continuing training from"
)
_STEP_NO = Pattern(r"\biteration\s+(\d{1,18})\s*/|\bstep:\s*(\d{1,18})\b")  # 18: int() stays small


class LogError(Exception):
    """A log that cannot be read: the message names the problem (the caller the file)."""


@dataclass(frozen=True)
class Event:
    time: datetime
    file: str
    line: int
    text: str
    failure: bool
    step: int | None = None  # the training step a step line names (None: HF's dict line)
    restart: bool = False  # a restart marker, not a step
    timed: bool = True  # False: an untimed failure line, placed at the last timed line before it


def read_log(path: Path) -> str:
    """The log's text: a regular file of UTF-8 text, at most MAX_LOG_BYTES (the same bounded
    read as a config's, with a higher cap)."""
    from validator.io.source import ReadError, read_text

    try:
        return read_text(path, cap=MAX_LOG_BYTES, what="training log",
                         too_big="pass the part around the failure "
                                 "(e.g. grep -n -A5000 'exitcode' LOG > excerpt.log)")
    except ReadError as exc:
        raise LogError(f"line {exc.line}: {exc.message}" if exc.line else exc.message) from None


def _fraction(digits: str | None) -> int:
    """Microseconds of a fraction written with any number of digits (glog writes 9)."""
    return int((digits or "0")[:6].ljust(6, "0"))


class _BadTime(ValueError):
    """A timestamp Python cannot hold: an offset of a day or more, a year past 9999 in UTC."""


def _iso(m: re.Match[str]) -> datetime | None:
    y, mo, d, h, mi, s, frac, tz = m.groups()
    try:
        t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), _fraction(frac))
    except ValueError:
        return None
    if tz:
        off = timedelta(0)
        if tz != "Z":
            sign = -1 if tz[0] == "-" else 1
            hh, mm = tz[1:3], tz[-2:]
            off = sign * timedelta(hours=int(hh), minutes=int(mm))
        try:
            t = (t.replace(tzinfo=timezone(off)).astimezone(timezone.utc)).replace(tzinfo=None)
        except (ValueError, OverflowError) as exc:
            raise _BadTime(f'timestamp "{m.group(0)}" cannot be held ({exc})'[:200]) from None
    return t


def events(text: str, file: str) -> list[Event]:
    """The timestamped failure and step lines of one log, in file order."""
    out: list[Event] = []
    year: int | None = None
    first_dated = ISO_TIME.search(text)
    fallback_year = int(first_dated.group(1)) if first_dated else 2000  # 2000: has Feb 29
    last: datetime | None = None  # an untimed line comes after the last timed line
    pending: list[tuple[int, str]] = []  # restart markers before the file's first timed line
    for n, raw in enumerate(text.splitlines(), 1):
        line = _ANSI.sub("", raw) if "\x1b" in raw else raw
        is_failure = FAILURE.search(line) is not None
        is_step = not is_failure and STEP.search(line) is not None
        is_restart = not is_failure and not is_step and RESTART.search(line) is not None
        head = line[:HEAD]
        t: datetime | None = None
        m = ISO_TIME.search(head)
        if m is not None:
            try:
                t = _iso(m)
            except _BadTime as exc:
                if is_failure or is_step:  # a time the measurement would rest on: say so
                    raise LogError(f"line {n}: {exc}") from None
                t = None
            if t is not None:
                year = t.year
        elif is_failure or is_step:
            g = _GLOG.search(head)
            if g is not None:
                mo, d, h, mi, s, frac = g.groups()
                try:
                    t = datetime(year or fallback_year, int(mo), int(d), int(h), int(mi),
                                 int(s), _fraction(frac))
                except ValueError:
                    t = None
        text_ = line.strip()[:160]
        if t is not None:
            last = t
            # a requeued run's "loading checkpoint" before its first timed line: it happened
            # before this line, and the file order keeps it first among equal times
            out += [Event(t, file, k, txt, False, restart=True) for k, txt in pending]
            pending = []
        if is_restart:
            if last is None:
                pending.append((n, text_))
            else:
                out.append(Event(last, file, n, text_, False, restart=True))
            continue
        if is_failure and t is None:
            # untimed (a format this reader does not date, or a cascade's traceback line):
            # placed at the last timed line, which only lengthens the measured recovery;
            # with none before it, the failure cannot be timed at all (an error, never a skip)
            out.append(Event(last or datetime.min, file, n, text_, True, timed=last is not None))
            continue
        if t is None or not (is_failure or is_step):
            continue
        step = None
        if is_step:
            m_no = _STEP_NO.search(line)
            step = int(m_no.group(1) or m_no.group(2)) if m_no else None
        out.append(Event(t, file, n, text_, is_failure, step))
    return out


def incidents(evs: list[Event]) -> list[tuple[Event, Event | None]]:
    """(failure, resume or None) pairs over events merged in time order. Failure lines
    before the resume belong to the first failure's incident (the cascade of one fault).

    A step line after a failure is the resume only if training visibly restarted: a restart
    marker came after the failure, or the step is below the last step before it (the job
    went back to a checkpoint). A surviving rank's straggling step (the same or the next
    step number, before anything restarted) would otherwise end the incident early and
    pass it."""
    out: list[tuple[Event, Event | None]] = []
    open_: Event | None = None
    restarted = False
    top: int | None = None  # the highest step number seen outside an open incident
    for e in sorted(evs, key=lambda e: e.time):  # stable: file order among equal times
        if e.failure:
            if open_ is None:
                open_, restarted = e, False
        elif e.restart:
            restarted = restarted or open_ is not None
        elif open_ is None:
            top = e.step if e.step is not None and (top is None or e.step > top) else top
        elif restarted or (e.step is not None and top is not None and e.step < top):
            out.append((open_, e))
            open_ = None
            top = e.step if e.step is not None else top
    if open_ is not None:
        out.append((open_, None))
    return out


def _where(e: Event) -> str:
    return f"{e.file}:{e.line}"


def measured(paths: list[Path]) -> Fact:
    """``job.recovery.measured``: one item per incident (seconds from failure to the first
    training step after it), at the failure line; a log that cannot be read is an error
    item of its own, so the other logs still count."""
    if not paths:
        return value(None, source=NOT_GIVEN)
    members: list[Fact] = []
    evs: list[Event] = []
    for p in paths:
        try:
            evs += events(read_log(p), str(p))
        except LogError as exc:
            members.append(item(str(p), {"recovery": error(f"{p}: {exc}", source=str(p))}))
    untimed = [e for e in evs if not e.timed]
    if len(untimed) > MAX_INCIDENTS:
        rest = error(f"{len(untimed) - MAX_INCIDENTS} more untimed failures after {_where(untimed[MAX_INCIDENTS])} "
                     f"not measured (more than {MAX_INCIDENTS} in the logs)", source=untimed[MAX_INCIDENTS].text)
        members.append(item(f"{_where(untimed[MAX_INCIDENTS])} and later", {"recovery": rest}))
        evs = [e for e in evs if e.timed] + untimed[:MAX_INCIDENTS]
    for e in evs:
        if not e.timed:
            rec0 = error(f"a failure at {_where(e)} has no timestamp this reader knows, and no timed "
                         f"line comes before it: its recovery cannot be measured", source=e.text)
            rec0["location"] = {"file": e.file, "line": e.line}
            members.append(item(_where(e), {"recovery": rec0}))
    found = incidents([e for e in evs if e.timed])
    if len(found) > MAX_INCIDENTS:  # each is a finding: 10,000 of them took minutes to render
        first = found[MAX_INCIDENTS]
        more = error(f"{len(found) - MAX_INCIDENTS} more failures after {_where(first[0])} not measured "
                     f"(more than {MAX_INCIDENTS} in the logs: cut an excerpt around the failures "
                     "that matter)", source=first[0].text)
        members.append(item(f"{_where(first[0])} and later", {"recovery": more}))
        found = found[:MAX_INCIDENTS]
    for fail, resume in found:
        loc = {"file": fail.file, "line": fail.line}
        fields: dict[str, Fact] = {"failure": value(fail.text, location=loc)}
        if resume is None:
            rec: Fact = error(f"not resumed in the log(s): no timestamped training step after "
                              f"the failure at {_where(fail)}", source=fail.text)
            rec["location"] = loc
        else:
            secs = (resume.time - fail.time).total_seconds()
            src = f"{fail.text} -> resumed {_where(resume)}: {resume.text}"
            if secs < 0:  # not reachable after sorting; kept as a guard, never a pass
                rec = error("resumed step before the failure", source=src)
                rec["location"] = loc
            else:
                rec = value(round(secs, 3), unit="sec", source=src, location=loc)
            fields["resumed"] = value(resume.text, location={"file": resume.file,
                                                             "line": resume.line})
        fields["recovery"] = rec
        members.append(item(_where(fail), fields))
    return items(members, source=", ".join(str(p) for p in paths))
