"""The job facts a run shows, for the rule pack to judge (MON-01, MON-02, REC-02).

* ``job.metrics.<family>`` (MON-01, v1.1's four families): ``emitted`` when some stream of
  the run logged a name of the family (the source names the name, the framework row of
  tags.yaml with its version, and the file); ``not emitted`` when none did; an error when a
  metric file could not be read to the end (the family may be in the part not read).
  These replace what the job's config declared: what the job did outweighs what it says.
* ``job.metrics.measured`` (MON-02): one item per family emitted, from the stream that
  shows it best (with wall times, then the most emissions): step and wall-clock gaps
  (median, p95, the longest with its steps and times), stalls, non-finite values. A metric
  file that could not be read is an error item at its file and line.
* ``job.recovery.measured`` (REC-02): one item per incident (``recovery.incidents``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from validator.facts.document import Fact, error, item, items, value
from validator.runs.cadence import Family, Gap, Stream
from validator.runs.families import EVAL_ONLY, INTERVAL_SETTING, MON01, THROUGHPUT_SETTING, setting_for
from validator.runs.measure import AS, RunEvidence
from validator.runs.recovery import Incident, incidents
from validator.values.units import format_value

if TYPE_CHECKING:
    from validator.report.model import JSONValue
    from validator.runs.readers import RunFileError

NOT_GIVEN = "no run given (lint --run DIR)"
MIN_GAPS_P95 = 20  # a source with fewer gaps has no p95 worth comparing (its own item still has one)


def _utc(t: float | None) -> str:
    if t is None:
        return "?"
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _num(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _best(ev: RunEvidence, fam: str) -> tuple[Stream, Family] | None:
    best = None
    for s in ev.streams:
        f = s.families.get(fam)
        if f is None:
            continue
        key = (s.timed > 0, f.emissions)
        if best is None or key > best[0]:
            best = (key, s, f)
    return None if best is None else (best[1], best[2])


def _cut(items: Sequence[str], n: int, total: int | None = None) -> str:
    """The first ``n`` of a list, and how many more there are: a cut list always says so."""
    total = len(items) if total is None else total
    more = f" and {total - n} more" if total > n else ""
    return ", ".join(items[:n]) + more


def _names(f: Family, n: int = 3) -> str:
    """The family's names and whose names they are: a framework's (with the version its names
    were read at) or a generic pattern's."""
    who = "a generic name pattern" if f.framework == "any framework" else f"as {f.framework} names it"
    return f"{_cut(f.tags, n, max(f.tag_count, len(f.tags)))} ({who})"


def throughput_hint(ev: RunEvidence) -> str:
    """The setting that makes the run's framework log training throughput per logging step."""
    fws = {f.framework for s in ev.streams for f in s.families.values()}
    hints = [h for fw, h in THROUGHPUT_SETTING.items() if any(x.startswith(fw) for x in fws)]
    return "; ".join(hints) if hints else THROUGHPUT_SETTING["any framework"]


def _errors_note(ev: RunEvidence) -> str:
    e = ev.errors[0]
    more = f" (and {len(ev.errors) - 1} more)" if len(ev.errors) > 1 else ""
    return f"{e.where()}: {e.message}{more}"


