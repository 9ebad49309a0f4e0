"""Per metric family, how often a run emitted it: one streaming pass, bounded memory.

A *stream* is one source of scalars read in its own order (a TensorBoard run folder's event
files in name order, one CSV, one JSON-lines file, one MLflow run). Each scalar is
``(name, step, wall time or None, value)``.

* **An emission** of a family is a step at which any of its names was logged: names logged
  at the same step (HF's loss and grad_norm, Lightning's per-parameter grad norms) are one
  emission.
* **Gaps** between consecutive emissions, in steps and in seconds, go into histograms
  (exact for steps up to 1000; three significant digits above and for seconds), so the median and p95 cost the
  same memory after ten steps as after ten million.
* **A restart** is a name whose step goes back, or a metric family's name whose step repeats
  after more than ``SAME_STEP_RESTART_S`` (HF logs ``epoch`` twice at the last step within
  milliseconds, Lightning logs it again after a validation loop; a resumed job logs its loss
  at step 110 again 13 s later). The gap across a restart is recovery
  (REC-02), not a metrics gap: cadence starts again after it.
* **A stall** is a gap of at least ``STALL_FACTOR`` times the family's median and
  ``STALL_MIN_S`` seconds; the ``KEEP`` longest gaps are kept to name them.
* **Non-finite** loss or gradient-norm values are counted, the first few kept with step
  and time.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass, field

from validator.runs.families import MUST_BE_FINITE, Classifier

STALL_FACTOR = 10.0
STALL_MIN_S = 5.0
SAME_STEP_RESTART_S = 1.0
KEEP = 10  # longest gaps kept per family (stall candidates)
MAX_NONFINITE_KEPT = 5
MAX_RESTARTS = 200
MAX_TAGS = 50_000  # names followed for restarts per stream; more are counted, not followed


def _q3(x: float) -> float:
    """x to three significant digits: the wall-gap histogram's bucket (0.5 % at worst)."""
    if x <= 0.0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(x)) - 2)
    return round(x / scale) * scale


def _quantile(counts: Counter[float], q: float) -> float | None:
    total = sum(counts.values())
    if not total:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for k in sorted(counts):
        seen += counts[k]
        if seen >= rank:
            return k
    return None  # not reached


@dataclass(frozen=True)
class Gap:
    seconds: float | None
    step_from: int | None
    step_to: int | None
    wall_from: float | None
    wall_to: float | None


@dataclass(frozen=True)
class Restart:
    tag: str
    step_before: int | None  # the highest step emitted before it
    step_after: int
    wall_before: float | None  # the last emission before it
    wall_after: float | None  # the first emission after it
    marker: str = ""  # how it was seen when no step went back: the writer's own restart marker
    seen: str = ""  # how it was seen, in full, when neither (a Lightning resume into a new version folder)


# A reader yields this name (by identity) for a writer's own restart marker: TensorBoard's
# SessionLog START, which torch's and tensorboardX's SummaryWriter write at ``purge_step`` when
# a job resumes from a checkpoint (TensorBoard then drops the earlier events from that step).
# A SIGKILL loses the writer's unflushed events, so the resumed steps may all lie above the
# last step on disk: the marker is then the only sign of the restart in the metrics.
RESTART_MARK = "\x00SessionLog START"


@dataclass
class Family:
    name: str
    framework: str
    tags: list[str] = field(default_factory=list)
    tag_count: int = 0
    emissions: int = 0
    first_step: int | None = None
    last_step: int | None = None
    last_wall: float | None = None
    gen: int = 0
    step_gaps: Counter[int] = field(default_factory=Counter)
    wall_gaps: Counter[float] = field(default_factory=Counter)
    longest: list[tuple[float, int, Gap]] = field(default_factory=list)  # a min-heap of KEEP
    nonfinite: list[tuple[str, int | None, float | None, float]] = field(default_factory=list)
    nonfinite_count: int = 0
    _n: int = 0

    def observe(self, step: int | None, wall: float | None, gen: int) -> None:
        if gen != self.gen:  # a restart since the last emission: cadence starts again
            self.gen = gen
            self.last_step = self.last_wall = None
        elif step is not None and step == self.last_step:
            return  # another name of the same emission
        self.emissions += 1
        if self.first_step is None:
            self.first_step = step
        if step is not None and self.last_step is not None and step > self.last_step:
            d = step - self.last_step  # exact up to 1000 steps, 3 significant digits above
            self.step_gaps[d if d <= 1000 else int(_q3(d))] += 1
        if wall is not None and self.last_wall is not None and wall >= self.last_wall:
            g = wall - self.last_wall
            self.wall_gaps[_q3(g)] += 1
            if len(self.longest) < KEEP or g > self.longest[0][0]:
                self._n += 1
                item = (g, self._n, Gap(g, self.last_step, step, self.last_wall, wall))
                if len(self.longest) < KEEP:
                    heapq.heappush(self.longest, item)
                else:
                    heapq.heapreplace(self.longest, item)
        self.last_step = step if step is not None else self.last_step
        self.last_wall = wall if wall is not None else self.last_wall

    # summaries -------------------------------------------------------------------------
    def step_gap(self, q: float) -> float | None:
        return _quantile(self.step_gaps, q)  # type: ignore[arg-type]

    def wall_gap(self, q: float) -> float | None:
        return _quantile(self.wall_gaps, q)

    def max_gap(self) -> Gap | None:
        return max(self.longest)[2] if self.longest else None

    def stall_count(self) -> int:
        """How many gaps were stalls, kept or not (from the histogram: 3 significant digits)."""
        med = self.wall_gap(0.5)
        if med is None:
            return 0
        bound = max(STALL_FACTOR * med, STALL_MIN_S)
        return sum(n for k, n in self.wall_gaps.items() if k >= _q3(bound))

    def stalls(self) -> list[Gap]:
        med = self.wall_gap(0.5)
        if med is None:
            return []
        bound = max(STALL_FACTOR * med, STALL_MIN_S)
        return sorted((g for s, _, g in self.longest if s >= bound), key=lambda g: g.wall_from or 0.0)


