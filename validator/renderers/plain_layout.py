"""The terminal report's plain text (no colour: a pipe, a file, NO_COLOR) written without
importing rich: rich and its layout cost about 50 ms of a ~100 ms ``spec-check check``.

It writes exactly the bytes rich 15.0 writes for what ``terminal.py`` prints, and nothing
else: rich's markup for the tags terminal.py uses (``[bold]``, ``[dim]``, colours, ``[/]``,
``\\[`` escapes), ``Text`` wrapping at spaces (rich's ``divide_line``: words with their
trailing spaces, words longer than the line folded, ``no_wrap`` with its ellipsis),
``Padding`` on the left, ``console.print`` with and without ``soft_wrap``, and the tables of
``TerminalRenderer._wide``: ``box.SIMPLE_HEAD``, ``pad_edge=False``, columns ``no_wrap`` or
``overflow="fold"`` with an optional ``min_width``, a left-justified title, rich's column
width arithmetic (``Table._calculate_column_widths``, ``_collapse_widths``,
``_ratio.ratio_reduce``, ``Measurement``) and the crop at the page's edge. Trailing spaces
are not reproduced where rich pads a line: terminal.py strips them from every line after.

Whatever it is not sure of raises ``Unsupported`` and the renderer lays the whole report out
with rich instead (never half of it): a character other than printable ASCII, newline and
the Latin letters and signs rich itself counts one cell wide without a table (U+00A1 to
U+02FF but the soft hyphen), a tab, a tag other than terminal.py's, a column narrower than
one character, a rich other than the versions in ``VERIFIED`` (checked by the name of
its installed ``dist-info``, without importing it), or Windows. tests/reports/test_plain_layout.py
compares the two byte for byte on every example report, the recordings, the corpus and
generated reports and strings at widths 20 to 200.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

# rich versions whose output this module was compared with (tests/reports/test_plain_layout.py)
VERIFIED = ("15.0.0",)

# one cell each in rich's own fast path (cells._SINGLE_CELLS), and none of them whitespace
_OK = re.compile("[ -~\n\u00a1-\u00ac\u00ae-\u02ff]*")
_WORD = re.compile(r"\s*\S+\s*")  # rich's _wrap.re_word
_TRAILING_WS = re.compile(r"\s+$")
_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")  # rich's markup.RE_TAGS
# the styles terminal.py opens, as rich's Style.normalize spells them
STYLES = frozenset({"bold", "dim", "green", "red", "yellow", "blue", "magenta", "bold red", "bold green",
                    "bold magenta", "bold yellow"})
ELLIPSIS = "\u2026"
HEAD_RULE = "\u2500"  # box.SIMPLE_HEAD's line under the header


class Unsupported(Exception):
    """Something this writer does not lay out as rich would: the report goes to rich."""


_usable: bool | None = None


def usable() -> bool:
    """Whether the rich that would otherwise write the report is one of ``VERIFIED``:
    its ``dist-info`` beside the first ``rich`` package on ``sys.path``."""
    global _usable
    if _usable is None:
        _usable = False
        # (on Windows rich may pick another box for a legacy console: not compared there)
        for entry in [] if sys.platform == "win32" else sys.path:
            base = entry or "."
            if os.path.isfile(os.path.join(base, "rich", "__init__.py")):
                _usable = any(os.path.isdir(os.path.join(base, f"rich-{v}.dist-info")) for v in VERIFIED)
                break
    return _usable


def check(text: str) -> str:
    """``text`` if every character of it is one this writer measures as rich does."""
    if not _OK.fullmatch(text):
        raise Unsupported(f"character outside the plain writer's set in {text[:40]!r}")
    return text


_plain_cache: dict[str, str] = {}


def markup(text: str) -> str:
    """The visible text of rich markup, as ``rich.markup.render(text).plain``; tags other
    than ``STYLES`` and their closings (or a closing that matches none) are Unsupported."""
    got = _plain_cache.get(text)
    if got is not None:
        return got
    if "[" not in text:
        out = text
    else:
        parts: list[str] = []
        stack: list[str] = []
        position = 0
        for match in _TAGS.finditer(text):
            full, escapes, tag = match.groups()
            start, end = match.span()
            if start > position:
                parts.append(text[position:start].replace("\\[", "["))
            if escapes:
                backslashes, escaped = divmod(len(escapes), 2)
                if backslashes:
                    parts.append("\\" * backslashes)
                if escaped:
                    parts.append(full[len(escapes):].replace("\\[", "["))
                    position = end
                    continue
            name = tag.partition("=")[0]
            if "=" in tag:
                raise Unsupported(f"markup tag {tag!r}")
            if name.startswith("/"):
                style = name[1:].strip()
                if style:
                    if style not in stack:
                        raise Unsupported(f"closing tag {tag!r}")
                    del stack[len(stack) - 1 - stack[::-1].index(style)]
                elif stack:
                    stack.pop()
                else:
                    raise Unsupported("[/] closes nothing")
            elif name in STYLES:
                stack.append(name)
            else:
                raise Unsupported(f"markup tag {tag!r}")
            position = end
        if position < len(text):
            parts.append(text[position:].replace("\\[", "["))
        out = "".join(parts)
    check(out)
    if len(_plain_cache) < 100_000:
        _plain_cache[text] = out
    return out


# ---- text ------------------------------------------------------------------------------


def _divide(line: str, width: int, fold: bool) -> list[int]:
    """rich's ``_wrap.divide_line`` for text of one-cell characters."""
    breaks: list[int] = []
    offset = 0
    for m in _WORD.finditer(line):
        start = m.start()
        word = m.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            if fold:
                folded = [word[i:i + width] for i in range(0, len(word), width)]
                for k, piece in enumerate(folded):
                    if start:
                        breaks.append(start)
                    if k == len(folded) - 1:
                        offset = len(piece)
                    else:
                        start += len(piece)
            else:
                if start:
                    breaks.append(start)
                offset = len(word)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def wrap(text: str, width: int, overflow: str = "fold", no_wrap: bool = False) -> list[str]:
    """The lines of ``Text(text).wrap(width, overflow=..., no_wrap=...)``, without the spaces
    a left justify adds (callers pad where it shows)."""
    if width < 1:
        raise Unsupported("a line narrower than one character")
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        if no_wrap:
            pieces = [line]
        else:
            cuts = _divide(line, width, overflow == "fold")
            pieces = [line[a:b] for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True)]
        for p in pieces:
            if len(p) > width:
                ws = _TRAILING_WS.search(p)  # Text.rstrip_end
                if ws is not None:
                    p = p[:len(p) - min(len(ws.group()), len(p) - width)]
                if len(p) > width:
                    p = p[:width - 1] + ELLIPSIS if overflow == "ellipsis" else p[:width]
            out.append(p)
    return out