def mon01(ev: RunEvidence) -> dict[str, Fact]:
    """``job.metrics.<family>`` for MON-01's four families, always: a run that holds no metric
    file (a launcher log alone) leaves each family unknown, an error, never absent."""
    out: dict[str, Fact] = {}
    if not ev.streams and not ev.errors:
        logs = [str(r["file"]) for r in ev.read]
        held = f"only launcher/training logs ({_cut(logs, 3)})" if logs else "no file spec-check reads"
        for fam in MON01:
            out[f"job.metrics.{fam}"] = error(
                f"no {fam.replace('_', ' ')} metric can be judged: the run holds {held}, no metric file "
                f"(TensorBoard, metrics.csv, trainer_state.json, JSON lines, MLflow, DVCLive)",
                source="lint --run")
        return out
    names = sorted({t for s in ev.streams for f in s.families.values() for t in f.tags})
    evals = sorted({t for s in ev.streams for f in s.families.values() if f.name in EVAL_ONLY for t in f.tags})
    for fam, members in MON01.items():
        found = [(m, _best(ev, m)) for m in members]
        hit = next(((m, b) for m, b in found if b is not None), None)
        if hit is not None:
            m, (s, f) = hit
            what = "" if m == fam else f" ({m})"
            out[f"job.metrics.{fam}"] = value(
                "emitted",
                source=f"measured in the run{what}: {_names(f)}, "
                       f"{f.emissions} emissions in {s.name}",
                location={"file": s.name})
        elif ev.errors:
            out[f"job.metrics.{fam}"] = error(
                f"no {fam.replace('_', ' ')} metric in the part of the run that could be read; "
                f"{_errors_note(ev)}", source="lint --run")
        else:
            seen = f"; metric names of other families seen: {_cut(names, 6)}" if names else ""
            if fam == "gpu_utilization" and evals:
                seen += (f"; {_cut(evals, 3)} is evaluation throughput, measured at the evaluation "
                         f"cadence, not training's ({throughput_hint(ev)})")
            out[f"job.metrics.{fam}"] = value(
                "not emitted",
                source=f"the run's {len(ev.streams)} metric source(s) hold no name of this family "
                       f"(validator/runs/tags.yaml){seen}",
                location={"file": ev.streams[0].name} if ev.streams else None)
    if any(s.families.get("energy") for s in ev.streams):
        b = _best(ev, "energy")
        assert b is not None
        out["job.metrics.energy"] = value(True, source=f"measured in the run: {', '.join(b[1].tags[:3])} "
                                                       f"in {b[0].name}")
    return out


def _secs(x: float | None) -> str:
    """Seconds as every finding shows them (the engine's display unit: 29 ms, 59.5 s, 20.4 min):
    one unit rule for the observed value and the evidence beside it."""
    return "?" if x is None else format_value(x, "sec")


def _gap_text(g: Gap, med: float | None) -> str:
    times = _secs(g.seconds) if g.seconds is not None else "?"
    ratio = f", {g.seconds / med:.0f}x the median {_secs(med)}" if med and g.seconds is not None else ""
    return f"step {g.step_from} -> {g.step_to}: {times} from {_utc(g.wall_from)} to {_utc(g.wall_to)}{ratio}"


def _worst_p95(pairs: Sequence[tuple[Stream, Family]]) -> tuple[float | None, Stream | None]:
    """The longest p95 wall gap over the sources with enough gaps for a p95 (20), with its source."""
    best: tuple[float | None, Stream | None] = (None, None)
    for s, f in pairs:
        if not s.timed or sum(f.wall_gaps.values()) < MIN_GAPS_P95:
            continue
        q = f.wall_gap(0.95)
        if q is not None and (best[0] is None or q > best[0]):
            best = (q, s)
    return best


