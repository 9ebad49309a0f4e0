"""The plain terminal report written without rich (``validator/renderers/plain_layout.py``)
is rich's bytes: every example report, the real H200 recording, a lint of the public
corpus, at widths 20 to 200; generated reports and strings (spaces, long words, markup-like
brackets, backslashes, empty cells, long identifiers and values) at many widths; and each
piece (markup, escaping, wrapping, tables) against the rich function it stands in for.

rich is the existing path, forced with ``TerminalRenderer(plain=False)``. Where the plain
writer hands a report to rich (``Unsupported``), the bytes are rich's by construction; the
real reports must not need that (``wrote_plain``)."""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.renderers import plain_layout
from validator.renderers.escape import rich as rich_escape
from validator.renderers.terminal import TerminalRenderer
from validator.report.model import Location, Status
from validator.report.results import load_result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "reports" / "examples").glob("*.json"))
SHARED = Path("/work/shared")
RECORDED_CHECK = SHARED / "recordings" / "h200-node" / "check.json"
RECORDED_FACTS = SHARED / "recordings" / "h200-node" / "facts.json"
CORPUS = SHARED / "corpus"
WIDTHS = sorted({20, 21, 33, 47, 59, 64, 79, 80, 81, 99, 100, 119, 120, 121, 127, 139, 140, 141, 160, 181, 199, 200})


def _render(report: object, *, plain: bool, **kw: object) -> tuple[str, bool]:
    r = TerminalRenderer(plain=plain, **kw)  # type: ignore[arg-type]
    buf = io.StringIO()
    r.render(report, buf)  # type: ignore[arg-type]
    return buf.getvalue(), r.wrote_plain


def _same(report: object, must_be_plain: bool = True, **kw: object) -> str:
    rich_out, rich_plain = _render(report, plain=False, **kw)
    ours, wrote_plain = _render(report, plain=True, **kw)
    assert not rich_plain
    if must_be_plain:
        assert wrote_plain, f"the plain writer handed this report to rich ({kw})"
    assert ours == rich_out, kw
    return ours


def test_rich_is_a_verified_version() -> None:
    """The plain writer is used only with a rich it was compared with: this one."""
    from importlib.metadata import version

    assert version("rich") in plain_layout.VERIFIED
    assert plain_layout.usable()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_reports_at_every_width(path: Path) -> None:
    _, report = load_result(path)
    for width in WIDTHS:
        _same(report, width=width)
        _same(report, width=width, show_passes=True, verbose=width % 2 == 0)


