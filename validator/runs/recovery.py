"""REC-02 from a run: each failure paired with the first training step emitted after the
restart, timed by the metrics' own wall times.

A launcher's failure line (``validator.jobs.recovery_log``: torch elastic's ``failed
(exitcode: N)``, the NCCL watchdog, a CUDA error, an Xid) gives the failure's time; the
metric streams give the restart: a name whose step goes back (or repeats after a pause),
with the wall time of the first emission after it. The first restart whose first emission
comes after the failure ends the incident; later failure lines before it are the same
incident's cascade.

Clocks: a metric's wall time is Unix time. A launcher line's time is taken as UTC unless it
carries an offset; glog's ``E1127 02:36:13.956`` has no year, so where the log has no dated
line at all the year is the one that puts it nearest the run's metrics (a log read alone,
with ``--recovery-log``, keeps recovery_log's own rule). Both are said in the evidence.

A restart with no failure line still counts: its recovery is measured from the last
emission before it to the first after it, which includes the time before the failure (an
upper bound), and the evidence says so. A failure with no restart after it in the metrics
falls back to the log's own timed step lines; with none, it is "not resumed", an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from validator.runs.cadence import Restart, Stream

if TYPE_CHECKING:
    from validator.jobs.recovery_log import Event


@dataclass(frozen=True)
class Incident:
    failure: Event | None  # None: a restart seen only in the metrics
    failure_time: float | None
    restart: Restart | None
    stream: Stream | None
    log_resume: Event | None = None  # when the log alone shows the resume
    year_from_metrics: bool = False

    @property
    def seconds(self) -> float | None:
        if self.restart is not None and self.restart.wall_after is not None:
            start = self.failure_time if self.failure is not None else self.restart.wall_before
            return None if start is None else self.restart.wall_after - start
        if self.log_resume is not None and self.failure is not None:
            return (self.log_resume.time - self.failure.time).total_seconds()
        return None


def _unix(t: datetime) -> float:
    return t.replace(tzinfo=timezone.utc).timestamp()


def _fix_year(t: datetime, near: float) -> datetime:
    """The year (of three around the metrics' own) that puts ``t`` nearest ``near``."""
    y = datetime.fromtimestamp(near, tz=timezone.utc).year
    best = t
    for cand in (y - 1, y, y + 1):
        try:
            c = t.replace(year=cand)
        except ValueError:  # Feb 29
            continue
        if best is t or abs(_unix(c) - near) < abs(_unix(best) - near):
            best = c
    return best


def _merged(restarts: list[tuple[Restart, Stream]]) -> list[tuple[Restart, Stream]]:
    """One restart seen by several streams (the event files and a JSON-lines log of the same
    job) is one: restarts whose pauses (last emission before to first after) overlap are
    merged, keeping the stream that saw the job resume first."""
    out: list[tuple[Restart, Stream]] = []
    for r, s in restarts:  # by wall_after
        if out:
            prev = out[-1][0]
            lo = r.wall_before if r.wall_before is not None else r.wall_after
            if lo is not None and prev.wall_after is not None and lo <= prev.wall_after:
                continue
        out.append((r, s))
    return out


def incidents(log_events: list[Event], dated: dict[str, bool], streams: list[Stream]) -> list[Incident]:
    from validator.jobs.recovery_log import incidents as log_incidents

    timed = [s for s in streams if s.timed]
    restarts = _merged(sorted(((r, s) for s in timed for r in s.restarts if r.wall_after is not None),
                              key=lambda rs: rs[0].wall_after or 0.0))
    near = min((s.first_wall for s in timed if s.first_wall is not None), default=None)
    # restarts in metrics with no wall time (a Lightning metrics.csv): they show that the job
    # resumed, not when; used only where the timed metrics and the log show no resume
    untimed = [(r, s) for s in streams if not s.timed for r in s.restarts] if not restarts else []
    fails = []
    for e in log_events:
        if not e.failure or not e.timed:
            continue
        fixed = near is not None and not dated.get(e.file, True)
        when = _fix_year(e.time, near) if fixed and near is not None else e.time
        fails.append((e, _unix(when), fixed))
    fails.sort(key=lambda f: f[1])
    out: list[Incident] = []
    used: set[int] = set()
    open_unresumed = False
    for e, t, fixed in fails:
        hit = next(((i, r, s) for i, (r, s) in enumerate(restarts) if (r.wall_after or 0.0) > t), None)
        if hit is not None:
            i, r, s = hit
            if i in used:
                continue  # a cascade line of an incident already paired
            used.add(i)
            out.append(Incident(e, t, r, s, year_from_metrics=fixed))
            open_unresumed = False
            continue
        if open_unresumed:
            continue
        # no restart in the metrics: the log's own timed step lines may show the resume
        resume = None
        for f, rs in log_incidents([x for x in log_events if x.timed]):
            if f is e or (f.file == e.file and f.line == e.line):
                resume = rs
                break
        if resume is None and untimed:  # resumed, as metrics with no wall time show: not timed
            r, s = untimed.pop(0)
            out.append(Incident(e, t, r, s, year_from_metrics=fixed))
            continue
        out.append(Incident(e, t, None, None, log_resume=resume, year_from_metrics=fixed))
        open_unresumed = resume is None
    for i, (r, s) in enumerate(restarts):
        if i not in used:
            out.append(Incident(None, None, r, s))
    # a restart in metrics with no wall time and no failure line: the job restarted, and
    # how long it took is unknown (an error, never a skip as if nothing happened)
    out += [Incident(None, None, r, s) for r, s in untimed]
    return out
