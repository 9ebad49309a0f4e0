"""GitHub-flavoured Markdown: for PR comments and CI step summaries ($GITHUB_STEP_SUMMARY).

A reviewer sees the verdict line first, then the counts, then only what needs doing
(failures, errors, warnings) in a table; passes and skips fold into ``<details>``. Cell
text is escaped for Markdown tables and inline HTML, since findings quote config values;
text inside a code span is *not* backslash-escaped (GitHub would show the backslashes):
it only loses backticks and newlines, and its pipes are escaped for the table.

GitHub refuses a comment over 65,536 characters, so the document is capped at
``MAX_CHARS`` (60,000): problem rows are written while they fit, and the rest are folded
into one row per rule (how many, on how many subjects) with a note of what was left out;
the JSON result always has everything.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from validator.renderers import coverage as cov
from validator.renderers.base import holds as holds_text
from validator.report.model import STATUS_ORDER, Finding, Report, Status

ICON = {
    "fail": "❌",
    "error": "⛔",
    "warn": "⚠️",
    "pass": "✅",
    "skip": "➖",  # noqa: RUF001 - an icon, not a minus
    "waived": "🛡️",
    "not judged": "❔",
    "none": "·",
}
MAX_CHARS = 60_000  # GitHub refuses comments over 65,536 characters; the rest is in the JSON result
_RESERVE = 9_000  # kept for the folded summary, waivers and coverage after the problem rows


def cell(value: object) -> str:
    """Text safe inside a GFM table cell: escapes, no newlines, no raw HTML, no pipes."""
    return _escape("" if value is None else str(value)).strip()


def _escape(text: str) -> str:
    from validator.renderers import escape

    return escape.markdown(text)


def prose(value: object) -> str:
    """Rule text for a table cell: its `code` spans stay code spans (the remediation's
    commands), the rest is escaped like any cell. An unpaired backtick is plain text."""
    parts = ("" if value is None else str(value)).split("`")
    if len(parts) % 2 == 0:  # odd number of backticks: no spans to trust
        return cell(value)
    return "".join(code(p) if i % 2 else _escape(p) for i, p in enumerate(parts)).strip()


def code(value: object) -> str:
    """A code span: no backslash escapes inside (they would show), no backticks or newlines,
    pipes escaped (GFM splits table cells on them even inside code)."""
    from validator.renderers import escape

    text = escape.text(value)
    text = text.replace("`", "'").replace("\r", "").replace("\n", " ").replace("|", "\\|")
    return f"`{text.strip()}`"


def _where(f: Finding) -> str:
    if f.location is not None:
        return f"{f.location.file}:{f.location.line}" if f.location.line else f.location.file
    return f.subject + (f" {f.item}" if f.item else "")


class _Capped:
    """A writer that knows how much of the character budget is left."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def __call__(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def fits(self, text: str, reserve: int = 0) -> bool:
        return self.size + len(text) + reserve <= self.limit


