"""The terminal renderer draws each distinct table once (``TerminalRenderer(reuse=True)``):
its output must be the bytes rich gives when it lays out every table itself, on real
reports (the example fleet, a lint of the public corpus, a fleet with every pass listed)
and where reuse cannot stand in (a subject name wider than its table, colour)."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

import pytest

from validator.renderers.terminal import _TRAILING, TerminalRenderer
from validator.report.results import load_result

ROOT = Path(__file__).resolve().parents[2]


def _both(report: object, **kw: object) -> tuple[str, str]:
    """rich's bytes drawing every table, and with tables reused."""
    out = []
    for reuse in (False, True):
        buf = io.StringIO()
        TerminalRenderer(reuse=reuse, **kw).render(report, buf)  # type: ignore[arg-type]
        out.append(buf.getvalue())
    return out[0], out[1]


@pytest.mark.parametrize("width", [140, 200, 80])
@pytest.mark.parametrize("show_passes", [False, True])
def test_example_fleet_renders_the_same_bytes(width: int, show_passes: bool) -> None:
    _, report = load_result(ROOT / "reports/examples/fleet.json")
    base, reused = _both(report, width=width, show_passes=show_passes)
    assert reused == base
    assert base.count("\n") > 20


def test_lint_of_many_jobs_renders_the_same_bytes(tmp_path: Path) -> None:
    from validator.cli import main

    out = tmp_path / "lint.json"
    with pytest.raises(SystemExit):
        main(["lint", "--format", "json", "-o", str(out), str(ROOT / "tests/corpus")])
    _, report = load_result(out)
    subjects = {f.subject for f in report.findings}
    assert len(subjects) > 50
    base, reused = _both(report, width=140)
    assert reused == base


def test_a_subject_wider_than_its_table_and_repeated_rows(tmp_path: Path) -> None:
    """Three subjects with the same rows: a short name (drawn), the same again (reused), and
    a name longer than the table (rich wraps a title to the table's width: not reused)."""
    _, report = load_result(ROOT / "reports/examples/node-dgx-h100.json")
    assert len({f.subject for f in report.findings}) == 1
    long = "node-" + "x" * 180
    findings = [*report.findings,
                *(replace(f, subject="dgx-b") for f in report.findings),
                *(replace(f, subject=long) for f in report.findings)]
    many = replace(report, findings=tuple(findings))
    base, reused = _both(many, width=140, show_passes=True)
    assert reused == base
    assert long[:100] in base
    r = TerminalRenderer(width=140, show_passes=True)
    r.render(many, io.StringIO())
    assert r._tables is not None and len(r._tables._shapes) == 1  # three subjects, one layout


def test_trailing_spaces_are_stripped_as_before() -> None:
    """The look-behind only stops a run of spaces from being tried at every space."""
    old = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
    samples = ["a   \nb\t \t\n   \n", "x \x1b[0m  \x1b[1m\nend", "  lead and trail  \x1b[31m \x1b[0m",
               "no trailing", "", " " * 5000 + "x" + " " * 5000]
    for s in samples:
        assert _TRAILING.sub(r"\1", s) == old.sub(r"\1", s), repr(s[:40])


@pytest.mark.parametrize("alphabet, reused", [
    # values as findings have them: identifiers, numbers, units, paths
    ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/()=<>,", True),
    # and anything at all (rich's markup escapes, backslashes): the bytes are still rich's,
    # a shape whose first table rich lays out otherwise is left to rich
    ("abcXYZ0189-_.:/()=<>[]\\\"'#$%&*+,;?@^`{|}~", False),
])
def test_tables_of_one_shape_with_other_text_render_rich_s_bytes(alphabet: str, reused: bool) -> None:
    """Nodes of a real fleet differ in values of the same length (another GPU's UUID,
    51 C for 48 C): one layout per shape, filled with each table's own characters. Random
    texts with words of every length (folded where wider than a column), at three widths."""
    import random

    from validator.report.model import Status

    _, report = load_result(ROOT / "reports/examples/node-dgx-h100.json")
    rnd = random.Random(1795)

    def words(n: int) -> list[int]:
        # a word wider than its column is folded (the second case has such words, and every
        # character rich's markup reads specially)
        return [rnd.choice([1, 2, 3, 5, 8, 13, 20] if reused else [1, 3, 8, 13, 40, 90]) for _ in range(n)]

    def text(shape: list[int]) -> str:
        return " ".join("".join(rnd.choice(alphabet) for _ in range(k)) for k in shape)

    base = report.findings[0]
    shapes = [[(rnd.choice(list(Status)), words(rnd.randint(0, 2)), words(rnd.randint(1, 12)),
                words(rnd.randint(1, 9))) for _ in range(rnd.randint(1, 6))] for _ in range(4)]
    findings = []
    for node in range(60):
        for i, (status, item, seen, expected) in enumerate(shapes[node % len(shapes)]):
            findings.append(replace(base, subject=f"node{node:03d}", status=status, rule=f"R-{i}.x",
                                    item=text(item) or None, observed=text(seen), message=text(seen),
                                    expected=text(expected)))
    many = replace(report, findings=tuple(findings))
    for width in (100, 140, 220):
        for show in (False, True):
            for verbose in (False, True):
                base_out, reused_out = _both(many, width=width, show_passes=show, verbose=verbose)
                assert reused_out == base_out, (width, show, verbose)
    if reused:
        r = TerminalRenderer(width=140, verbose=True, show_passes=True)
        r.render(many, io.StringIO())
        assert r._tables is not None
        assert 1 <= len(r._tables._shapes) <= len(shapes)  # 60 tables, at most 4 layouts
        assert all(v is not None for v in r._tables._shapes.values())


@pytest.mark.parametrize("reuse", [False, True])
def test_no_text_is_cut_at_the_edge_of_the_page(reuse: bool) -> None:
    """A long item (its column kept at least 48 wide) beside long words in the value columns
    made rich lay the table out wider than the page and cut every line at the edge: the
    expected column lost text. Every character of every cell is printed."""
    import random
    from collections import Counter

    from validator.report.model import Status

    _, report = load_result(ROOT / "reports/examples/node-dgx-h100.json")
    base = report.findings[0]
    rnd = random.Random(11)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    def text() -> str:
        return " ".join("".join(rnd.choice(alphabet) for _ in range(rnd.choice([1, 3, 8, 20, 40, 90])))
                        for _ in range(rnd.randint(1, 8)))

    for _ in range(60):
        findings = [replace(base, subject="s", status=Status.FAIL, rule=f"R-{i}.x", message="m",
                            item="".join(rnd.choice(alphabet) for _ in range(rnd.choice([0, 5, 40, 60]))) or None,
                            observed=text(), expected=text()) for i in range(rnd.randint(1, 4))]
        buf = io.StringIO()
        TerminalRenderer(width=rnd.choice([120, 140, 200]), reuse=reuse).render(
            replace(report, findings=tuple(findings)), buf)
        shown = Counter("".join(buf.getvalue().split("What to do")[0].split()))
        want = Counter("".join("".join((f.item or "") + f.observed + f.expected for f in findings).split()))
        assert not want - shown, want - shown
