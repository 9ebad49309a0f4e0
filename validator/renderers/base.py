"""The renderer interface: a Report in, text on a stream out.

Renderers take the Report alone (never rules, facts or the CLI), so every format shows
the same findings, and tests render into ``io.StringIO``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:  # the interface only names it: `probe` and `--help` need not import it
    from validator.report.model import Report


class Renderer(Protocol):
    """``render`` writes the whole report; ``binary`` formats are none so far."""

    def render(self, report: Report, stream: TextIO) -> None: ...
