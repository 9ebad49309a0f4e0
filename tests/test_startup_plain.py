"""The terminal report piped or written to a file, or with ``NO_COLOR`` set, is plain text
(no colour codes); on a terminal it has colour. rich lays out both.

Each verb runs in a fresh interpreter (the bundled pack comes compiled: bundled.json),
as tests/test_startup.py does; the report goes to a buffer, which for the colour case says
it is a terminal. Times are never asserted: bench/start_bench.py prints them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.startup_probe import run_probe

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
JOB = ROOT / "tests" / "jobs" / "formats" / "hf"

# Run a verb in-process with its stdout a buffer (a terminal when argv[1] is "tty"), then
# print whether the report had colour codes and the names in sys.modules.
_PROBE = """
import contextlib, io, json, sys
from validator.entry import main

class Buffer(io.StringIO):
    def isatty(self):
        return TTY

TTY = sys.argv[1] == "tty"
out, code = Buffer(), 0
try:
    with contextlib.redirect_stdout(out):
        main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "colour": "\\x1b[" in out.getvalue(), "chars": len(out.getvalue()),
                  "modules": sorted(sys.modules)}))
"""


def _run(tmp_path: Path, mode: str, *args: str, no_color: bool = False) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "FORCE_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    if no_color:
        env["NO_COLOR"] = "1"
    data = run_probe(tmp_path, _PROBE, mode, *args, env=env)
    assert int(data["chars"]) > 200  # type: ignore[call-overload]  # a report was written
    return data


def _rich(data: dict[str, object]) -> list[str]:
    return [m for m in data["modules"] if m == "rich" or m.startswith("rich.")]  # type: ignore[attr-defined]


def _one_job_file() -> Path:
    return next(p for p in sorted(JOB.glob("*.yaml")))


@pytest.mark.parametrize("args", [("check", "--facts", str(FACTS)),
                                  ("lint", str(_one_job_file())),
                                  ("lint", "--show", "passes", str(_one_job_file()))],
                         ids=["check", "lint", "lint-show-passes"])
def test_a_piped_terminal_report_is_plain_text_by_rich(tmp_path: Path, args: tuple[str, ...]) -> None:
    data = _run(tmp_path, "pipe", *args)
    assert data["colour"] is False
    assert "rich.console" in _rich(data)


@pytest.mark.parametrize("args", [("check", "--facts", str(FACTS)), ("lint", str(_one_job_file()))],
                         ids=["check", "lint"])
def test_no_color_on_a_terminal_is_plain_text(tmp_path: Path, args: tuple[str, ...]) -> None:
    data = _run(tmp_path, "tty", *args, no_color=True)
    assert data["colour"] is False


@pytest.mark.parametrize("args", [("check", "--facts", str(FACTS)), ("lint", str(_one_job_file()))],
                         ids=["check", "lint"])
def test_on_a_terminal_rich_writes_the_colour(tmp_path: Path, args: tuple[str, ...]) -> None:
    data = _run(tmp_path, "tty", *args)
    assert data["colour"] is True
    assert "rich.console" in _rich(data)
