"""Subject tables of the terminal report, laid out once per shape and filled in after.

A fleet of 2,000 nodes (``--passes itemize --show passes``) or a lint of a thousand jobs
prints thousands of tables, and laying out a rich table (measuring every cell, wrapping,
padding) is what such a report spends its time on. Yet the tables are alike: nodes and
recipes fail the same rules, and where they differ it is mostly in values of the same
length (another GPU's UUID, 51 C instead of 48 C).

In plain output (no colour, a pipe or a file), where a table lands on the page depends
only on where each cell's text has spaces and how long it is: rich measures and wraps
printable ASCII on whitespace, one column per character. So each table is reduced to its
*shape* (every cell's text with each visible character replaced by its column's marker).
The first table of a shape is laid out by rich as itself (a check of one node has one
table of each shape, laid out once); at the second, rich lays out the shape with the
markers as text, and every later table of that shape is that layout with the markers
replaced, in reading order, by its cells' characters. The layout filled with the first
table's characters must come out as rich laid that table out, or the shape is not used
(its tables are laid out by rich as before): the bytes are rich's either way. (They
differ where rich cuts a table laid out wider than the page at its edge, which
terminal.py's ``_too_wide`` now prevents.) A title (the
subject) is printed as its own line where it fits the table's width, as rich prints it; a
wider one, colour, or a character outside printable ASCII leaves the whole table to rich.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any  # Any below: rich's console, rich tables, cells of text or rich Text

MARKERS = "#$%&*"  # one per column; none occurs in the headers or the box characters
_PRINTABLE = re.compile(r"[ -~]*")
_VISIBLE = re.compile(r"\S")
_RUNS = re.compile("|".join(f"{re.escape(m)}+" for m in MARKERS))
_TO_MARKER = [{c: ord(m) for c in range(0x21, 0x7F)} for m in MARKERS]
_SIMPLE_MARKUP = re.compile(r"(?:\[[a-z ]+\])?([^\[\]\\]*?)(?:\[/\])?")
Cells = tuple[tuple[str, ...], ...]


class Tables:
    """The layouts of one report's tables (one renderer run)."""

    def __init__(self) -> None:
        self._plain: dict[str, str] = {}
        self._marked: dict[tuple[int, str], str] = {}
        self._exact: dict[tuple[Any, ...], str] = {}
        self._shapes: dict[tuple[Any, ...], Any] = {}  # a layout, None (rich's own), or _PENDING
        self._first: dict[tuple[Any, ...], tuple[list[list[str]], str]] = {}  # a pending shape's first table

    def draw(self, console: Any, title: str, key: tuple[Any, ...], cells: Cells,
             build: Callable[[Cells | None, bool], Any]) -> bool:
        """Print the table of ``cells`` (markup strings) under ``title``, built by
        ``build(cells_or_texts, with_title)``; False where rich must lay it out itself."""
        if console.is_terminal or console.color_system is not None:
            return False
        plain = [[self._text(console, c) for c in row] for row in cells]
        text = self._exact.get(key)
        printable = text is None and all(_PRINTABLE.fullmatch(p) for row in plain for p in row)
        if printable and len(cells) > ROWS_AT_ONCE:
            text = self._by_rows(console, cells, plain, build)
        if text is None and printable:
            text = self._by_shape(console, key, cells, plain, build)
        if text is None:
            text = self._exact[key] = _capture(console, build(cells, False))
        from rich.cells import cell_len

        width = max((cell_len(ln) for ln in text.splitlines()), default=0)
        shown = self._text(console, title)
        if "\n" in shown or not _PRINTABLE.fullmatch(shown) or len(shown) > width:
            return False
        console.print(title)
        console.file.write(text)
        return True

    def _mark(self, column: int, plain: str) -> str:
        m = self._marked.get((column, plain))
        if m is None:
            if _PRINTABLE.fullmatch(plain):  # one C call: every visible ASCII character
                m = plain.translate(_TO_MARKER[column])
            else:
                m = _VISIBLE.sub(MARKERS[column], plain)
            self._marked[(column, plain)] = m
        return m

    def _text(self, console: Any, markup: str) -> str:
        p = self._plain.get(markup)
        if p is None:
            # markup of the shapes terminal.py writes, "[dim]text[/]" or plain text, with
            # no bracket or backslash inside: its text without rich's markup parser
            m = _SIMPLE_MARKUP.fullmatch(markup)
            p = self._plain[markup] = m.group(1) if m else console.render_str(markup).plain
        return p

    def _by_shape(self, console: Any, key: tuple[Any, ...], cells: Cells, plain: list[list[str]],
                  build: Callable[[Cells | None, bool], Any]) -> str | None:
        from rich.text import Text

        shape = (key[:-1], tuple(tuple(self._mark(i, p) for i, p in enumerate(row)) for row in plain))
        layout = self._shapes.get(shape, _NEW)
        if layout is _NEW:
            # the first table of a shape: rich lays it out, and it is kept to check the
            # shape's template against when a second table of this shape comes (a check of
            # one node has one table of each shape: laid out once, not twice)
            real = _capture(console, build(cells, False))
            self._first[shape] = (plain, real)
            self._shapes[shape] = _PENDING
            return real
        if layout is _PENDING:
            first_plain, first_real = self._first.pop(shape)
            marked = tuple(tuple(Text(s) for s in row) for row in shape[1])
            template = _capture(console, build(marked, False))  # type: ignore[arg-type]
            runs = [(m.start(), m.end(), MARKERS.index(template[m.start()]), 0) for m in _RUNS.finditer(template)]
            layout = (template, runs)
            if _fill(layout, first_plain) != first_real:  # not rich's bytes: this shape is laid out by rich
                self._shapes[shape] = None
                return None
            self._shapes[shape] = layout
        return None if layout is None else _fill(layout, plain)

    def _by_rows(self, console: Any, cells: Cells, plain: list[list[str]],
                 build: Callable[[Cells | None, bool], Any]) -> str | None:
        """A long table (a node with 1,000 GPUs has 16,000 rows) laid out a row at a time:
        rich's work per row is milliseconds, so the table is laid out by rich once per
        *row shape* and each row filled in, which keeps the report linear in its findings.

        A column's width depends only on the largest minimum and maximum width of its cells,
        which rows of one shape share: so a table of one row per shape has the whole table's
        column widths. Rich lays that table out with a one-character sentinel row before each
        row (too narrow to widen any column), which shows where each row's lines begin and
        end; the pieces, put together without the sentinels, must be rich's own layout of
        the table of shapes, and the rows filled with the first real row of each shape must
        be rich's layout of those real rows, or None (the table is laid out as before)."""
        from rich.text import Text

        marked = [tuple(self._mark(i, p) for i, p in enumerate(row)) for row in plain]
        first: dict[tuple[str, ...], int] = {}
        for k, m in enumerate(marked):
            first.setdefault(m, k)
        shapes = list(first)
        ncol = len(shapes[0])
        sentinel = ("!",) + ("",) * (ncol - 1)
        spaced: list[tuple[Any, ...]] = []
        for m in shapes:
            spaced.append(tuple(Text(c) for c in sentinel))
            spaced.append(tuple(Text(c) for c in m))
        spaced.append(tuple(Text(c) for c in sentinel))
        lines = _capture(console, build(tuple(spaced), False)).splitlines(keepends=True)
        cuts = [i for i, ln in enumerate(lines) if ln.strip() == "!"]
        if len(cuts) != len(shapes) + 1:
            return None
        head, foot = "".join(lines[: cuts[0]]), "".join(lines[cuts[-1] + 1:])
        blocks = ["".join(lines[a + 1: b]) for a, b in zip(cuts, cuts[1:])]
        templates = {m: (b, [(x.start(), x.end(), MARKERS.index(b[x.start()]), 0) for x in _RUNS.finditer(b)])
                     for m, b in zip(shapes, blocks)}
        compiled = {m: _compile(t) for m, t in templates.items()}
        plain_shapes = tuple(tuple(Text(c) for c in m) for m in shapes)
        if head + "".join(blocks) + foot != _capture(console, build(plain_shapes, False)):  # type: ignore[arg-type]
            return None
        reps = [first[m] for m in shapes]
        filled = head + "".join(_fill(templates[marked[k]], [plain[k]]) for k in reps) + foot
        if filled != _capture(console, build(tuple(cells[k] for k in reps), False)):
            return None
        out = [head]
        for m, row in zip(marked, plain):
            literals, slices = compiled[m]
            cols = [c.replace(" ", "") for c in row]
            out.append(literals[0])
            out.extend(cols[c][a:b] + lit for (c, a, b), lit in zip(slices, literals[1:]))
        out.append(foot)
        return "".join(out)


