"""GitHub-flavoured Markdown: for PR comments and CI step summaries ($GITHUB_STEP_SUMMARY).

A reviewer sees the verdict line first, then the counts, then only what needs doing
(failures, errors, warnings) in a table; passes and skips fold into ``<details>``. Cell
text is escaped for Markdown tables and inline HTML, since findings quote config values.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TextIO

from validator.model import STATUS_ORDER, Finding, Report, Status
from validator.renderers import coverage as cov

ICON = {
    "fail": "❌",
    "error": "⛔",
    "warn": "⚠️",
    "pass": "✅",
    "skip": "➖",  # noqa: RUF001 - an icon, not a minus
    "waived": "🛡️",
    "none": "·",
}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#~])")
MAX_ROWS = 500  # GitHub truncates comments at 65,536 characters; the rest is in the JSON result


def cell(value: object) -> str:
    """Text safe inside a GFM table cell: escapes, no newlines, no raw HTML, no pipes."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("\r", "").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text).strip()


def _where(f: Finding) -> str:
    if f.location is not None:
        return f"{f.location.file}:{f.location.line}" if f.location.line else f.location.file
    return f.subject + (f" {f.item}" if f.item else "")


class MarkdownRenderer:
    def render(self, report: Report, stream: TextIO) -> None:
        w = stream.write
        s = report.summary
        verdict = "✅ **Conformant**" if s.conformant else "❌ **Not conformant**"
        n_subj = len(report.subjects)
        waived = [f for f in report.findings if f.waiver]
        w(
            f"### spec-check {cell(report.command)}: {verdict} to spec v{cell(report.spec_version)}\n\n"
        )
        w(
            f"{n_subj} subject{'s' if n_subj != 1 else ''} · rule pack {cell(report.rule_pack.get('id'))} "
            f"`{cell(report.rule_pack.get('digest', ''))[:19]}` · spec-check {cell(report.tool_version)} · "
            f"{cell(report.generated_at)}"
        )
        if report.profile:
            w(f" · profile `{cell(report.profile)}`")
        w("\n\n")
        changed = {k: v for k, v in report.parameters.items() if v.get("origin") != "default"}
        if changed:
            w(
                "Parameters changed: "
                + ", ".join(
                    f"`{cell(k)}` = {cell(v.get('value'))} ({cell(v.get('origin'))})"
                    for k, v in sorted(changed.items())
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
            + f" | {sum(1 for f in waived if cov.waived(f))} |\n\n"
        )

        order = {st: i for i, st in enumerate(STATUS_ORDER)}
        problems = sorted(
            (f for f in report.findings if f.status in (Status.FAIL, Status.ERROR, Status.WARN)),
            key=lambda f: (order[f.status], f.sort_key()),
        )
        if problems:
            w(
                "#### Problems\n\n| | rule | where | observed | expected | fix |\n|---|---|---|---|---|---|\n"
            )
            for f in problems[:MAX_ROWS]:
                icon = ICON["waived"] if cov.waived(f) else ICON[f.status.value]
                fix = f.remediation if f.status is not Status.ERROR else f.message
                w(
                    f"| {icon} {f.status.value} | `{cell(f.rule)}` | {cell(_where(f))} | {cell(f.observed)} | "
                    f"{cell(f.expected)} | {cell(fix)} |\n"
                )
            if len(problems) > MAX_ROWS:
                w(f"\n…and {len(problems) - MAX_ROWS} more; see the JSON result.\n")
            w("\n")
        if waived:
            w(
                "#### Waivers\n\n| finding | waiver | approver | expires | state | justification |\n"
                "|---|---|---|---|---|---|\n"
            )
            for f in waived:
                wv = f.waiver or {}
                state = "active" if wv.get("active") else "**expired**"
                w(
                    f"| `{cell(f.rule)}` {cell(_where(f))} | `{cell(wv.get('id'))}` on {cell(wv.get('subject'))} | "
                    f"{cell(wv.get('approver'))} | {cell(wv.get('expires'))} | {state} | "
                    f"{cell(wv.get('justification'))} |\n"
                )
            w("\n")
        rest = [f for f in report.findings if f.status in (Status.PASS, Status.SKIP)]
        if rest:
            by_rule: dict[str, Counter[str]] = {}
            subjects: dict[str, set[str]] = {}
            for f in rest:
                by_rule.setdefault(f.rule, Counter())[f.status.value] += 1
                subjects.setdefault(f.rule, set()).add(f.subject)
            w(
                f"<details><summary>{len(rest)} passed or skipped, by rule</summary>\n\n"
                f"| rule | {ICON['pass']} pass | {ICON['skip']} skip | subjects |\n|---|---:|---:|---:|\n"
            )
            for rule in sorted(by_rule):
                c = by_rule[rule]
                w(f"| `{cell(rule)}` | {c['pass']} | {c['skip']} | {len(subjects[rule])} |\n")
            w("\n</details>\n\n")
        cells = cov.matrix(report)
        reqs = cov.requirement_ids(report)
        rows = []
        for rid in reqs:
            mine = [c for (_, r), c in cells.items() if r == rid]
            if mine:
                rows.append(
                    f"| {rid} | {ICON[cov.outcome([f for c in mine for f in c.findings])]} | "
                    f"{sum(1 for c in mine if c.conformant)}/{len(mine)} |\n"
                )
        if rows:
            w(
                "<details><summary>Requirement coverage</summary>\n\n| requirement | outcome | subjects conformant |\n"
                "|---|:---:|---:|\n" + "".join(rows) + "\n</details>\n"
            )
