"""The HTML conformance report: one self-contained file a provider hands to a customer.

Read top-down it answers, in order: conformant or not (and against what: spec version,
rule-pack digest, tool version, date, parameters, profile); which requirements are covered
and how they came out; for a fleet, which host fails which requirement, and the measured
bandwidth against the 400 Gb/s line; then every finding with its evidence and the fix.

Every string from a finding (config values, host names, file paths) is hostile until
escaped: everything goes through ``html.escape``, and the page runs no script at all.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TextIO

from validator.renderers import coverage as cov
from validator.renderers.base import holds as holds_text
from validator.renderers.html_template import CSP, CSS, badge, bandwidth_svg
from validator.report.model import STATUS_ORDER, Finding, Report, Scope, Status

Write = Callable[[str], None]
PROBLEMS = (Status.FAIL, Status.ERROR, Status.WARN)
FACTS_ROWS = 64  # nodes in the "Facts judged" table up front; a larger fleet's range is said above it


def _e(value: object) -> str:
    from validator.renderers import escape as esc

    return esc.html(value)


def _id(value: object) -> str:
    """An identifier (rule ID, GPU UUID, host name) that must not break mid-word."""
    return f'<code class="id">{_e(value)}</code>'


def _ids(value: object) -> str:
    """An item such as ``GPU0 (GPU-4a5f...)``: each word an identifier that does not break,
    the line free to wrap between them (one unbreakable item squeezed the evidence column)."""
    return " ".join(_id(w) for w in str(value).split(" ") if w) or _id(value)


def _prose(value: object) -> str:
    """Rule text with its `code` spans rendered as code (the remediation's commands);
    an unpaired backtick is plain text. Everything is escaped."""
    parts = ("" if value is None else str(value)).split("`")
    if len(parts) % 2 == 0:
        return _e(value)
    return "".join(f"<code>{_e(p)}</code>" if i % 2 else _e(p) for i, p in enumerate(parts))


def _rel(path: object) -> str:
    """A file path as the reader should see it: relative to where the run was made (the
    working directory of the run that wrote the report) when it lies below it, so a page
    does not show the home directory of the machine that made it; other paths (a probe's
    /sys file, a host address) as they are."""
    import os

    text = "" if path is None else str(path)
    if os.path.isabs(text):
        try:
            rel = os.path.relpath(text)
        except ValueError:
            return text
        if not rel.startswith(".."):
            return rel
    return text


def _source(text: str | None) -> str:
    """A subject's source as shown: ``replay:FILE`` with the file relative as ``_rel`` makes it."""
    if not text:
        return ""
    head, sep, rest = text.partition(":")
    if sep and head.isalpha() and rest.startswith("/"):
        return f"{head}:{_rel(rest)}"
    return _rel(text)


def title_of(report: Report) -> str:
    """What the page is about: the fleet (cluster subject), the one node or job, or a
    count of subjects by kind."""
    kinds = Counter(sub.kind for sub in report.subjects)
    clusters = [sub.name for sub in report.subjects if sub.kind == "cluster"]
    if clusters:
        jobs, nodes = kinds[Scope.JOB], kinds[Scope.NODE]
        hosts = f"{nodes} node{'s' if nodes != 1 else ''}"
        # the cluster subject is named after the fleet where the run knew a name
        fleet = f"a fleet of {hosts}" if clusters[0] == "cluster" else f"fleet {clusters[0]} ({hosts})"
        return fleet + (f" and {jobs} job{'s' if jobs != 1 else ''}" if jobs else "")
    if len(report.subjects) == 1:
        sub = report.subjects[0]
        return f"{sub.kind} {sub.name}"
    return ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(kinds.items())) or "no subjects"


def _head(caption: str, *cols: str, cls: str = "") -> str:
    """A table's opening: caption and a header row of column headers (the semantic markup
    screen readers and the tests rely on)."""
    attr = f' class="{cls}"' if cls else ""
    ths = "".join(f'<th scope="col">{_e(c)}</th>' for c in cols)
    return f"<table{attr}><caption>{_e(caption)}</caption><thead><tr>{ths}</tr></thead><tbody>\n"


def by_subject(report: Report) -> dict[str, list[Finding]]:
    """Findings grouped by subject in one pass (a fleet has hundreds of thousands)."""
    groups: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        groups[f.subject].append(f)
    return groups


