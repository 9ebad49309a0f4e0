"""The terminal report: what passed, what failed with observed and expected values, what
could not be checked and why. With terminal_tables.py, the only module that imports rich.

Colour only on a terminal; piped output (or ``NO_COLOR``) is rich's plain text at a fixed
width, so CI logs and golden tests are stable. rich lays out both.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, TextIO  # Any below: rich's console, tables and cells

from validator.renderers.base import holds as holds_text
from validator.report.model import STATUS_ORDER, Finding, Report, Status

if TYPE_CHECKING:
    from rich.console import Console

    from validator.renderers.problems import FixGroup, SubjectLine
    from validator.renderers.terminal_tables import Tables

WIDE = 120  # below this many columns findings are blocks, not table rows
# spaces at the end of a line, before any closing colour codes; tried only where a run of
# spaces begins (without the look-behind every space of a padded cell started a new try:
# quadratic in the padding, a second for a 30,000-line report)
_TRAILING = re.compile(r"(?<![ \t])[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
_STATUS_VALUES = {s.value for s in Status}


def terminal_width(tty: bool) -> int | None:
    """``COLUMNS`` when set (also when piped: `COLUMNS=80 spec-check check | less`), else
    the terminal's own width, else 140 for a pipe or file (stable CI logs)."""
    raw = os.environ.get("COLUMNS", "")
    if raw.strip().isdigit() and 20 <= int(raw) <= 1000:
        return int(raw)
    return None if tty else 140


STYLE = {
    Status.PASS: "green",
    Status.FAIL: "bold red",
    Status.WARN: "yellow",
    Status.SKIP: "dim",
    Status.ERROR: "bold magenta",
}


def _group_passes(rows: list[Finding]) -> list[Finding]:
    """One row per rule for its passing items ("8 items"), so a DGX's eight GPUs read as one."""
    from dataclasses import replace

    passes: dict[str, list[Finding]] = {}
    out = []
    for f in rows:
        if f.status is Status.PASS and f.item is not None:
            passes.setdefault(f.rule, []).append(f)
        else:
            out.append(f)
    for group in passes.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        seen = sorted({g.observed or "" for g in group})
        observed = ", ".join(seen[:3]) + (f" (+{len(seen) - 3} more values)" if len(seen) > 3 else "")
        out.append(replace(group[0], item=f"{len(group)} items", observed=observed))
    return out


def _jobs(console: object, report: Report) -> None:
    """A lint run's jobs, each with its files and its own verdict (``extra["jobs"]``):
    with several jobs in one folder, which of them is not conformant."""
    from validator.renderers.escape import rich as escape

    jobs = report.extra.get("jobs") or []
    if len(jobs) < 2:
        return
    from validator.report.model import summarize

    print_ = console.print  # type: ignore[attr-defined]
    bad = sum(1 for j in jobs if not j.get("conformant"))
    print_(f"\n[bold]Jobs[/] ({len(jobs)}, {bad} not conformant)")
    by_job: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_job.setdefault(f.subject, []).append(f)
    for j in jobs:
        # a job whose only shortfall is a MUST not judged (all skips) is INCOMPLETE, not failing
        incomplete = not j.get("conformant") and summarize(by_job.get(str(j.get("name")), [])).incomplete
        verdict = ("[green]conformant[/]" if j.get("conformant") else
                   "[yellow]INCOMPLETE[/]" if incomplete else "[red]NOT CONFORMANT[/]")
        files = [f for f in j.get("files", []) if f != j.get("name")]
        also = f" + {escape(', '.join(files))}" if files else ""
        print_(f"  {verdict} {escape(str(j.get('name')))}{also}", soft_wrap=True)


