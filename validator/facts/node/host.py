"""Host facts: hostname, machine identity, kernel, OS, CPUs, memory, the locked-memory
limit, /dev/shm.

Traps this module exists to avoid:
* The memlock limit is that of what launches training (slurmd, the container runtime,
  their systemd unit; ``limits.py``), read from ``<procfs>/PID/limits`` ("Max locked
  memory", soft column, bytes) rather than ``resource.getrlimit``: the same file can be
  read from a recorded tree, and ``RLIM_INFINITY`` is -1 in Python, which a careless
  ``>=`` would fail. ``unlimited`` is kept as the string "unlimited" (see ``document.value``).
* /dev/shm is measured with ``os.statvfs`` (``f_frsize * f_blocks``), not ``f_bsize``.
* CPU count and hostname come from psutil/socket on the live machine (what the catalogue
  names); a recorded tree answers from ``cpuinfo`` and ``sys/kernel/hostname``. On Linux
  both are read with the call psutil and socket make there (``sysconf`` and ``uname``),
  without loading either: psutil and socket were a fifth of a ``check``'s start-up, spent
  on two numbers the ``os`` module already has (tests/facts/test_host_live.py compares them).
* The machine's identity is what a replay holds a facts file to (two hosts with one
  identity are one machine's facts twice): systemd's ``/etc/machine-id`` (machine-id(5):
  32 lower-case hex digits; "uninitialized" on a first boot is no identity) and the
  board's serial number from SMBIOS (``/sys/class/dmi/id/board_serial``, readable by root
  only). Firmware that was never given a serial says so in words ("Default string", "To
  be filled by O.E.M."): an error value, never a serial two boards share.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from validator.facts.document import Fact, error, value
from validator.facts.node.base import Context, ReadError, read, read_fact
from validator.facts.node.limits import memlock
from validator.facts.node.limits import parse_memlock as parse_memlock  # where it was

NAME = "host"
FACTS = (
    "host.hostname",
    "host.machine_id",
    "host.board_serial",
    "host.kernel",
    "host.os",
    "cpu.logical_count",
    "cpu.model",
    "memory.total",
    "memory.memlock_limit",
    "memory.shm_size",
)


def collect(ctx: Context) -> dict[str, Fact]:
    cpuinfo = ctx.procfs / "cpuinfo"
    return {
        "host.hostname": _hostname(ctx),
        "host.machine_id": _machine_id(ctx.rootfs),
        "host.board_serial": _board_serial(ctx.sysfs / "class/dmi/id/board_serial"),
        "host.kernel": read_fact(ctx.procfs / "sys/kernel/osrelease"),
        "host.os": _os_release(ctx.rootfs),
        "cpu.logical_count": _cpu_count(ctx, cpuinfo),
        "cpu.model": read_fact(cpuinfo, _cpu_model),
        "memory.total": read_fact(ctx.procfs / "meminfo", _mem_total, unit="B"),
        "memory.memlock_limit": memlock(ctx),
        "memory.shm_size": _shm_size(ctx.rootfs / "dev/shm"),
    }


def _hostname(ctx: Context) -> Fact:
    if ctx.live:
        return value(host_name(), source="this host's name (hostname)")
    return read_fact(ctx.procfs / "sys/kernel/hostname")


def _machine_id(rootfs: Path) -> Fact:
    """systemd's machine ID (``/etc/machine-id``; D-Bus's copy where systemd has none)."""
    def parse(text: str) -> str:
        if len(text) == 32 and all(c in "0123456789abcdef" for c in text):
            return text
        raise ValueError(f"not a machine ID (32 lower-case hex digits): {text[:40]!r}")

    return _first_file(rootfs, ("etc/machine-id", "var/lib/dbus/machine-id"), parse, "machine-id")


def _first_file(rootfs: Path, rels: tuple[str, ...], parse: Callable[[str], str], what: str) -> Fact:
    """The first of ``rels`` (under ``rootfs``) that reads and parses, or an error value with
    every file's problem."""
    problems = []
    for rel in rels:
        path = rootfs / rel
        try:
            return value(parse(read(path)), source=str(path))
        except ReadError as exc:
            problems.append(str(exc))
        except ValueError as exc:
            problems.append(f"{path}: {exc}")
    return error("; ".join(problems), source=what)


