"""What each file of a run folder is, judged from its content, never from its name alone.

A file is read as:

* ``tensorboard``: TFRecord framing whose first record holds ``brain.Event`` (every writer,
  torch's SummaryWriter, tensorboardX and TF's, begins a file with the ``file_version``
  event ``brain.Event:2``);
* ``tfrecord_cut``: TFRecord framing (its first length's CRC checks) whose first record the
  file cuts short: a truncated event file, an error (nothing in it can be read), never
  passed over as if it were no metrics file;
* ``trainer_state``: a JSON document with a ``log_history`` list (HF Trainer);
* ``jsonl``: JSON lines whose first record has a step key and a number besides it;
* ``csv``: a CSV header with a step column (Lightning's CSVLogger ``metrics.csv``);
* ``dvclive``: a tab-separated header with a ``step`` column (DVCLive's
  ``plots/metrics/<name>.tsv``), and ``dvclive_summary``: a JSON document with a numeric
  ``step`` and metrics beside it (DVCLive's ``metrics.json``);
* ``mlflow``: lines of ``timestamp value step`` (an MLflow file store metric: the metric's
  key is its path under the run's ``metrics/`` folder, as MLflow writes it);
* ``log``: text with a launcher's, a failure's or a training step's line (torchrun's console
  and its ``--log-dir`` files, Slurm output, ``srun -l`` labels, NCCL's INFO lines), wherever
  in the file it comes: a Slurm ``.out`` may open with 100 KiB of module-environment trace,
  so text is searched to its end, bounded by the log reader's size cap, not by a window;
* ``lfs_pointer``: a Git LFS pointer (``version https://git-lfs.github.com/spec/v1``) where
  the real file was never fetched: one named like a metric file (``events.out.tfevents.*``,
  ``*.csv``, ...) is an error naming it (its metrics are unknown, never "not emitted").

Everything else is passed over, with the reason. Links are not followed (a run folder
reads only what is inside it) and at most ``MAX_FILES`` files are looked at.
"""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from validator.runs.dvclive import is_summary, is_tsv, key_of
from validator.runs.readers import MAX_JSON_BYTES, STEP_KEYS

MAX_FILES = 20_000
HEAD = 64 * 1024
SCAN_CHUNK = 1024 * 1024  # text past the head is searched for log lines chunk by chunk
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
_LFS_OID = re.compile(rb"^oid (sha256:[0-9a-f]{64})$", re.M)
_LFS_SIZE = re.compile(rb"^size (\d{1,20})$", re.M)
# names of the files spec-check reads metrics from: an LFS pointer so named hides metrics
_METRIC_NAME = re.compile(r"tfevents|\.(?:csv|tsv|jsonl?|log|out|err|txt)$|^metrics$|trainer_state", re.I)

_MLFLOW_LINE = re.compile(rb"-?\d{10,15} \S+(?: -?\d{1,18})?(?: \S+ \S+)?\r?\n?")
_LAUNCHER = re.compile(
    r"torch\.distributed|torchrun|elastic|\[default\d+\]:|\[rank\d+\]:|Starting worker group"
    r"|^srun: |slurmstepd|^\d+: |NCCL INFO|NCCL WARN|Traceback \(most recent call last\)"
    r"|RunningAvgSamplesPerSec=|\bstep=\d+, skipped=\d+, lr=|iter time \(s\): [\d.]+ samples/sec: |time \(ms\) \| ",
    re.M)


@dataclass
class Survey:
    """A run folder's files: what was read as what, and what was passed over and why."""

    root: str
    files: dict[str, list[Path]] = field(default_factory=dict)  # kind -> files
    mlflow: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)  # run -> (key, file)
    dvclive: dict[str, list[tuple[str, Path]]] = field(default_factory=dict)  # folder -> (name, tsv)
    passed: list[tuple[str, str]] = field(default_factory=list)


def _mlflow_key(p: Path) -> tuple[str, str]:
    """(run folder, metric key): the key is the path under the nearest ``metrics`` folder."""
    parts = p.parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "metrics":
            return str(Path(*parts[:i])), "/".join(parts[i + 1:])
    return str(p.parent), p.name


