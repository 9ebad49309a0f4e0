"""The ``spec-check`` entry point: signals first, then everything else.

A module with no imports but the standard library's ``contextlib``, ``io``, ``os``, ``signal`` and
``sys``, so that the handler is in place before click, rich or pydantic load (a Slurm prolog's
SIGTERM or a user's Ctrl-C often lands during start-up).

A run started with standard output closed (``check >&-``) gets /dev/null on file descriptor 1
and a ``sys.stdout`` whose writes fail as a full disk's do: the one-line error, exit 2.

One handler, for SIGTERM, SIGHUP (``timeout``, scancel, a closed terminal) and Ctrl-C
(SIGINT): it writes the one line ``spec-check: error: interrupted (SIGTERM)`` (Ctrl-C:
``interrupted``, after a blank line, as click ends an aborted verb) and exits 2, the
contract's code for a run that could not be done (not 143, not 130). Reports and fixes are
written to a temporary file and renamed, so nothing is left half-written. ``cluster``
installs its own handlers while it gathers, to stop its children and still write a partial
result.

A signal that lands while the import system runs a module lock's weakref callback is
reported by the interpreter as "Exception ignored" there, and the run goes on: a rare
race during start-up, left as CPython has it.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType


def _interrupted(signum: int, _frame: FrameType | None) -> None:
    """Say the one line and exit 2 (SystemExit: what the run holds open is closed on the way
    out, a child process such as ``dcgmi diag`` killed, a temporary file removed)."""
    line = ("\nspec-check: error: interrupted\n" if signum == signal.SIGINT
            else f"spec-check: error: interrupted ({signal.Signals(signum).name})\n")
    with contextlib.suppress(OSError, ValueError, RuntimeError):  # closed, or mid-write (reentrant)
        sys.stderr.write(line)
        sys.stderr.flush()
    sys.exit(2)


class ClosedStdout(io.TextIOBase):
    """Standard output when the run was started with it closed (``check >&-``): a write
    fails as a write to a full disk fails (an ``OSError``, here EBADF), which the CLI turns
    into its one-line ``cannot write to standard output`` error, exit 2."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        raise OSError(9, "it is closed")  # errno.EBADF (the errno module is not loaded yet)


def _closed_stdout() -> None:
    """With file descriptor 1 closed, /dev/null is put there (so that no file opened later
    takes it and no child process writes into that file) and ``sys.stdout`` refuses writes."""
    if sys.stdout is not None:
        return
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 1:
            os.dup2(fd, 1)
            os.close(fd)
    except OSError:
        pass
    sys.stdout = ClosedStdout()


def main(argv: list[str] | None = None) -> Any:
    _closed_stdout()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not a caller's own
        signal.signal(signal.SIGINT, _interrupted)
    from validator.cli import main as cli_main

    return cli_main(argv)