def _family_item(s: Stream, f: Family, others: Sequence[tuple[Stream, Family]] = (),
                 unread: dict[str, list[RunFileError]] | None = None) -> dict[str, JSONValue]:
    unread = unread or {}
    loc = {"file": s.name}
    every = [(s, f), *others]
    # a name any framework might log (train_loss) takes the setting of the framework whose own
    # names the same source logs (Lightning's device stats, HF's grad_norm)
    fw = f.framework if f.framework != "any framework" else next(
        (x.framework for x in s.families.values() if x.framework != "any framework"), f.framework)
    setting = setting_for(fw, INTERVAL_SETTING)
    src = f"{_names(f)} in {s.name}: {f.emissions} emissions; its interval is set by {setting}"
    med_w, p95_w = f.wall_gap(0.5), f.wall_gap(0.95)
    fields: dict[str, Fact] = {
        "emissions": value(f.emissions, source=src, location=loc),
        "tags": value(_cut(f.tags, len(f.tags), max(f.tag_count, len(f.tags)))),
        "source": value(s.name),
        "step_gap_median": value(_num(f.step_gap(0.5)), source=src, location=loc),
        "step_gap_p95": value(_num(f.step_gap(0.95)),
                              source=f"median {_num(f.step_gap(0.5))}, p95 {_num(f.step_gap(0.95))} steps "
                                     f"between emissions; {src}", location=loc),
    }
    no_time = f"{s.name} carries no wall time per emission"
    if s.timed:
        fields["wall_gap_median"] = value(_num(med_w), unit="sec", source=src, location=loc)
        # the p95 and the longest gap over every source of the family (several event-file
        # folders, ranks, --run folders): a long gap in any of them is the job's
        wp, ws = _worst_p95(every)
        if wp is not None and ws is not None and ws is not s and (p95_w is None or wp > p95_w):
            fields["wall_gap_p95"] = value(_num(wp), unit="sec", location={"file": ws.name},
                                           source=f"p95 {_secs(wp)} between emissions in {ws.name} (the "
                                                  f"longest p95 of the family's {len(every)} sources); {src}")
        else:
            fields["wall_gap_p95"] = value(_num(p95_w), unit="sec", location=loc,
                                           source=f"median {_secs(med_w)}, p95 {_secs(p95_w)} between "
                                                  f"emissions; {src}")
        gaps = [(g, s2, f2) for s2, f2 in every if s2.timed for g in (f2.max_gap(),) if g is not None]
        if gaps:
            g, gs, gf = max(gaps, key=lambda x: x[0].seconds or 0.0)
            where = "" if gs is s else f" in {gs.name}"
            fields["wall_gap_max"] = value(_num(g.seconds), unit="sec", location={"file": gs.name},
                                           source=_gap_text(g, gf.wall_gap(0.5)) + where
                                           + (f" (the longest of the family's {len(every)} sources)"
                                              if len(every) > 1 else "") + f"; {src}")
        else:
            fields["wall_gap_max"] = value(None, unit="sec", source=src, location=loc)
    else:
        fields["wall_gap_median"] = value(None, unit="sec", source=no_time)
        fields["wall_gap_p95"] = value(None, unit="sec", source=no_time)
        fields["wall_gap_max"] = value(None, unit="sec", source=no_time)
    # stalls and non-finite values are every stream's (a NaN that only rank 1's event files or
    # the second --run folder hold still fails), each once by its steps
    stalls: list[str] = []
    bad: list[str] = []
    seen_gaps: set[tuple[int | None, int | None]] = set()
    seen_bad: set[tuple[str, int | None]] = set()
    for k, (s2, f2) in enumerate(every):
        where = f" in {s2.name}" if k else ""
        med2 = med_w if k == 0 else f2.wall_gap(0.5)
        kept = f2.stalls()
        for g in kept:
            if (g.step_from, g.step_to) not in seen_gaps:
                seen_gaps.add((g.step_from, g.step_to))
                stalls.append(_gap_text(g, med2) + where)
        more = f2.stall_count() - len(kept)
        if more > 0:  # the longest KEEP gaps are kept by step; the rest are counted
            stalls.append(f"and {more} more{where}")
        new = 0
        for tag, step, wall, x in f2.nonfinite:
            if (tag, step) not in seen_bad:
                seen_bad.add((tag, step))
                new += 1
                bad.append(f"{tag} = {x} at step {step} ({_utc(wall) if wall is not None else 'no time'}){where}")
        if f2.nonfinite_count > len(f2.nonfinite) and (k == 0 or new):  # another stream's copy: said once
            bad.append(f"and {f2.nonfinite_count - len(f2.nonfinite)} more{where}")
    fields["stalls"] = value(stalls, source=src, location=loc)
    fields["nonfinite"] = value(bad, source=src, location=loc)
    cut = [e for s2, _ in ((s, f), *others) for e in unread.get(s2.name, [])]
    if cut and not bad:  # none in the part read, and a part could not be read: unknown, never a pass
        fields["nonfinite"] = error(f"none in the part read, but {cut[0].where()} could not be read past "
                                    f"it: {cut[0].message}", source=src)
    return item(f.name, fields)


def mon02(ev: RunEvidence) -> Fact:
    members: list[dict[str, JSONValue]] = []
    # evaluation throughput is logged at the evaluation cadence: not the metrics interval
    fams = sorted({name for s in ev.streams for name in s.families if name not in EVAL_ONLY})
    unread: dict[str, list[RunFileError]] = {}  # stream -> its files that could not be read to the end
    for s in ev.streams:
        unread[s.name] = [e for e in ev.errors if e.file == s.name or e.file.startswith(s.name.rstrip("/") + "/")]
    for fam in fams:
        b = _best(ev, fam)
        if b is not None:
            others = [(s, s.families[fam]) for s in ev.streams if fam in s.families and s is not b[0]]
            members.append(_family_item(*b, others, unread))
    for e in ev.errors:
        bad = error(f"{e.where()}: {e.message}", source=e.file)
        bad["location"] = {"file": e.file, "line": e.line}
        members.append(item(e.where(), {k: bad for k in ("step_gap_p95", "wall_gap_p95", "wall_gap_max",
                                                         "stalls", "nonfinite")}))
    return items(members, source=", ".join(ev.roots))


