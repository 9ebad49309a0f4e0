"""``lint_jobs``: training job configs judged against the job requirements, each job
with its own verdict; a file that cannot be read is a ``LINT-00`` error finding.

The library half of ``spec-check lint`` (``validator/cli/lint.py`` parses and renders;
its docstring says what a PATH, a folder, ``--job`` and ``--jobs-of-files`` mean).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from validator.api.options import LintOptions, OptionsError
from validator.api.outcome import LintOutcome
from validator.api.steps import Built, build, evaluate_documents, finished
from validator.errors import SpecCheckError

if TYPE_CHECKING:  # not imported at run time: start-up
    from collections.abc import Mapping
    from typing import TypedDict

    from validator.facts.document import Document
    from validator.report.model import Finding, JobVerdict, Report, RuleDoc
    from validator.rules.spec import ParamValue

    class _Sizes(TypedDict):
        """The run's sizes every job reader takes (``--set gpu_count``, ``step_time``)."""

        gpu_count: int | None
        step_time_s: float | None

UNREADABLE_RULE = "LINT-00.unreadable-config"
UNREADABLE_REQ = "LINT-00"


def _error_findings(docs: list[Document]) -> list[Finding]:
    from validator.report.model import Finding, Level, Location, Status

    out = []
    for d in docs:
        for e in d.get("errors", []):
            out.append(
                Finding(
                    rule=UNREADABLE_RULE,
                    requirement=UNREADABLE_REQ,
                    level=Level.MUST,
                    status=Status.ERROR,
                    subject=d["subject"]["name"],
                    expected="a readable training config",
                    message=e["message"],
                    remediation="Fix the file so that it parses, or leave it out of the lint run.",
                    source=e["file"],
                    location=Location(e["file"], e.get("line"), e.get("text")),
                )
            )
    return out


def _drop_unrecognized_errors(doc: Document) -> None:
    """Under --ignore-unknown: forget parse errors of files that are no job config.

    A file that was read (so not an I/O, size, binary or encoding error) but did not make
    it into the job is one that failed to parse or was not recognized. When its text
    holds no key name of any known format (a Helm template, a workflow with ``{{ }}``),
    it is not a config and its parse error is passed over; a recognizable config that
    does not parse (a DeepSpeed JSON with a stray comma) stays an error.
    """
    from validator.io.source import ReadError, read_text
    from validator.jobs.format_detection import looks_like_config

    files = set(doc["facts"]["job.files"]["value"] or ())
    kept = []
    for e in doc["errors"]:
        path = Path(e["file"])
        if e["file"] not in files and not path.is_dir():
            try:
                text = read_text(path)
            except ReadError:
                kept.append(e)
                continue
            if not looks_like_config(path, text):
                continue
        kept.append(e)
    doc["errors"] = kept


def _add_recovery(docs: list[Document], logs: tuple[Path, ...]) -> None:
    """``job.recovery.measured`` from the ``--recovery-log`` files, the same for every job
    of the run (a log is of the run that failed; lint one job with its logs); null, with
    the option named as its source, when none is given, so REC-02's measured rule skips
    saying what to pass."""
    from validator.jobs.recovery_log import measured

    fact = measured(list(logs))
    for d in docs:
        d["facts"]["job.recovery.measured"] = fact