def _cli_json(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "validator", *args, "--format", "json", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    return out


@pytest.mark.skipif(not RECORDED_CHECK.is_file(), reason="shared/recordings not present")
def test_the_h200_recording(tmp_path: Path) -> None:
    """The result recorded on the H200, and a check of its recorded facts with this version."""
    reports = [load_result(RECORDED_CHECK)[1],
               load_result(_cli_json(tmp_path, "check", "--facts", str(RECORDED_FACTS)))[1]]
    for report in reports:
        for width in range(20, 201, 3):
            _same(report, width=width, show_passes=width % 2 == 0)
        out = _same(report, width=140, show_passes=True, verbose=True)
        assert "H200" in out or "h200" in out.lower()


@pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").is_file(), reason="shared/corpus not present")
def test_a_lint_of_the_public_corpus(tmp_path: Path) -> None:
    _, report = load_result(_cli_json(tmp_path, "lint", str(CORPUS)))
    assert len({f.subject for f in report.findings}) > 20  # jobs of the corpus
    for width in (20, 80, 120, 140, 200):
        _same(report, width=width)
    for width in (80, 120, 140, 173):
        _same(report, width=width, show_passes=True)


# ---- generated reports -------------------------------------------------------------------

# what findings quote: identifiers, units, paths, markup-like brackets, backslashes; a few
# letters the plain writer measures (· é), and now and then one it leaves to rich (… 漢 tab)
_ALPHABET = "abcxyzABC0189 -_.:/()=<>,[]\\\"'#%&*+;?@^`{|}~/·é"
_text = st.text(alphabet=_ALPHABET, max_size=60)
_long_word = st.text(alphabet="abcdefghij0123456789-_", min_size=30, max_size=140)
_value = st.one_of(_text, _long_word, st.builds(lambda a, b: f"{a} {b}", _long_word, _text),
                   st.sampled_from(["", " ", "  lead", "trail  ", "a\nb", "[bold]x[/]", "\\", "x\\", "[/]",
                                    "[red", "\\[dim]", "[#fff]", "…", "漢字", "tab\there", "GPU-" + "f" * 36]))
_finding = st.fixed_dictionaries({
    "subject": st.sampled_from(["n1", "node-0002", "a[b]", "fleet", "x" * 150]),
    "status": st.sampled_from(list(Status)),
    "rule": st.one_of(st.sampled_from(["NET-01.fabric-port-slow", "MEM-01.ecc", "R-" + "9" * 60]), _text),
    "item": st.one_of(st.none(), _value),
    "observed": st.one_of(st.none(), _value),
    "expected": _value,
    "message": _value,
    "remediation": _value,
    "line": st.one_of(st.none(), st.integers(1, 99999)),
})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(findings=st.lists(_finding, min_size=1, max_size=12),
       width=st.one_of(st.integers(20, 200), st.sampled_from([80, 120, 140])),
       show=st.booleans(), verbose=st.booleans(), lint=st.booleans())
def test_generated_reports(findings: list[dict[str, object]], width: int, show: bool, verbose: bool,
                           lint: bool) -> None:
    _, base = load_result(ROOT / "reports" / "examples" / "node-dgx-h100.json")
    first = base.findings[0]
    made = []
    for d in findings:
        line = d.pop("line")
        loc = Location(file=f"jobs/{d['subject']}.yaml", line=line, text=str(d["observed"])) if line else None
        made.append(replace(first, location=loc, **d))  # type: ignore[arg-type]
    report = replace(base, findings=tuple(made), command="lint" if lint else base.command)
    _same(report, must_be_plain=False, width=width, show_passes=show, verbose=verbose)


# ---- the pieces against rich's own ------------------------------------------------------

_TAGS = ["[bold]", "[dim]", "[green]", "[red]", "[bold red]", "[bold green]", "[/]", "[/bold]", "[/dim]"]


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(st.one_of(st.sampled_from(_TAGS), _text, st.builds(rich_escape, _text)), max_size=10))
def test_markup_is_rich_s(pieces: list[str]) -> None:
    """Where the plain writer reads markup, it reads what rich reads; escaped text is text."""
    from rich.errors import MarkupError
    from rich.markup import render

    s = "".join(pieces)
    try:
        ours: str | None = plain_layout.markup(s)
    except plain_layout.Unsupported:
        ours = None
    try:
        theirs: str | None = render(s, emoji=False).plain
    except MarkupError:
        theirs = None
    if ours is not None:
        assert ours == theirs


@settings(max_examples=400, deadline=None)
@given(value=_text)
def test_escaped_text_is_shown_as_written(value: str) -> None:
    """``escape.rich`` (no rich import) is rich's ``escape`` with the renderer's closing
    backslash, and the plain writer reads it back as rich does, inside a tag too (which is
    the value itself but for rich's own slips with backslashes: ``\\[`` shows as ``[``, two
    closing backslashes as one; the rich path printed them so before, and still does)."""
    from rich.markup import escape, render

    theirs = escape(value)
    if theirs.endswith("\\") and not theirs.endswith("\\\\"):
        theirs += "\\"
    assert rich_escape(value) == theirs
    marked = f"[bold]{rich_escape(value)}[/]"
    assert plain_layout.markup(marked) == render(marked, emoji=False).plain
    if "\\" not in value:
        assert plain_layout.markup(marked) == value


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(_text, st.lists(st.one_of(_text, _long_word), max_size=6).map(" ".join),
                      st.lists(_text, max_size=4).map("\n".join)),
       width=st.integers(1, 90), overflow=st.sampled_from(["fold", "ellipsis", "crop"]), no_wrap=st.booleans())
