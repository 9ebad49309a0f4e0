"""What a run returns: the report, the lines to say beside it, and its exit code.

Why: the exit code is the contract (the README's **Exit codes**: 0 conformant; 1 not
conformant, a ``fail``, a MUST ``error`` or a MUST requirement not judged (INCOMPLETE), or a
``warn`` under ``--fail-on warn``; 2 the run could not be done)
and an outside caller needs it as much as the CLI does, so it is computed here, once.
``notes`` are the one-line remarks a run makes about its inputs (a recording by an older
spec-check, a baseline's known problems, folders' files no job read): the CLI writes them
to stderr, in order, before the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: start-up
    from validator.facts.document import Document
    from validator.report.model import Report


def exit_code(report: Report, fail_on: str) -> int:
    """0 conformant; 1 not conformant (a fail, a MUST error or a MUST requirement not judged,
    or a warn under --fail-on warn)."""
    from validator.report.model import Status

    if not report.summary.conformant:
        return 1
    if fail_on == "warn":
        for f in report.findings:
            if not f.waived and f.status in (Status.WARN, Status.ERROR):
                return 1
    return 0


@dataclass(frozen=True)
class Outcome:
    """A finished check or lint: ``report`` (a ``validator.report.model.Report``, waivers and
    baseline applied) and the ``fail_on`` it is judged under."""

    report: Report
    fail_on: str = "fail"
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return exit_code(self.report, self.fail_on)

    @property
    def conformant(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class LintOutcome(Outcome):
    """A lint: also each config's text as the run read it (``lint --fix`` edits that text,
    and refuses a file changed since), and the folders of its jobs (no edit reaches outside
    them)."""

    texts: dict[str, str] = field(default_factory=dict)
    roots: tuple[str, ...] = ()


@dataclass(frozen=True)
class FleetOutcome(Outcome):
    """A fleet run, live (``run_cluster``) or replayed (``replay_cluster``): the same type
    either way. ``interrupted``: a signal ended a live run early (the report holds what was
    gathered; exit 2). ``node_docs`` and ``cluster_doc``: a live run's facts, for
    ``save_facts`` (a replay's are empty: it saves nothing)."""

    interrupted: bool = False
    save_facts: Path | None = None
    node_docs: tuple[Document, ...] = ()
    cluster_doc: Document = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 2 if self.interrupted else exit_code(self.report, self.fail_on)