def _is_event_file(head: bytes) -> bool:
    if len(head) < 12:
        return False
    (n,) = struct.unpack("<Q", head[:8])
    return 0 < n < (1 << 24) and b"brain.Event" in head[12:12 + min(n, 256)]


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit: only ever run on 8 bytes."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked_crc32c(data: bytes) -> int:
    crc = _crc32c(data)  # TFRecord's mask (tensorboard's masked_crc32c)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def cut_first_record(head: bytes, size: int) -> int | None:
    """The first record's framed length where ``head`` opens with TFRecord framing (a length
    whose masked CRC-32C checks: 1 in 4 billion by chance) whose first record the file
    (``size`` bytes) cuts short: a truncated event file. None otherwise."""
    if len(head) < 12:
        return None
    (n,) = struct.unpack("<Q", head[:8])
    if not 0 < n < (1 << 24) or struct.unpack("<I", head[8:12])[0] != _masked_crc32c(head[:8]):
        return None
    return n + 16 if size < n + 16 else None


def kind_of(path: Path, head: bytes) -> tuple[str | None, str]:
    """(kind, "") or (None, why it was passed over)."""
    if not head:
        return None, "empty"
    if head.startswith(LFS_POINTER):
        return "lfs_pointer", ""
    if cut_first_record(head, path.stat().st_size if len(head) >= HEAD else len(head)) is not None:
        return "tfrecord_cut", ""  # before the brain.Event test: a cut first record may hold it
    if _is_event_file(head):
        return "tensorboard", ""
    if b"\x00" in head[:4096]:
        return None, "binary, and no TensorBoard event file"
    text = head.decode("utf-8", errors="replace")
    first, _, rest = text.lstrip("\ufeff").partition("\n")
    s = first.strip()
    if s.startswith("{"):
        kind, why = _json_kind(path, s, rest)
        if kind is not None or not why.startswith("starts like JSON"):
            return kind, why
    if _MLFLOW_LINE.fullmatch(head.split(b"\n", 1)[0] + b"\n"):
        return "mlflow", ""
    if "\t" in s and is_tsv(s):
        return "dvclive", ""
    if "," in s:
        cols = [c.strip() for c in s.split(",")]
        if any(k in cols for k in STEP_KEYS):
            return "csv", ""
    if _LAUNCHER.search(text) or _log_lines(text):
        return "log", ""
    if s.startswith("{"):
        return None, "starts like JSON but is neither a JSON document nor JSON lines"
    if len(head) >= HEAD:
        return _scan_rest(path, head)
    return None, "text with no metric format and no launcher, failure or training-step line"


def _scan_rest(path: Path, head: bytes) -> tuple[str | None, str]:
    """A text file whose head shows no log line, searched to its end (a preamble of any
    length before the launcher's first line), at most the log reader's cap."""
    from validator.jobs.recovery_log import MAX_LOG_BYTES

    tail = head[head.rfind(b"\n") + 1:]  # a line cut by the head is searched whole
    read = len(head)
    with open(path, "rb") as f:
        f.seek(len(head))
        while read < MAX_LOG_BYTES:
            chunk = f.read(min(SCAN_CHUNK, MAX_LOG_BYTES - read))
            if not chunk:
                return None, (f"text with no metric format and no launcher, failure or training-step "
                              f"line (all {read} bytes searched)")
            if b"\x00" in chunk:
                return None, f"binary past byte {read}, with no launcher, failure or training-step line before it"
            read += len(chunk)
            cut = chunk.rfind(b"\n") + 1
            text = (tail + chunk[:cut] if cut else tail + chunk).decode("utf-8", errors="replace")
            tail = chunk[cut:] if cut else b""
            if _LAUNCHER.search(text) or _log_lines(text):
                return "log", ""
    return None, (f"text with no launcher, failure or training-step line in its first {MAX_LOG_BYTES >> 20} MiB "
                  f"(the log reader's cap)")


def lfs_pointer(path: Path, head: bytes) -> tuple[bool, str]:
    """(named like a metric file, what the pointer says) for a Git LFS pointer file."""
    oid = _LFS_OID.search(head)
    size = _LFS_SIZE.search(head)
    what = (f"a Git LFS pointer ({oid.group(1).decode()[:19]}..., {int(size.group(1))} bytes)"
            if oid and size else "a Git LFS pointer")
    return _METRIC_NAME.search(path.name) is not None, what