def test_wrap_is_rich_s(text: str, width: int, overflow: str, no_wrap: bool) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console(width=200, file=io.StringIO(), no_color=True)
    theirs = [ln.plain for ln in Text(text).wrap(console, width, overflow=overflow, no_wrap=no_wrap)]  # type: ignore[arg-type]
    assert plain_layout.wrap(text, width, overflow, no_wrap) == theirs


def _strip(out: str) -> str:
    return "\n".join(line.rstrip(" \t") for line in out.split("\n"))


_column = st.fixed_dictionaries({"header": st.sampled_from(["status", "rule", "item", "observed (or why not judged)",
                                                            "expected", "what holds", ""]),
                                 "no_wrap": st.booleans(), "overflow": st.sampled_from(["fold", "ellipsis"]),
                                 "min_width": st.one_of(st.none(), st.integers(0, 60))})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=st.lists(_column, min_size=1, max_size=5), data=st.data(), width=st.integers(20, 200),
       title=st.one_of(st.none(), _text.map(rich_escape).map(lambda t: f"[bold]{t}[/]")))
def test_tables_are_rich_s(columns: list[dict[str, object]], data: st.DataObject, width: int,
                           title: str | None) -> None:
    """``PlainConsole.table`` against ``console.print(Table(...))`` as terminal.py builds it."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    cell = st.one_of(_text, _long_word, st.just("")).map(rich_escape)
    rows = data.draw(st.lists(st.tuples(*[cell for _ in columns]), max_size=6))
    spec = [plain_layout.Column(str(c["header"]), no_wrap=bool(c["no_wrap"]), overflow=str(c["overflow"]),
                                min_width=c["min_width"]) for c in columns]  # type: ignore[arg-type]
    t = Table(title=title, title_justify="left", show_lines=False, pad_edge=False, expand=False, box=box.SIMPLE_HEAD)
    for c in spec:
        t.add_column(c.header, no_wrap=c.no_wrap, overflow=c.overflow, min_width=c.min_width)  # type: ignore[arg-type]
    for row in rows:
        t.add_row(*row)
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, no_color=True, highlight=False, soft_wrap=False,
            emoji=False).print(t)
    ours = plain_layout.PlainConsole(width)
    try:
        ours.table(title, spec, list(rows))
    except plain_layout.Unsupported:
        return
    assert _strip(ours.getvalue()) == _strip(buf.getvalue())
    widths = t._calculate_column_widths(Console(width=width, file=io.StringIO()),
                                        Console(width=width, file=io.StringIO()).options.update_width(width - t._extra_width))
    assert ours.table_widths(spec, list(rows)) == widths


def test_what_it_leaves_to_rich() -> None:
    """A character it does not measure, a tab, a tag of another kind: Unsupported, and the
    report is rich's (tested above); printable ASCII and the report's own signs are not."""
    for bad in ("…", "漢", "a\tb", "\x1b", "\u00a0", "\u00ad", "e\u0301"):
        with pytest.raises(plain_layout.Unsupported):
            plain_layout.PlainConsole(80).print_text(bad)
    for bad in ("[link=x]a[/]", "[italic]a[/]", "[@click]a[/]", "[/]", "[bold]a[/red]"):
        with pytest.raises(plain_layout.Unsupported):
            plain_layout.markup(bad)
    for good in ("spec-check 0.3 · spec v1", "42 °C, µs, é", "x[1] [2]"):
        plain_layout.PlainConsole(80).print(good)


def test_a_report_it_cannot_write_is_rich_s_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """One character it does not measure, anywhere in the report: rich writes all of it;
    and with a rich it was not compared with, rich writes every report."""
    _, report = load_result(ROOT / "reports" / "examples" / "node-dgx-h100.json")
    odd = replace(report, findings=(*report.findings[:-1], replace(report.findings[-1], observed="漢字 …")))
    out = _same(odd, must_be_plain=False, width=140, show_passes=True)
    assert "漢字" in out
    assert _render(odd, plain=True, width=140)[1] is False
    assert _render(report, plain=True, width=140)[1] is True
    monkeypatch.setattr(plain_layout, "VERIFIED", ("0.0.1",))
    monkeypatch.setattr(plain_layout, "_usable", None)
    assert not plain_layout.usable()
    assert _render(report, plain=True, width=140)[1] is False
