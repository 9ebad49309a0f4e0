"""Streaming readers of a run's metric files: each yields ``(name, step, wall, value)``.

Every reader streams (memory does not grow with the file) and raises ``RunFileError``
naming the file and line (an event file: the record and its byte offset) on input it
cannot trust. A half-written *last* record or line, which a file still being written
has, is not an error: the reader stops there and says how many bytes it passed over
(``Tail``).

TensorBoard event files are read by ``validator.runs.events`` (TFRecord framing, a C CRC-32C,
protobuf's parser for the Event message).
"""

from __future__ import annotations

import csv
import heapq
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from validator.values.numbers import Beyond, int_text, text_problem

if TYPE_CHECKING:
    from validator.report.model import JSONValue

Scalar = tuple[str, int | None, float | None, float]

STEP_KEYS = ("step", "global_step", "_step", "iteration", "trainer/global_step", "train/global_step")
TIME_KEYS = ("time", "timestamp", "wall_time", "walltime", "_timestamp", "t")
MAX_JSON_BYTES = 64 * 1024 * 1024  # a trainer_state.json is read whole


class RunFileError(Exception):
    """A metric file that cannot be trusted from this point: file, line (or record), problem."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        super().__init__(message)
        self.file, self.line, self.message = file, line, message

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Tail:
    """What a reader passed over at the end of a file still being written."""

    bytes: int = 0
    what: str = ""


def _num(x: JSONValue) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def _step_of(rec: dict[str, JSONValue]) -> tuple[str | None, int | None]:
    for k in STEP_KEYS:
        v = rec.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return k, int(v)
    return None, None


# a Unix time told by its magnitude: seconds (``time.time()``), milliseconds (JavaScript,
# MLflow), microseconds, nanoseconds (``time.time_ns()``): (upper bound, divisor), each unit
# covering 1973 to 5138 in its own band; below 1e8 a time is a duration, not a Unix time
UNIX_UNITS = ((1e11, 1.0, "s"), (1e14, 1e3, "ms"), (1e17, 1e6, "us"), (1e20, 1e9, "ns"))


def unix_time(v: float) -> float | None:
    """Seconds since the epoch from a Unix time in s, ms, us or ns (told by its magnitude);
    None below 1e8 (a duration or a counter, not a Unix time); ``ValueError`` for anything
    else (negative, non-finite, or beyond nanoseconds)."""
    if v != v:
        raise ValueError("NaN is no time")
    if 0 <= v < 1e8:
        return None
    for bound, div, _ in UNIX_UNITS:
        if 1e8 <= v < bound:
            return v / div
    raise ValueError(f"{v:g} is no Unix time in s, ms, us or ns")


def _time_of(rec: dict[str, JSONValue]) -> tuple[str | None, float | None]:
    for k in TIME_KEYS:
        v = _num(rec.get(k))
        if v is not None:
            t = unix_time(v)
            if t is not None:
                return k, t
    return None, None


MAX_LINE = 1024 * 1024  # a metric record is a few hundred bytes; a longer line is no metric log
TOO_DEEP = "JSON nested deeper than Python's parser goes (no metric record is)"


def bounded_lines(f: TextIO, path: Path) -> Iterator[tuple[int, str]]:
    """(number, line) with each line read to at most MAX_LINE characters: a file of one
    10 GB line must not be held in memory to find out it is not a metric log."""
    n = 0
    while True:
        line = f.readline(MAX_LINE + 1)
        if not line:
            return
        n += 1
        if len(line) > MAX_LINE:
            raise RunFileError(str(path), n, f"a line longer than {MAX_LINE >> 20} MiB")
        yield n, line


def json_lines(path: Path, tail: Tail) -> Iterator[Scalar]:
    """JSON lines, one record a line: ``step`` (or global_step, iteration, ...), an optional
    Unix time (time, timestamp, wall_time, _timestamp), every other number a metric."""
    with open(path, encoding="utf-8", errors="strict") as f:
        n = 0
        try:
            for n, line in bounded_lines(f, path):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line, parse_int=int_text)
                except Beyond as exc:  # the numbers rule (validator.values.numbers): no value is that large
                    raise RunFileError(str(path), n, text_problem(exc.text)) from None
                except RecursionError:
                    raise RunFileError(str(path), n, TOO_DEEP) from None
                except ValueError as exc:
                    if not line.endswith("\n"):  # the last line, still being written
                        tail.bytes, tail.what = len(line.encode()), f"line {n} (half-written)"
                        return
                    raise RunFileError(str(path), n, f"not JSON ({exc})"[:200]) from None
                if not isinstance(rec, dict):
                    raise RunFileError(str(path), n, f"a JSON {type(rec).__name__}, not an object")
                sk, step = _step_of(rec)
                try:
                    tk, wall = _time_of(rec)
                except ValueError as exc:
                    raise RunFileError(str(path), n, f"its time: {exc}") from None
                for k, v in rec.items():
                    x = _num(v)
                    if x is not None and k != sk and k != tk:
                        yield k, step, wall, x
        except UnicodeDecodeError:
            raise RunFileError(str(path), n + 1, "not UTF-8 text") from None


def metrics_csv(path: Path, tail: Tail) -> Iterator[Scalar]:
    """A CSV with a header naming a step column (Lightning's CSVLogger ``metrics.csv``):
    each non-empty numeric cell is a metric at the row's step. A row whose field count
    differs from the header's (the header changed half-way, two writers) is an error."""
    with open(path, encoding="utf-8", newline="") as f:
        try:
            rows = csv.reader(line for _, line in bounded_lines(f, path))  # each line at most MAX_LINE
            header = next(rows, None)
            if header is None:
                return
            si = next((header.index(k) for k in STEP_KEYS if k in header), None)
            ti = next((header.index(k) for k in TIME_KEYS if k in header), None)
            for row in rows:
                if not row:
                    continue
                if len(row) != len(header):
                    at = rows.line_num
                    if next(rows, None) is None and _ends_without_newline(path):  # the last line
                        tail.bytes, tail.what = len(",".join(row)), f"line {at} (half-written)"
                        return
                    raise RunFileError(str(path), at,
                                       f"{len(row)} fields where the header (line 1) has {len(header)}: the "
                                       "header changed half-way (rewrite the file, or give the run's "
                                       "final metrics.csv)")
                if row == header:
                    raise RunFileError(str(path), rows.line_num, "the header again, half-way through")
                step = _cell_int(row[si]) if si is not None else None
                wall = None
                if ti is not None:
                    w = _cell(row[ti])
                    try:
                        wall = unix_time(w) if w is not None else None
                    except ValueError as exc:
                        raise RunFileError(str(path), rows.line_num, f"its time: {exc}") from None
                for i, cell in enumerate(row):
                    if i in (si, ti) or not cell:
                        continue
                    x = _cell(cell)
                    if x is not None:
                        yield header[i], step, wall, x
        except UnicodeDecodeError:
            raise RunFileError(str(path), None, "not UTF-8 text") from None
        except csv.Error as exc:
            raise RunFileError(str(path), None, f"not CSV ({exc})") from None


def _ends_without_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(0, 2)
        if f.tell() == 0:
            return False
        f.seek(-1, 2)
        return f.read(1) not in (b"\n", b"\r")


def _cell(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def _cell_int(s: str) -> int | None:
    x = _cell(s)
    return int(x) if x is not None and math.isfinite(x) else None


def trainer_state(path: Path, tail: Tail) -> Iterator[Scalar]:
    """HF Trainer's ``trainer_state.json``: ``log_history`` entries (no wall time)."""
    if path.stat().st_size > MAX_JSON_BYTES:
        raise RunFileError(str(path), None, f"larger than {MAX_JSON_BYTES >> 20} MiB")
    try:
        doc = json.loads(path.read_text("utf-8"), parse_int=int_text)
    except RecursionError:
        raise RunFileError(str(path), None, TOO_DEEP) from None
    except Beyond as exc:
        raise RunFileError(str(path), None, text_problem(exc.text)) from None
    except json.JSONDecodeError as exc:
        raise RunFileError(str(path), exc.lineno, f"not JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise RunFileError(str(path), None, "not UTF-8 text") from None
    hist = doc.get("log_history") if isinstance(doc, dict) else None
    if not isinstance(hist, list):
        raise RunFileError(str(path), None, "no log_history list")
    for rec in hist:
        if isinstance(rec, dict):
            sk, step = _step_of(rec)
            for k, v in rec.items():
                x = _num(v)
                if x is not None and k != sk and k != "epoch":
                    yield k, step, None, x


_MLFLOW = re.compile(r"(-?\d{1,15}) (\S+)(?: (-?\d{1,18}))?(?: \S+ \S+)?")


SERIES_CHUNK = 16 * 1024  # an MLflow or DVCLive metric line is under 100 bytes


def chunked_lines(p: Path) -> Iterator[tuple[int, str]]:
    """(number, line) of a file read ``SERIES_CHUNK`` bytes at a time, the file open only
    while a chunk is read: a run of thousands of metric files merged at once holds no file
    open between reads (1,500 keys under ``ulimit -n 1024`` were 'Too many open files')."""
    pos, n = 0, 0
    while True:
        with open(p, "rb") as f:
            f.seek(pos)
            block = f.read(SERIES_CHUNK)
        if not block:
            return
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            if len(block) == SERIES_CHUNK:
                raise RunFileError(str(p), n + 1, f"a line longer than {SERIES_CHUNK >> 10} KiB: no metric "
                                                  "series line")
            cut = len(block)  # the last line, with no newline yet
        pos += cut
        parts = block[:cut].split(b"\n")
        for i, raw in enumerate(parts):
            if i == len(parts) - 1 and not raw:
                break  # the chunk ended with its newline
            n += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise RunFileError(str(p), n, "not UTF-8 text") from None
            yield n, line + "\n" if i < len(parts) - 1 else line


def mlflow_run(files: list[tuple[str, Path]], tail: Tail) -> Iterator[Scalar]:
    """An MLflow file store run: ``metrics/<key>`` files of ``timestamp(ms) value step``
    lines (mlflow/store/tracking/file_store.py ``_get_metric_from_line``: 2, 3 or 5 fields),
    merged in time order across keys so that a restart shows in one stream; each file is
    read a chunk at a time and open only while it is read."""

    def lines(key: str, p: Path) -> Iterator[tuple[float, int, str, int | None, float]]:
        for n, line in chunked_lines(p):
            s = line.strip()
            if not s:
                continue
            m = _MLFLOW.fullmatch(s)
            x = _cell(m.group(2)) if m else None
            if m is None or x is None:
                if not line.endswith("\n"):
                    tail.bytes += len(line.encode())
                    tail.what = f"{p}:{n} (half-written)"
                    return
                raise RunFileError(str(p), n, "not an MLflow metric line (timestamp value step)")
            ms = int(m.group(1))
            if ms >= 1e14:  # MLflow writes milliseconds (int(time.time() * 1000))
                raise RunFileError(str(p), n, f"a timestamp of {ms} ms, past the year 5000")
            # MLflow writes step 0 where the caller gave none: no step, not one step repeated
            step = int(m.group(3)) if m.group(3) is not None and m.group(3) != "0" else None
            yield ms / 1000.0, n, key, step, x

    merged = heapq.merge(*(lines(k, p) for k, p in files), key=lambda r: r[0])
    for wall, _, key, step, x in merged:
        yield key, step, wall, x
