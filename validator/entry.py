"""The ``spec-check`` entry point: signals first, then everything else.

A module with no imports but the standard library's ``signal``, ``sys``, ``gc``, ``io`` and ``os``
(all loaded by the interpreter before any script), so that the handlers are in place before
click, rich or pydantic load (a Slurm prolog's SIGTERM or a
user's Ctrl-C often lands during start-up):

* SIGTERM and SIGHUP (``timeout``, scancel, a closed terminal) end the run the way
  Ctrl-C does: ``spec-check: error: interrupted (SIGTERM)``, exit 2, the contract's
  code for a run that could not be done (not 143). ``cluster`` installs its own handlers
  while it gathers, to kill its children and still write a partial result.
* Ctrl-C (SIGINT) during the imports is the same one line, never a traceback.
* A signal that lands in the weakref callback the import system runs as it releases a
  module lock is delivered a millisecond later, outside it (SIGALRM): raised inside it, the
  interrupt is "ignored" (the interpreter prints its traceback) and the run goes on.

The cyclic garbage collector runs a young collection every 10,000 new objects instead of
700: a run allocates its modules, classes and rule pack, which live to the end, and
collecting them 50 times over was 3-5% of a ``check`` (refcounting frees everything else
as before; a cycle waits a little longer).
"""

from __future__ import annotations

import gc
import io
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

last_signal = ""  # the signal that ended the run ("" for Ctrl-C), for its one-line message


def _interrupted(signum: int, frame: FrameType | None) -> None:
    global last_signal
    if _in_lock_callback(frame) and _later(signum):
        return
    last_signal = signal.Signals(signum).name
    raise KeyboardInterrupt(last_signal)


def _ctrl_c(signum: int, frame: FrameType | None) -> None:
    """Python's own SIGINT handler (a bare KeyboardInterrupt), but never inside the import
    system's lock callback."""
    if _in_lock_callback(frame) and _later(signum):
        return
    raise KeyboardInterrupt


def _in_lock_callback(frame: FrameType | None) -> bool:
    """Whether the signal landed in the weakref callback importlib runs when a module lock
    is released during an import (or in what it calls): an exception raised there is not
    the run's, the interpreter prints it as "Exception ignored in ... Traceback" and the
    run goes on."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "cb" and code.co_filename == "<frozen importlib._bootstrap>":
            return True
        frame = frame.f_back
    return False


_pending = 0  # a signal held back from the lock callback, delivered by the timer below


def _later(signum: int) -> bool:
    """The signal again a millisecond later, by then outside the callback (a few
    instructions); False where there is no interval timer (Windows): raised at once."""
    global _pending
    if not hasattr(signal, "setitimer"):
        return False
    _pending = signum
    signal.signal(signal.SIGALRM, _deliver)
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    return True


def _deliver(_signum: int, frame: FrameType | None) -> None:
    if _in_lock_callback(frame):
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        return
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    (_ctrl_c if _pending == signal.SIGINT else _interrupted)(_pending, frame)


def _quit(why: str) -> None:
    sys.stderr.write(f"spec-check: error: interrupted{f' ({why})' if why else ''}\n")
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


YOUNG_COLLECTION = 10_000  # new objects between two young collections (CPython's default: 700)


def main(argv: list[str] | None = None) -> Any:
    _closed_stdout()
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_COLLECTION:  # 0: collection turned off by the caller; left so
        gc.set_threshold(YOUNG_COLLECTION, *older)
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _interrupted)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not a caller's own
            signal.signal(signal.SIGINT, _ctrl_c)
        from validator.cli import main as cli_main
    except KeyboardInterrupt as exc:
        _quit(str(exc))
    try:
        return cli_main(argv)
    except KeyboardInterrupt as exc:  # between the imports and the verb's own handling
        _quit(str(exc))
