"""The renderer interface: a Report in, text on a stream out.

Renderers take the Report alone (never rules, facts or the CLI), so every format shows
the same findings, and tests render into ``io.StringIO``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:  # the interface only names it: `probe` and `--help` need not import it
    from validator.report.model import Finding, Report


class Renderer(Protocol):
    """``render`` writes the whole report; ``binary`` formats are none so far."""

    def render(self, report: Report, stream: TextIO) -> None: ...


def holds(f: Finding) -> tuple[str, bool]:
    """What a pass says holds, and whether its observed value follows. A pass on nothing to
    judge (a rule's ``if_empty``: no Xid event within the look-back) says it in the rule's
    own words: the check's sentence ("Xid one of 48, 63, ...") beside "none" read as if an
    Xid had been seen. The engine marks such a verdict alone: no item, no value, observed
    "none"."""
    if f.item is None and f.value is None and f.observed == "none" and f.message:
        return f.message, False
    return f.expected or "", True
