"""Prometheus text exposition for node_exporter's textfile collector.

Write it atomically (``-o /var/lib/node_exporter/textfile/spec_check.prom``; ``-o`` goes
through ``write_atomic``) from a cron job or Slurm prolog, and alert on
``spec_check_requirement_conformant == 0``, on ``spec_check_requirement_not_judged`` (a
requirement whose findings are all skips: no ``conformant`` series is exported for it) or on a
stale ``spec_check_last_run_timestamp_seconds``. All series are gauges: each run replaces the
last. One series per (subject, requirement), labelled with the level, so a SHOULD can be
alerted on differently from a MUST. Label values are escaped per the exposition format
(backslash, double quote, newline), since subject names come from configs and hosts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import TextIO

from validator.renderers import coverage as cov
from validator.report.model import Report, Status


def label_value(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def help_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def labels(**pairs: object) -> str:
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in pairs.items()) + "}"


def timestamp(generated_at: str) -> float:
    try:
        when = datetime.strptime(generated_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        try:
            when = datetime.fromisoformat(generated_at.replace("Z", "+00:00"))
        except ValueError:
            return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


class PrometheusRenderer:
    def render(self, report: Report, stream: TextIO) -> None:
        out: list[str] = []

        def family(name: str, text: str) -> None:
            out.append(f"# HELP {name} {help_text(text)}")
            out.append(f"# TYPE {name} gauge")

        family(
            "spec_check_info", "The spec-check run: tool, spec version and rule pack (always 1)."
        )
        run = labels(
            tool_version=report.tool_version,
            spec_version=report.spec_version,
            rule_pack=report.rule_pack.get("id", ""),
            rule_pack_digest=report.rule_pack.get("digest", ""),
            command=report.command,
        )
        out.append(f"spec_check_info{run} 1")
        family(
            "spec_check_last_run_timestamp_seconds", "When the result was generated (Unix time)."
        )
        out.append(f"spec_check_last_run_timestamp_seconds {timestamp(report.generated_at):.0f}")
        family("spec_check_conformant", "1 if the whole run is conformant to the spec, else 0.")
        out.append(f"spec_check_conformant {int(report.summary.conformant)}")
        from validator.renderers.scope import scope_of

        scope = scope_of(report)
        family("spec_check_requirements_evaluated",
               "Requirements of the spec this result judged (a finding that is not a skip).")
        out.append(f"spec_check_requirements_evaluated {len(scope.evaluated)}")
        family("spec_check_requirements_total", "Requirements in the spec.")
        out.append(f"spec_check_requirements_total {scope.total}")

        # one pass over the findings and one over the cells: a fleet has hundreds of thousands
        cells = cov.matrix(report)
        subjects = cov.subject_names(report)
        order = {rid: i for i, rid in enumerate(cov.requirement_ids(report))}
        level = {q.id: q.level for q in report.requirements}
        per_subject: dict[str, list[tuple[str, cov.Cell]]] = defaultdict(list)
        for (name, rid), c in cells.items():
            per_subject[name].append((rid, c))
        tally: dict[str, Counter[str]] = defaultdict(Counter)
        for f in report.findings:
            tally[f.subject][f.status.value] += 1
            tally[f.subject]["waived"] += f.waived

        family(
            "spec_check_subject_conformant",
            "1 if the subject (node, job, cluster) is conformant, else 0.",
        )
        for name in subjects:
            ok = all(c.conformant for _, c in per_subject[name])
            out.append(f"spec_check_subject_conformant{labels(subject=name)} {int(ok)}")
        family(
            "spec_check_requirement_conformant",
            "1 if no unwaived fail (or MUST error) remains for the requirement on the subject; "
            "absent where it was not judged (spec_check_requirement_not_judged).",
        )
        not_judged: list[str] = []
        for name in subjects:
            for rid, c in sorted(per_subject[name], key=lambda rc: order[rc[0]]):
                lab = labels(
                    subject=name, requirement=rid, level=level.get(rid) or c.findings[0].level
                )
                # findings that are all skips judged nothing: no "conformant 1" for them
                if c.outcome == "skip":
                    not_judged.append(lab)
                else:
                    out.append(f"spec_check_requirement_conformant{lab} {int(c.conformant)}")
        family(
            "spec_check_requirement_not_judged",
            "1 where every finding of the requirement on the subject is a skip (not judged: no "
            "spec_check_requirement_conformant series; a MUST not judged makes the subject not "
            "conformant); absent where it was judged.",
        )
        out.extend(f"spec_check_requirement_not_judged{lab} 1" for lab in not_judged)
        family(
            "spec_check_findings",
            "Findings per subject and status (waived ones keep their status).",
        )
        for name in subjects:
            for st in Status:
                lab = labels(subject=name, status=st.value)
                out.append(f"spec_check_findings{lab} {tally[name][st.value]}")
        family("spec_check_findings_waived", "Findings per subject under an active waiver.")
        for name in subjects:
            out.append(f"spec_check_findings_waived{labels(subject=name)} {tally[name]['waived']}")
        stream.write("\n".join(out) + "\n")
