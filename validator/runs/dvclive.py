"""DVCLive's output: ``<dir>/plots/metrics/**/<name>.tsv`` series and ``<dir>/metrics.json``.

DVCLive (``Live.log_metric``, dvclive/plots/metric.py) appends one row per ``next_step()`` to
``plots/metrics/<name>.tsv``, tab-separated, under a header ``timestamp  step  <name>``
(``timestamp`` in milliseconds; files written by DVCLive 0.x have ``step  <name>`` only). A
metric's name is its path under ``plots/metrics`` without ``.tsv`` (``train/loss``). A
DVCLive folder is one stream, its series merged in time order (in step order where no row
has a time), as an MLflow run's are. ``metrics.json`` holds only the latest value of each
metric, with its ``step``: read as one emission, so that a run whose series were not kept
still shows which families it logged.
"""

from __future__ import annotations

import csv
import heapq
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from validator.runs.readers import MAX_JSON_BYTES, RunFileError, Tail, chunked_lines, unix_time

if TYPE_CHECKING:
    from validator.report.model import JSONValue

Scalar = tuple[str, int | None, float | None, float]


def key_of(p: Path) -> tuple[str, str]:
    """(DVCLive folder, metric name): the name is the path under ``plots/metrics``."""
    parts = p.parts
    for i in range(len(parts) - 3, -1, -1):
        if parts[i] == "plots" and parts[i + 1] == "metrics":
            name = "/".join(parts[i + 2:])
            return str(Path(*parts[:i])) if i else ".", name.removesuffix(".tsv")
    return str(p.parent), p.stem


def is_tsv(first_line: str) -> bool:
    cols = first_line.rstrip("\r\n").split("\t")
    return len(cols) >= 2 and "step" in cols


def _rows(name: str, p: Path, tail: Tail) -> Iterator[tuple[float, int, str, int | None, float | None, float]]:
    # read a chunk at a time, the file open only while a chunk is read (a folder of thousands
    # of series merged at once holds no file open between reads), each line bounded
    rows = csv.reader((line for _, line in chunked_lines(p)), delimiter="\t")
    try:
        header = next(rows, None)
        if header is None:
            return
        si = header.index("step") if "step" in header else None
        ti = header.index("timestamp") if "timestamp" in header else None
        vi = next((i for i in range(len(header) - 1, -1, -1) if i not in (si, ti)), None)
        if vi is None:
            raise RunFileError(str(p), 1, "a DVCLive header with no metric column")
        for n, row in enumerate(rows, start=2):
            if len(row) != len(header):
                if not row:
                    continue
                raise RunFileError(str(p), n, f"{len(row)} fields where the header (line 1) has {len(header)}")
            try:
                x = float(row[vi])
                step = int(float(row[si])) if si is not None else None
                wall = float(row[ti]) if ti is not None else None
            except ValueError:
                raise RunFileError(str(p), n, "not a number in a DVCLive row") from None
            if wall is not None and not math.isfinite(wall):
                wall = None
            if wall is not None:  # DVCLive writes milliseconds; read by magnitude as every time is
                try:
                    wall = unix_time(wall)
                except ValueError as exc:
                    raise RunFileError(str(p), n, f"its time: {exc}") from None
            yield (wall if wall is not None else float(step or 0)), n, name, step, wall, x
    except csv.Error as exc:
        raise RunFileError(str(p), None, f"not TSV ({exc})") from None
    except UnicodeDecodeError:
        raise RunFileError(str(p), None, "not UTF-8 text") from None


def series(files: list[tuple[str, Path]], tail: Tail) -> Iterator[Scalar]:
    """A DVCLive folder's TSV series, merged in time (or step) order."""
    merged = heapq.merge(*(_rows(k, p, tail) for k, p in files), key=lambda r: (r[0], r[1]))
    for _, _, name, step, wall, x in merged:
        yield name, step, wall, x


def _flat(d: dict[str, JSONValue], pre: str = "", depth: int = 0) -> Iterator[tuple[str, float]]:
    for k, v in d.items():
        if isinstance(v, dict) and depth < 8:
            yield from _flat(v, f"{pre}{k}/", depth + 1)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and k != "step":
            yield f"{pre}{k}", float(v)


def summary(p: Path, tail: Tail) -> Iterator[Scalar]:
    """``metrics.json``: each latest value at the document's step (no wall time)."""
    if p.stat().st_size > MAX_JSON_BYTES:
        raise RunFileError(str(p), None, f"larger than {MAX_JSON_BYTES >> 20} MiB")
    try:
        doc = json.loads(p.read_text("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise RunFileError(str(p), None, f"not JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict):
        raise RunFileError(str(p), None, "not a JSON object")
    step = doc.get("step")
    st = int(step) if isinstance(step, (int, float)) and not isinstance(step, bool) and math.isfinite(step) else None
    for name, x in _flat(doc):
        yield name, st, None, x


def is_summary(doc: object) -> bool:
    """A DVCLive ``metrics.json``: an object with a numeric ``step`` and metrics beside it."""
    return (isinstance(doc, dict) and isinstance(doc.get("step"), int) and not isinstance(doc.get("step"), bool)
            and any(True for _ in _flat(doc)))