def _log_lines(text: str) -> bool:
    from validator.jobs.recovery_log import FAILURE, RESTART, STEP

    return any(rx.search(text) for rx in (FAILURE, STEP, RESTART))


def _json_kind(path: Path, first: str, rest: str) -> tuple[str | None, str]:
    try:
        rec = json.loads(first)
    except ValueError:
        rec = None
    except RecursionError:
        return "jsonl", ""  # its reader names the line as nested too deep
    if isinstance(rec, dict):
        if "log_history" in rec:
            return "trainer_state", ""
        if _metric_record(rec):
            return "jsonl", ""
        return None, "JSON lines whose first record has no step key with a metric beside it"
    # a document over several lines (trainer_state.json is indented)
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return None, f"a JSON document over {MAX_JSON_BYTES >> 20} MiB"
        doc = json.loads(path.read_text("utf-8"))
    except RecursionError:
        return "trainer_state", ""  # a JSON document too deep to tell: its reader says so, an error
    except (ValueError, OSError):
        second = rest.partition("\n")[0].strip()
        try:
            rec2 = json.loads(second)
        except (ValueError, RecursionError):
            return None, "starts like JSON but is neither a JSON document nor JSON lines"
        if isinstance(rec2, dict) and _metric_record(rec2):
            return "jsonl", ""  # line 1 is broken: the reader reports it
        return None, "starts like JSON but is neither a JSON document nor JSON lines"
    if isinstance(doc, dict) and isinstance(doc.get("log_history"), list):
        return "trainer_state", ""
    if is_summary(doc):
        return "dvclive_summary", ""
    return None, "a JSON document with no log_history list, and no step with metrics beside it"


def _metric_record(rec: dict[str, object]) -> bool:
    has_step = any(isinstance(rec.get(k), (int, float)) and not isinstance(rec.get(k), bool)
                   for k in STEP_KEYS)
    numbers = sum(1 for k, v in rec.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
                  and k not in STEP_KEYS)
    return has_step and numbers > 0


def _walk(root: Path, out: Survey) -> list[Path]:
    """The first ``MAX_FILES`` files and links under ``root``, in a stable order; past them
    the walk only counts names (folders too), up to ``10 * MAX_FILES``, and one line of
    ``out.passed`` says how many were left."""
    paths: list[Path] = []
    seen = left = 0
    for d, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        if seen >= MAX_FILES:
            left += len(dirs) + len(names)
            if left > 9 * MAX_FILES:
                break
            continue
        # a link to a folder is listed among the folders, and not walked: say so
        here = [Path(d) / n for n in dirs if (Path(d) / n).is_symlink()] + [Path(d) / n for n in sorted(names)]
        room = MAX_FILES - seen
        paths += here[:room]
        seen += min(room, len(here))
        left += max(0, len(here) - room)
    if left:
        more = f"{left:,}" if left <= 9 * MAX_FILES else f"more than {9 * MAX_FILES:,}"
        out.passed.append((str(root), f"more than {MAX_FILES:,} entries: the first {MAX_FILES:,} were "
                                      f"looked at, {more} others were not"))
    return paths


def survey(root: Path) -> Survey:
    """Every regular file under ``root`` (a folder, or one file), classified; at most
    ``MAX_FILES`` entries are looked at."""
    out = Survey(str(root))
    paths = [root] if root.is_file() else _walk(root, out)
    for p in paths:
        if p.is_symlink():
            out.passed.append((str(p), "a link: not followed"))
            continue
        if not p.is_file():
            out.passed.append((str(p), "not a regular file"))
            continue
        try:
            with open(p, "rb") as f:
                head = f.read(HEAD)
        except OSError as exc:
            out.passed.append((str(p), f"cannot be read ({exc.strerror or exc})"))
            continue
        kind, why = kind_of(p, head)
        if kind == "lfs_pointer":
            metric, what = lfs_pointer(p, head)
            if not metric:
                out.passed.append((str(p), f"{what}: the file itself was not fetched (not a metric file)"))
                continue
        if kind is None:
            out.passed.append((str(p), why))
        elif kind == "mlflow":
            run, key = _mlflow_key(p)
            out.mlflow.setdefault(run, []).append((key, p))
        elif kind == "dvclive":
            folder, name = key_of(p)
            out.dvclive.setdefault(folder, []).append((name, p))
        else:
            out.files.setdefault(kind, []).append(p)
    return out
