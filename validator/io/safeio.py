"""One safe way to open any input: regular files only, a size cap per kind, bounded reads.

Every file spec-check is given (training configs, logs, facts, results, keys, profiles,
waivers, rule packs, host lists) is read through ``read_bytes``, so the refusals are the
same everywhere and live in one place:

1. ``stat`` first: a FIFO, socket or device is refused *before* ``open`` (opening a FIFO
   blocks until a writer comes; ``/dev/zero`` never ends), and so is a file over the cap.
2. ``open`` with ``O_NONBLOCK``: a file swapped for a FIFO between ``stat`` and ``open``
   cannot block, and ``fstat`` on the open descriptor refuses it.
3. read at most ``cap + 1`` bytes: a file that grows while being read is still bounded.

A refusal is an ``InputError`` (a ``SpecCheckError``: one line, exit 2) naming the file;
callers with their own error type (a lint ``ReadError`` that becomes a finding) re-raise
its ``problem``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from validator.errors import SpecCheckError

MIB = 1024 * 1024

# Caps per kind of input, each far above the largest real one (the numbers are in the
# comments) and low enough that a hostile file is refused in seconds, not gigabytes.
CAPS: dict[str, int] = {
    "training config": 4 * MIB,  # MaxText base.yml, the largest real config seen: 78 KB
    "YAML file": 4 * MIB,  # profiles, waivers, rule files: a few KB each
    "facts document": 64 * MIB,  # a DGX node's facts: about 60 KB
    "key": 64 * 1024,  # an Ed25519 PEM: 119 bytes
    "host file": 16 * MIB,  # 25,000 host names: about 500 KB
    "node file": 4 * MIB,  # a sysfs attribute: at most 4 KiB; /proc/self/mountinfo on a busy k8s node: ~300 KB
}


class InputError(SpecCheckError):
    """An input refused before (or while) reading it; ``problem`` says why."""


def read_bytes(path: str | Path, *, cap: int, what: str, too_big: str = "") -> bytes:
    """The bytes of regular file ``path``, at most ``cap`` of them; else ``InputError``.

    ``what`` names the input in messages ("training config", "JSON result"); ``too_big``
    says what to do about a file over the cap (default: "not a <what>")."""
    where = str(path)
    big = f"larger than {_size(cap)}; {too_big or f'not a {what}'}"
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=where) from None
    _refuse_kind(st.st_mode, what, where)
    if st.st_size > cap:
        raise InputError(big, file=where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=where) from None
    try:
        _refuse_kind(os.fstat(fd).st_mode, what, where)  # swapped since stat
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0:
            # at most 1 MiB a read: procfs's sysctl files allocate the size asked for in
            # the kernel, and refuse (ENOMEM) more than it can allocate at once (4 MiB)
            chunk = os.read(fd, min(left, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=where) from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > cap:  # grew since stat
        raise InputError(big, file=where)
    return raw


def read_text(path: str | Path, *, cap: int, what: str, too_big: str = "") -> str:
    """``read_bytes`` decoded as strict UTF-8 (a BOM dropped); else ``InputError``."""
    raw = read_bytes(path, cap=cap, what=what, too_big=too_big)
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(path), line=line) from None


def _refuse_kind(mode: int, what: str, where: str) -> None:
    if stat.S_ISDIR(mode):
        raise InputError(f"is a directory, expected a {what}", file=where)
    if not stat.S_ISREG(mode):
        raise InputError(f"not a regular file (a FIFO, socket or device); not a {what}", file=where)


def _size(n: int) -> str:
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB} MiB"
    return f"{n // 1024} KiB"
