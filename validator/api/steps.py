"""The steps every checking run shares: load what a run judges with (``build``), turn
facts documents into a report (``evaluate_documents``), apply a baseline, and say which
inputs an older spec-check wrote.

Why here and not in the CLI: an outside caller needs the same steps in the same order
(a bad profile refused before a host is probed; waivers applied once, after every
finding). Moved from ``validator/cli/common.py``, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from validator import build_info
from validator.clock import now_utc
from validator.errors import SpecCheckError

if TYPE_CHECKING:  # not imported at run time: start-up
    from validator.api.report_options import ReportOptions
    from validator.evaluate.engine import Context
    from validator.facts.document import Document
    from validator.report.model import Finding, JSONValue, Report, RuleDoc
    from validator.rules.rulemodel import Rule, RulePack

    class RunFields(Protocol):
        """What ``build`` and ``evaluate_documents`` read of their options: a ``ReportOptions``,
        or the CLI's ``RunOptions`` (the same fields, and rendering's)."""

        @property
        def spec_version(self) -> str: ...
        @property
        def profile(self) -> Path | None: ...
        @property
        def sets(self) -> tuple[str, ...]: ...
        @property
        def select(self) -> tuple[str, ...]: ...
        @property
        def ignore(self) -> tuple[str, ...]: ...
        @property
        def waivers(self) -> Path | None: ...
        @property
        def rules(self) -> Path | None: ...
        @property
        def rules_version(self) -> str | None: ...


@dataclass(frozen=True)
class Built:
    """Everything loaded for a run: spec, parameters, facts catalogue and rule pack."""

    ctx: Context
    pack: RulePack


def build(opts: RunFields, scopes: tuple[str, ...] | None = None, compare: bool = False) -> Built:
    """Load spec, parameters, facts catalogue and rules; ``scopes`` are those the verb
    evaluates (default: every scope), so ``check --select CKPT`` (job rules only) is a usage
    error, not a silent "conformant" with nothing checked. ``compare``: the verb compares jobs
    with a second document (``lint --nodes``/``--run``), so the pack's rules with
    ``against`` are in scope (--select/--ignore may name them); elsewhere they are not.
    ``opts``: a ``ReportOptions`` (or anything with its fields)."""
    from validator.evaluate.engine import Context
    from validator.rules.bundled import load_bundled
    from validator.rules.rulemodel import SCOPES
    from validator.rules.selection import check_prefixes, check_something_selected
    from validator.rules.spec import resolve_parameters

    scopes = SCOPES if scopes is None else scopes

    # the bundled spec, catalogue and pack come compiled (validator/rules/bundled.json); a custom
    # pack is loaded from its files on every run, against the bundled spec and catalogue
    try:
        spec, catalogue, pack = load_bundled(opts.spec_version, opts.rules_version, pack=opts.rules is None)
    except SpecCheckError:  # reported below, in the order the steps take (a bad profile first)
        spec, catalogue, pack = None, None, None
    if spec is None:
        from validator.rules.spec import load_spec

        spec = load_spec(opts.spec_version)
    params = resolve_parameters(spec, profile=opts.profile, sets=opts.sets)
    if catalogue is None:
        from validator.rules.spec import load_fact_catalogue

        catalogue = load_fact_catalogue()
    if opts.rules is not None and opts.rules_version is not None:
        raise SpecCheckError("--rules and --rules-version both name a rule pack: give one")
    if pack is None:
        from validator.rules.loader import load_pack

        pack = load_pack(spec, catalogue, pack_path=opts.rules, rules_version=opts.rules_version)
    in_scope = [r.id for r in pack.rules if r.scope in scopes and (compare or r.against is None)]
    check_prefixes(in_scope, opts.select, opts.ignore,
                   elsewhere={r.id: r.scope for r in pack.rules if r.scope not in scopes})
    if not in_scope:  # an empty custom pack, or one with no rules of this verb's scopes
        where = f"rule pack {opts.rules}" if opts.rules else f"rule pack {pack.id}"
        raise SpecCheckError(f"{where} has no {'/'.join(scopes)} rules: nothing to check")
    if opts.select or opts.ignore:
        check_something_selected(in_scope, opts.select, opts.ignore)
    return Built(Context(spec, catalogue, params), pack)


def stale_note(built: Built, documents: Iterable[tuple[Mapping[str, JSONValue], str]]) -> str | None:
    """The one line said when a single node's facts (``check --facts``, ``health --facts``)
    are older than ``facts_max_age`` or dated after the run (``validator.facts.freshness``).
    A fleet judges this per host (``PLAT-02.facts-stale``); a single node's verdict is stamped
    with its facts' collection time in every format, and a recording replayed for what it
    shows (the README's) must not turn into an error a month after it was made."""
    from validator.clock import now
    from validator.facts.freshness import stale

    bound = built.ctx.params.get("facts_max_age")
    if bound is None or bound.value is None:  # a spec without the parameter
        return None
    at = now()
    text = f"{bound.text} ({'default' if bound.origin == 'default' else bound.origin})"
    said = [f"{file}: {why}" for doc, file in documents if (why := stale(doc, bound.value.base, text, at))]
    if not said:
        return None
    more = f" (and {len(said) - 1} more like it)" if len(said) > 1 else ""
    return f"spec-check: note: {said[0]}{more}"


def unique_subjects(documents: Iterable[Mapping[str, JSONValue]], labels: Iterable[str]) -> list[Document]:
    """Rename subjects that share a name (two facts files of one hostname) by their label."""
    docs = [dict(d) for d in documents]
    labels = list(labels)
    names = [d["subject"]["name"] for d in docs]
    for i, d in enumerate(docs):
        if names.count(names[i]) > 1:
            d["subject"] = {**d["subject"], "name": f"{names[i]} ({labels[i]})"}
    return docs


def evaluate_documents(command: str, built: Built, opts: RunFields, documents: list[Document],
                       sources: list[str], *, extra: dict[str, JSONValue] | None = None,
                       against: Mapping[str, object] | None = None, partial: Iterable[str] = (),
                       more: Iterable[Finding] = (), more_rules: Iterable[RuleDoc] = (),
                       fixes: Callable[[tuple[Finding, ...]], tuple[Finding, ...]] | None = None,
                       extra_of: Callable[[tuple[Finding, ...]], dict[str, JSONValue]] | None = None) -> Report:
    """Evaluate facts documents into a Report, built once: the engine's findings (with
    ``against``, the rules that compare a job with its nodes or its run; ``partial``, the
    subjects judged only on the facts they hold) and ``more`` (findings of no pack rule:
    ``LINT-00``, described by ``more_rules``), with their fixes (``fixes``: lint's
    ``validator.jobs.fixes.attach``), waivers applied when given, then ``extra`` and what
    ``extra_of`` makes of the final findings (each job's verdict)."""
    from validator.evaluate.engine import evaluate
    from validator.facts.document import digest
    from validator.report.model import Report, RequirementDoc, RuleDoc, Subject
    from validator.rules.spec import describe_parameters

    ctx, pack = built.ctx, built.pack
    found = evaluate(ctx, pack, documents, select=opts.select, ignore=opts.ignore, against=against,
                     partial=frozenset(partial))
    more = list(more)
    if more:
        found = sorted((*found, *more), key=lambda f: f.sort_key())
    findings = tuple(found)
    if fixes is not None:
        findings = fixes(findings)
    extra = dict(extra or {})
    if opts.waivers is not None:
        from validator.report.waivers import load_waivers, waive

        findings, waived = waive(findings, load_waivers(opts.waivers, pack, ctx.spec))
        extra.update(waived)
    if extra_of is not None:
        extra.update(extra_of(findings))
    judged = {f.rule for f in findings}

    def doc(r: Rule) -> RuleDoc:
        return RuleDoc(r.id, r.requirement, r.id.split(".", 1)[1], pack.level_of(r, ctx.spec), r.scope,
                       r.summary.strip(), r.why.strip(), r.remediation.strip())

    return Report(
        command=command,
        spec_version=ctx.spec.spec_version,
        tool_version=build_info.tool_version(),
        rule_pack={"id": pack.id, "digest": pack.digest},
        generated_at=now_utc(),
        parameters=describe_parameters(ctx.params),
        profile=str(opts.profile) if opts.profile else None,
        selection={"select": list(opts.select), "ignore": list(opts.ignore)},
        subjects=tuple(
            Subject.of_document(d, digest(d), src)
            for d, src in zip(documents, sources, strict=True)
        ),
        findings=findings,
        # a rule that compares two documents is described where it was judged (lint --nodes/--run)
        rules=(*(doc(r) for r in pack.rules if r.against is None), *more_rules,
               *(doc(r) for r in pack.rules if r.against is not None and r.id in judged)),
        requirements=tuple(RequirementDoc(q.id, q.level, q.title, q.statement.strip())
                           for q in ctx.spec.requirements),
        extra=extra,
    )


def older_note(kind: str, documents: Iterable[tuple[object, Mapping[str, JSONValue]]]) -> str | None:
    """The one line said when any input (``(path, document)``) was written by an older
    spec-check: it is still read, and the line says what that means (a recording lacks the
    facts added since, which are errors in this run). One line per run, however many files."""
    from validator.versions import older_note as one

    notes = [n for where, doc in documents if (n := one(kind, dict(doc), str(where)))]
    if not notes:
        return None
    more = f" (and {len(notes) - 1} more like it)" if len(notes) > 1 else ""
    return f"spec-check: note: {notes[0]}{more}"


def apply_baseline(report: Report, path: Path | None) -> tuple[Report, str | None]:
    """The report with the problems of the baseline result at ``path`` marked known
    (validator/report/baseline.py), and the line that says how many were known and how many are
    new (None without a baseline)."""
    if path is None:
        return report, None
    from validator.report.baseline import apply_baseline as apply
    from validator.report.baseline import load_baseline

    report = apply(report, load_baseline(path), path)
    known = report.extra["baseline"]["known"]
    count = sum(1 for f in report.findings if f.against_verdict or (f.status.value == "warn" and not f.waived))
    line = (f"spec-check: --baseline {path}: {known} known problem{'s' if known != 1 else ''} not counted; "
            f"{count} still count{'s' if count == 1 else ''} (new, or an error whose reason changed)")
    return report, line


def finished(report: Report, opts: ReportOptions, notes: Iterable[str | None]) -> tuple[Report, tuple[str, ...]]:
    """The report with the baseline of ``opts`` applied, and the run's notes with the
    baseline's line last (the order they are said in). A baseline that cannot be read
    is an error raised with the notes before it attached (``notes_before``), so that a
    caller still says them first."""
    said = [n for n in notes if n]
    try:
        report, line = apply_baseline(report, opts.baseline)
    except SpecCheckError as exc:
        exc.notes_before = tuple(said)  # type: ignore[attr-defined]
        raise
    if line:
        said.append(line)
    return report, tuple(said)


def with_endpoints(built: Built, urls: tuple[str, ...], origin: str) -> Built:
    """``built`` with ``urls`` added to the ``scrape_endpoints`` parameter (MON-03's scrapes)."""
    params = dict(built.ctx.params)
    current = params.get("scrape_endpoints")
    if current is None or not urls:
        return built
    merged = list(dict.fromkeys([*(current.value or []), *urls]))
    params["scrape_endpoints"] = replace(
        current, value=merged, text=", ".join(merged),
        origin=origin if not current.value else f"{current.origin} + {origin}")
    return Built(replace(built.ctx, params=params), built.pack)
