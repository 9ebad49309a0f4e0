"""``check``'s library path imports neither ``dataclasses`` nor ``inspect``.

``import dataclasses`` imports ``inspect`` (with ast, dis, tokenize, linecache): 15-20 ms of
CPU on the machine of issue 21, against ~65 ms for ``python -c "import psutil"``.
validator/values/records.py declares the project's value classes without it (it reads
the fields itself; ``__dataclass_fields__`` is made when first read, tests/test_records.py
compares it with @dataclass's), and the modules on the path use its ``field``,
``replace`` and ``field_names``. Here the library path that ``check`` and ``check --format
...`` take (building the options, probing this node or loading recorded facts, loading the
bundled compiled rule pack, evaluating, cleaning and rendering the report) runs in a fresh
interpreter, without the CLI (validator/cli and validator/entry.py have start-up tests of
their own), and must leave both modules unimported. The report is the same, byte for
byte, when dataclasses was imported before it (every class then still reads its fields
the same way). No time is asserted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.startup_probe import run_probe

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
RECORDING = Path("/work/shared/recordings/h200-node/facts.json")  # a real H200's facts

# argv: "before" (import dataclasses and inspect first) or "-", then the formats, then the
# facts files (none: this node probed). Prints what was imported and each rendered report.
_PROBE = """
import io, json, sys
from pathlib import Path
pre, formats, facts = sys.argv[1], sys.argv[2].split(","), tuple(Path(p) for p in sys.argv[3:])
if pre == "before":
    import dataclasses, inspect
from validator.api.node import check_node
from validator.api.options import CheckOptions
from validator.renderers import get_renderer
from validator.renderers.escape import clean_report
outcome = check_node(CheckOptions(facts=facts))
rendered = {}
for fmt in formats:
    out = io.StringIO()
    get_renderer(fmt).render(clean_report(outcome.report), out)
    rendered[fmt] = out.getvalue()
print(json.dumps({"code": outcome.exit_code, "dataclasses": "dataclasses" in sys.modules,
                  "inspect": "inspect" in sys.modules, "rendered": rendered,
                  "findings": len(outcome.report.findings)}))
"""

FORMATS = "terminal,json,sarif,junit,github,markdown,html,prometheus"


def _facts_cases() -> list[tuple[str, ...]]:
    cases = [(str(FACTS),)]
    if RECORDING.is_file():
        cases.append((str(RECORDING),))
    return cases


def test_a_check_of_this_node_imports_neither(tmp_path: Path) -> None:
    """``check`` (this node probed), rendered for the terminal and as JSON."""
    data = run_probe(tmp_path, _PROBE, "-", "terminal,json")
    assert data["findings"] > 0 and data["rendered"]["json"].startswith("{")
    assert (data["dataclasses"], data["inspect"]) == (False, False)


@pytest.mark.parametrize("facts", _facts_cases(), ids=lambda f: Path(f[0]).name)
def test_a_check_of_recorded_facts_imports_neither_in_any_format(tmp_path: Path, facts: tuple[str, ...]) -> None:
    """``check --facts FILE --format F`` for every output format."""
    data = run_probe(tmp_path, _PROBE, "-", FORMATS, *facts)
    assert data["findings"] > 0 and all(len(text) > 100 for text in data["rendered"].values())
    assert (data["dataclasses"], data["inspect"]) == (False, False)


@pytest.mark.parametrize("facts", _facts_cases(), ids=lambda f: Path(f[0]).name)
def test_the_report_is_the_same_with_dataclasses_imported_first(tmp_path: Path, facts: tuple[str, ...]) -> None:
    """The same report, every format byte for byte, when dataclasses and inspect were
    imported before the first record was declared (a program that imports the library
    after them) as when neither was."""
    env = {"SOURCE_DATE_EPOCH": "1700000000", "COLUMNS": "100"}
    import os

    plain = run_probe(tmp_path, _PROBE, "-", FORMATS, *facts, env={**os.environ, **env})
    before = run_probe(tmp_path, _PROBE, "before", FORMATS, *facts, env={**os.environ, **env})
    assert (before["dataclasses"], before["inspect"]) == (True, True)
    assert (plain["dataclasses"], plain["inspect"]) == (False, False)
    assert before["code"] == plain["code"]
    assert before["rendered"] == plain["rendered"]
    assert '"generated_at": "2023-11-14T22:13:20Z"' in plain["rendered"]["json"]  # the pinned clock: comparable
