"""One line per output format (``validator/renderers/__init__.py``: ``OUTPUTS``; issue 21,
deliverable 4): a format registered at run time is a ``--format`` choice of every verb that
renders a report and renders there, its extension names it, and docs/reports.md's table
is the registry's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from click.testing import CliRunner

from validator import renderers
from validator.renderers import OutputFormat

ROOT = Path(__file__).resolve().parents[2]


class ToyRenderer:
    """The throwaway format: one line per finding, and the options it was given."""

    def __init__(self, **options: Any) -> None:
        self.options = options

    def render(self, report: Any, stream: TextIO) -> None:
        stream.write(f"TOY options={sorted(self.options)}\n")
        for f in report.findings:
            stream.write(f"TOY {f.rule} {f.status.value}\n")


TOY = OutputFormat("toyout", "tests.reports.test_output_registry:ToyRenderer", ".toy", "text/x-toy",
                   "a test's throwaway format")


@pytest.fixture()
def toy() -> Iterator[OutputFormat]:
    renderers.register(TOY)
    try:
        yield TOY
    finally:
        renderers.unregister("toyout")
    assert "toyout" not in renderers.available()


def test_a_registered_format_is_offered_and_rendered(toy: OutputFormat, result_file: Path, tmp_path: Path) -> None:
    from validator.cli import cli

    for verb in ("check", "lint", "cluster", "health", "report"):
        r = CliRunner().invoke(cli, [verb, "--help"])
        assert "toyout" in r.output, verb
    out = tmp_path / "r.toy"
    r = CliRunner().invoke(cli, ["report", str(result_file), "--format", "toyout", "-o", str(out)])
    assert r.exit_code in (0, 1), r.output
    text = out.read_text()
    assert text.startswith("TOY options=[]\n")  # it lists no passes: --show passes is not passed on
    assert re.search(r"^TOY \S+ fail$", text, re.M)
    assert renderers.by_extension("r.toy") == "toyout"


def test_unregistered_it_is_refused(result_file: Path) -> None:
    from validator.cli import cli

    renderers.register(TOY)
    renderers.unregister("toyout")
    r = CliRunner().invoke(cli, ["report", str(result_file), "--format", "toyout"])
    assert r.exit_code == 2 and "toyout" in r.output
    with pytest.raises(ValueError, match="registered already"):
        renderers.register(renderers.BY_NAME["json"])


def test_the_format_choices_are_the_registry() -> None:
    from validator.cli.common import format_names

    assert list(format_names()) == sorted(o.name for o in renderers.OUTPUTS)
    core = {"terminal": renderers.BY_NAME["terminal"].target, "json": renderers.BY_NAME["json"].target}
    assert core == renderers.RENDERERS
    for o in renderers.OUTPUTS:  # every target is importable and renders
        mod, _, cls = o.target.partition(":")
        assert callable(getattr(__import__(mod, fromlist=[cls]), cls)), o.name


def test_extension_inference() -> None:
    assert renderers.by_extension("out/result.sarif") == "sarif"
    assert renderers.by_extension("REPORT.HTML") == "html"
    assert renderers.by_extension("x.prom") == "prometheus"
    assert renderers.by_extension("x.txt") is None  # terminal and github both write text
    assert renderers.by_extension("noext") is None


def test_only_the_formats_that_list_passes_get_show_passes(report: Any, tmp_path: Path) -> None:
    from validator.cli.common import render

    for o in renderers.OUTPUTS:
        render(report, o.name, tmp_path / f"r{o.extension}", show_passes=True)  # no TypeError: popped
    assert {o.name for o in renderers.OUTPUTS if o.lists_passes} == {"terminal", "markdown", "html"}


def test_docs_table_is_the_registry() -> None:
    doc = (ROOT / "docs" / "reports.md").read_text()
    assert renderers.markdown_table() in doc, "docs/reports.md: paste validator.renderers.markdown_table()"