def _not_judged(console: Console, report: Report, reqs: tuple[str, ...]) -> None:
    """Each MUST requirement whose findings were all skips, with every reason its rules gave
    (a quiet lint shows no skip lines): the evidence that would let it be judged."""
    from validator.renderers.escape import rich as escape

    console.print("\n[bold]Not judged[/] (MUST requirements whose findings are all skips: give what each "
                  "reason names)")
    wanted = set(reqs)
    reasons: dict[str, dict[str, list[str]]] = {}
    for f in report.findings:
        if f.requirement in wanted and f.status is Status.SKIP:
            reasons.setdefault(f.requirement, {}).setdefault(f.message, []).append(f.rule)
    for req in reqs:
        for why, rules in list(reasons.get(req, {}).items())[:4]:
            names = ", ".join(dict.fromkeys(rules))
            console.print(f"[yellow]NOT JUDGED[/] {escape(req)} ({escape(names)}): {escape(why)}", soft_wrap=True)


def _too_wide(console: Any, table: Any) -> bool:
    """Whether rich lays ``table`` out wider than the console (its column widths, as its own
    rendering works them out): a column's ``min_width`` can outgrow what the others give up."""
    try:
        extra = table._extra_width
        widths = table._calculate_column_widths(console, console.options.update_width(console.width - extra))
    except (AttributeError, TypeError):  # another rich: keep the layout as it was
        return False
    return bool(sum(widths) + extra > console.width)


def _indent(console: Any, label: str, text: str, by: int = 4) -> None:
    """``label: text`` indented, its continuation lines too (rich wraps at spaces)."""
    from rich.padding import Padding
    from rich.text import Text

    from validator.renderers.escape import text as visible

    line = Text.assemble((f"{label}: ", "dim"), visible(text)) if label else Text(visible(text))
    console.print(Padding(line, (0, 0, 0, by)))


