"""How renderers name a waiver (``Finding.waived`` says whether one is active).

An active waiver takes a finding out of the conformance verdict (``model.summarize``); a
renderer that still shows it as a failure (a red JUnit case, an ``::error`` annotation, an
open code-scanning alert) turns a conformant run's CI red. An expired waiver
(``active: false``) changes nothing: the finding counts, and is shown, as before.
"""

from __future__ import annotations

from validator.report.model import Finding


def waiver_text(f: Finding) -> str:
    """``waived: JUSTIFICATION (approved by A, until D)`` for an active waiver, else ``""``."""
    if not f.waived:
        return ""
    w = f.waiver or {}
    if w.get("baseline"):  # --baseline: a problem the saved result already had
        return f"known: in the baseline {w['baseline']}"
    who = f"approved by {w.get('approver', '?')}, until {w.get('expires', '?')}"
    return f"waived: {w.get('justification', '')} ({who})"
