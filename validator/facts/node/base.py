"""What every node source shares: the context it runs in, its Protocol, sysfs helpers.

A source is a plain module (pre-commit's languages are the model) with ``NAME``, ``FACTS``
(every fact it owns) and ``collect(ctx)``. Sources run in ``SOURCES`` order and later ones
may read what earlier ones found through ``ctx.facts`` (the GPU source needs the PCI scan
and the RDMA ports), so ordering is part of the contract.

Reads go through ``read()``/``read_fact()`` so that an unreadable file becomes an error
value that names the path and the errno text, never an exception that loses other facts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from validator.facts.document import Document, Fact, error, value
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S
from validator.lazy import Pattern

# domain:bus:device.function; Intel VMD domains have five hex digits (10000:e1:00.0)
PCI_ADDRESS = Pattern(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


@dataclass
class Context:
    """Where a probe reads from, and what earlier sources found."""

    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    rootfs: Path = Path("/")
    nvml: Any = None  # a pynvml-like module (Any: pynvml has no type stubs); None imports the real one
    amdsmi_loader: Callable[[], Any] | None = None  # returns the amdsmi module (Any: no type stubs)
    query_drivers: bool = True  # False: the GPU drivers (NVML, amdsmi) answer for another host
    kernel_log: Path | None = None  # a saved dmesg / journalctl -k instead of this host's log
    dcgm_level: int | None = None  # run `dcgmi diag -r LEVEL` (None: not requested)
    since: Document | None = None  # an earlier facts document of this node (counter rises)
    scrape_endpoints: tuple[str, ...] = ()  # --scrape URLs (and the profile's scrape_endpoints)
    scrape_interval: float = SCRAPE_INTERVAL_S  # seconds between the two scrapes of each endpoint
    scrape_timeout: float = DEFAULT_DEADLINE_S  # deadline for each scrape's whole answer
    facts: dict[str, Fact] = field(default_factory=dict)

    @property
    def live(self) -> bool:
        """True when probing this machine itself rather than a recorded tree.

        Facts the catalogue takes from psutil/socket (CPU count, hostname) come from them
        only on the live machine; a tree under another root answers from its own files.
        """
        return self.procfs.resolve() == Path("/proc") and self.sysfs.resolve() == Path("/sys")


class FactSource(Protocol):
    """A module that gathers some node facts (checked structurally, like pre-commit)."""

    @property
    def NAME(self) -> str: ...  # module constants, as pre-commit's Language

    @property
    def FACTS(self) -> tuple[str, ...]: ...

    def collect(self, ctx: Context) -> dict[str, Fact]: ...


class ReadError(Exception):
    """A file that could not be read; ``str()`` names the path and the errno text."""

    def __init__(self, path: Path, exc: OSError | str) -> None:
        self.path = path
        if isinstance(exc, OSError):
            reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))
        else:
            reason = exc
        super().__init__(f"cannot read {path}: {reason}")


def read(path: Path) -> str:
    """The stripped text of a sysfs/procfs file; raises ReadError (never OSError).

    Through the safe opener every other input uses (``validator.io.safeio``): a regular file
    only, at most ``CAPS["node file"]`` bytes, so that a FIFO under ``--rootfs`` cannot
    block the probe and a link to ``/dev/zero`` cannot read until memory runs out (sysfs
    and procfs attributes are regular files: 4 KiB, or 0 bytes until read)."""
    from validator.io.safeio import CAPS, InputError, read_bytes

    try:
        raw = read_bytes(path, cap=CAPS["node file"], what="node file")
    except InputError as exc:
        why = exc.problem.removeprefix("cannot read: ")
        raise ReadError(path, "Is a directory" if why.startswith("is a directory") else why) from None
    return raw.decode("utf-8", errors="replace").strip()


def read_fact(path: Path, parse: Callable[[str], object] = str, *, unit: str | None = None) -> Fact:
    """Read and parse one file into a value, or an error value naming the path."""
    try:
        raw = read(path)
        return value(parse(raw), unit=unit, source=str(path))
    except ReadError as exc:
        return error(str(exc), source=str(path))
    except ValueError as exc:
        return error(f"{path}: {exc}", source=str(path))


def parse_numa(raw: str) -> int:
    """sysfs ``numa_node``: -1 means the kernel does not know (VMs, one socket)."""
    node = int(raw)
    if node < 0:
        raise ValueError(f"NUMA node unknown to the kernel ({raw})")
    return node


def pci_address(device_link: Path) -> str | None:
    """The PCI address behind a ``device`` symlink, or None if it is not a PCI function."""
    try:
        real = device_link.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return real.name if PCI_ADDRESS.match(real.name) else None


def errors_for(facts: tuple[str, ...], reason: str, source: str | None = None) -> dict[str, Fact]:
    """The same error value for every fact a failed source owns."""
    return {name: error(reason, source=source) for name in facts}


# ---- the process table, read once per probe ---------------------------------------------------

# (pid, its directory's name, its comm or None where unreadable) per procfs, while one probe
# runs (``one_process_table``); None outside one: every scan reads the table itself
_TABLES: dict[Path, list[tuple[int, str, str | None]] | None] | None = None


@contextmanager
def one_process_table() -> Iterator[None]:
    """While the block runs, the sources that scan the process table (limits: the runtimes'
    memlock; telemetry: the exporters) share one read of each process's ``comm``: on a GPU
    node of a thousand processes, a thousand reads fewer. Outside it nothing is kept (a
    live table changes between two probes)."""
    global _TABLES
    outer = _TABLES
    _TABLES = {} if outer is None else outer
    try:
        yield
    finally:
        _TABLES = outer


def process_table(procfs: Path) -> list[tuple[int, str, str | None]] | None:
    """``(pid, name, comm)`` of every process directory under ``procfs``, by pid (``comm``
    None where it cannot be read: gone, or not ours); None when ``procfs`` cannot be listed.
    A name of digits that is no number (``²``) raises ValueError, as ``int()`` does."""
    tables = _TABLES
    if tables is not None and procfs in tables:
        return tables[procfs]
    try:
        names = [p.name for p in procfs.iterdir() if p.name.isdigit()]
    except OSError:
        table = None
    else:
        table = []
        for pid, name in sorted(((int(n), n) for n in names), key=lambda t: t[0]):
            try:
                comm: str | None = read(procfs / name / "comm")
            except ReadError:
                comm = None
            table.append((pid, name, comm))
    if tables is not None:
        tables[procfs] = table
    return table