_NEW, _PENDING = object(), object()
ROWS_AT_ONCE = 64  # a table longer than this is laid out a row shape at a time (_by_rows)


def _capture(console: Any, table: Any) -> str:
    with console.capture() as cap:
        console.print(table)
    return str(cap.get())


def _compile(layout: tuple[str, list[tuple[int, int, int, int]]]) -> tuple[list[str], list[tuple[int, int, int]]]:
    """A row template as its literal pieces and, between them, which characters of which
    column fill each marker run (``_fill``'s work, done once per shape)."""
    template, runs = layout
    literals, slices, at, last = [], [], [0] * len(MARKERS), 0
    for start, end, col, _ in runs:
        literals.append(template[last:start])
        slices.append((col, at[col], at[col] + end - start))
        at[col] += end - start
        last = end
    literals.append(template[last:])
    return literals, slices


def _fill(layout: tuple[str, list[tuple[int, int, int, int]]], plain: list[list[str]]) -> str:
    """The template with each marker run replaced by the next characters of its column."""
    template, runs = layout
    columns = ["".join(row[i] for row in plain).replace(" ", "") for i in range(len(MARKERS))]
    at = [0] * len(MARKERS)
    out: list[str] = []
    last = 0
    for start, end, col, _ in runs:
        out.append(template[last:start])
        n = end - start
        out.append(columns[col][at[col]:at[col] + n])
        at[col] += n
        last = end
    out.append(template[last:])
    return "".join(out)
