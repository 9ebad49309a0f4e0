"""Lightning's version folders (and MLflow runs of one experiment): which is a resume of the one before it.

Lightning's TensorBoardLogger and CSVLogger write each ``Trainer.fit`` into a new
``version_N`` folder unless told a version. A job restarted after a failure and resumed from
a checkpoint (``fit(ckpt_path=...)``) therefore writes its second part into ``version_1``,
and no step goes back inside any one folder: the restart is only seen across folders.

A folder is read as the resume of the folder before it (same logger, ``version_N-1`` or the
nearest earlier one holding metrics) when:

* its first metric step is past the start of training: more than one logging interval (the
  larger median step gap of the two folders), so not a new fit, which logs again from step
  0 (or its first interval: 9, 49); a resumed fit logs from the checkpoint's step on;
* and it began writing after the earlier folder's last scalar (two folders written at
  once are two runs, not a restart).

The checkpoint steps named in the run (Lightning's ``epoch=E-step=S.ckpt`` files, even where
the payload was removed) are cited beside it, and the launcher's failure line, when there is
one, is paired with the restart by ``recovery.incidents`` like any other. A new fit that
starts again at step 0 or within its first interval is never a restart, however it was
launched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from validator.runs.cadence import Restart, Stream

if TYPE_CHECKING:
    from validator.report.model import JSONValue

_VERSION = re.compile(r"version_(\d+)")
_CKPT_STEP = re.compile(r"(?:^|[-_=])step[=_-]?(\d+)")


@dataclass(frozen=True)
class Decision:
    """How one version folder was read against the one before it (for the run's listing)."""

    folder: str
    after: str
    first_step: int | None
    resumed: bool
    why: str

    def as_json(self) -> dict[str, JSONValue]:
        return {"folder": self.folder, "after": self.after, "first_step": self.first_step,
                "read_as": "resumed from a checkpoint (a restart)" if self.resumed else "a separate fit",
                "why": self.why}


def _version_key(s: Stream) -> tuple[tuple[str, str, str], float] | None:
    """(logger root, file name, kind) and the order in it: N for a stream inside
    ``.../version_N/``; for an MLflow run, its experiment folder and its first wall time (HF's
    MLflowCallback starts a new run in the same experiment when a job is started again)."""
    p = Path(s.name)
    if s.kind == "mlflow":
        return ((str(p.parent), "", s.kind), s.first_wall) if s.first_wall is not None else None
    folder, tail = (p, "") if s.kind == "tensorboard" else (p.parent, p.name)
    m = _VERSION.fullmatch(folder.name)
    if m is None:
        return None
    return (str(folder.parent), tail, s.kind), int(m.group(1))


def _label(s: Stream) -> str:
    p = Path(s.name)
    if s.kind == "mlflow":
        return f"MLflow run {p.name[:12]}"
    return p.name if s.kind == "tensorboard" else p.parent.name


def checkpoint_steps(files: list[str]) -> list[int]:
    """Steps named by checkpoint files (``epoch=3-step=40.ckpt``, ``step_40.ckpt``)."""
    out = set()
    for f in files:
        name = Path(f).name
        if not name.endswith((".ckpt", ".pt", ".pth")):
            continue
        m = _CKPT_STEP.search(name)
        if m is not None and len(m.group(1)) <= 12:
            out.add(int(m.group(1)))
    return sorted(out)


def _decide(prev: Stream, nxt: Stream, ckpts: list[int]) -> tuple[Restart | None, str]:
    fm = nxt.first_metric
    if fm is None:
        return None, "no metric with a step in it"
    tag, first, wall = fm
    top = prev.top_step
    interval = max(prev.step_interval() or 1, nxt.step_interval() or 1)
    pv, nv = _label(prev), _label(nxt)
    where = ("a new MLflow run of the same experiment" if nxt.kind == "mlflow" else
             "a new version folder")
    if first <= interval:
        return None, (f"its first step {first} is within one logging interval ({interval} steps) of step 0: "
                      f"a new fit, not a resume")
    if wall is not None and prev.last_wall is not None and wall < prev.last_wall:
        return None, f"it was written while {pv} was still being written: two runs at once, not a restart"
    before = [c for c in ckpts if c < first]
    ck = f"; checkpoint at step {before[-1]} in the run" if before else ""
    last = f"{pv}'s last step {top}" if top is not None else f"{pv} holds no step"
    who = "" if nxt.kind == "mlflow" else "Lightning "
    seen = (f"{who}resumed into {where}: {nv} starts at step {first} ({tag}), "
            f"continuing {last} (more than one logging interval, {interval} steps, past step 0){ck}")
    r = Restart(tag, top, first, prev.last_wall, wall, seen=seen)
    return r, seen


def link(streams: list[Stream], files: list[str]) -> list[Decision]:
    """Each Lightning version folder read against the one before it; a resume becomes a
    ``Restart`` on the new folder's stream (its first emission), so that REC-02 times it."""
    groups: dict[tuple[str, str, str], list[tuple[float, Stream]]] = {}
    for s in streams:
        k = _version_key(s)
        if k is not None:
            groups.setdefault(k[0], []).append((k[1], s))
    ckpts = checkpoint_steps(files)
    out: list[Decision] = []
    for members in groups.values():
        members.sort(key=lambda m: m[0])
        prev: Stream | None = None
        for _, s in members:
            if prev is not None and s.first_metric is not None:
                r, why = _decide(prev, s, ckpts)
                if r is not None:
                    s.restarts.insert(0, r)
                out.append(Decision(s.name, prev.name, s.first_metric[1], r is not None, why))
            if s.scalars:
                prev = s
    return out
