"""Run a local process (ssh, srun, sh) with a hard deadline, and kill it cleanly.

Every remote action is a local child process, so a host that hangs is a child that
overruns: it gets SIGTERM, then SIGKILL, as a whole process group (``ssh`` and ``srun``
may fork helpers). Output is read until the deadline, never past it: a backgrounded
helper that keeps a pipe open cannot stall the run.
"""

from __future__ import annotations

import os
import selectors
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
    """The children alive now, so that Ctrl-C (or SIGTERM, SIGHUP) can end them all.

    ``why`` names what ended the run ("Ctrl-C", "SIGTERM"), for the hosts' error messages.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self.closed = False
        self.why = "Ctrl-C"

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


def start(
    argv: Sequence[str], registry: Registry | None = None, stdin: int | None = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """A child in its own session (so its group can be killed), registered for Ctrl-C."""
    p = subprocess.Popen(
        list(argv),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    if registry is not None:
        registry.add(p)
    return p


def _drain(p: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes, bool]:
    """Read stdout and stderr until both close, or the child has exited and its pipes have
    been quiet for a moment, or the deadline passes. Returns (out, err, hit_deadline).

    Not waiting for EOF after exit matters: an ``ssh`` that multiplexes over a
    ControlMaster hands its pipes to the master, which keeps them open until the remote
    command ends, long after the local client was killed.
    """
    bufs = {p.stdout: bytearray(), p.stderr: bytearray()}
    sel = selectors.DefaultSelector()
    for f in bufs:
        if f is not None:
            sel.register(f, selectors.EVENT_READ)
    exited_at: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return bytes(bufs[p.stdout]), bytes(bufs[p.stderr]), True
            if exited_at is None and p.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > 0.5:
                break
            for key, _ in sel.select(timeout=min(0.1, deadline - now)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = bufs[key.fileobj]  # type: ignore[index]
                if len(buf) < MAX_OUTPUT:
                    buf += chunk
    finally:
        sel.close()
    return bytes(bufs[p.stdout]), bytes(bufs[p.stderr]), False


def run(argv: Sequence[str], timeout: float, registry: Registry | None = None) -> Outcome:
    """Run to completion or to the deadline; never raises for the child's own failure."""
    t0 = time.monotonic()
    try:
        p = start(argv, registry)
    except OSError as exc:
        return Outcome(127, "", f"cannot run {argv[0]}: {exc.strerror or exc}", 0.0)
    try:
        out, err, late = _drain(p, t0 + timeout)
        if late:
            kill(p)
        else:
            try:
                p.wait(timeout=max(0.1, t0 + timeout - time.monotonic()))
            except subprocess.TimeoutExpired:  # pipes closed, child still running
                kill(p)
                late = True
        rc: int | None = None if late else p.returncode
    except BaseException:
        # Ctrl-C / SIGTERM reach the thread running this (the main one, for nccl-tests):
        # end the child before it leaves the registry, or kill_all() would miss it and
        # leave mpirun/srun running in its own session
        kill(p, grace=0.5)
        raise
    finally:
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
        if registry is not None:
            registry.discard(p)
    return Outcome(
        rc,
        out[:MAX_OUTPUT].decode("utf-8", "replace"),
        err[-65536:].decode("utf-8", "replace"),
        time.monotonic() - t0,
    )
