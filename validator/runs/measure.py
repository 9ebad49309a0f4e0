"""Read run folders once: every metric source into a ``Stream``, every launcher log into
failure and step events, and the lists of what was read and what was passed over.

A TensorBoard folder's event files are one stream, read in the order of the writer's
timestamp in their names (``events.out.tfevents.<unix time>.<host>...``; a restarted job
writes a new file beside the old one); each CSV, JSON-lines file and trainer_state.json is
a stream; an MLflow run is one stream, its metrics merged in time order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from validator.runs import dslog, dvclive, readers
from validator.runs.cadence import Stream
from validator.runs.events import event_files
from validator.runs.families import Classifier
from validator.runs.sniff import lfs_pointer, survey
from validator.runs.versions import link

if TYPE_CHECKING:
    from validator.jobs.recovery_log import Event
    from validator.report.model import JSONValue

_TS = re.compile(r"tfevents\.(\d+)")

AS = {"tensorboard": "TensorBoard event file", "csv": "metrics CSV", "jsonl": "JSON-lines metrics",
      "trainer_state": "HF trainer_state.json log_history", "mlflow": "MLflow file-store metrics",
      "log": "launcher/training log", "dvclive": "DVCLive plots/metrics series",
      "dvclive_summary": "DVCLive metrics.json (latest values)",
      "deepspeed_log": "DeepSpeed's step lines in a launcher/training log"}


@dataclass
class RunEvidence:
    roots: list[str]
    streams: list[Stream] = field(default_factory=list)
    read: list[dict[str, JSONValue]] = field(default_factory=list)  # {"file", "as", "note"?}
    passed: list[dict[str, str]] = field(default_factory=list)  # {"file", "why"}
    errors: list[readers.RunFileError] = field(default_factory=list)
    log_events: list[Event] = field(default_factory=list)
    log_texts: dict[str, bool] = field(default_factory=dict)  # file -> has a dated (ISO) line
    versions: list[dict[str, JSONValue]] = field(default_factory=list)  # Lightning version folders read

    def metric_sources(self) -> int:
        return len(self.streams)


def _event_order(p: Path) -> tuple[int, str]:
    m = _TS.search(p.name)
    return (int(m.group(1)) if m else 0, p.name)


def _feed(stream: Stream, scalars: Iterable[readers.Scalar]) -> None:
    add = stream.add
    for tag, step, wall, value in scalars:
        add(tag, step, wall, value)


def _run_stream(ev: RunEvidence, stream: Stream, scalars: Iterator[readers.Scalar],
                files: list[Path], what: str, tails: dict[str, readers.Tail]) -> None:
    try:
        _feed(stream, scalars)
    except readers.RunFileError as exc:
        ev.errors.append(exc)
    except OSError as exc:
        ev.errors.append(readers.RunFileError(str(files[0]), None, f"cannot be read ({exc.strerror or exc})"))
    ev.streams.append(stream)
    for p in files:
        t = tails.get(str(p))
        rec: dict[str, JSONValue] = {"file": str(p), "as": what}
        if t is not None and t.bytes:
            rec["note"] = f"last {t.bytes} bytes passed over: {t.what}, the file is still being written"
        ev.read.append(rec)


def read_runs(dirs: list[Path], logs: list[Path] = ()) -> RunEvidence:  # type: ignore[assignment]
    """Every run folder (and extra ``--recovery-log`` files) read into one RunEvidence."""
    from validator.jobs.recovery_log import LogError, events, read_log

    ev = RunEvidence([str(d) for d in dirs])
    classify = Classifier()
    log_files: list[Path] = list(logs)
    for d in dirs:
        s = survey(d)
        ev.passed += [{"file": f, "why": why} for f, why in s.passed]
        for p in s.files.get("lfs_pointer", []):
            with open(p, "rb") as fh:
                _, what = lfs_pointer(p, fh.read(1024))
            ev.errors.append(readers.RunFileError(
                str(p), None, f"{what}, not the file itself: its metrics are unknown (git lfs pull, "
                              f"or give the run folder with the file fetched)"))
        for p in s.files.get("tfrecord_cut", []):
            size = p.stat().st_size
            ev.errors.append(readers.RunFileError(
                str(p), None, f"record 1 at byte 0: the file ends after {size} bytes, inside its first record: "
                              f"a truncated TFRecord (event) file, nothing in it can be read"))
        tb = sorted(s.files.get("tensorboard", []), key=_event_order)
        by_folder: dict[Path, list[Path]] = {}
        for p in tb:
            by_folder.setdefault(p.parent, []).append(p)
        for folder, files in by_folder.items():
            tails: dict[str, readers.Tail] = {}
            _run_stream(ev, Stream(str(folder), "tensorboard", classify),
                        event_files(files, tails, ev.errors), files, AS["tensorboard"], tails)
        for kind, reader in (("csv", readers.metrics_csv), ("jsonl", readers.json_lines),
                             ("trainer_state", readers.trainer_state)):
            for p in s.files.get(kind, []):
                tails = {str(p): readers.Tail()}
                _run_stream(ev, Stream(str(p), kind, classify), reader(p, tails[str(p)]), [p], AS[kind], tails)
        for dv_root, named in s.dvclive.items():
            t = readers.Tail()
            tsvs = [p for _, p in named]
            _run_stream(ev, Stream(dv_root, "dvclive", classify), dvclive.series(named, t), tsvs,
                        AS["dvclive"], {str(tsvs[-1]): t})
        for p in s.files.get("dvclive_summary", []):
            tails = {str(p): readers.Tail()}
            _run_stream(ev, Stream(str(p), "dvclive_summary", classify), dvclive.summary(p, tails[str(p)]), [p],
                        AS["dvclive_summary"], tails)
        for run, keyed in s.mlflow.items():
            t = readers.Tail()
            files = [p for _, p in keyed]
            _run_stream(ev, Stream(run, "mlflow", classify), readers.mlflow_run(keyed, t), files,
                        AS["mlflow"], {str(files[-1]): t})
        log_files += s.files.get("log", [])
    for p in log_files:
        try:
            text = read_log(p)
        except LogError as exc:
            ev.errors.append(readers.RunFileError(str(p), None, str(exc)))
            continue
        try:
            ev.log_events += events(text, str(p))
        except LogError as exc:
            ev.errors.append(readers.RunFileError(str(p), None, str(exc)))
            continue
        from validator.jobs.recovery_log import ISO_TIME

        ev.log_texts[str(p)] = ISO_TIME.search(text) is not None
        ev.read.append({"file": str(p), "as": AS["log"]})
        ds = Stream(str(p), "deepspeed_log", classify)
        _feed(ds, dslog.scalars(text))
        if ds.scalars:
            ev.streams.append(ds)
            ev.read.append({"file": str(p), "as": AS["deepspeed_log"]})
    names = [str(r["file"]) for r in ev.read] + [r["file"] for r in ev.passed]
    ev.versions = [d.as_json() for d in link(ev.streams, names)]
    return ev
