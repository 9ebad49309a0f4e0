"""Streaming readers of a run's metric files: each yields ``(name, step, wall, value)``.

Every reader streams (memory does not grow with the file) and raises ``RunFileError``
naming the file and line (an event file: the record and its byte offset) on input it
cannot trust. A half-written *last* record or line, which a file still being written
has, is not an error: the reader stops there and says how many bytes it passed over
(``Tail``).

TensorBoard event files are read with tensorboard's own record reader (the iterator under
``RawEventFileLoader``: TFRecord framing with both CRCs checked, then ``Event.FromString``),
never with the ``EventAccumulator``, which keeps a reservoir sample of 10,000 scalars and
would hide gaps.
tensorboard is an optional dependency (``pip install 'training-spec-check[runs]'``),
imported only when a run holds an event file. Its reader raises ``DataLossError`` both for
a truncated record ("has truncated record in ...") and for a corrupt one ("failed ... crc32
check"); a truncation counts as a half-written tail only at the end of the file (the reader
read to EOF), which is why the offset of every record is tracked here.
"""

from __future__ import annotations

import csv
import heapq
import json
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from validator.runs.cadence import RESTART_MARK
from validator.values.numbers import Beyond, int_text, text_problem

if TYPE_CHECKING:
    from validator.report.model import JSONValue

Scalar = tuple[str, int | None, float | None, float]

INSTALL_HINT = "pip install 'training-spec-check[runs]' (or: pip install tensorboard)"
STEP_KEYS = ("step", "global_step", "_step", "iteration", "trainer/global_step", "train/global_step")
TIME_KEYS = ("time", "timestamp", "wall_time", "walltime", "_timestamp", "t")
MAX_JSON_BYTES = 64 * 1024 * 1024  # a trainer_state.json is read whole
_DT_FLOAT, _DT_DOUBLE = 1, 2


_SESSION_START = 1  # tensorboard's event.proto SessionLog.SessionStatus START