def _anchor(*parts: str) -> str:
    """A safe, unique fragment id: readable, plus a short hash so that names differing
    only in characters that are replaced (``a b``, ``a_b``) do not collide."""
    text = "-".join(parts)
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:60] + "-" + digest


class HtmlRenderer:
    """Renders a Report as one HTML document (inline CSS and SVG, no script).

    ``show_passes``: list every pass of every subject; by default (``--show folded``) the
    passes are folded into one line per rule with its count of subjects and range of values,
    so that a fleet's report prints in a few pages."""

    def __init__(self, *, show_passes: bool = False, show_folded: bool = True, **_: object) -> None:
        self.show_passes = show_passes

    def render(self, report: Report, stream: TextIO) -> None:
        parts: list[str] = []
        w = parts.append
        s = report.summary
        title = f"Conformance of {title_of(report)} to spec v{report.spec_version} (spec-check)"
        w(
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        )
        # problems first: the verdict and its scope, then what fails with its fix; the
        # inventories (counts, metadata, subjects, parameters, coverage) after the findings
        self._summary(report, w)
        self._facts(report, w)
        self._to_fix(report, w)
        self._findings(report, w)
        if not self.show_passes:
            self._passes(report, w)
        self._fleet(report, w)
        self._coverage(report, w)
        self._inventory(report, w)
        w(
            f'<footer class="muted small"><p>Generated by spec-check {_e(report.tool_version)} '
            f"at {_e(report.generated_at)}. Status meanings: pass (met), fail (a MUST not met), warn "
            "(a SHOULD not met), skip (not applicable), error (could not be checked; never counted "
            f"as a pass). {'Conformant' if s.conformant else 'Not conformant'}: "
            "no fail and no MUST error remain outside an active waiver, and every MUST requirement "
            "with findings was judged (one whose findings are all skips is not judged: INCOMPLETE)."
            "</p></footer>\n"
        )
        w("</main>\n</body>\n</html>\n")
        stream.write("".join(parts))

    # ---- summary -------------------------------------------------------------------------

    def _summary(self, report: Report, write: Write) -> None:
        s = report.summary
        kinds = Counter(sub.kind for sub in report.subjects)
        what = (
            ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(kinds.items()))
            or "no subjects"
        )
        write(
            f"<header><h1>Conformance of {_e(title_of(report))} to spec v{_e(report.spec_version)}</h1>\n"
            f'<p class="muted small">spec-check {_e(report.command)} · {_e(report.generated_at)}</p>\n'
        )
        from validator.renderers.scope import coverage_text, scope_of, verdict_text

        scope = scope_of(report)
        head, _, rest = verdict_text(report, scope).partition(" (")
        tally = tiles(report)
        note = cov.profile_note(report)
        write(
            f'<div class="verdict {"ok" if s.conformant else "bad"}" role="status"><strong>{_e(head)}</strong>'
            f"<span>{_e('(' + rest) if rest else ''}{' ' + _e(note) if note else ''} · {_e(what)} · "
            f"{tally['fail']} fail, {tally['error']} could not be checked, {tally['warn']} warn"
            + (f"; {tally['waived']} waived, counted apart" if tally["waived"] else "")
            + "</span></div>\n"
        )
        covered = "every scope and requirement of the spec" if scope.complete else (
            f"{' and '.join(scope.scopes) or 'no'} scope: {coverage_text(report, scope)}")
        write(f'<p class="covers"><strong>This report covers</strong> {_e(covered)}.')
        if scope.not_judged:
            write(f' <span class="muted">Not judged (every finding a skip, each with its reason below): '
                  f'{", ".join(_id(r) for r in scope.not_judged)}.</span>')
        if scope.not_evaluated:
            write(f' <span class="muted">Not evaluated: {", ".join(_id(r) for r in scope.not_evaluated)}.</span>')
        write("</p>\n")
        self._reading(report, write)
        self._signature(report, write)
        fleet = cov.fleet_summary(report)
        if fleet:
            write(f'<p class="fleet-summary"><strong>Fleet:</strong> {_e("; ".join(fleet))}.</p>\n')
        write("</header>\n")

    @staticmethod
    def _reading(report: Report, write: Write) -> None:
        """Whose words and whose thresholds: the spec's text is not public, and some defaults
        are spec-check's own choice (each parameter's ``reading`` in the spec's YAML)."""
        from validator.renderers.auditor import WORDING, readings

        read = readings(report.spec_version)
        own, changed = read.own(report), read.changed(report)
        text = f'<p class="reading small"><strong>spec-check\'s reading.</strong> {_e(WORDING)}'
        if own:
            text += (f" {len(own)} of the {len(read.by_parameter)} thresholds used here are spec-check's "
                     f"own choice, not published figures: "
                     + ", ".join(f'<code class="id own-reading">{_e(n)}</code>' for n in own)
                     + ' (each cites its reasoning: <a href="#parameters">parameters</a>).')
        if changed:
            text += (" Set by this run's profile or --set instead of spec-check's choice: "
                     + ", ".join(_id(n) for n in changed) + ".")
        write(text + "</p>\n")

    def _facts(self, report: Report, write: Write) -> None:
        """Each node's facts up front: when collected, how old when judged, from which file."""
        from validator.renderers.auditor import node_facts

        rows = node_facts(report)
        if not rows:
            return
        groups = by_subject(report)
        write('<section><h2 id="facts">Facts judged</h2>\n')
        write(_head(f"When each subject's facts were collected and their age at {report.generated_at}",
                    "Subject", "Collected", "Age", "Facts source", "Probed by", "Machine", "Outcome",
                    cls="facts"))
        from validator.renderers.problems import subject_lines

        rank = {ln.name: i for i, ln in enumerate(subject_lines(report))}
        ordered = sorted(rows, key=lambda x: rank.get(x.name, len(rank)))  # problems first
        if len(ordered) > FACTS_ROWS:  # a large fleet: the first rows, and the range of all
            ages = [n.age for n in rows if n.age is not None]
            oldest = max(ages) if ages else None
            newest = min(ages) if ages else None
            from validator.renderers.auditor import age_text

            write(f'<p class="facts-range">{len(rows):,} nodes; facts ages from {_e(age_text(newest))} to '
                  f"{_e(age_text(oldest))}; "
                  f"{sum(1 for n in rows if n.age is None):,} without a collection time. The first "
                  f'{FACTS_ROWS} (problems first) below; every node under <a href="#subjects">Subjects</a>.</p>\n')
            ordered = ordered[:FACTS_ROWS]
        for n in ordered:
            future = n.age is not None and n.age.total_seconds() < 0
            write(
                f'<tr><th scope="row"><a href="#{_anchor("s", n.name)}">{_e(n.name)}</a></th>'
                f"<td>{_e(n.collected_at or 'not recorded')}</td>"
                f'<td class="age{" future" if future else ""}">{_e(n.age_text)}</td>'
                f'<td class="ev">{_e(_source(n.source) or "not recorded")}</td>'
                f"<td>{_e(f'spec-check {n.probe_version}' if n.probe_version else 'not recorded')}</td>"
                f'<td class="ev">{_e(n.machine_text)}</td>'
                f"<td>{badge(cov.subject_outcome(groups.get(n.name, [])))}</td></tr>\n"
            )
        write("</tbody></table></section>\n")

    def _passes(self, report: Report, write: Write) -> None:
        """The passes folded: one row per rule, with its subjects and the values seen."""
        from validator.renderers.auditor import fold_passes, fold_skips

        folds, skips = fold_passes(report.findings), fold_skips(report.findings)
        if not folds and not skips:
            return
        write('<section><h2 id="passes">Passed and skipped checks</h2>\n')
        verdicts = sum(f.verdicts for f in folds)
        write(f"<p>{verdicts:,} passes of {len(folds)} rules and {sum(f.verdicts for f in skips):,} skips, "
              "one row per rule (<code>spec-check report RESULT.json --format html --show passes</code> "
              "lists each on its subject).</p>\n")
        if skips:
            write(_head("Not applicable (skipped: not judged), folded by rule and reason", "Rule", "Reason",
                        "Subjects", "Skips", cls="skips"))
            for k in skips:
                write(
                    f'<tr><th scope="row">{_id(k.rule)}<br><span class="muted small">{_e(k.level)}</span></th>'
                    f'<td class="ev">{_prose(k.reason)}</td><td>{len(k.subjects):,}: {_e(k.where())}</td>'
                    f"<td>{k.verdicts:,}</td></tr>\n"
                )
            write("</tbody></table>\n")
        if not folds:
            write("</section>\n")
            return
        write(_head("Passes folded by rule", "Rule", "Holds", "Subjects", "Passes", "Values seen",
                    cls="passes"))
        for f in folds:
            said = holds_text(f.sample)[0] if f.sample is not None else f.expected
            write(
                f'<tr><th scope="row">{_id(f.rule)}<br><span class="muted small">{_e(f.level)}</span></th>'
                f"<td>{_e(said)}</td><td>{f.subject_count:,}</td><td>{f.verdicts:,}</td>"
                f'<td class="ev">{_e(f.values())}</td></tr>\n'
            )
        write("</tbody></table></section>\n")

    def _to_fix(self, report: Report, write: Write) -> None:
        """Each failing rule once, where it fails and its fix: what a reader acts on."""
        from validator.renderers.problems import fix_groups

        groups = [g for g in fix_groups(report) if not g.waived]
        write('<section><h2 id="to-fix">What to fix</h2>\n')
        if not groups:
            write("<p>Nothing: no check failed, and none could not be done.</p></section>\n")
            return
        write('<ol class="to-fix">\n')
        for g in groups:
            first = g.findings[0]
            what = first.message if len(g.findings) == 1 else g.summary
            write(
                f"<li>{badge(g.status.value)} {_id(g.rule)} <span class=\"muted small\">{_e(g.level)}</span>"
                f" on {_e(g.where())}: {_prose(what)}"
                + ("<br><strong>Not judged because:</strong> " + _e("; ".join(g.reasons()))
                   if g.status.value == "error" and len(g.findings) > 1 else "")
                + (f"<br><strong>Fix:</strong> {_prose(g.remediation)}" if g.remediation else "")
                + "</li>\n"
            )
        write("</ol></section>\n")

    def _inventory(self, report: Report, write: Write) -> None:
        """What the run was: counts, metadata, subjects and parameters (after the findings)."""
        tally = tiles(report)
        write('<section><h2 id="run">About this run</h2>\n')
        write('<div class="counts">')
        for st in STATUS_ORDER:
            write(f'<div class="count">{badge(st.value)}<b>{tally[st.value]}</b></div>')
        write(f'<div class="count">{badge("waived")}<b>{tally["waived"]}</b></div></div>\n')
        digest = report.rule_pack.get("digest", "")
        write(
            '<dl class="meta">'
            f"<dt>Spec version</dt><dd>{_e(report.spec_version)}</dd>"
            f"<dt>Rule pack</dt><dd>{_e(report.rule_pack.get('id', ''))} <code>{_e(digest)}</code></dd>"
            f"<dt>Tool</dt><dd>spec-check {_e(report.tool_version)}</dd>"
            f"<dt>Generated</dt><dd>{_e(report.generated_at)}</dd>"
            f"<dt>Profile</dt><dd>{_e(report.profile or 'none (spec defaults)')}</dd>"
        )
        changed = {k: v for k, v in report.parameters.items() if v.get("origin") != "default"}
        params = "; ".join(
            f"{k} = {v.get('value')} ({v.get('origin')})" for k, v in sorted(changed.items())
        )
        write(
            f"<dt>Parameters</dt><dd>{_e(params or 'spec defaults')} "
            '<a href="#parameters" class="small">all</a></dd>'
        )
        sel = [f"{k}: {', '.join(v)}" for k, v in sorted(report.selection.items()) if v]
        if sel:
            write(f"<dt>Selection</dt><dd>{_e('; '.join(sel))}</dd>")
        write("</dl>\n</section>\n")
        write('<section><h2 id="subjects">Subjects</h2>\n')
        head = _head(
            "Subjects checked", "Subject", "Kind", "Facts digest", "Collected", "Source", "Outcome",
            cls="subjects",
        )
        cols = (
            '<colgroup><col class="name"><col class="kind"><col class="digest"><col class="when">'
            '<col class="source"><col class="outcome"></colgroup>'
        )
        write(head.replace("<thead>", cols + "<thead>", 1))
        groups = by_subject(report)
        from validator.renderers.problems import subject_lines

        rank = {ln.name: i for i, ln in enumerate(subject_lines(report))}
        for sub in sorted(report.subjects, key=lambda x: rank.get(x.name, len(rank))):  # problems first
            mine = groups.get(sub.name, [])
            write(
                f'<tr><th scope="row"><a href="#{_anchor("s", sub.name)}">{_e(sub.name)}</a></th>'
                f"<td>{_e(sub.kind)}</td><td><code>{_e(sub.facts_digest or '')}</code></td>"
                f'<td>{_e(sub.collected_at or "")}</td><td class="ev">{_e(_source(sub.source))}</td>'
                f"<td>{badge(cov.subject_outcome(mine))}</td></tr>\n"
            )
        write("</tbody></table></section>\n")
        write('<section><h2 id="parameters">Parameters</h2>\n')
        write(
            f"<p>{len(changed)} of {len(report.parameters)} parameters differ from the spec's defaults.</p>\n"
        )
        write(
            "<details"
            + (" open" if changed else "")
            + "><summary>All parameters</summary>\n"
            + _head("Parameters used in this run", "Parameter", "Value", "Origin")
        )
        for name, p in sorted(report.parameters.items()):
            write(
                f'<tr><th scope="row"><code>{_e(name)}</code></th><td>{_e(p.get("value"))}</td>'
                f"<td>{_e(p.get('origin'))}</td></tr>\n"
            )
        write("</tbody></table></details></section>\n")

    @staticmethod
    def _signature(report: Report, write: Write) -> None:
        """A signed result (rendered by ``spec-check report``): who signed it and when, and
        how a customer checks that this page's JSON is the one signed."""
        sig = report.extra.get("signature") if isinstance(report.extra, dict) else None
        if not isinstance(sig, dict):
            return
        file = sig.get("file") or "RESULT.json"
        cmd = f"spec-check verify {file} --key PROVIDER.pub"
        who = (f"Key fingerprint <code>{_e(sig.get('key_fingerprint'))}</code>, "
               f"signed at {_e(sig.get('signed_at') or 'an unrecorded time (signed by an older version)')} "
               f"({_e(sig.get('algorithm', 'ed25519'))}).")
        if sig.get("verified"):
            head = ('<div class="signed"><strong>Signed result, signature verified</strong> when this page '
                    f"was rendered. {who} This page is not itself signed: verify the JSON with "
                    f"<code>{_e(cmd)}</code> (exit 0: intact and signed by that key).")
        else:  # never "signed" on a signature nobody checked
            head = ('<div class="signed unverified"><strong>Signature not verified.</strong> The result '
                    f"carries a signature block that was not checked when this page was rendered. {who} "
                    f"Verify the JSON with <code>{_e(cmd)}</code> (exit 0: intact and signed by that key) "
                    "or render it with <code>spec-check report --key PROVIDER.pub</code>.")
        write(
            head
            + (f' <strong class="altered">Not as signed:</strong> {_e(sig["altered"])}'
               + (f'; the signed result is <strong>{_e(sig["signed_verdict"])}</strong>.'
                  if sig.get("signed_verdict") else ".")
               if sig.get("altered") else "")
            + "</div>\n"
        )

    # ---- coverage ------------------------------------------------------------------------

    def _coverage(self, report: Report, write: Write) -> None:
        cells = cov.matrix(report)
        rules = cov.rules_of(report)
        docs = {q.id: q for q in report.requirements}
        write('<section><h2 id="coverage">Requirement coverage</h2>\n')
        caption = "Each requirement, the rules that check it, and the outcome across subjects"
        write(_head(caption, "Requirement", "Level", "Title", "Rules", "Subjects", "Outcome"))
        per_req: dict[str, list[cov.Cell]] = defaultdict(list)
        for (_, r), c in cells.items():
            per_req[r].append(c)
        for rid in cov.requirement_ids(report):
            doc = docs.get(rid)
            mine = per_req.get(rid, [])
            tally = Counter(c.outcome for c in mine)
            # a cell whose findings are all skips judged nothing: "not judged", never a pass
            across = ", ".join(
                f"{n} {'not judged' if o == 'skip' else o}"
                for o, n in sorted(tally.items(), key=lambda t: cov.OUTCOMES.index(t[0]))
            )
            overall = cov.outcome([f for c in mine for f in c.findings])
            level = doc.level if doc else next((c.findings[0].level for c in mine), "")
            title = doc.title if doc else ""
            statement = f' title="{_e(doc.statement)}"' if doc else ""
            codes = "<br>".join(_id(r) for r in rules.get(rid, []))
            write(
                f'<tr><th scope="row"{statement}>{_e(rid)}</th><td>{_e(level)}</td>'
                f'<td>{_e(title)}</td><td class="small">{codes}</td>'
                f"<td>{_e(across or 'not evaluated')}</td><td>{badge(overall)}</td></tr>\n"
            )
        write("</tbody></table></section>\n")

    # ---- fleet ---------------------------------------------------------------------------

    def _fleet(self, report: Report, write: Write) -> None:
        nodes = [s.name for s in report.subjects if s.kind == "node"]
        clusters = [s.name for s in report.subjects if s.kind == "cluster"]
        measured = cov.bandwidth(report)
        if len(nodes) < 2 and not measured:
            return
        write('<section><h2 id="fleet">Fleet</h2>\n')
        if len(nodes) >= 2:
            cells = cov.matrix(report)
            rows = nodes + clusters
            reqs = [r for r in cov.requirement_ids(report) if any((n, r) in cells for n in rows)]
            caption = (
                "Host by requirement (worst outcome of each host's findings, including the "
                "measured pairs it is an end of; the cluster row holds the fleet-level findings)"
            )
            write(_head(caption, "Host", *reqs, cls="matrix"))
            for n in rows:
                row = "".join(
                    f"<td>{badge(cells[(n, r)].outcome if (n, r) in cells else 'none')}</td>"
                    for r in reqs
                )
                kind = ' <span class="muted small">(cluster)</span>' if n in clusters else ""
                write(
                    f'<tr><th scope="row"><a href="#{_anchor("s", n)}">{_e(n)}</a>{kind}</th>'
                    f"{row}</tr>\n"
                )
            write("</tbody></table>\n")
        if measured:
            line, passing = cov.threshold_gbps(report), cov.pass_line_gbps(report)
            spec_line = cov.spec_line_gbps(report)
            failed = sum(
                1
                for m in measured
                if (m.status in ("fail", "error") if m.status else m.gbps < (passing or line))
            )
            rule = f"pass at ≥ {passing:g} Gb/s, the rate × measured efficiency" if passing else ""  # noqa: RUF001
            n_waived = sum(1 for m in measured if m.waived and m.status in ("fail", "error", "warn"))
            run_line = f"; this run's threshold is {line:g} Gb/s" if line != spec_line else ""
            write(
                f"<figure>{bandwidth_svg(measured, line, passing, spec_line)}<figcaption>Measured "
                f"pairwise bandwidth against the spec's {spec_line:g} Gb/s line{run_line}: "
                f"{len(measured)} pairs, {failed} failing"
                + (f" ({n_waived} waived)" if n_waived else "")
                + f"{'; ' + rule if rule else ''}.</figcaption></figure>\n"
            )
            write("<details><summary>Measurements as a table</summary>")
            write(_head("Pairwise bandwidth", "From", "To", "Gb/s", "Status"))
            for m in measured:
                write(
                    f'<tr><th scope="row">{_e(m.a)}</th><td>{_e(m.b)}</td><td>{m.gbps:.1f}</td>'
                    f"<td>{badge(m.status or 'none')}{' ' + badge('waived') if m.waived else ''}</td></tr>\n"
                )
            write("</tbody></table></details>\n")
        write("</section>\n")

    # ---- findings ------------------------------------------------------------------------

    def _findings(self, report: Report, write: Write) -> None:
        write('<section><h2 id="findings">Findings</h2>\n')
        groups = by_subject(report)
        order = {st: i for i, st in enumerate(STATUS_ORDER)}
        from validator.renderers.problems import subject_lines

        for name in [ln.name for ln in subject_lines(report)]:  # problems first
            mine = sorted(groups.get(name, []), key=lambda f: (order[f.status], f.sort_key()))
            problems = [f for f in mine if f.status in PROBLEMS]
            rest = [f for f in mine if f.status not in PROBLEMS]
            if not self.show_passes:  # passes and skips are folded by rule under "Passed and skipped"
                rest = [f for f in rest if f.waived]
            write(f'<h3 id="{_anchor("s", name)}">{_e(name)} {badge(cov.subject_outcome(mine))}</h3>\n')
            if problems:
                self._table(write, f"Problems on {name}", problems)
            else:
                write("<p>No problems.</p>\n")
            if rest:
                what = "passed or skipped" if self.show_passes else "waived"
                write(f"<details><summary>{len(rest)} {what}</summary>\n")
                self._table(write, f"{'Passed and skipped' if self.show_passes else 'Waived'} on {name}", rest)
                write("</details>\n")
        write("</section>\n")

    def _table(self, out: Write, caption: str, findings: list[Finding]) -> None:
        # folded (the default): each fix is said once, under "What to fix", not on every row
        compact = not self.show_passes
        # and the item under its rule, leaving the evidence room to read
        cols = (("Status", "Rule and item", "Observed", "Expected", "Evidence") if compact else
                ("Status", "Rule", "Item", "Observed", "Expected", "Evidence", "Remediation"))
        out(_head(caption, *cols))
        for f in findings:
            status = (
                f'{badge("waived")} <span class="was">was {badge(f.status.value)}</span>'
                if f.waived else badge(f.status.value)
            )
            # a pass says what holds (the expected, met) before the rule's ID, as the terminal does:
            # rule IDs name the bad condition ("MEM-01.ecc-disabled") and alone read as failures
            said = holds_text(f)[0] if f.status is Status.PASS else ""
            holds = f"holds: {_e(said)}<br>" if said else ""
            out(
                f'<tr><td>{status}</td><th scope="row">{holds}{_id(f.rule)}'
                f'<br><span class="muted small">{_e(f.level)}</span>'
                + ((f"<br>{_ids(f.item)}" if f.item else "") + "</th>" if compact else
                   f'</th><td>{_ids(f.item) if f.item else ""}</td>')
                + f"<td>{_e(f.observed if f.observed is not None else '')}</td><td>{_e(f.expected)}</td>"
                + (f'<td class="ev">{self._evidence(f)}{self._fix_ref(f)}</td></tr>\n' if compact else
                   f'<td class="ev">{self._evidence(f)}</td><td class="ev">{_prose(f.remediation)}</td></tr>\n')
            )
        out("</tbody></table>\n")

    @staticmethod
    def _fix_ref(f: Finding) -> str:
        """Where a compact row's fix is: under "What to fix" (an unwaived problem), or here."""
        if not f.remediation:
            return ""
        if f.status in PROBLEMS and not f.waived:
            return '<br><a class="small" href="#to-fix">fix: see What to fix</a>'
        return f"<br><strong>Fix:</strong> {_prose(f.remediation)}"

    @staticmethod
    def _evidence(f: Finding) -> str:
        bits = [_e(f.message)]
        if f.location is not None:
            where = f"{_rel(f.location.file)}:{f.location.line}" if f.location.line else _rel(f.location.file)
            bits.append(f'<span class="muted">at</span> <code>{_e(where)}</code>')
        if f.source:
            bits.append(f'<span class="muted">source</span> <code>{_e(f.source)}</code>')
        if f.waiver:
            wv = f.waiver
            active = bool(wv.get("active"))
            state = "waived" if active else "waiver expired"
            bits.append(
                f'<div class="waiver{"" if active else " expired"}"><strong>{state}</strong> '
                f"until {_e(wv.get('expires'))} by {_e(wv.get('approver'))}: "
                f'{_e(wv.get("justification"))} <span class="muted">({_e(wv.get("id"))} on '
                f"{_e(wv.get('subject'))})</span></div>"
            )
        return "<br>".join(bits)


def tiles(report: Report) -> dict[str, int]:
    """The counts the tiles and the banner both show: each status outside active waivers,
    and the waived findings apart (a waived fail is not also a FAIL tile)."""
    from validator.renderers.problems import weight

    out = {st.value: 0 for st in STATUS_ORDER}
    out["waived"] = 0
    for f in report.findings:
        out["waived" if f.waived else f.status.value] += weight(f)  # a folded pass counts its verdicts
    return out