class MarkdownRenderer:
    def __init__(self, *, max_chars: int = MAX_CHARS, show_passes: bool = False, show_folded: bool = False,
                 **_: object) -> None:
        self.max_chars = max_chars
        self.show_passes = show_passes
        self.show_folded = show_folded and not show_passes  # the passes, one row per rule

    def render(self, report: Report, stream: TextIO) -> None:
        w = _Capped(self.max_chars)
        self._render(report, w)
        stream.write("".join(w.parts))

    def _render(self, report: Report, w: _Capped) -> None:
        from validator.renderers.scope import verdict_text

        s = report.summary
        head, _, scope = verdict_text(report).partition(" (")
        icon = "✅ " if s.conformant else "➖ " if s.incomplete else "❌ "  # noqa: RUF001 - an icon
        verdict = icon + f"**{cell(head)}**" + (f" ({cell(scope)}" if scope else "")
        n_subj = len(report.subjects)
        waived = [f for f in report.findings if f.waiver]
        note = cov.profile_note(report, code, cell)
        note = f" {note}" if note else ""
        w(f"### spec-check {cell(report.command)}: {verdict}{note}\n\n")
        _, n_waived = cov.problem_counts(report)
        # the table's own counts (a "failing" count of fails and MUST errors sat above a
        # table that counted every error: two numbers for one thing)
        counts = ", ".join(f"{s.counts[st.value]} {st.value}" for st in (Status.FAIL, Status.ERROR, Status.WARN))
        w(
            counts + (f" ({n_waived} waived)" if n_waived else "") + " · "
            f"{n_subj} subject{'s' if n_subj != 1 else ''} · rule pack {cell(report.rule_pack.get('id'))} "
            f"{code(str(report.rule_pack.get('digest', ''))[:19])} · spec-check {cell(report.tool_version)} · "
            f"{cell(report.generated_at)}"
        )
        if report.profile:
            w(f" · profile {code(report.profile)}")
        w("\n\n")
        for line in cov.fleet_summary(report):
            w(f"**Fleet:** {cell(line)}\n\n")
        changed = cov.non_default(report)
        if changed:
            w(
                "Parameters changed: "
                + ", ".join(
                    f"{code(k)} = {cell(v.get('value'))} ({cell(v.get('origin'))})"
                    for k, v in changed.items()
                )
                + "\n\n"
            )
        w(
            "| "
            + " | ".join(f"{ICON[st.value]} {st.value}" for st in STATUS_ORDER)
            + " | 🛡️ waived |\n"
        )
        w("|" + "---:|" * (len(STATUS_ORDER) + 1) + "\n")
        w(
            "| "
            + " | ".join(str(s.counts[st.value]) for st in STATUS_ORDER)
            + f" | {sum(1 for f in waived if f.waived)} |\n\n"
        )

        if len(cov.subject_names(report)) > 1:
            self._subject_lines(report, w, self.show_passes)
        if self.show_folded:
            self._passes_folded(report, w)
        order = {st: i for i, st in enumerate(STATUS_ORDER)}
        problems = sorted(
            (f for f in report.findings if f.status in (Status.FAIL, Status.ERROR, Status.WARN)),
            key=lambda f: (order[f.status], f.sort_key()),
        )
        left_out: list[str] = []
        if problems:
            w(
                "#### Problems\n\n| | rule | where | observed | expected |\n|---|---|---|---|---|\n"
            )
            shown = 0
            for f in problems:
                icon = ICON["waived"] if f.waived else ICON[f.status.value]
                seen = f.observed if f.status is not Status.ERROR else f.message
                row = (
                    f"| {icon} {f.status.value} | {code(f.rule)} | {cell(_where(f))} | {cell(seen)} | "
                    f"{cell(f.expected)} |\n"
                )
                if not w.fits(row, _RESERVE):
                    break
                w(row)
                shown += 1
            rest = problems[shown:]
            if rest:
                self._folded(w, rest)
                left_out.append(f"{len(rest)} of {len(problems)} problem rows (folded by rule above)")
            w("\n")
            self._fixes(report, w, left_out)
        if waived:
            w(
                "#### Waivers\n\n| finding | waiver | approver | expires | state | justification |\n"
                "|---|---|---|---|---|---|\n"
            )
            for i, f in enumerate(waived):
                wv = f.waiver or {}
                state = "active" if wv.get("active") else "**expired**"
                row = (
                    f"| {code(f.rule)} {cell(_where(f))} | {code(wv.get('id'))} on {cell(wv.get('subject'))} | "
                    f"{cell(wv.get('approver'))} | {cell(wv.get('expires'))} | {state} | "
                    f"{cell(wv.get('justification'))} |\n"
                )
                if not w.fits(row, _RESERVE // 3):
                    left_out.append(f"{len(waived) - i} of {len(waived)} waived findings")
                    break
                w(row)
            w("\n")
        rest_ok = [f for f in report.findings if f.status in (Status.PASS, Status.SKIP)]
        if rest_ok:
            by_rule: dict[str, Counter[str]] = {}
            subjects: dict[str, set[str]] = {}
            holds: dict[str, list[str]] = {}  # what holds where the rule passed, as the terminal says it
            whys: dict[str, list[str]] = {}  # why it was skipped: every skip shows its reason
            for f in rest_ok:
                by_rule.setdefault(f.rule, Counter())[f.status.value] += 1
                subjects.setdefault(f.rule, set()).add(f.subject)
                held = holds.setdefault(f.rule, [])
                text = holds_text(f)[0] if f.status is Status.PASS else ""
                if text and text not in held:
                    held.append(text)
                why = whys.setdefault(f.rule, [])
                if f.status is Status.SKIP and f.message not in why:
                    why.append(f.message)
            w(
                f"<details><summary>{len(rest_ok)} passed or skipped, by rule</summary>\n\n"
                f"| what holds | rule | {ICON['pass']} pass | {ICON['skip']} skip | why skipped | subjects |\n"
                "|---|---|---:|---:|---|---:|\n"
            )
            rules = sorted(by_rule)
            for i, rule in enumerate(rules):
                c = by_rule[rule]
                said = holds[rule][:2] + (["…"] if len(holds[rule]) > 2 else [])
                why = whys[rule][:2] + ([f"… ({len(whys[rule]) - 2} more reasons)"] if len(whys[rule]) > 2 else [])
                row = (f"| {cell('; '.join(said))} | {code(rule)} | {c['pass']} | {c['skip']} "
                       f"| {cell('; '.join(why))} | {len(subjects[rule])} |\n")
                if not w.fits(row, _RESERVE // 4):
                    left_out.append(f"{len(rules) - i} of {len(rules)} rules that passed or skipped")
                    break
                w(row)
            w("\n</details>\n\n")
        cells = cov.matrix(report)
        reqs = cov.requirement_ids(report)
        per_req: dict[str, list[cov.Cell]] = {}
        for (_, r), cell_ in cells.items():
            per_req.setdefault(r, []).append(cell_)
        rows = []
        for rid in reqs:
            mine = per_req.get(rid, [])
            if mine:
                # a subject whose findings of the requirement are all skips judged nothing:
                # it is "not judged", counted apart, never among the conformant
                judged = [c for c in mine if c.outcome != "skip"]
                overall = cov.outcome([f for c in mine for f in c.findings])
                label = f"{ICON['skip']} not judged" if overall == "skip" else ICON[overall]
                nj = len(mine) - len(judged)
                rows.append(
                    f"| {rid} | {label} | "
                    f"{sum(1 for c in judged if c.conformant)}/{len(judged)} | {nj} |\n"
                )
        coverage = (
            "<details><summary>Requirement coverage</summary>\n\n"
            "| requirement | outcome | subjects conformant (of those judged) | subjects not judged (only skips) |\n"
            "|---|:---:|---:|---:|\n" + "".join(rows) + "\n</details>\n"
        )
        if rows and w.fits(coverage, 400):
            w(coverage)
        elif rows:
            left_out.append("the requirement coverage table")
        if left_out:
            w(
                f"\n> **Shortened to fit a comment ({self.max_chars:,} characters):** left out "
                + "; ".join(left_out)
                + ". The JSON result (`--format json`) and the HTML report have every finding.\n"
            )

    @staticmethod
    def _passes_folded(report: Report, w: _Capped) -> None:
        """``--show folded``: the passes, one row per rule with its subjects and values seen."""
        from validator.renderers.auditor import fold_passes

        folds = fold_passes(report.findings)
        if not folds:
            return
        w("#### Passed, folded by rule\n\n| rule | subjects | passes | values seen |\n|---|---:|---:|---|\n")
        for i, f in enumerate(folds):
            row = f"| {code(f.rule)} | {f.subject_count} | {f.verdicts} | {cell(f.values())} |\n"
            if not w.fits(row, _RESERVE * 2):
                w(f"| … {len(folds) - i} more rules | | | |\n")
                break
            w(row)
        w("\n")

    @staticmethod
    def _subject_lines(report: Report, w: _Capped, show_passes: bool = False) -> None:
        """One row per subject with problems, worst first; the rest counted in one row (one
        row each with ``--show passes``)."""
        from validator.renderers.auditor import node_facts
        from validator.renderers.problems import subject_lines

        lines = subject_lines(report)
        bad = [ln for ln in lines if ln.bad]
        good = [ln for ln in lines if not ln.bad]
        ages = {n.name: n.age_text for n in node_facts(report)}  # beside each node: its facts' age
        w(
            f"#### Subjects: {len(bad)} of {len(lines)} with problems\n\n"
            "| | subject | findings | rules with problems | facts age |\n|---|---|---|---|---|\n"
        )
        for i, ln in enumerate(bad):
            rules = ", ".join(code(r) for r in ln.rules[:4]) + (
                f" and {len(ln.rules) - 4} more" if len(ln.rules) > 4 else "")
            row = (f"| {ICON[ln.outcome]} {ln.outcome} | {cell(ln.name)} | {cell(ln.counts_text())} | {rules} | "
                   f"{cell(ages.get(ln.name, ''))} |\n")
            if not w.fits(row, _RESERVE * 2):
                w(f"| | … {len(bad) - i} more subjects with problems | | | |\n")
                break
            w(row)
        if good and show_passes:
            for i, ln in enumerate(good):
                row = (f"| {ICON['pass']} pass | {cell(ln.name)} | {cell(ln.counts_text())} | | "
                       f"{cell(ages.get(ln.name, ''))} |\n")
                if not w.fits(row, _RESERVE * 2):
                    w(f"| | … {len(good) - i} more subjects without problems | | | |\n")
                    break
                w(row)
        elif good:
            n = sum(ln.counts["pass"] for ln in good)
            w(f"| {ICON['pass']} pass | {len(good)} subject{'s' if len(good) != 1 else ''} with no problems | "
              f"{n} pass | | |\n")
        w("\n")

    @staticmethod
    def _fixes(report: Report, w: _Capped, left_out: list[str]) -> None:
        """What to do: one row per rule (and kind of problem), with where it applies;
        MUST failures first, then MUST errors, SHOULD warnings, waived last."""
        from validator.renderers.problems import fix_groups

        groups = fix_groups(report)
        w("#### What to do\n\n| | rule | what is wrong | where | fix |\n|---|---|---|---|---|\n")
        for i, g in enumerate(groups):
            icon = ICON["waived"] if g.waived else ICON[g.status.value]
            label = "waived" if g.waived else g.status.value
            fix = prose(g.remediation) if g.status is not Status.ERROR else (
                "could not be checked: " + cell("; ".join(g.reasons())))
            row = (f"| {icon} {label} | {code(g.rule)} | {cell(g.summary)} | {cell(g.where())} | {fix} |\n")
            if not w.fits(row, _RESERVE // 2):
                left_out.append(f"{len(groups) - i} of {len(groups)} fixes")
                break
            w(row)
        w("\n")

    @staticmethod
    def _folded(w: _Capped, rest: list[Finding]) -> None:
        """The problems that did not fit, one row per rule and status: how many, where."""
        groups: dict[tuple[str, str], list[Finding]] = {}
        for f in rest:
            key = (f.rule, "waived" if f.waived else f.status.value)
            groups.setdefault(key, []).append(f)
        w(
            f"\n<details><summary>{len(rest)} more problems, folded by rule</summary>\n\n"
            "| | rule | findings | subjects | e.g. |\n|---|---|---:|---:|---|\n"
        )
        for (rule, st), fs in sorted(groups.items()):
            subjects = sorted({f.subject for f in fs})
            row = (
                f"| {ICON[st]} {st} | {code(rule)} | {len(fs)} | {len(subjects)} | "
                f"{cell(', '.join(subjects[:3]) + (', …' if len(subjects) > 3 else ''))} |\n"
            )
            if not w.fits(row, 1500):
                w(f"| | … {len(groups)} rules in all | | | |\n")
                break
            w(row)
        w("\n</details>\n")
