"""Shared options, and the rendering every checking verb ends with.

After check-jsonschema's composition root: parsing (click) is kept apart from execution,
which is the library's (``validator.api``: building, evaluating, waivers, baseline, exit
codes). A verb parses its options into ``RunOptions`` and the API's options dataclass,
calls the API through ``call``, and hands the ``Outcome`` to ``finish_outcome``: the one
place that says the run's notes, renders the report, writes it atomically, and exits
with the outcome's code. ``build``, ``evaluate_documents``, ``exit_code`` and friends are
re-exported from the API for the verbs and tests that import them from here.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from validator.api.options import DEFAULT_SPEC_VERSION, OptionsError, ReportOptions
from validator.api.outcome import Outcome
from validator.api.outcome import exit_code as exit_code  # re-exported: health exits with it
from validator.api.steps import Built as Built  # re-exported: the build steps live in the API
from validator.api.steps import apply_baseline, older_note
from validator.api.steps import build as build
from validator.api.steps import evaluate_documents as evaluate_documents
from validator.api.steps import unique_subjects as unique_subjects
from validator.clock import now_utc as now_utc  # re-exported: verbs stamp facts and results with it
from validator.errors import SpecCheckError
from validator.io.atomic import open_atomic
from validator.io.atomic import write_atomic as write_atomic  # re-exported: report and sign write through it
from validator.values.records import record

if TYPE_CHECKING:
    from validator.renderers import Names
    from validator.report.model import JSONValue, Report

F = TypeVar("F", bound=Callable[..., Any])
_P = ParamSpec("_P")
_R = TypeVar("_R")


@record(frozen=True)
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
    extra: dict[str, Any] = field(default_factory=dict)  # Any: --show's tuple, --baseline's Path, as click parsed them

    @property
    def report(self) -> ReportOptions:
        """The options the library reads (the rest are rendering's)."""
        return ReportOptions(
            spec_version=self.spec_version, profile=self.profile, sets=self.sets, select=self.select,
            ignore=self.ignore, fail_on=self.fail_on, waivers=self.waivers, rules=self.rules,
            rules_version=self.rules_version, baseline=self.extra.get("baseline"),
        )


def format_names() -> Names:
    """The ``--format`` choices: every available output format (``validator.renderers.OUTPUTS``),
    read on each use."""
    from validator.renderers import Names

    return Names()


class LiveChoice(click.Choice):
    """A ``click.Choice`` whose choices are read from a registry on each use (click copies
    them once, at import): a format registered later (a plug-in) is offered too."""

    def __init__(self, source: Iterable[str], case_sensitive: bool = True) -> None:
        self._source = source
        super().__init__((), case_sensitive)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._source)

    @choices.setter
    def choices(self, value: object) -> None:  # click.Choice.__init__ assigns it
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
        click.option("--format", "fmt", type=LiveChoice(format_names()), default="terminal",
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


def with_baseline(report: Report, opts: RunOptions) -> Report:
    """The report with the problems of ``--baseline`` marked known (validator/report/baseline.py),
    and one stderr line saying how many were known and how many are new."""
    report, line = apply_baseline(report, opts.extra.get("baseline"))
    if line:
        click.echo(line, err=True)
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


def run_options(kwargs: dict[str, Any]) -> RunOptions:  # Any: the options as click parsed them
    """Take the common options out of a verb's kwargs (what is left is the verb's own)."""
    from validator.rules.selection import split_csv

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


def note_older(kind: str, documents: Iterable[tuple[object, Mapping[str, JSONValue]]]) -> None:
    """One stderr line when any input (``(path, document)``) was written by an older
    spec-check (``validator.api.steps.older_note``)."""
    line = older_note(kind, documents)
    if line:
        click.echo(line, err=True)


def render(report: Report, fmt: str, output: Path | None, **renderer_options: object) -> None:
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


def render_options(opts: RunOptions) -> dict[str, object]:
    """The renderer options a verb's common options ask for (``--show passes``)."""
    return {"show_passes": "passes" in opts.extra.get("show", ())}


def call(function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``function(*args, **kwargs)`` of ``validator.api``, its errors as the CLI says them:
    options that cannot go together are the verb's usage error; the notes a run made
    before an input failed it are said first, as they were made."""

    try:
        return function(*args, **kwargs)
    except OptionsError as exc:
        raise click.UsageError(str(exc)) from None
    except SpecCheckError as exc:
        for line in getattr(exc, "notes_before", ()):
            click.echo(line, err=True)
        raise


def say_and_render(outcome: Outcome, opts: RunOptions) -> None:
    """The run's notes on stderr, in order, then the report."""
    for line in outcome.notes:
        click.echo(line, err=True)
    render(outcome.report, opts.format, opts.output, **render_options(opts))


def finish_outcome(outcome: Outcome, opts: RunOptions) -> None:
    """Say, render, write, and exit with the outcome's code (the contract's)."""
    say_and_render(outcome, opts)
    sys.exit(outcome.exit_code)


def finish(report: Report, opts: RunOptions) -> None:
    """Render, write, and exit with the contract's code."""
    report = with_baseline(report, opts)
    render(report, opts.format, opts.output, **render_options(opts))
    sys.exit(exit_code(report, opts.fail_on))