class TerminalRenderer:
    """``show_passes``: list every subject's passes (a fleet otherwise counts them).
    ``reuse``: lay out each shape of table once (``terminal_tables``); off, every table is
    laid out by rich (bench/terminal_bench.py times both, tests compare their bytes)."""

    def __init__(self, *, verbose: bool = False, width: int | None = None, show_passes: bool = False,
                 reuse: bool = True, show_folded: bool = False):
        self.verbose = verbose
        self.width = width
        self.show_passes = show_passes
        self.show_folded = show_folded and not show_passes  # passes one line per rule
        self.reuse = reuse
        self._tables: Tables | None = None  # the rich path's current render's table layouts

    def render(self, report: Report, stream: TextIO) -> None:
        tty = stream.isatty() if hasattr(stream, "isatty") else False
        # NO_COLOR (no-color.org), set to anything but "": plain text on a terminal too
        styled = tty and not os.environ.get("NO_COLOR")
        width = self.width or terminal_width(tty)
        if width is None and not styled:  # a terminal, unstyled: still its own width
            try:
                width = os.get_terminal_size(stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 0
            width = width if width >= 20 else 80  # a pty of no size: rich's own fallback
        out = self._with_rich(report, width, styled)
        # rich pads table cells to the column width: no line ends in spaces (CI logs, diffs);
        # without colour codes a line's rstrip does it (the regex took seconds on 16,000 rows)
        if "\x1b" in out:
            stream.write(_TRAILING.sub(r"\1", out))
        else:
            stream.write("\n".join(line.rstrip(" \t") for line in out.split("\n")))

    def _with_rich(self, report: Report, width: int | None, styled: bool) -> str:
        import io

        from rich.console import Console

        from validator.renderers.terminal_tables import Tables

        # each distinct shape of table laid out once (terminal_tables.py)
        self._tables = Tables() if self.reuse else None
        buf = io.StringIO()
        console = Console(file=buf, width=width, force_terminal=styled,
                          no_color=not styled, highlight=False, soft_wrap=False, emoji=False)
        self._render(report, console)
        return buf.getvalue()

    def _render(self, report: Report, console: Any) -> None:
        from validator.renderers import coverage as cov
        from validator.renderers.escape import rich as escape
        from validator.renderers.problems import fix_groups, subject_lines
        from validator.renderers.scope import scope_of, verdict_text

        digest = report.rule_pack.get("digest", "")[:19]
        console.print(f"[bold]spec-check {escape(report.tool_version)}[/] · spec v{escape(report.spec_version)} · "
                      f"rule pack {escape(report.rule_pack.get('id'))} ({escape(digest)}) · "
                      f"{escape(report.generated_at)}")
        changed = {k: v for k, v in report.parameters.items() if v.get("origin") != "default"}
        if changed:
            console.print("parameters: " + escape(", ".join(f"{k}={v['value']} ({v['origin']})"
                                                             for k, v in changed.items())))
        s = report.summary
        scope = scope_of(report)
        verdict = verdict_text(report, scope)
        note = cov.profile_note(report)
        style = "bold green" if s.conformant else "bold yellow" if s.incomplete else "bold red"
        by_subject: dict[str, list[Finding]] = {}
        for f in report.findings:  # one pass: a 10,000-host result must not be scanned per host
            by_subject.setdefault(f.subject, []).append(f)
        several = len(by_subject) > 1
        order = sorted(by_subject)
        if several:
            # problems first: the verdict, then one line per subject, bad ones first
            console.print(f"[{style}]{escape(verdict)}[/]" + (f" {escape(note)}" if note else ""), soft_wrap=True)
            lines = subject_lines(report)
            self._subjects(console, lines, report)
            order = [ln.name for ln in lines if ln.name in by_subject]
        # a lint (and so the pre-commit hook) is quiet by default: its problems, each once with
        # its file:line and fix under "What to do", and one line counting the rest
        quiet = report.command == "lint" and not self.show_passes
        for subject in [] if quiet else order:
            rows = by_subject[subject]
            if several and not self.show_passes:
                rows = [f for f in rows if f.status in (Status.FAIL, Status.ERROR, Status.WARN)]
                if not rows:
                    continue
            self._subject_table(console, subject, rows)
        if self.show_folded:
            self._folded(console, report)
        groups = fix_groups(report)
        if groups:
            console.print("\n[bold]What to do[/] (by rule: MUST failures, MUST errors, SHOULD warnings, waived last)")
            for g in groups:
                self._fix(console, g)
        if s.not_judged:
            _not_judged(console, report, s.not_judged)
        for line in cov.fleet_summary(report):
            console.print(f"[bold]fleet:[/] {escape(line)}")
        _jobs(console, report)
        counts = ", ".join(f"{s.counts[st.value]} {st.value}" for st in STATUS_ORDER)
        _, n_waived = cov.problem_counts(report)
        if n_waived:
            counts += f" ({n_waived} of them waived or known: not counted)"
        if quiet and (s.counts["pass"] or s.counts["skip"]):
            counts += " (--show passes lists the passes and skips)"
        console.print(f"\n{counts}")
        # the verdict is the last line, whole (a terminal wraps it; grep and `tail -1` see one line)
        console.print(f"[{style}]{escape(verdict)}[/]" + (f" {escape(note)}" if note else ""), soft_wrap=True)

    @staticmethod
    def _folded(console: Console, report: Report) -> None:
        """``--show folded``: the passes, one line per rule with its subjects and values seen."""
        from validator.renderers.auditor import fold_passes
        from validator.renderers.escape import rich as escape

        folds = fold_passes(report.findings)
        if not folds:
            return
        console.print(f"\n[bold]Passed[/], folded by rule ({sum(f.verdicts for f in folds):,} passes)")
        for f in folds:
            values = f.values()
            console.print(f"[green]PASS  [/] {escape(f.rule)}: {f.verdicts:,} on {f.subject_count:,} "
                          f"subject{'s' if f.subject_count != 1 else ''}" + (f"; {escape(values)}" if values else ""))

    def _subjects(self, console: Any, lines: list[SubjectLine], report: Report) -> None:
        from validator.renderers.auditor import node_facts
        from validator.renderers.escape import rich as escape

        # beside each node: how old its facts were when judged
        ages = {n.name: (f" (facts {n.age_text}" + ("" if n.age_text.startswith("in the future") else " old") + ")")
                for n in node_facts(report) if n.age is not None}
        bad = [ln for ln in lines if ln.bad]
        good = [ln for ln in lines if not ln.bad]
        console.print(f"{len(lines)} subjects: {len(bad)} with problems, {len(good)} without")
        for ln in bad:
            rules = ", ".join(ln.rules[:4]) + (f" and {len(ln.rules) - 4} more" if len(ln.rules) > 4 else "")
            style = STYLE.get(Status(ln.outcome), "") if ln.outcome in _STATUS_VALUES else "blue"
            console.print(f"[{style}]{ln.outcome.upper():<6}[/] {escape(ln.name)}: {escape(ln.counts_text())}"
                          + (f": {escape(rules)}" if rules else "") + escape(ages.get(ln.name, "")))
        if good and self.show_passes:
            for ln in good:
                console.print(f"[green]{ln.outcome.upper():<6}[/] {escape(ln.name)}: {escape(ln.counts_text())}"
                              + escape(ages.get(ln.name, "")))
        elif good:
            n = sum(ln.counts["pass"] for ln in good)
            console.print(f"[green]PASS  [/] {len(good)} subject{'s' if len(good) != 1 else ''} with no "
                          f"problems ({n:,} passes; --show passes lists them)")

    def _subject_table(self, console: Any, subject: str, rows: list[Finding]) -> None:
        from validator.renderers.escape import rich as escape

        skipped: dict[str, list[str]] = {}
        if not self.verbose:  # not-applicable rules, one line per reason
            for f in rows:
                if f.status is Status.SKIP:
                    skipped.setdefault(f.message, []).append(f.rule + (f" {f.item}" if f.item else ""))
            rows = _group_passes([f for f in rows if f.status is not Status.SKIP])
            rows.sort(key=lambda f: (STATUS_ORDER.index(f.status), f.sort_key()))
        longest = max((len(f.item or "") for f in rows), default=0)
        rule_w = max((len(f.rule) for f in rows), default=0)
        # a table only where identifiers (rule IDs, GPU UUIDs) fit whole beside two
        # readable value columns; an 80-column terminal gets one block per finding
        if console.width < max(WIDE, 8 + rule_w + min(longest, 48) + 2 * 28 + 12):
            # an 80-column terminal: one finding per block, so no identifier is cut
            console.print(f"\n[bold]{escape(subject)}[/]")
            for f in rows:
                head = f"[{STYLE[f.status]}]{f.status.value.upper():<5}[/] {escape(f.rule)}" + (
                    f" {escape(f.item)}" if f.item else "")
                if f.status is Status.PASS:  # one line: what holds, as seen, then which rule
                    # assembled as text, not markup: escaped pieces side by side can still
                    # form a tag between them ("x[" + ": " + "y]")
                    from validator.renderers.escape import text as plain

                    where = plain(f.rule) + (f", {plain(f.item)}" if f.item else "")
                    said, with_observed = holds_text(f)
                    from rich.text import Text

                    console.print(Text.assemble(("PASS ", STYLE[f.status]),
                                                f" {plain(said)}" + (": " if with_observed else ""),
                                                plain(f.observed or "") if with_observed else "", " ",
                                                (f"({where})", "dim")))
                    continue
                console.print(head)
                seen = f.message if f.status in (Status.SKIP, Status.ERROR) else (f.observed or "")
                label = "why" if f.status in (Status.SKIP, Status.ERROR) else "observed"
                _indent(console, label, seen, 6)
                _indent(console, "expected", f.expected, 6)
        else:
            problems = [f for f in rows if f.status is not Status.PASS]
            passes = [f for f in rows if f.status is Status.PASS]
            title = f"[bold]{escape(subject)}[/]"
            if problems:
                self._wide(console, title, problems, longest)
            if passes:  # a pass says what holds (the expected, met), then the rule's ID
                self._wide(console, "[green]passed: what holds[/]" if problems else title, passes, longest,
                           holds=True)
        for reason, which in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
            names = ", ".join(which[:4]) + (f" and {len(which) - 4} more" if len(which) > 4 else "")
            console.print(f"[dim]SKIP {len(which)} not applicable ({escape(reason)}): {escape(names)}[/]")

    def _wide(self, console: Any, title: str, rows: list[Finding], longest: int, holds: bool = False) -> None:
        """One table of a subject's findings: status, rule, item, observed, expected; for its
        passes (``holds``): status, what holds, item, observed, rule."""
        from validator.renderers.escape import rich as escape

        if not (holds and title.startswith("[green]passed")):  # a table ends in a blank line already
            console.print()
        if holds:
            cells = [(f"[{STYLE[f.status]}]PASS[/]", escape(holds_text(f)[0]), escape(f.item or ""),
                      escape(f.observed or ""), escape(f.rule)) for f in rows]
            columns = ("what holds", "item", "observed", "rule")
        else:
            cells = [(f"[{STYLE[f.status]}]{f.status.value.upper()}[/]", escape(f.rule), escape(f.item or ""),
                      f"[dim]{escape(f.message)}[/]" if f.status in (Status.SKIP, Status.ERROR)
                      else escape(f.observed or ""), escape(f.expected)) for f in rows]
            columns = ("rule", "item", "observed (or why not judged)", "expected")

        from rich import box
        from rich.table import Table

        # Any: rows of markup strings, or of rich Text cells (terminal_tables measures with those)
        def make(content: Any, with_title: bool, item_min: int | None) -> Table:
            t = Table(title=title if with_title else None, title_justify="left", show_lines=False,
                      pad_edge=False, expand=False, box=box.SIMPLE_HEAD)
            t.add_column("status", no_wrap=True)
            if holds:
                t.add_column(columns[0], overflow="fold")
            else:
                t.add_column(columns[0], no_wrap=True)
            # an item (a GPU with its UUID) is an identifier: as wide as it is, up to a point
            t.add_column("item", overflow="fold", min_width=item_min)
            t.add_column(columns[2], overflow="fold")
            if holds:
                t.add_column(columns[3], no_wrap=True)
            else:
                t.add_column(columns[3], overflow="fold")
            for row in content:
                t.add_row(*row)
            return t

        def table(content: Any, with_title: bool) -> Table:
            t = make(content, with_title, min(longest, 48))
            # the item's minimum width must not push the table past the page: rich
            # then cuts every line at the edge, and the expected column loses text
            return make(content, with_title, None) if longest and _too_wide(console, t) else t

        rows_ = tuple(cells)
        key = (console.width, longest, holds, rows_)
        if self._tables is None or not self._tables.draw(console, title, key, rows_, table):
            console.print(table(rows_, True))

    def _fix(self, console: Any, g: FixGroup) -> None:
        """One fix per rule: a single finding in one line as before; several with the count,
        where they are, and the fix once."""
        from validator.renderers.escape import rich as escape

        # a problem a --baseline result already had: known, not waived by anyone
        known = g.waived and all((f.waiver or {}).get("baseline") for f in g.findings)
        status = "KNOWN" if known else "WAIVED" if g.waived else g.status.value.upper()
        style = "blue" if g.waived else STYLE[g.status]
        first = g.findings[0]
        if len(g.findings) == 1:
            where = first.subject + (f" {first.item}" if first.item else "")
            if first.location is not None:
                loc = first.location
                where = f"{loc.file}:{loc.line}" if loc.line else loc.file
            console.print(f"[{style}]{status}[/] {escape(g.rule)} {escape(where)}: {escape(first.message)}")
        else:
            console.print(f"[{style}]{status}[/] {escape(g.heading())}")
            _indent(console, "", g.summary)
            _indent(console, "where", g.where())
        if g.status is Status.ERROR:
            if len(g.findings) > 1:
                for why in g.reasons():
                    _indent(console, "why not judged", why)
            src = next((f.source for f in g.findings if f.source), None)
            if src:
                _indent(console, "source", src)
        elif len(g.findings) == 1 and first.location is not None:
            # the line as the run read it, carried in the finding: a renderer never opens a file
            text = first.location.text
            if isinstance(text, str) and isinstance(first.location.line, int):
                console.print(f"    [dim]{first.location.line:>5} |[/] {escape(text.strip())}")
        if g.status is not Status.ERROR and g.remediation:
            _indent(console, "fix", g.remediation)