class RunFileError(Exception):
    """A metric file that cannot be trusted from this point: file, line (or record), problem."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        super().__init__(message)
        self.file, self.line, self.message = file, line, message

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class TensorBoardMissing(RunFileError):
    """An event file where tensorboard is not installed: an error finding, never a pass."""


@dataclass
class Tail:
    """What a reader passed over at the end of a file still being written."""

    bytes: int = 0
    what: str = ""


def _tb() -> tuple[Any, Any, Any]:  # Any: tensorboard's objects (no type stubs), or Nones
    """tensorboard's record iterator, Event class and DataLossError, or Nones.

    The iterator is the one beneath ``RawEventFileLoader`` (``_make_tf_record_iterator``:
    TensorFlow's reader where TF is installed, else tensorboard's stub, both checking the
    two CRCs). The loader itself is not used: it swallows every ``DataLossError`` so that a
    file being written can be polled again, which makes a corrupt record look like the end
    of the file, a silent loss of everything after it."""
    try:
        from tensorboard.backend.event_processing import event_file_loader
        from tensorboard.compat import tf
        from tensorboard.compat.proto import event_pb2
    except ImportError:
        return None, None, None
    return event_file_loader._make_tf_record_iterator, event_pb2.Event, tf.errors.DataLossError


def _tensor_scalar(t: Any) -> float | None:  # Any: a tensorboard TensorProto (no type stubs)
    """A TF2 ``tf.summary.scalar`` value: a rank-0 float or double tensor."""
    if t.tensor_shape.dim:
        return None
    if t.dtype == _DT_FLOAT:
        if t.float_val:
            return float(t.float_val[0])
        if len(t.tensor_content) == 4:
            return float(struct.unpack("<f", t.tensor_content)[0])
    elif t.dtype == _DT_DOUBLE:
        if t.double_val:
            return float(t.double_val[0])
        if len(t.tensor_content) == 8:
            return float(struct.unpack("<d", t.tensor_content)[0])
    return None


def event_file(path: Path, tail: Tail) -> Iterator[Scalar]:
    """The scalars of one TensorBoard event file, in record order."""
    records_of, event_cls, data_loss = _tb()
    if records_of is None:
        raise TensorBoardMissing(str(path), None, f"a TensorBoard event file, and tensorboard is not "
                                                  f"installed to read it: {INSTALL_HINT}")
    size = path.stat().st_size
    offset = 0
    n = 0
    records = records_of(str(path))
    while True:
        try:
            rec = next(records)
        except StopIteration:
            return
        except data_loss as exc:
            msg = str(exc)
            if "truncated record" in msg:  # the rest of the file is shorter than the record
                tail.bytes, tail.what = size - offset, f"record {n + 1} (half-written)"
                return
            raise RunFileError(str(path), None, f"record {n + 1} at byte {offset}: "
                                                f"{msg.replace(str(path), '').strip()}") from None
        n += 1
        offset += len(rec) + 16  # length (8), its CRC (4), data, data CRC (4)
        try:
            ev = event_cls.FromString(rec)
        except Exception as exc:  # protobuf's DecodeError: a record that passed its CRC
            raise RunFileError(str(path), None, f"record {n} at byte {offset - len(rec) - 16}: "
                                                f"not an Event ({type(exc).__name__})") from None
        values = ev.summary.value
        if not values:
            if ev.HasField("session_log") and ev.session_log.status == _SESSION_START:
                yield RESTART_MARK, ev.step, ev.wall_time, 0.0  # a writer resumed at purge_step
            continue
        wall, step = ev.wall_time, ev.step
        for v in values:
            which = v.WhichOneof("value")
            if which == "simple_value":
                yield v.tag, step, wall, v.simple_value
            elif which == "tensor":
                x = _tensor_scalar(v.tensor)
                if x is not None:
                    yield v.tag, step, wall, x


def event_files(paths: list[Path], tails: dict[str, Tail], errors: list[RunFileError]) -> Iterator[Scalar]:
    """A folder's event files in order; a file that cannot be read to the end is an error
    of its own, and the next file is still read (a restart's new file is the evidence)."""
    for p in paths:
        tails[str(p)] = t = Tail()
        try:
            yield from event_file(p, t)
        except TensorBoardMissing:
            raise
        except RunFileError as exc:
            errors.append(exc)
        except OSError as exc:
            errors.append(RunFileError(str(p), None, f"cannot be read ({exc.strerror or exc})"))


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


def _time_of(rec: dict[str, JSONValue]) -> tuple[str | None, float | None]:
    for k in TIME_KEYS:
        v = _num(rec.get(k))
        if v is not None and math.isfinite(v) and v > 1e8:  # Unix seconds (ms above 1e11)
            return k, v / 1000.0 if v > 1e11 else v
    return None, None


MAX_LINE = 1024 * 1024  # a metric record is a few hundred bytes; a longer line is no metric log


def _lines(f: TextIO, path: Path) -> Iterator[tuple[int, str]]:
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
            for n, line in _lines(f, path):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line, parse_int=int_text)
                except Beyond as exc:  # the numbers rule (validator.values.numbers): no value is that large
                    raise RunFileError(str(path), n, text_problem(exc.text)) from None
                except ValueError as exc:
                    if not line.endswith("\n"):  # the last line, still being written
                        tail.bytes, tail.what = len(line.encode()), f"line {n} (half-written)"
                        return
                    raise RunFileError(str(path), n, f"not JSON ({exc})"[:200]) from None
                if not isinstance(rec, dict):
                    raise RunFileError(str(path), n, f"a JSON {type(rec).__name__}, not an object")
                sk, step = _step_of(rec)
                tk, wall = _time_of(rec)
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
            rows = csv.reader(f)
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
                    wall = (w / 1000.0 if w > 1e11 else w) if w is not None and w > 1e8 else None
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


def mlflow_run(files: list[tuple[str, Path]], tail: Tail) -> Iterator[Scalar]:
    """An MLflow file store run: ``metrics/<key>`` files of ``timestamp(ms) value step``
    lines (mlflow/store/tracking/file_store.py ``_get_metric_from_line``: 2, 3 or 5 fields),
    merged in time order across keys so that a restart shows in one stream."""

    def lines(key: str, p: Path) -> Iterator[tuple[float, int, str, int | None, float]]:
        with open(p, encoding="utf-8") as f:
            for n, line in _lines(f, p):
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
                # MLflow writes step 0 where the caller gave none: no step, not one step repeated
                step = int(m.group(3)) if m.group(3) is not None and m.group(3) != "0" else None
                yield int(m.group(1)) / 1000.0, n, key, step, x

    merged = heapq.merge(*(lines(k, p) for k, p in files), key=lambda r: r[0])
    for wall, _, key, step, x in merged:
        yield key, step, wall, x
