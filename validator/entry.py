"""The ``spec-check`` entry point: signals first, then everything else.

A module with no imports but the standard library's ``signal``, ``sys`` and ``gc``, so that the
handlers are in place before click, rich or pydantic load (a Slurm prolog's SIGTERM or a
user's Ctrl-C often lands during start-up):

* SIGTERM and SIGHUP (``timeout``, scancel, a closed terminal) end the run the way
  Ctrl-C does: ``spec-check: error: interrupted (SIGTERM)``, exit 2, the contract's
  code for a run that could not be done (not 143). ``cluster`` installs its own handlers
  while it gathers, to kill its children and still write a partial result.
* Ctrl-C (SIGINT) during the imports is the same one line, never a traceback.

The cyclic garbage collector runs a young collection every 10,000 new objects instead of
700: a run allocates its modules, classes and rule pack, which live to the end, and
collecting them 50 times over was 3-5% of a ``check`` (refcounting frees everything else
as before; a cycle waits a little longer).
"""

from __future__ import annotations

import gc
import signal
import sys
from typing import Any

last_signal = ""  # the signal that ended the run ("" for Ctrl-C), for its one-line message


def _interrupted(signum: int, _frame: Any) -> None:
    global last_signal
    last_signal = signal.Signals(signum).name
    raise KeyboardInterrupt(last_signal)


def _quit(why: str) -> None:
    sys.stderr.write(f"spec-check: error: interrupted{f' ({why})' if why else ''}\n")
    sys.stderr.flush()
    sys.exit(2)


YOUNG_COLLECTION = 10_000  # new objects between two young collections (CPython's default: 700)


def main(argv: list[str] | None = None) -> Any:
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_COLLECTION:  # 0: collection turned off by the caller; left so
        gc.set_threshold(YOUNG_COLLECTION, *older)
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _interrupted)
        from validator.cli import main as cli_main
    except KeyboardInterrupt as exc:
        _quit(str(exc))
    try:
        return cli_main(argv)
    except KeyboardInterrupt as exc:  # between the imports and the verb's own handling
        _quit(str(exc))
