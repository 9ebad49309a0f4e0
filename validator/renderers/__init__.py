"""Output formats, picked by name (after check-jsonschema's REPORTER_BY_NAME).

Each format is one :class:`OutputFormat` line in ``OUTPUTS``: its name (the ``--format``
value), its renderer (``module:Class``, imported only when that format is asked for, so
that a run in JSON never imports rich and ``--help`` imports none of them), the file
extension and media type of what it writes, whether it lists passes under ``--show
passes``, and whether it shows a signed result's signature. The CLI's ``--format``
choices, ``render``'s options, ``spec-check report``'s signature banner, the file
extension a name infers (``by_extension``) and the table in ``docs/reports.md`` all read
it (``tests/reports/test_output_registry.py``); adding a format is its module and one
line here (CONTRIBUTING.md).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from validator.renderers.base import Renderer


@dataclass(frozen=True)
class OutputFormat:
    """One ``--format``: what writes it and what it is."""

    name: str
    target: str  # "module:Class"
    extension: str  # of a file written in it (``-o report.sarif``)
    media_type: str
    description: str
    lists_passes: bool = False  # ``--show passes`` lists (or counts) the passes in it
    shows_signature: bool = False  # a signed result rendered in it shows who signed it
    optional: bool = False  # listed only where its module is importable


OUTPUTS: tuple[OutputFormat, ...] = (
    OutputFormat("terminal", "validator.renderers.terminal:TerminalRenderer", ".txt", "text/plain",
                 "for people, in a terminal", lists_passes=True),
    OutputFormat("json", "validator.renderers.json_:JsonRenderer", ".json", "application/json",
                 "the result itself: every other format is rendered from it"),
    OutputFormat("sarif", "validator.renderers.sarif:SarifRenderer", ".sarif", "application/sarif+json",
                 "SARIF 2.1.0, for code-scanning UIs", optional=True),
    OutputFormat("junit", "validator.renderers.junit:JUnitRenderer", ".xml", "application/xml",
                 "JUnit XML, for CI test reports", optional=True),
    OutputFormat("github", "validator.renderers.github:GitHubRenderer", ".txt", "text/plain",
                 "GitHub Actions workflow commands (annotations)", optional=True),
    OutputFormat("markdown", "validator.renderers.markdown:MarkdownRenderer", ".md", "text/markdown",
                 "for a pull request comment or a job summary", lists_passes=True, optional=True),
    OutputFormat("html", "validator.renderers.html_:HtmlRenderer", ".html", "text/html",
                 "one self-contained page", shows_signature=True, lists_passes=True, optional=True),
    OutputFormat("prometheus", "validator.renderers.prometheus:PrometheusRenderer", ".prom",
                 "text/plain; version=0.0.4", "node_exporter textfile metrics", optional=True),
    OutputFormat("oscal", "validator.renderers.oscal:OscalRenderer", ".oscal.json", "application/json",
                 "OSCAL 1.0.6 assessment results, for GRC tools", optional=True),
)
BY_NAME: dict[str, OutputFormat] = {o.name: o for o in OUTPUTS}

# the same, by name -> "module:Class" (the tables this module used to keep)
RENDERERS: dict[str, str] = {o.name: o.target for o in OUTPUTS if not o.optional}
OPTIONAL_RENDERERS: dict[str, str] = {o.name: o.target for o in OUTPUTS if o.optional}


def register(out: OutputFormat) -> None:
    """Add an output format (a plug-in, or a test's throwaway one): ``--format`` offers it
    on every verb from now on."""
    global OUTPUTS
    if out.name in BY_NAME:
        raise ValueError(f"output format {out.name!r} is registered already")
    OUTPUTS = (*OUTPUTS, out)
    BY_NAME[out.name] = out


def unregister(name: str) -> None:
    global OUTPUTS
    OUTPUTS = tuple(o for o in OUTPUTS if o.name != name)
    BY_NAME.pop(name, None)


_FOUND: dict[str, bool] = {}  # module -> importable: an installation does not change during a run
_AVAILABLE: dict[tuple[OutputFormat, ...], dict[str, str]] = {}


def _importable(target: str) -> bool:
    module = target.split(":")[0]
    found = _FOUND.get(module)
    if found is None:
        found = _FOUND[module] = importlib.util.find_spec(module) is not None
    return found


def available() -> dict[str, str]:
    """Every format this installation can write: name -> "module:Class". Worked out once
    per set of registered formats: click reads a ``--format`` choice (``Names``) item by
    item, and each look-up of an optional module's file was a search of ``sys.path``."""
    formats = OUTPUTS
    found = _AVAILABLE.get(formats)
    if found is None:
        found = _AVAILABLE[formats] = {o.name: o.target for o in formats if not o.optional or _importable(o.target)}
    return dict(found)


class Names(Sequence[str]):
    """The available formats' names, sorted, read on each use: a click ``--format`` choice
    built once at import still offers a format registered later."""

    def _names(self) -> list[str]:
        return sorted(available())

    def __getitem__(self, i: Any) -> Any:  # Any: Sequence's overloads (an int gives a str, a slice a list)
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


def by_extension(filename: str) -> str | None:
    """The format a file name's extension says (``report.sarif`` -> ``sarif``), when exactly
    one available format writes that extension; None otherwise (``.txt``: two do)."""
    dot = filename.rfind(".")
    if dot < 0:
        return None
    ext = filename[dot:].lower()
    names = [name for name in available() if BY_NAME[name].extension == ext]
    return names[0] if len(names) == 1 else None


def get_renderer(name: str, **options: object) -> Renderer:
    target = available()[name]
    module_name, cls_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    renderer: Renderer = cls(**options)
    return renderer



def markdown_table() -> str:
    """The table of output formats in docs/reports.md (a test keeps the two equal)."""
    rows = ["| `--format` | writes | file extension | media type | lists passes (`--show passes`) |",
            "|---|---|---|---|---|"]
    for o in OUTPUTS:
        signed = " (shows a signed result's signature)" if o.shows_signature else ""
        passes = "yes" if o.lists_passes else "no"
        rows.append(f"| `{o.name}` | {o.description}{signed} | `{o.extension}` | `{o.media_type}` | {passes} |")
    return "\n".join(rows) + "\n"
