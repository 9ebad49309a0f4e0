"""Shared options and the build steps every checking verb uses.

After check-jsonschema's composition root: parsing (click) is kept apart from execution
(``build_*`` and ``finish``) so that each step can be tested alone. ``finish`` is the one
place that renders a report, writes it atomically, and turns it into an exit code.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from validator import __version__
from validator.atomic import open_atomic
from validator.atomic import write_atomic as write_atomic  # re-exported: report and sign write through it
from validator.clock import now_utc as now_utc  # re-exported: verbs stamp facts and results with it
from validator.errors import SpecCheckError

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_SPEC_VERSION = "1.0"


@dataclass(frozen=True)
class RunOptions:
    spec_version: str = DEFAULT_SPEC_VERSION
    profile: Path | None = None
    sets: tuple[str, ...] = ()
    format: str = "terminal"
    output: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "fail"
    waivers: Path | None = None
    rules: Path | None = None  # a custom rule pack directory instead of the bundled one
    rules_version: str | None = None  # a bundled pack by version (--rules-version 1.0)
    extra: dict[str, Any] = field(default_factory=dict)


def _format_names() -> Any:
    """The ``--format`` choices: every available output format (``validator.renderers.OUTPUTS``),
    read on each use."""
    from validator.renderers import Names

    return Names()


class LiveChoice(click.Choice):
    """A ``click.Choice`` whose choices are read from a registry on each use (click copies
    them once, at import): a format registered later (a plug-in) is offered too."""

    def __init__(self, source: Any, case_sensitive: bool = True) -> None:
        self._source = source
        super().__init__((), case_sensitive)

    @property
    def choices(self) -> tuple[Any, ...]:
        return tuple(self._source)

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ assigns it
        pass


def common_options(func: F) -> F:
    """--spec-version, --profile, --set, --format, -o, --select, --ignore, --fail-on, --waivers."""
    options = [
        click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True,
                     help="Spec version to check against."),
        click.option("--profile", type=click.Path(path_type=Path), default=None,
                     help="YAML file overriding spec parameters."),
        click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
                     help="Override one spec parameter (repeatable), e.g. --set fabric_port_rate=200Gb/s."),
        click.option("--format", "fmt", type=LiveChoice(_format_names()), default="terminal",
                     show_default=True, help="Output format."),
        click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
                     help="Write the report to FILE (atomically) instead of stdout."),
        click.option("--select", multiple=True, metavar="PREFIX",
                     help="Only rules whose ID starts with PREFIX (rule or requirement ID; repeatable, commas ok)."),
        click.option("--ignore", multiple=True, metavar="PREFIX", help="Skip rules whose ID starts with PREFIX."),
        click.option("--fail-on", type=click.Choice(["fail", "warn"]), default="fail", show_default=True,
                     help="Exit 1 on fail (default), or also on warn."),
        click.option("--waivers", type=click.Path(path_type=Path), default=None,
                     help="YAML file of waivers (approved, expiring exceptions)."),
        rules_option(),
        rules_version_option(),
        show_option(),
        baseline_option(),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def show_option() -> Callable[[F], F]:
    return click.option(
        "--show", "show", multiple=True, type=click.Choice(["passes"]), metavar="passes",
        help="`--show passes` also lists the checks that passed, one line each; by default a report "
             "lists the problems and counts the passes in one line.")


def baseline_option() -> Callable[[F], F]:
    return click.option(
        "--baseline", "baseline", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
        metavar="RESULT",
        help="A saved JSON result (--format json -o RESULT): fail only on problems it does not have, "
             "matched by rule, subject and item, not line. Known ones are shown, marked as in the "
             "baseline; an error always counts.")


def with_baseline(report: Any, opts: RunOptions) -> Any:
    """The report with the problems of ``--baseline`` marked known (validator/baseline.py),
    and one stderr line saying how many were known and how many are new."""
    path = opts.extra.get("baseline")
    if path is None:
        return report
    from validator.baseline import apply_baseline, load_baseline

    report = apply_baseline(report, load_baseline(path), path)
    known = report.extra["baseline"]["known"]
    count = sum(1 for f in report.findings if f.against_verdict or (f.status.value == "warn" and not f.waived))
    click.echo(f"spec-check: --baseline {path}: {known} known problem{'s' if known != 1 else ''} not counted; "
               f"{count} still count{'s' if count == 1 else ''} (new, or an error: never baselined)", err=True)
    return report


def rules_option() -> Callable[[F], F]:
    return click.option(
        "--rules", "rules_dir", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
        help="A custom rule pack directory (pack.yaml and rule files; it may `extends: v1.0` and override "
             "bundled rules) instead of the bundled pack for --spec-version.")


def rules_version_option() -> Callable[[F], F]:
    return click.option(
        "--rules-version", "rules_version", default=None, metavar="VERSION",
        help="The bundled rule pack to judge with (e.g. 1.0 for the verdicts of rule pack v1.0); "
             "default: the newest rule pack for --spec-version. `spec-check rules diff 1.0 1.1` "
             "lists the changes.")


def run_options(kwargs: dict[str, Any]) -> RunOptions:
    """Take the common options out of a verb's kwargs (what is left is the verb's own)."""
    from validator.selection import split_csv

    return RunOptions(
        spec_version=kwargs.pop("spec_version"),
        profile=kwargs.pop("profile"),
        sets=tuple(kwargs.pop("sets")),
        format=kwargs.pop("fmt"),
        output=kwargs.pop("output"),
        select=split_csv(kwargs.pop("select")),
        ignore=split_csv(kwargs.pop("ignore")),
        fail_on=kwargs.pop("fail_on"),
        waivers=kwargs.pop("waivers"),
        rules=kwargs.pop("rules_dir", None),
        rules_version=kwargs.pop("rules_version", None),
        extra={"show": tuple(kwargs.pop("show", ())), "baseline": kwargs.pop("baseline", None)},
    )


@dataclass(frozen=True)
class Built:
    """Everything loaded for a run: spec, parameters, facts catalogue and rule pack."""

    ctx: Any  # engine.Context
    pack: Any  # loader.RulePack


def build(opts: RunOptions, scopes: tuple[str, ...] | None = None,
          extra_rules: tuple[str, ...] = ()) -> Built:
    """Load spec, parameters, facts catalogue and rules; ``scopes`` are those the verb
    evaluates (default: every scope), so ``check --select CKPT`` (job rules only) is a usage
    error, not a silent "conformant" with nothing checked. ``extra_rules``: IDs of rules the
    verb adds in code (``lint --nodes``: validator.jobnodes), which --select/--ignore may name too."""
    from validator.compiled import load_bundled
    from validator.engine import Context
    from validator.rulemodel import SCOPES
    from validator.selection import check_prefixes, check_something_selected
    from validator.spec import resolve_parameters

    scopes = SCOPES if scopes is None else scopes

    # the bundled spec, catalogue and pack come compiled (validator/compiled.py); a custom
    # pack is loaded from its files on every run, against the bundled spec and catalogue
    try:
        spec, catalogue, pack = load_bundled(opts.spec_version, opts.rules_version, pack=opts.rules is None)
    except SpecCheckError:  # reported below, in the order the steps take (a bad profile first)
        spec, catalogue, pack = None, None, None
    if spec is None:
        from validator.spec import load_spec

        spec = load_spec(opts.spec_version)
    params = resolve_parameters(spec, profile=opts.profile, sets=opts.sets)
    if catalogue is None:
        from validator.spec import load_fact_catalogue

        catalogue = load_fact_catalogue()
    if opts.rules is not None and opts.rules_version is not None:
        raise SpecCheckError("--rules and --rules-version both name a rule pack: give one")
    if pack is None:
        from validator.loader import load_pack

        pack = load_pack(spec, catalogue, pack_path=opts.rules, rules_version=opts.rules_version)
    in_scope = [r.id for r in pack.rules if r.scope in scopes] + list(extra_rules)
    check_prefixes(in_scope, opts.select, opts.ignore,
                   elsewhere={r.id: r.scope for r in pack.rules if r.scope not in scopes})
    if not in_scope:  # an empty custom pack, or one with no rules of this verb's scopes
        where = f"rule pack {opts.rules}" if opts.rules else f"rule pack {pack.id}"
        raise SpecCheckError(f"{where} has no {'/'.join(scopes)} rules: nothing to check")
    if opts.select or opts.ignore:
        check_something_selected(in_scope, opts.select, opts.ignore)
    return Built(Context(spec, catalogue, params), pack)




def unique_subjects(documents: Iterable[Mapping[str, Any]], labels: Iterable[str]) -> list[dict[str, Any]]:
    """Rename subjects that share a name (two facts files of one hostname) by their label."""
    docs = [dict(d) for d in documents]
    labels = list(labels)
    names = [d["subject"]["name"] for d in docs]
    for i, d in enumerate(docs):
        if names.count(names[i]) > 1:
            d["subject"] = {**d["subject"], "name": f"{names[i]} ({labels[i]})"}
    return docs


def evaluate_documents(command: str, built: Built, opts: RunOptions, documents: list[dict[str, Any]],
                       sources: list[str], *, extra: dict[str, Any] | None = None) -> Any:
    """Evaluate facts documents into a Report (waivers applied when given)."""
    from validator.engine import evaluate
    from validator.facts.document import digest
    from validator.model import Report, RequirementDoc, RuleDoc, Subject
    from validator.spec import describe_parameters

    ctx, pack = built.ctx, built.pack
    findings = evaluate(ctx, pack, documents, select=opts.select, ignore=opts.ignore)
    report = Report(
        command=command,
        spec_version=ctx.spec.spec_version,
        tool_version=__version__,
        rule_pack={"id": pack.id, "digest": pack.digest},
        generated_at=now_utc(),
        parameters=describe_parameters(ctx.params),
        profile=str(opts.profile) if opts.profile else None,
        selection={"select": list(opts.select), "ignore": list(opts.ignore)},
        subjects=tuple(
            Subject(d["subject"]["name"], d["subject"]["kind"], digest(d), d.get("collected_at"), src)
            for d, src in zip(documents, sources, strict=True)
        ),
        findings=tuple(findings),
        rules=tuple(
            RuleDoc(r.id, r.requirement, r.id.split(".", 1)[1], pack.level_of(r, ctx.spec), r.scope,
                    r.summary.strip(), r.why.strip(), r.remediation.strip())
            for r in pack.rules
        ),
        requirements=tuple(RequirementDoc(q.id, q.level, q.title, q.statement.strip())
                           for q in ctx.spec.requirements),
        extra=extra or {},
    )
    if opts.waivers is not None:
        from validator.waivers import apply_waivers, load_waivers

        report = apply_waivers(report, load_waivers(opts.waivers, pack, ctx.spec))
    return report


def note_older(kind: str, documents: Iterable[tuple[Any, Mapping[str, Any]]]) -> None:
    """One stderr line when any input (``(path, document)``) was written by an older
    spec-check: it is still read, and the line says what that means (a recording lacks the
    facts added since, which are errors in this run). One line per run, however many files."""
    from validator.versions import older_note

    notes = [n for where, doc in documents if (n := older_note(kind, dict(doc), str(where)))]
    if notes:
        more = f" (and {len(notes) - 1} more like it)" if len(notes) > 1 else ""
        click.echo(f"spec-check: note: {notes[0]}{more}", err=True)


def render(report: Any, fmt: str, output: Path | None, **renderer_options: Any) -> None:
    """Render to stdout, or atomically to ``output`` (and say so on stderr).

    A reader that goes away (``check | head -1``) is not a failed run: the rest of the
    report is dropped quietly and the caller still exits with the verdict's code, so a
    Slurm prolog under ``set -o pipefail`` does not drain a healthy node."""
    from validator.renderers import BY_NAME, get_renderer
    from validator.renderers.escape import clean_report

    if not BY_NAME[fmt].lists_passes:  # --show passes: only the formats that list or count passes
        renderer_options.pop("show_passes", None)
    renderer = get_renderer(fmt, **renderer_options)
    report = clean_report(report)  # control characters and undecodable names shown as escapes
    if output is None:
        try:
            if hasattr(sys.stdout, "reconfigure"):  # anything clean_report missed: escaped, not a crash
                sys.stdout.reconfigure(errors="backslashreplace")
            renderer.render(report, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:
            # later writes (and the interpreter's own flush at exit) go nowhere, quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return

    with open_atomic(output) as fh:  # written as rendered: a fleet's result is not held whole
        stream = io.TextIOWrapper(fh, encoding="utf-8", errors="backslashreplace", newline="")
        renderer.render(report, stream)
        stream.flush()
        size = fh.tell()
        stream.detach()
    click.echo(f"spec-check: wrote {fmt} report to {output} ({size:,} bytes)", err=True)


def render_options(opts: RunOptions) -> dict[str, Any]:
    """The renderer options a verb's common options ask for (``--show passes``)."""
    return {"show_passes": "passes" in opts.extra.get("show", ())}


def exit_code(report: Any, fail_on: str) -> int:
    """0 conformant; 1 not conformant (a fail or MUST error, or a warn under --fail-on warn)."""
    from validator.model import Status

    if not report.summary.conformant:
        return 1
    if fail_on == "warn":
        for f in report.findings:
            if not f.waived and f.status in (Status.WARN, Status.ERROR):
                return 1
    return 0


def finish(report: Any, opts: RunOptions) -> None:
    """Render, write, and exit with the contract's code."""
    report = with_baseline(report, opts)
    render(report, opts.format, opts.output, **render_options(opts))
    sys.exit(exit_code(report, opts.fail_on))
