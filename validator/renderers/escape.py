"""Escaping for every medium, in one place: what a finding quotes is data, never markup.

Findings quote file names, config values and, for ``report``, whatever a result file
holds; each renderer passes that text through the function for its medium:

* ``text``: any medium. Control characters (C0 but tab and newline, DEL, C1) become
  visible escapes (``\\x1b``): they would recolour a terminal, break a JUnit file (XML 1.0
  forbids them) or hide text in Markdown. Lone surrogates, which is how Python spells
  the bytes of a non-UTF-8 file name (``os.fsdecode``), become ``\\xNN`` escapes of those
  bytes: the name is shown, and the output stays valid UTF-8.
* ``rich``: ``text``, then rich's markup escaped (``[bold]`` shown, not applied), with a
  trailing backslash doubled so it cannot escape the renderer's own closing tag.
* ``html``: ``text``, then HTML-escaped (quotes included: safe in attributes too).
* ``markdown``: ``text``, then on one line with Markdown and inline HTML neutralised,
  for a GFM table cell.
* ``xml``: ``text``; ElementTree escapes ``& < >`` and quotes itself.

``clean_report`` applies ``text`` to every string a Report carries that needs it, so a
medium with no escaping of its own (JSON, SARIF, Prometheus) also gets valid text.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from validator.report.model import Report

# C0 controls but \t and \n, DEL, C1 controls, lone surrogates, and the two XML non-characters
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#~])")


def _visible(m: re.Match[str]) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # a byte of a non-UTF-8 name, as os.fsdecode keeps it
        return f"\\x{c - 0xDC00:02x}"
    if c <= 0xFF:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}"


def text(value: object) -> str:
    """Safe in any medium: control characters and surrogates shown as escapes."""
    s = "" if value is None else str(value)
    if s.isascii() and s.isprintable():
        return s
    return _UNSAFE.sub(_visible, s)


def rich(value: object) -> str:
    """For rich markup: shown exactly as written, styles never applied."""
    out = text(value)
    if "[" not in out and "\\" not in out:  # nothing rich would read as markup (most cells)
        return out
    # rich.markup.escape (rich 13 to 15), here so that plain output needs no rich: a backslash
    # before each tag-like "[...]", the backslashes already before it doubled
    out = _RICH_TAG.sub(_escape_tag, out)
    if out.endswith("\\") and not out.endswith("\\\\"):
        out += "\\"  # "x\" + "[/]" would escape the renderer's closing tag
    return out


_RICH_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def _escape_tag(m: re.Match[str]) -> str:
    backslashes, tag = m.groups()
    return f"{backslashes}{backslashes}\\{tag}"


def html(value: object) -> str:
    """For HTML text and attribute values."""
    from html import escape

    return escape(text(value), quote=True)


def markdown(value: object) -> str:
    """For a GFM table cell (one line; no Markdown, no raw HTML, no pipes)."""
    s = text(value).replace("&", "&amp;").replace("\r", "").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", s)


def xml(value: object) -> str:
    """For XML text or attributes written by ElementTree (which escapes ``& < >``)."""
    return text(value)


# ---- whole reports ----------------------------------------------------------------------

_FINDING_TEXT = ("subject", "expected", "message", "remediation", "item", "observed", "unit", "source")


def _needs(s: object) -> bool:
    return isinstance(s, str) and not (s.isascii() and s.isprintable()) and _UNSAFE.search(s) is not None


def clean_report(report: Report) -> Report:
    """The report with every unsafe string of its findings and subjects made safe.

    Only findings that hold such a string are rebuilt (a check that is one
    ``str.isascii`` for the usual all-ASCII text), so a 25,000-node result pays little."""
    findings = report.findings
    out = None
    search = _UNSAFE.search
    for i, f in enumerate(findings):
        loc = f.location
        # one string per finding, checked in C: a 25,000-node result has 800,000 findings
        s = f"{f.subject} {f.expected} {f.message} {f.remediation} {f.item} {f.observed} {f.unit} {f.source}"
        if loc is not None:
            s = f"{s} {loc.file} {loc.text}"
        if (s.isascii() and s.isprintable()) or search(s) is None:
            continue
        if out is None:
            out = list(findings)
        # Any: keyword arguments of replace(Finding), each of its own field's type
        changes: dict[str, Any] = {k: text(getattr(f, k)) for k in _FINDING_TEXT if _needs(getattr(f, k))}
        if loc is not None:
            changes["location"] = replace(loc, file=text(loc.file),
                                          text=None if loc.text is None else text(loc.text))
        out[i] = replace(f, **changes)
    subjects = report.subjects
    if any(_needs(s.name) or _needs(s.source) for s in subjects):
        subjects = tuple(replace(s, name=text(s.name), source=None if s.source is None else text(s.source))
                         for s in subjects)
    if out is None and subjects is report.subjects:
        return report
    return replace(report, findings=tuple(out) if out is not None else findings, subjects=subjects)
