"""The kernel log as records: (seconds since boot or wall-clock time, message), from
``/dev/kmsg``, ``journalctl -k`` or a saved file.

Why each way, and the traps:
* ``/dev/kmsg`` gives one record per ``read()``: ``PRI,SEQ,USEC,FLAGS[,...];MESSAGE`` with
  continuation lines `` KEY=VALUE`` (Documentation/ABI/testing/dev-kmsg). Opened with
  O_NONBLOCK it answers EAGAIN once the buffer is read, so reading never blocks; EPIPE
  means the ring buffer overwrote the next record (it is skipped, not fatal). Opening
  fails with EPERM for a non-root user under ``kernel.dmesg_restrict=1``.
* ``journalctl -k -b -o short-monotonic`` is the fallback where /dev/kmsg cannot be read
  (a container without it); it has a deadline, as every command spec-check runs.
* A saved file (``--kernel-log``) may be ``dmesg`` (``[  12.345678] msg``), ``dmesg -T``
  (``[Fri Nov 27 03:12:01 2026] msg``), /dev/kmsg records, ``journalctl -k`` in the default
  ``short`` format (``Nov 27 03:12:01 host kernel: msg``), ``short-iso`` or
  ``short-monotonic``. A line in none of these shapes is counted, never guessed at.

Time: a record's ``since_boot`` (seconds) when the line carries it, else ``wall`` (a
datetime; the default journalctl format has no year, the file's own order decides it).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from validator.lazy import Pattern

MAX_BYTES = 64 * 1024 * 1024  # a kernel log file larger than this is refused, not read
JOURNAL_TIMEOUT = 3.0
MAX_RECORDS = 1_000_000

# compiled at first use (validator.lazy): a run that reads no saved log uses only _KMSG
_KMSG = Pattern(r"^(\d{1,3}),(\d{1,20}),(\d{1,19}),[^;]*;(.*)$")
# the start of a /dev/kmsg record's first line, in bytes: a read that matches it is a record
# for _KMSG too (ASCII digits are \d; bytes without ";" or a newline decode to text without)
_KMSG_HEAD = Pattern(rb"\d{1,3},\d{1,20},\d{1,19},[^;\n]*;")
_KMSG_ESCAPE = Pattern(rb"\\x([0-9a-fA-F]{2})")
_MONO = Pattern(r"^\[\s*(\d{1,10}\.\d{1,9})\]\s?(.*)$")
_CTIME = Pattern(r"^\[([A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]\s?(.*)$")
_ISO = Pattern(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) (\S+) (.*)$")
_SHORT = Pattern(r"^([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (\S+) (.*)$")
_KERNEL_TAG = Pattern(r"^kernel: (.*)$")
_MONO_TAG = Pattern(r"^\S+ kernel: (.*)$")


@dataclass(frozen=True)
class Record:
    """One kernel log message and when it was logged (either clock may be unknown)."""

    message: str
    since_boot: float | None = None  # seconds after boot, as dmesg prints them
    wall: datetime | None = None
    line: int = 0  # 1-based line in a file (0: a live record)

    def when(self) -> str:
        if self.since_boot is not None:
            return f"{self.since_boot:.6f} s after boot"
        if self.wall is not None:
            return self.wall.isoformat()
        return "time unknown"


@dataclass
class Log:
    """Records read, where from, and how many lines had no recognisable shape."""

    records: list[Record]
    source: str
    unparsed: int = 0
    now_since_boot: float | None = None  # the moment the log was read, on the boot clock
    now_wall: datetime | None = None


class KernelLogError(Exception):
    """The kernel log could not be read; ``str()`` says what was tried and why it failed."""


def parse_line(line: str, number: int = 0) -> Record | None:
    """One line of any supported shape, or None."""
    line = line.rstrip("\r\n")
    m = _KMSG.match(line)
    if m:
        return Record(_unescape_kmsg(m.group(4)), since_boot=int(m.group(3)) / 1e6, line=number)
    m = _MONO.match(line)
    if m:
        rest = m.group(2)
        tag = _MONO_TAG.match(rest)  # journalctl -o short-monotonic
        return Record(tag.group(1) if tag else rest, since_boot=float(m.group(1)), line=number)
    m = _CTIME.match(line)
    if m:
        try:
            wall = datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            return None
        return Record(m.group(2), wall=wall, line=number)
    m = _ISO.match(line)
    if m:
        text = _kernel_message(m.group(3))
        if text is None:
            return None
        try:
            wall = datetime.fromisoformat(m.group(1).replace(",", "."))
        except ValueError:
            return None
        return _with_inner_stamp(text, wall, number)
    m = _SHORT.match(line)
    if m:
        text = _kernel_message(m.group(3))
        if text is None:
            return None
        try:
            wall = datetime.strptime(f"2000 {' '.join(m.group(1).split())}", "%Y %b %d %H:%M:%S")
        except ValueError:
            return None
        return _with_inner_stamp(text, wall, number)
    return None


def _unescape_kmsg(text: str) -> str:
    """/dev/kmsg writes each byte below 0x20, from 0x7f, and the backslash as ``\\xHH``
    (kernel/printk/printk.c, msg_add_ext_text); dmesg prints them as they are. Undone byte by
    byte, then read as UTF-8, so a record means the same text whichever way it was read (the
    real H200's tab in ``rcu: \\x09RCU restricting CPUs`` showed the difference)."""
    if "\\x" not in text:
        return text
    raw = _KMSG_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8", "surrogateescape"))
    return raw.decode("utf-8", errors="replace")


def _kernel_message(rest: str) -> str | None:
    m = _KERNEL_TAG.match(rest)
    return m.group(1) if m else None


def _with_inner_stamp(text: str, wall: datetime, number: int) -> Record:
    """syslog lines may carry the kernel's own ``[  12.3]`` stamp after ``kernel:``."""
    m = _MONO.match(text)
    if m:
        return Record(m.group(2), since_boot=float(m.group(1)), wall=wall, line=number)
    return Record(text, wall=wall, line=number)


def parse_lines(lines: Iterable[str], source: str) -> Log:
    """A saved log: the records and the count of lines of no known shape. A line that
    starts with a space (a /dev/kmsg `` KEY=VALUE`` continuation) is not a message."""
    records: list[Record] = []
    unparsed = 0
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith(" "):
            continue
        rec = parse_line(line, n)
        if rec is None:
            unparsed += 1
            # a message with no stamp still counts when it names a GPU event: kept, no time
            records.append(Record(line.rstrip("\r\n"), line=n))
        else:
            records.append(rec)
        if len(records) >= MAX_RECORDS:
            break
    _fix_years(records)
    log = Log(records, source, unparsed)
    stamped = [r for r in records if r.since_boot is not None]
    if stamped:
        log.now_since_boot = max(r.since_boot for r in stamped if r.since_boot is not None)
    walls = [r.wall for r in records if r.wall is not None]
    if walls:
        log.now_wall = max(walls)
    return log


def _fix_years(records: list[Record]) -> None:
    """The ``short`` format has no year (parsed as 2000): a later record earlier in the
    year than the one before means the year turned. Only order matters for ages."""
    year = 0
    last: datetime | None = None
    for i, r in enumerate(records):
        if r.wall is None or r.wall.year != 2000:
            continue
        wall = r.wall.replace(year=2000 + year)
        if last is not None and wall < last:
            year += 1
            wall = r.wall.replace(year=2000 + year)
        last = wall
        records[i] = Record(r.message, r.since_boot, wall, r.line)


def read_file(path: Path) -> Log:
    """A saved ``dmesg`` / ``journalctl -k`` output; KernelLogError if it cannot be read."""
    try:
        st = path.stat()
        if not path.is_file():
            raise KernelLogError(f"{path} is not a regular file")
        if st.st_size > MAX_BYTES:
            raise KernelLogError(f"{path} is {st.st_size} bytes, over the {MAX_BYTES} byte limit "
                                 "for a kernel log")
        with open(path, encoding="utf-8", errors="replace") as fh:
            log = parse_lines(fh, str(path))
    except OSError as exc:
        raise KernelLogError(f"cannot read {path}: {exc.strerror or exc}") from None
    if _not_a_kernel_log(log):  # the wrong file: its events are unknown, not none
        raise KernelLogError(f"no line of {path} is a kernel log line (dmesg, dmesg -T, /dev/kmsg or "
                             "journalctl -k output): not a kernel log")
    return log


def _not_a_kernel_log(log: Log) -> bool:
    """Nothing in a stamp of a known shape and no GPU event line: a facts document, tool
    output, an empty file. (journalctl's own ``-- No entries --`` lines are a log.)"""
    lines = [r for r in log.records if not r.message.startswith("-- ")]
    if any(r.since_boot is not None or r.wall is not None for r in lines):
        return False
    if any("NVRM: Xid" in r.message or "amdgpu" in r.message for r in lines):
        return False
    return bool(lines) or not log.records


def read_kmsg(path: Path = Path("/dev/kmsg"), only: tuple[str, ...] = ()) -> Log:
    """What /dev/kmsg holds now, without blocking; KernelLogError when it cannot be opened.

    ``only``: keep just the records whose message contains one of these strings (the GPU
    events' markers); the others are still read and counted, as without ``only``, but no
    record is made of them: the records kept are exactly those the full read would give
    that contain one of the strings (tests/facts/test_kmsg_only.py compares both)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise KernelLogError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        records, unparsed = kmsg_records(_kmsg_reads(fd, path), only)
    finally:
        os.close(fd)
    import time

    return Log(records, str(path), unparsed, now_since_boot=time.clock_gettime(time.CLOCK_MONOTONIC))


class _Unreadable(Exception):
    """EINVAL from a read of /dev/kmsg (no record could be read): fatal before the first record."""


def _kmsg_reads(fd: int, path: Path) -> Iterator[bytes]:
    """Each ``read()`` of /dev/kmsg (one record each) until EAGAIN: every buffered record read."""
    while True:
        try:
            chunk = os.read(fd, 8192)
        except BlockingIOError:
            return  # EAGAIN: every buffered record has been read
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                continue  # overwritten before we got to it: the next read goes on
            if exc.errno == errno.EINVAL:
                raise _Unreadable(f"cannot read {path}: {exc.strerror}") from None
            return
        if not chunk:
            return
        yield chunk


def kmsg_records(reads: Iterable[bytes], only: tuple[str, ...] = ()) -> tuple[list[Record], int]:
    """The records of /dev/kmsg reads (one record a read: its first line is the message) and
    the count of reads of no known shape; at most MAX_RECORDS records are read.

    With ``only``, a read that holds none of its strings and no ``\\x`` escape (its message
    is then a substring of its bytes, unescaped: it cannot contain one) and whose first line
    has the /dev/kmsg shape is counted as a record and skipped, undecoded: thousands of
    records a run, of which the GPU events need the few that name one."""
    records: list[Record] = []
    unparsed = n = 0  # n: records read, kept or not
    kmsg, head = _KMSG.compiled().match, _KMSG_HEAD.compiled().match
    look = None  # a search for any of ``only`` or an escape: one call a read
    if only:
        import re

        look = re.compile(b"|".join(re.escape(x) for x in (b"\\x", *(s.encode() for s in only)))).search
    it = iter(reads)
    while n < MAX_RECORDS:
        try:
            chunk = next(it)
        except StopIteration:
            break
        except _Unreadable as exc:
            if n:
                break
            raise KernelLogError(str(exc)) from None
        if look is not None and look(chunk) is None and head(chunk):
            n += 1
            continue
        line = chunk.decode("utf-8", errors="replace").split("\n", 1)[0]
        m = kmsg(line.rstrip("\r\n"))  # parse_line's first shape, inline
        if m:
            rec = Record(_unescape_kmsg(m.group(4)), int(m.group(3)) / 1e6)
        else:
            other = parse_line(line)
            if other is None:
                unparsed += 1
                continue
            rec = other
        n += 1
        if not only or any(x in rec.message for x in only):
            records.append(rec)
    return records, unparsed


def read_journal() -> Log:
    """``journalctl -k -b -o short-monotonic``: the kernel messages of this boot."""
    import shutil
    import subprocess

    exe = shutil.which("journalctl")
    if exe is None:
        raise KernelLogError("journalctl not found")
    argv = [exe, "-k", "-b", "-o", "short-monotonic", "--no-pager", "-q"]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=JOURNAL_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise KernelLogError(f"journalctl -k did not answer in {JOURNAL_TIMEOUT:g} s") from None
    except OSError as exc:
        raise KernelLogError(f"journalctl: {exc.strerror or exc}") from None
    if p.returncode != 0:
        lines = [ln for ln in (p.stderr or p.stdout).splitlines() if ln.strip()]
        raise KernelLogError(f"journalctl -k exit {p.returncode}: {lines[-1] if lines else ''}".rstrip(": "))
    import time

    log = parse_lines(p.stdout.splitlines(), "journalctl -k -b -o short-monotonic")
    log.now_since_boot = time.clock_gettime(time.CLOCK_MONOTONIC)
    return log


def read_live(kmsg: Path = Path("/dev/kmsg"), only: tuple[str, ...] = ()) -> Log:
    """/dev/kmsg, else journalctl -k; KernelLogError naming both failures. ``only``: as
    read_kmsg's (journalctl's records are all kept: a reader filters them as it must)."""
    try:
        return read_kmsg(kmsg, only)
    except KernelLogError as first:
        try:
            return read_journal()
        except KernelLogError as second:
            raise KernelLogError(f"{first}; {second}") from None


def messages(log: Log, marker: str) -> Iterator[Record]:
    """The records whose message contains ``marker`` (cheap filter before a regex)."""
    return (r for r in log.records if marker in r.message)
