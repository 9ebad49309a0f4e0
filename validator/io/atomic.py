"""Atomic file writes: a report or key is either all there or not there at all.

The temporary file is named ``.NAME.HOST.PID.XXXXXXXX.tmp`` beside the target. A run
killed by SIGKILL cannot remove its own, so every write first removes the temporary
files of the same target left by processes of this host that no longer exist: a killed
run leaves at most one stray file, and only until the next run writes there.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from validator.errors import SpecCheckError


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never a half-written report.

    A symlink is followed (its target is replaced); a device or FIFO (``-o /dev/null``,
    ``-o /dev/stdout``) is written through, never replaced by a regular file. The new file
    gets the mode the umask (or the file it replaces) gives, not mkstemp's 0600; ``mode``
    sets it outright, before the name appears (a private key is never world-readable).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with open_atomic(path, mode=mode) as fh:
        fh.write(raw)


@contextlib.contextmanager
def open_atomic(path: Path, *, mode: int | None = None) -> Iterator[BinaryIO]:
    """``write_atomic`` as a binary file to write in pieces (a 25,000-node result need not
    be held whole): the name appears, complete, when the block ends without an exception;
    an exception leaves the target as it was. A device or FIFO gets the bytes only then
    too (they are held until the block ends)."""
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise SpecCheckError("cannot write: is a directory", file=str(path))
        held = io.BytesIO()
        yield held
        try:
            with open(target, "wb") as fh:
                fh.write(held.getvalue())
        except OSError as exc:
            raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
        return
    _sweep(target)
    try:
        import tempfile  # with shutil, random and the compressors: only when a file is written

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{_host()}.{os.getpid()}.", suffix=".tmp",
                                   dir=target.parent)
    except OSError as exc:
        raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _host() -> str:
    """This host's name as temporary files carry it (socket is imported when a file is
    written, not by every verb that could write one: start-up)."""
    import socket

    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:64] or "host"


def _sweep(target: Path) -> None:
    """Remove ``.NAME.HOST.PID.*.tmp`` beside ``target`` whose process (on this host) is gone."""
    prefix = f".{target.name}.{_host()}."
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(target.parent / name)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True
