"""``lint --run DIR``: the run's facts on every job document, or a document of the run alone.

With JOB paths, the run's measured facts replace what the configs declared for MON-01's
families and set ``job.metrics.measured`` (MON-02) and ``job.recovery.measured`` (REC-02),
the same for every job of the lint run (a run is one job's: lint one job with its run).
With no JOB, the run alone is a job document holding only those facts, and only the rules
that read them are reported (a run shows no config: the config rules are not judged, not
failed). A run folder where nothing could be read is exit 2, never a silent skip.
``--recovery-log`` files are read as launcher logs of the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import Finding, JSONValue, Report
    from validator.rules.rulemodel import RulePack

RUN_KEY = "run"  # the document key that carries the read/passed-over listing (not evaluated)


def add_run(docs: list[dict[str, JSONValue]], runs: tuple[Path, ...],
            logs: tuple[Path, ...]) -> list[dict[str, JSONValue]]:
    from validator import __version__
    from validator.clock import now_utc
    from validator.errors import SpecCheckError
    from validator.facts.document import error, new_document, value
    from validator.runs.facts import listing, run_facts
    from validator.runs.measure import read_runs

    ev = read_runs(list(runs), list(logs))
    facts = run_facts(ev)
    nothing = not ev.streams and not ev.errors
    if nothing:
        first = ev.passed[0] if ev.passed else None
        why = f" (first passed over: {first['file']}: {first['why']})" if first else ""
        if not docs:
            if ev.log_events or ev.read:
                pass  # launcher logs alone: REC-02 can still be judged
            else:
                raise SpecCheckError(f"no training output spec-check reads in the run folder{why}",
                                     file=str(runs[0]))
        if docs:  # what the configs declare stands where the run shows no metric either way
            facts = {k: v for k, v in facts.items() if not k.startswith("job.metrics.") or k == "job.metrics.measured"}
        facts["job.metrics.measured"] = error(
            f"the run folder(s) hold no metric file spec-check reads (TensorBoard, metrics.csv, "
            f"trainer_state.json, JSON lines, MLflow){why}", source=", ".join(map(str, runs)))
    listed = listing(ev)
    if not docs:
        name = ", ".join(str(r) for r in runs)
        files = [r["file"] for r in ev.read] or [str(runs[0])]
        d = new_document("job", name, {**facts, "job.files": value(files, source="lint --run")},
                         tool_version=__version__, collected_at=now_utc())
        d["errors"] = []
        d[RUN_KEY] = {**listed, "alone": True}
        return [d]
    for d in docs:
        d["facts"].update(facts)
        d[RUN_KEY] = {**listed, "alone": False}
    return docs


def finish_report(report: Report, docs: list[dict[str, JSONValue]], pack: RulePack) -> Report:
    """The report with ``extra["run"]`` (files read and passed over), and for a run judged
    alone only the findings of rules whose facts the run has."""
    from dataclasses import replace

    listed = next((d[RUN_KEY] for d in docs if RUN_KEY in d), None)
    if listed is None:
        return report
    alone = {d["subject"]["name"]: set(d["facts"]) for d in docs if d.get(RUN_KEY, {}).get("alone")}
    if alone:
        rules = {r.id: r for r in pack.rules}

        def shown(f: Finding) -> bool:
            have = alone.get(f.subject)
            if have is None:
                return True
            r = rules.get(f.rule)
            if r is None:
                return True
            needs = {r.fact, *(c.fact for c in r.when if getattr(c, "fact", None))}
            return needs <= have

        findings = tuple(f for f in report.findings if shown(f))
        report = report.with_findings(findings)
        jobs = [{**j, **_verdict(findings, j["name"])} for j in report.extra.get("jobs", [])]
        report = replace(report, extra={**report.extra, "jobs": jobs})
    extra = {k: v for k, v in listed.items() if k != "alone"}
    return replace(report, extra={**report.extra, "run": extra})


def _verdict(findings: tuple[Finding, ...], name: str) -> dict[str, JSONValue]:
    from validator.report.model import summarize

    s = summarize([f for f in findings if f.subject == name])
    return {"conformant": s.conformant, "counts": s.counts}
