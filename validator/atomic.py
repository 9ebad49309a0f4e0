"""Atomic file writes: a report or key is either all there or not there at all."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from validator.errors import SpecCheckError


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never a half-written report.

    A symlink is followed (its target is replaced); a device or FIFO (``-o /dev/null``,
    ``-o /dev/stdout``) is written through, never replaced by a regular file. The new file
    gets the mode the umask (or the file it replaces) gives, not mkstemp's 0600; ``mode``
    sets it outright, before the name appears (a private key is never world-readable).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
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
        try:
            with open(target, "wb") as fh:
                fh.write(raw)
        except OSError as exc:
            raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise SpecCheckError(f"cannot write: {exc.strerror or exc}", file=str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