# what firmware writes where no serial number was ever set (dmidecode prints these as they are)
_NO_SERIAL = frozenset({"", "default string", "to be filled by o.e.m.", "not specified", "not applicable",
                        "none", "n/a", "na", "system serial number", "0", "0123456789", "123456789",
                        "serial#", "unknown", "invalid"})


def _board_serial(path: Path) -> Fact:
    try:
        text = read(path)
    except ReadError as exc:
        why = str(exc)
        if "ermission denied" in why:  # mode 0400: a probe not run as root
            why += " (the board serial is readable by root only)"
        return error(why, source=str(path))
    if text.strip().lower() in _NO_SERIAL or set(text.strip()) <= {"0", " ", "f", "F", "x", "X"}:
        return error(f"{path}: no serial set by the firmware ({text!r})", source=str(path))
    return value(text, source=str(path))


def _cpu_count(ctx: Context, cpuinfo: Path) -> Fact:
    if ctx.live:
        n = logical_cpus()
        if not n:
            return error("the count of logical CPUs could not be told", source="logical CPUs (nproc --all)")
        return value(n, source="logical CPUs (nproc --all)")

    def count(text: str) -> int:
        n = sum(1 for line in text.splitlines() if line.split(":")[0].strip() == "processor")
        if not n:
            raise ValueError("no 'processor' lines")
        return n

    return read_fact(cpuinfo, count)


def host_name() -> str:
    """``socket.gethostname()``. On Linux, glibc's and musl's ``gethostname`` copy the node
    name ``uname(2)`` gives, and both Python calls decode it the same way (the file system
    encoding): ``os.uname()`` reads it without loading socket."""
    if sys.platform.startswith("linux"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def logical_cpus() -> int | None:
    """``psutil.cpu_count(logical=True)``. On Linux psutil answers with
    ``sysconf(_SC_NPROCESSORS_ONLN)``, and ``None`` below 1; its fallbacks (``cpuinfo``,
    ``/proc/stat``) are for a ``sysconf`` that cannot say, and only then is psutil loaded."""
    if sys.platform.startswith("linux"):
        try:
            n = os.sysconf("SC_NPROCESSORS_ONLN")
        except (ValueError, OSError):
            pass
        else:
            return n if n >= 1 else None
    import psutil

    count: int | None = psutil.cpu_count(logical=True)
    return count


def _cpu_model(text: str) -> str:
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if key.strip() == "model name":
            return val.strip()
    raise ValueError("no 'model name' line")


def _mem_total(text: str) -> int:
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            kib = int(parts[1])
            return kib * 1024 if len(parts) < 3 or parts[2] == "kB" else kib
    raise ValueError("no MemTotal line")


def _os_release(rootfs: Path) -> Fact:
    """PRETTY_NAME from os-release, the same files platform.freedesktop_os_release reads."""
    def parse(text: str) -> str:
        fields = {}
        for line in text.splitlines():
            key, eq, val = line.partition("=")
            if eq:
                fields[key.strip()] = val.strip().strip("\"'")
        name = fields.get("PRETTY_NAME") or " ".join(
            v for v in (fields.get("NAME"), fields.get("VERSION_ID")) if v
        )
        if not name:
            raise ValueError("no PRETTY_NAME or NAME")
        return name

    return _first_file(rootfs, ("etc/os-release", "usr/lib/os-release"), parse, "os-release")


def _shm_size(path: Path) -> Fact:
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return error(f"cannot statvfs {path}: {exc.strerror or exc}", source=str(path))
    return value(st.f_frsize * st.f_blocks, unit="B", source=f"size of {path} (statvfs, as df shows it)")