def lint_documents(
    paths: tuple[Path, ...],
    kind: str | None,
    params: Mapping[str, ParamValue],
    *,
    ignore_unknown: bool = False,
    by_folder: bool = False,
    recovery_logs: tuple[Path, ...] = (),
    whole: tuple[Path, ...] = (),
    runs: tuple[Path, ...] = (),
) -> list[Document]:
    """The job documents of the PATHs: a file is one job (with the files it names), a
    directory holds as many jobs as it has entry points (``validator.jobs.grouping``),
    each ``whole`` path (``--job``) is one job whatever it holds; with ``by_folder``, the
    jobs the named files belong to. A run where nothing at all is readable is exit 2
    (with ``ignore_unknown``, files of no known format are passed over silently, parse
    errors included)."""
    from validator.jobs import grouping, read_job, real_paths

    gpu = params.get("gpu_count")
    step = params.get("step_time")
    gpu_count = int(gpu.value) if gpu is not None and gpu.is_set else None
    step_time = float(step.value.base) if step is not None and step.is_set else None
    for p in paths:
        if not p.exists() and not p.is_symlink() and not (by_folder and p.parent.is_dir()):
            raise SpecCheckError("no such file or directory", file=str(p))
    for p in whole:
        if not p.exists() and not p.is_symlink():
            raise SpecCheckError("no such file or directory (--job)", file=str(p))
    for p in recovery_logs:  # a missing log is a mistyped option, like a missing PATH
        if not p.exists() and not p.is_symlink():
            raise SpecCheckError("no such file or directory (--recovery-log)", file=str(p))
    for p in runs:
        if not p.exists():
            raise SpecCheckError("no such file or directory (--run)", file=str(p))
    origins = {
        name: p.origin for name, p in (("gpu_count", gpu), ("step_time", step)) if p is not None
    }
    kw: _Sizes = {"gpu_count": gpu_count, "step_time_s": step_time}
    docs: list[Document] = []
    named = real_paths((*paths, *whole))  # once for every job of the run
    if by_folder:
        docs += grouping.jobs_of_files(paths, kind, origins=origins, **kw)
    else:
        for p in paths:
            if p.is_dir():
                docs += grouping.split_folder(p, kind, origins=origins, **kw)
            else:
                docs += read_job([p], kind, name=str(p), strict=not ignore_unknown, named_real=named,
                                 origins=origins, **kw)
    for p in whole:
        docs += read_job([p], kind, name=str(p), strict=not ignore_unknown, named_real=named,
                         origins=origins, **kw)
    if runs:
        from validator.runs.lint import add_run

        docs = add_run(docs, runs, recovery_logs)
    else:
        _add_recovery(docs, recovery_logs)
    if ignore_unknown:
        for d in docs:
            _drop_unrecognized_errors(d)
        return docs
    if all(not d["facts"]["job.files"]["value"] for d in docs):
        errs = [e for d in docs for e in d["errors"]]
        if errs:
            e = errs[0]
            # the other refusals by file, so "(and 1 more)" is not read as one more --kind value
            others = sorted({str(o.get("file")) for o in errs[1:]} - {str(e["file"])})
            more = (f"; {len(others)} more file{'s' if len(others) != 1 else ''} refused too: "
                    f"{', '.join(others[:5])}{', ...' if len(others) > 5 else ''}") if others else ""
            raise SpecCheckError(e["message"] + more, file=e["file"], line=e.get("line"))
        raise SpecCheckError(
            "no training config found (use --kind to name a file's format)",
            file=str((paths or whole)[0]),
        )
    return docs


def job_list(report: Report, docs: list[Document]) -> list[JobVerdict]:
    """Each job of the run with its files and its own verdict (``extra["jobs"]``): the
    run is conformant only when every job is, and a reader of the result sees which
    job is not. A file that could not be read is listed as a job of its own."""
    from validator.report.model import summarize

    by_subject: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_subject.setdefault(f.subject, []).append(f)
    out: list[JobVerdict] = []
    for d in docs:
        name = d["subject"]["name"]
        files = list(d["facts"]["job.files"]["value"] or ())
        if not files:
            files = sorted({e["file"] for e in d["errors"] if e.get("file")})
            if not files:
                continue  # passed over (--ignore-unknown): no job
        s = summarize(by_subject.get(name, []))
        out.append({"name": name, "files": files, "conformant": s.conformant, "counts": s.counts})
    return out


def unreadable_rule() -> RuleDoc:
    """The description of ``LINT-00.unreadable-config``, the rule of the findings above."""
    from validator.report.model import Level, RuleDoc, Scope

    return RuleDoc(
        UNREADABLE_RULE,
        UNREADABLE_REQ,
        "unreadable-config",
        Level.MUST,
        Scope.JOB,
        "A config file of the job cannot be read or parsed",
        "A file that does not parse is not checked; its settings are unknown.",
        "Fix the file so that it parses, or leave it out of the lint run.",
    )


