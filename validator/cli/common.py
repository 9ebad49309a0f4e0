"""The options every checking verb shares, as click options.

What a verb does with them once parsed (``RunOptions``, ``call``, rendering, the exit) is
validator/cli/finish.py's; it is re-exported here, with
``build``, ``evaluate_documents`` and friends from the API, for the verbs
and tests that import them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from validator.api.options import DEFAULT_SPEC_VERSION
from validator.api.steps import Built as Built  # re-exported: the build steps live in the API
from validator.api.steps import build as build
from validator.api.steps import evaluate_documents as evaluate_documents
from validator.api.steps import unique_subjects as unique_subjects
from validator.cli.finish import RunOptions as RunOptions
from validator.cli.finish import call as call
from validator.cli.finish import finish_outcome as finish_outcome
from validator.cli.finish import format_names
from validator.cli.finish import note_older as note_older
from validator.cli.finish import render as render
from validator.cli.finish import render_options as render_options
from validator.cli.finish import run_options as run_options
from validator.cli.finish import say_and_render as say_and_render
from validator.clock import now_utc as now_utc  # re-exported: verbs stamp facts and results with it
from validator.io.atomic import write_atomic as write_atomic  # re-exported: report and sign write through it

F = TypeVar("F", bound=Callable[..., Any])


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
        "--show", "show", multiple=True, type=click.Choice(["passes", "folded"]), metavar="passes|folded",
        help="`--show passes` lists every check that passed, one line each, in the terminal and Markdown "
             "reports (a check of one node lists its passes anyway); `--show folded` folds them into one line "
             "per rule with its count of subjects and range of values (the HTML report's default). JSON and "
             "the other formats always hold every finding.")


def baseline_option() -> Callable[[F], F]:
    return click.option(
        "--baseline", "baseline", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
        metavar="RESULT",
        help="A saved JSON result (--format json -o RESULT): fail only on problems it does not have, "
             "matched by rule, subject and item, not line. Known ones are shown, marked as in the "
             "baseline; an error always counts.")


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