class PlainConsole:
    """What terminal.py asks of rich's Console, for plain text: ``print`` of markup (or of
    nothing: a blank line), ``print_text`` of text that is not markup, ``indent`` (a
    ``Padding`` on the left), ``table``. Lines are kept as written; the caller strips
    trailing spaces as it does rich's output."""

    is_terminal = False
    color_system = None

    def __init__(self, width: int):
        self.width = width
        self._out: list[str] = []

    def getvalue(self) -> str:
        return "".join(self._out)

    def print(self, text: str = "", *, soft_wrap: bool = False) -> None:
        self.print_text(markup(text), soft_wrap=soft_wrap)

    def print_text(self, text: str, *, soft_wrap: bool = False) -> None:
        check(text)
        if soft_wrap or (len(text) <= self.width and "\n" not in text):  # soft_wrap: no wrap, no crop
            self._out.append(text + "\n")
        else:
            self._out.append("\n".join(wrap(text, self.width)) + "\n")

    def indent(self, text: str, by: int) -> None:
        """``console.print(Padding(Text(text), (0, 0, 0, by)))``."""
        check(text)
        pad = " " * by
        self._out.append("".join(pad + line + "\n" for line in wrap(text, self.width - by)))

    # ---- tables --------------------------------------------------------------------------

    def table_widths(self, columns: Sequence[Column], rows: Sequence[tuple[str, ...]]) -> list[int]:
        """``Table._calculate_column_widths`` at this console's width (cells as plain text)."""
        return _widths(columns, [tuple(markup(c) for c in row) for row in rows], self.width - len(columns) - 1)

    def table(self, title: str | None, columns: Sequence[Column], rows: Sequence[tuple[str, ...]]) -> None:
        """``console.print(Table(title=title, title_justify="left", box=SIMPLE_HEAD,
        pad_edge=False))`` with ``columns`` and ``rows`` of markup (title too)."""
        n = len(columns)
        plain_rows = [tuple(markup(c) for c in row) for row in rows]
        widths = _widths(columns, plain_rows, self.width - (n + 1))
        table_width = sum(widths) + n + 1
        crop = self.width
        lines: list[str] = []
        if title:
            lines.extend(wrap(markup(title), table_width))
        lines.append("")  # the top edge: spaces
        cells = [_Column(c, i, n, w) for i, (c, w) in enumerate(zip(columns, widths, strict=True))]
        lines.extend(_row([c.header() for c in cells], bottom=True))
        lines.append(" " + HEAD_RULE * (table_width - 2))
        for row in plain_rows:
            lines.extend(_row([c.cell(text) for c, text in zip(cells, row, strict=True)]))
        lines.append("")  # the bottom edge
        if table_width > crop:
            lines = [ln[:crop] for ln in lines]
        self._out.append("".join(ln + "\n" for ln in lines))