def rec02(ev: RunEvidence) -> Fact:
    members: list[dict[str, JSONValue]] = []
    for inc in incidents(ev.log_events, ev.log_texts, ev.streams):
        members.append(_incident_item(inc))
    fact = items(members, source=", ".join(ev.roots))
    if not members:  # what REC-02's skip says: no log to look in, or a log with no failure
        logs = [str(r["file"]) for r in ev.read if r.get("as") == AS["log"]]
        fact["empty"] = (f"no failure in the log(s): {_cut(logs, 3)}" if logs else
                         "no launcher or training log in the run (no failure line to time a recovery "
                         "from, and no restart in its metrics); give the launcher's log with "
                         "--recovery-log or in the run folder")
    return fact


def _incident_item(inc: Incident) -> dict[str, JSONValue]:
    r, s, e = inc.restart, inc.stream, inc.failure
    secs = inc.seconds
    if e is not None:
        loc = {"file": e.file, "line": e.line}
        clock = "read as UTC" + (", year from the run's metrics" if inc.year_from_metrics else "")
        start = f"failure {e.file}:{e.line} at {_utc(inc.failure_time)} ({clock}): {e.text[:120]}"
        fields: dict[str, Fact] = {"failure": value(e.text, location=loc)}
        iid = f"{e.file}:{e.line}"
    else:
        assert r is not None and s is not None
        loc = {"file": s.name}
        seen = (r.seen or (f"the writer's {r.marker} (its last step before: {r.step_before})" if r.marker else
                f"{r.tag} went back from step {r.step_before} to {r.step_after}"))
        start = (f"no failure line: {seen}; from the "
                 f"last emission before the restart at {_utc(r.wall_before)} (includes the time before "
                 "the failure was noticed: an upper bound)")
        fields = {}
        iid = f"{s.name}: restart at step {r.step_after}"
    if r is not None and s is not None and secs is not None:
        end = f"first step after the restart: {r.tag} step {r.step_after} at {_utc(r.wall_after)} in {s.name}"
        fields["resumed"] = value(f"{r.tag} step {r.step_after}", location={"file": s.name})
        rec: Fact = value(round(secs, 3), unit="sec", source=f"{start} -> {end}", location=loc)
        if secs < 0 or not math.isfinite(secs):
            rec = error(f"the restart's first step comes before the failure: {start} -> {end}",
                        source=e.text if e else None)
            rec["location"] = loc
    elif r is not None and s is not None:  # resumed, in metrics that carry no wall time
        fields["resumed"] = value(f"{r.tag} step {r.step_after}", location={"file": s.name})
        how = r.seen or f"{r.tag} went back from step {r.step_before} to {r.step_after}"
        after = (f"no timestamped training step follows the {start}" if e is not None else
                 "no failure line in the run to time it from")
        rec = error(f"resumed, but not timed: {how} in {s.name}, which carries no wall time per "
                    f"emission, and {after}; give the run's TensorBoard or MLflow output, which carries "
                    f"wall times", source=e.text if e else None)
        rec["location"] = loc
    elif inc.log_resume is not None and secs is not None:
        lr = inc.log_resume
        fields["resumed"] = value(lr.text, location={"file": lr.file, "line": lr.line})
        rec = value(round(secs, 3), unit="sec", source=f"{start} -> resumed {lr.file}:{lr.line}: {lr.text}",
                    location=loc)
    else:
        rec = error(f"not resumed in the run: no restart in its metrics (no step going back) and no "
                    f"timestamped training step after the {start}", source=e.text if e else None)
        rec["location"] = loc
    fields["recovery"] = rec
    return item(iid, fields)


def run_facts(ev: RunEvidence) -> dict[str, Fact]:
    """Every fact the run shows, to be set on each job document of the lint run."""
    out = mon01(ev)
    out["job.metrics.measured"] = mon02(ev)
    out["job.recovery.measured"] = rec02(ev)
    return out


def listing(ev: RunEvidence) -> dict[str, JSONValue]:
    """The result's ``extra["run"]``: which files were read as what, and which were passed
    over and why (every file of the run folders is in one of the two lists)."""
    return {"folders": ev.roots, "read": ev.read, "passed_over": ev.passed, "versions": ev.versions,
            "errors": [{"file": e.file, "line": e.line, "message": e.message} for e in ev.errors]}
