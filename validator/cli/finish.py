"""The end every checking verb comes to: the common options as the library reads them, the
library's errors as the CLI says them, and the report rendered, written and exited with.

After check-jsonschema's composition root: parsing (click, validator/cli/common.py and each
verb's module) is kept apart from execution, which is the library's (``validator.api``:
building, evaluating, waivers, baseline, exit codes). A verb parses its
options into ``RunOptions`` and the API's options dataclass, calls the API through
``call``, and hands the ``Outcome`` to ``finish_outcome``: the one place that says the
run's notes, renders the report, writes it atomically, and exits with the outcome's code.
Lines on stderr go through click's ``echo``.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

from validator.api.options import DEFAULT_SPEC_VERSION, OptionsError, ReportOptions
from validator.api.outcome import Outcome
from validator.api.steps import older_note
from validator.errors import SpecCheckError
from validator.io.atomic import open_atomic

if TYPE_CHECKING:
    from validator.renderers import Names
    from validator.report.model import JSONValue, Report

_P = ParamSpec("_P")
_R = TypeVar("_R")


def say(line: str) -> None:
    """One line on stderr, as every verb says its notes (click's ``echo``)."""
    import click

    click.echo(line, err=True)


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
        say(line)


def render(report: Report, fmt: str, output: Path | None, **renderer_options: object) -> None:
    """Render to stdout, or atomically to ``output`` (and say so on stderr).

    A reader that goes away (``check | head -1``) is not a failed run: the rest of the
    report is dropped quietly and the caller still exits with the verdict's code, so a
    Slurm prolog under ``set -o pipefail`` does not drain a healthy node."""
    from validator.renderers import BY_NAME, get_renderer
    from validator.renderers.escape import clean_report

    if not BY_NAME[fmt].lists_passes:  # --show passes: only the formats that list or count passes
        renderer_options.pop("show_passes", None)
        renderer_options.pop("show_folded", None)
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
    say(f"spec-check: wrote {fmt} report to {output} ({size:,} bytes)")


def render_options(opts: RunOptions) -> dict[str, object]:
    """The renderer options a verb's common options ask for (``--show passes``, ``--show folded``)."""
    show = opts.extra.get("show", ())
    return {"show_passes": "passes" in show, "show_folded": "folded" in show}


def call(function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``function(*args, **kwargs)`` of ``validator.api``, its errors as the CLI says them:
    options that cannot go together are the verb's usage error; the notes a run made
    before an input failed it are said first, as they were made."""

    try:
        return function(*args, **kwargs)
    except OptionsError as exc:
        import click

        raise click.UsageError(str(exc)) from None
    except SpecCheckError as exc:
        for line in getattr(exc, "notes_before", ()):
            say(line)
        raise


def say_and_render(outcome: Outcome, opts: RunOptions) -> None:
    """The run's notes on stderr, in order, then the report."""
    for line in outcome.notes:
        say(line)
    render(outcome.report, opts.format, opts.output, **render_options(opts))


def finish_outcome(outcome: Outcome, opts: RunOptions) -> NoReturn:
    """Say, render, write, and exit with the outcome's code (the contract's)."""
    say_and_render(outcome, opts)
    sys.exit(outcome.exit_code)