class Stream:
    """One source's scalars, fed in its own order by ``add``."""

    def __init__(self, name: str, kind: str, classify: Classifier | None = None) -> None:
        self.name = name
        self.kind = kind
        self.classify = classify or Classifier()
        self.families: dict[str, Family] = {}
        self.restarts: list[Restart] = []
        self.restarts_dropped = 0
        self.scalars = 0
        self.timed = 0  # scalars with a wall time
        self.untracked = 0
        self.first_wall: float | None = None
        # the first metric emission (a name of a family) with a step: (name, step, wall); a
        # Lightning version folder resumed from a checkpoint starts here (validator/runs/versions.py)
        self.first_metric: tuple[str, int, float | None] | None = None
        self._tags: dict[str, list[float | int | None]] = {}  # name -> [last step, gen, last wall]
        self._gen = 0
        self._top: int | None = None
        self._last_wall: float | None = None
        self._jump: tuple[float, float] | None = None  # the latest pause: (wall before, wall after)
        self._marked: tuple[int | None, float | None, int | None] | None = None  # (top, last wall, step)

    def add(self, tag: str, step: int | None, wall: float | None, value: float) -> None:
        if tag is RESTART_MARK:
            self._mark(step)
            return
        self.scalars += 1
        if wall is not None:
            self.timed += 1
            if self.first_wall is None:
                self.first_wall = wall
            elif self._last_wall is not None and wall - self._last_wall > SAME_STEP_RESTART_S:
                self._jump = (self._last_wall, wall)
        m = self.classify(tag)
        if step is not None:
            st = self._tags.get(tag)
            if st is None:
                if len(self._tags) < MAX_TAGS:
                    self._tags[tag] = [step, self._gen, wall]
                else:
                    self.untracked += 1
            else:
                last = st[0]
                # a repeated step is a restart only for a metric's name: Lightning logs "epoch"
                # again at the same step after a validation loop, a resumed job logs its loss again
                back = last is not None and (step < last or (
                    m is not None and step == last and wall is not None and st[2] is not None
                    and wall - st[2] > SAME_STEP_RESTART_S))
                if back and st[1] == self._gen:
                    self._gen += 1
                    self._restart(tag, step, wall, st[2])
                st[0], st[1], st[2] = step, self._gen, wall
            if self._top is None or step > self._top:
                self._top = step
        if m is not None:
            fam = self.families.get(m.family)
            if fam is None:
                fam = self.families[m.family] = Family(m.family, m.framework)
            if fam.tag_count < 1000 and tag not in fam.tags:
                fam.tag_count += 1
                if len(fam.tags) < 5:
                    fam.tags.append(tag)
            if m.family in MUST_BE_FINITE and not math.isfinite(value):
                fam.nonfinite_count += 1
                if len(fam.nonfinite) < MAX_NONFINITE_KEPT:
                    fam.nonfinite.append((tag, step, wall, value))
            if self.first_metric is None and step is not None:
                self.first_metric = (tag, step, wall)
            if self._marked is not None and step is not None:
                self._marked_restart(tag, step, wall)
            fam.observe(step, wall, self._gen)
        if wall is not None:
            self._last_wall = wall

    @property
    def top_step(self) -> int | None:
        """The highest step emitted (since the last restart)."""
        return self._top

    @property
    def last_wall(self) -> float | None:
        """The wall time of the last scalar read."""
        return self._last_wall

    def step_interval(self) -> int | None:
        """The median step gap of the family emitted most often: the logging interval."""
        fams = sorted(self.families.values(), key=lambda f: -f.emissions)
        for f in fams:
            g = f.step_gap(0.5)
            if g is not None:
                return int(g)
        return None

    def _mark(self, step: int | None) -> None:
        """A writer's restart marker: a restart when something was emitted before it (a new
        run's first file may begin with one too), timed from the last scalar before it to
        the first metric emitted after it. A name whose step then goes back is the same
        restart, not another (the generation moves on here)."""
        if self._top is None and self._last_wall is None:
            return
        self._gen += 1
        self._marked = (self._top, self._last_wall, step)

    def _marked_restart(self, tag: str, step: int, wall: float | None) -> None:
        top, before, at = self._marked or (None, None, None)
        self._marked = None
        if len(self.restarts) >= MAX_RESTARTS:
            self.restarts_dropped += 1
        else:
            self.restarts.append(Restart(tag, top, step, before, wall,
                                         marker=f"TensorBoard SessionLog START at step {at}"))
        self._top = step

    def _restart(self, tag: str, step: int, wall: float | None, tag_wall: float | None) -> None:
        """A restart seen at ``tag``: timed from the pause before it (the last scalar before
        the wall-time jump, the first after it) when the pause came after this name's previous
        emission, since the restarted job may log other names first (Lightning's device stats
        before its loss); else from the scalar before this one."""
        before, after = self._last_wall, wall
        if self._jump is not None and tag_wall is not None and self._jump[0] >= tag_wall:
            before, after = self._jump
        if len(self.restarts) >= MAX_RESTARTS:
            self.restarts_dropped += 1
        else:
            self.restarts.append(Restart(tag, self._top, step, before, after))
        self._top = step
