"""Run a local process (ssh, srun, sh) with a hard deadline, and kill it cleanly.

Every remote action is a local child process, so a host that hangs is a child that
overruns: it gets SIGTERM, then SIGKILL, as a whole process group (``ssh`` and ``srun``
may fork helpers). Output is read until the deadline, never past it: a backgrounded
helper that keeps a pipe open cannot stall the run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

MAX_OUTPUT = 64 * 1024 * 1024  # a facts document is at most this large


@dataclass(frozen=True)
class Outcome:
    rc: int | None  # None: killed at the deadline
    stdout: str
    stderr: str
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.rc is None

    def stderr_line(self) -> str:
        """The last meaningful stderr line: what a person needs to see."""
        lines = [ln.strip() for ln in self.stderr.splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""


class Registry:
    """The children alive now, so that Ctrl-C can end them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self.closed = False

    def add(self, p: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(p)
        if self.closed:
            kill(p)

    def discard(self, p: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(p)

    def kill_all(self) -> None:
        self.closed = True
        with self._lock:
            procs = list(self._procs)
        for p in procs:
            kill(p, grace=0.5)


def kill(p: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """SIGTERM the child's process group, then SIGKILL after ``grace`` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if p.poll() is not None:
            return
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def start(argv: Sequence[str], registry: Registry | None = None,
          stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """A child in its own session (so its group can be killed), registered for Ctrl-C."""
    p = subprocess.Popen(list(argv), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    if registry is not None:
        registry.add(p)
    return p


def run(argv: Sequence[str], timeout: float, registry: Registry | None = None) -> Outcome:
    """Run to completion or to the deadline; never raises for the child's own failure."""
    t0 = time.monotonic()
    try:
        p = start(argv, registry)
    except OSError as exc:
        return Outcome(127, "", f"cannot run {argv[0]}: {exc.strerror or exc}", 0.0)
    try:
        out, err = p.communicate(timeout=timeout)
        rc: int | None = p.returncode
    except subprocess.TimeoutExpired:
        kill(p)
        try:
            out, err = p.communicate(timeout=2)
        except subprocess.TimeoutExpired:  # a grandchild holds the pipe: give up on it
            out, err = b"", b""
        rc = None
    finally:
        if registry is not None:
            registry.discard(p)
    return Outcome(rc, out[:MAX_OUTPUT].decode("utf-8", "replace"),
                   err[-65536:].decode("utf-8", "replace"), time.monotonic() - t0)
