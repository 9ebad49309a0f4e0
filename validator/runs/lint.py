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
    from validator.report.model import JSONValue

NCCL_KEY = "nccl"  # in RUN_KEY: what NCCL said in the run's logs (jobnodes.nccllog.Evidence), not listed
RUN_KEY = "run"  # the document key that carries the read/passed-over listing (not evaluated; the
# report's ``extra.run``); a run judged alone (``alone``) is judged on the facts it holds only


def add_run(docs: list[dict[str, JSONValue]], runs: tuple[Path, ...],
            logs: tuple[Path, ...]) -> list[dict[str, JSONValue]]:
    from validator import build_info
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
                         tool_version=build_info.tool_version(), collected_at=now_utc())
        d["errors"] = []
        d[RUN_KEY] = {**listed, "alone": True, NCCL_KEY: ev.nccl}
        return [d]
    for d in docs:
        d["facts"].update(facts)
        d[RUN_KEY] = {**listed, "alone": False, NCCL_KEY: ev.nccl}
    return docs