class Column:
    """A table column as ``Table.add_column`` takes it (left-justified, top-aligned)."""

    __slots__ = ("header", "min_width", "no_wrap", "overflow")

    def __init__(self, header: str, *, no_wrap: bool = False, overflow: str = "ellipsis",
                 min_width: int | None = None):
        self.header = header
        self.no_wrap = no_wrap
        self.overflow = overflow
        self.min_width = min_width


def _pads(index: int, n: int) -> tuple[int, int]:
    """(left, right) padding of a column: (0, 1) cell padding, none at the table's edges."""
    return (0 if index == 0 else 1), (0 if index == n - 1 else 1)


_measures: dict[str, tuple[int, int]] = {}


def _text_measure(text: str) -> tuple[int, int]:
    """``Text.__rich_measure__``: (longest word, longest line)."""
    if " " not in text and "\n" not in text:  # one word (an ID, a number): its length
        n = len(text)
        return n, n
    got = _measures.get(text)
    if got is None:
        if "\n" in text:
            lines = text.splitlines()
            longest = max(len(ln) for ln in lines) if lines else 0
        else:
            longest = len(text)
        words = text.split()
        got = (max(len(w) for w in words) if words else longest, longest)
        if len(_measures) < 100_000:
            _measures[text] = got
    return got


def _normalize(lo: int, hi: int) -> tuple[int, int]:
    lo = min(max(0, lo), hi)
    return max(0, lo), max(0, max(lo, hi))


def _cell_measure(lo: int, hi: int, limit: int, extra: int) -> tuple[int, int]:
    """``Measurement.get`` of a ``Padding`` (of ``extra`` columns) around a text measured
    (lo, hi), with ``limit`` columns to give."""
    if limit < 1:
        return 0, 0
    if limit - extra < 1:
        pm = (limit, limit)
    else:
        lo, hi = _normalize(lo, hi)
        lo, hi = min(lo, limit), min(hi, limit)
        if hi < 1:
            lo, hi = 0, 0
        else:
            lo, hi = _normalize(lo, hi)
        pm = (min(lo + extra, limit), min(hi + extra, limit))
    lo, hi = _normalize(*pm)
    lo, hi = min(lo, limit), min(hi, limit)
    if hi < 1:
        return 0, 0
    return _normalize(lo, hi)


def _measure_column(column: Column, index: int, n: int, texts: list[str], limit: int) -> tuple[int, int]:
    """``Table._measure_column``: the header and cells of one column."""
    if limit < 1:
        return 0, 0
    left, right = _pads(index, n)
    extra = left + right
    # a cell's measure is (f(longest word), f(longest line)) for one nondecreasing f (each
    # text's word is no longer than its line): the column's largest of each is f of the
    # largest word and the largest line, so _cell_measure runs once, not once per cell
    # (a text of no words, only spaces, measures its longest line as its minimum too)
    most_hi = max(map(len, "\n".join(texts).split("\n")))
    most_lo = max(map(len, " ".join(texts).split()), default=0)
    blank = [t for t in texts if t.isspace()]
    if blank:
        most_lo = max(most_lo, *(_text_measure(t)[1] for t in blank))
    lo, _ = _cell_measure(most_lo, most_lo, limit, extra)
    _, hi = _cell_measure(most_hi, most_hi, limit, extra)
    lo, hi = min(lo, limit), min(hi, limit)
    if column.min_width is not None:
        least = max(0, column.min_width + extra)
        lo, hi = max(lo, least), max(hi, least)
    return lo, hi


