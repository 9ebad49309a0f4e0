"""GitHub Actions workflow commands: one annotation per problem, on the file and line.

``::error file=F,line=L,title=RULE::message`` for ``fail`` and ``error``,
``::warning ...`` for ``warn``; passes and skips print nothing. A ``fail`` or ``warn``
under an active waiver is a ``::notice`` that says "waived" and why: the run is
conformant, and an ``::error`` would mark the check red (an expired waiver changes
nothing). Values are escaped as
the runner requires (``%``, CR, LF in data; also ``:`` and ``,`` in properties), so a
message can never inject a second command. A last plain line gives the counts.
"""

from __future__ import annotations

from typing import TextIO

from validator.renderers._paths import finding_path
from validator.renderers._waived import waiver_text
from validator.report.model import Report, Status


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


class GitHubRenderer:
    def __init__(self, **_: object) -> None:
        pass

    def render(self, report: Report, stream: TextIO) -> None:
        for f in report.findings:
            waived = f.status in (Status.FAIL, Status.WARN) and f.waived
            if waived:
                cmd = "notice"
            elif f.status in (Status.FAIL, Status.ERROR):
                cmd = "error"
            elif f.status is Status.WARN:
                cmd = "warning"
            else:
                continue
            props = []
            path, line = finding_path(f)
            if path:
                props.append(f"file={_prop(path)}")
                if line:
                    props.append(f"line={line}")
            title = f"{f.rule} ({f.requirement} {f.level})" + (" waived" if waived else "")
            props.append(f"title={_prop(title)}")
            text = (f"{f.item}: " if f.item and f.item not in f.message else "") + f.message + (
                f" (expected: {f.expected})" if f.expected and f.status is not Status.ERROR else ""
            )
            if waived:
                text += f"\n{waiver_text(f)}"
            elif f.remediation:
                text += f"\nFix: {f.remediation}"
            stream.write(f"::{cmd} {','.join(props)}::{_data(text)}\n")
        s = report.summary
        counts = ", ".join(f"{n} {k}" for k, n in s.counts.items())
        from validator.renderers.scope import verdict_text

        stream.write(f"spec-check {report.command}: {counts}; {verdict_text(report)}\n")