def lint_jobs(opts: LintOptions, *, built: Built | None = None) -> LintOutcome:
    """Read the jobs of ``opts.paths`` / ``opts.whole`` (and ``opts.runs``), judge them (and
    against ``opts.nodes``), and return the report with every job's verdict in
    ``extra["jobs"]``. A run where nothing is readable raises SpecCheckError (exit 2)."""
    from dataclasses import replace

    paths, whole, runs, node_facts = opts.paths, opts.whole, opts.runs, opts.nodes
    if not paths and not whole and not runs:
        raise OptionsError("give at least one PATH (or --job PATH, or --run DIR)")
    report_opts = opts.report
    extra: tuple[str, ...] = ()
    if node_facts or runs:  # lint --nodes / --run: their rules may be --select-ed
        from validator.jobnodes.rules import RULES

        extra = tuple(RULES)
    if built is None:
        built = build(report_opts, ("job",), extra)
    docs = lint_documents(
        paths,
        opts.kind,
        built.ctx.params,
        ignore_unknown=opts.ignore_unknown,
        by_folder=opts.jobs_of_files,
        recovery_logs=opts.recovery_logs,
        whole=whole,
        runs=runs,
    )
    jobs = [d for d in docs if d["facts"]["job.files"]["value"]]
    clean = [{k: v for k, v in d.items() if k not in ("errors", "run", "texts", "file_kinds")} for d in jobs]
    # lint --nodes / --run: waivers are applied once, after its findings are added
    waive_later = bool(node_facts or runs) and report_opts.waivers is not None
    report = evaluate_documents("lint", built, replace(report_opts, waivers=None) if waive_later else report_opts,
                                clean, [d["subject"]["name"] for d in jobs])
    from validator.jobs.fixes import attach

    report = replace(report, findings=attach(report.findings, jobs, built.ctx.params))
    errors = _error_findings(docs)
    if errors:
        findings = tuple(sorted((*report.findings, *errors), key=lambda f: f.sort_key()))
        report = replace(report, findings=findings, rules=(*report.rules, unreadable_rule()))
    if node_facts or runs:  # lint --nodes / --run (validator.jobnodes)
        from validator.jobnodes import add_to_report

        for p in runs:
            if not p.exists():
                raise SpecCheckError("no such file or directory (--run)", file=str(p))
        report = add_to_report(report, built, report_opts, jobs, node_facts, runs)
        if waive_later and report_opts.waivers is not None:
            from validator.jobnodes import waive

            report = waive(report, built, report_opts.waivers)
    report = replace(report, extra={**report.extra, "jobs": job_list(report, docs)})
    if runs:
        from validator.runs.lint import finish_report

        report = finish_report(report, docs, built.pack)
    notes = [] if opts.jobs_of_files else not_linted([p for p in paths if p.is_dir()], docs)
    report, said = finished(report, report_opts, notes)
    import os

    texts = {f: t for d in jobs for f, t in (d.get("texts") or {}).items()}
    roots = tuple(os.path.realpath(p if p.is_dir() else p.parent) for p in (*paths, *whole))
    return LintOutcome(report, report_opts.fail_on, said, texts, roots)


def not_linted(folders: list[Path], docs: list[Document]) -> list[str]:
    """One line per folder naming the files under it that no job read, and why: a
    folder lint is not silent about what it passed over (hidden folders aside)."""
    import os

    from validator.jobs import DIR_EXT

    read = {os.path.realpath(f) for d in docs for f in (d["facts"]["job.files"]["value"] or ())}
    said = {os.path.realpath(e["file"]) for d in docs for e in d["errors"] if e.get("file")}
    lines = []
    for folder in folders:
        by_reason: dict[str, list[str]] = {}
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for fn in sorted(filenames):
                path = Path(dirpath) / fn
                real = os.path.realpath(path)
                if real in read or real in said or fn.startswith("."):
                    continue
                if path.suffix.lower() not in DIR_EXT and not fn.startswith(".env"):
                    why = "not a config file type"
                elif path.suffix.lower() in (".sh", ".bash", ".slurm", ".sbatch", ".sub"):
                    why = "a script that launches no training job"
                else:
                    why = "no known format explains it: name it with --kind, or lint the folder as one job with --job"
                by_reason.setdefault(why, []).append(os.path.relpath(path, folder))
        for why, names in by_reason.items():
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            lines.append(f"spec-check: {folder}: not linted ({why}): {shown}")
    return lines