def _ratio_reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """rich's ``_ratio.ratio_reduce``, to the same rounding."""
    ratios = [ratio if most else 0 for ratio, most in zip(ratios, maximums, strict=True)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return values[:]
    remaining = total
    result: list[int] = []
    for ratio, most, value in zip(ratios, maximums, values, strict=True):
        if ratio and total_ratio > 0:
            distributed = min(most, round(ratio * remaining / total_ratio))
            result.append(value - distributed)
            remaining -= distributed
            total_ratio -= ratio
        else:
            result.append(value)
    return result


def _collapse(widths: list[int], wrapable: list[bool], max_width: int) -> list[int]:
    """``Table._collapse_widths``."""
    total = sum(widths)
    excess = total - max_width
    if any(wrapable):
        while total and excess > 0:
            largest = max(w for w, ok in zip(widths, wrapable, strict=True) if ok)
            second = max(w if ok and w != largest else 0 for w, ok in zip(widths, wrapable, strict=True))
            difference = largest - second
            ratios = [1 if (w == largest and ok) else 0 for w, ok in zip(widths, wrapable, strict=True)]
            if not any(ratios) or not difference:
                break
            widths = _ratio_reduce(excess, ratios, [min(excess, difference)] * len(widths), widths)
            total = sum(widths)
            excess = total - max_width
    return widths


def _widths(columns: Sequence[Column], rows: Sequence[tuple[str, ...]], max_width: int) -> list[int]:
    """``Table._calculate_column_widths`` (expand off, no table min_width)."""
    n = len(columns)
    if any(len(row) != n for row in rows):
        raise Unsupported("a row of another number of cells than the table has columns")
    texts = [[c.header, *(row[i] for row in rows)] for i, c in enumerate(columns)]
    ranges = [_measure_column(c, i, n, texts[i], max_width) for i, c in enumerate(columns)]
    widths = [hi or 1 for _, hi in ranges]
    if sum(widths) > max_width:
        widths = _collapse(widths, [not c.no_wrap for c in columns], max_width)
        if sum(widths) > max_width:
            widths = _ratio_reduce(sum(widths) - max_width, [1] * n, widths, widths)
        ranges = [_measure_column(c, i, n, texts[i], w) for i, (c, w) in enumerate(zip(columns, widths, strict=True))]
        widths = [hi or 0 for _, hi in ranges]
    return widths


class _Column:
    """One column at its width: its cells as lines of exactly that width."""

    __slots__ = ("_cache", "blank", "column", "inner", "left", "right", "width")

    def __init__(self, column: Column, index: int, n: int, width: int):
        self.column = column
        self.width = width
        left, right = _pads(index, n)
        self.inner = width - left - right
        if self.inner < 1:
            raise Unsupported("a column narrower than one character")
        self.left, self.right = " " * left, " " * right
        self.blank = " " * width
        self._cache: dict[str, list[str]] = {}

    def header(self) -> list[str]:
        return self.cell(self.column.header)

    def cell(self, text: str) -> list[str]:
        got = self._cache.get(text)
        if got is None:
            inner, c = self.inner, self.column
            if len(text) <= inner and "\n" not in text:
                got = [self.left + text + " " * (inner - len(text)) + self.right]
            else:
                got = [self.left + ln + " " * (inner - len(ln)) + self.right
                       for ln in wrap(text, inner, c.overflow, c.no_wrap)]
            if len(self._cache) < 10_000:
                self._cache[text] = got
        return got


def _row(cells: list[list[str]], bottom: bool = False) -> list[str]:
    """One table row's lines: cells side by side between the box's space edges, shorter
    cells filled with blank lines below (above for the header, aligned to its bottom)."""
    height = max(len(c) for c in cells)
    if height == 1:
        return [" " + " ".join(c[0] for c in cells) + " "]
    blanks = [" " * len(c[0]) for c in cells]
    filled = [([b] * (height - len(c)) + c if bottom else c + [b] * (height - len(c)))
              for c, b in zip(cells, blanks, strict=True)]
    return [" " + " ".join(parts) + " " for parts in zip(*filled, strict=True)]
