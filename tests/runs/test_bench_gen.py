"""bench/run_bench.py's fast event-file generator: byte for byte what protobuf and tensorboard's
own CRC make, and read back by tensorboard's record reader (which checks every CRC)."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")
np = pytest.importorskip("numpy")

BENCH = Path(__file__).resolve().parents[2] / "bench" / "run_bench.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("run_bench", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _reference(steps: range, names: tuple[str, ...], t0: float) -> bytes:
    """The same records written the slow way: protobuf serializes, tensorboard's pure-Python CRC."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    out = b""
    for step in steps:
        for i, name in enumerate(names):
            ev = event_pb2.Event(wall_time=t0 + step * 0.25, step=step)
            v = ev.summary.value.add()
            v.tag, v.simple_value = name, 1.0 + ((step * len(names) + i) % 97) * 0.01
            data = ev.SerializeToString()
            head = struct.pack("<Q", len(data))
            out += head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))
    return out


def test_masked_crc32c_rows_is_tensorboards() -> None:
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    b = _bench()
    rows = np.random.default_rng(0).integers(0, 256, size=(50, 37), dtype=np.uint8)
    got = b.masked_crc32c_rows(rows, b._crc32c_table())
    assert [int(x) for x in got] == [masked_crc32c(r.tobytes()) for r in rows]


def test_files_are_protobufs_and_tensorboards_bytes(tmp_path: Path) -> None:
    b = _bench()
    n = b.generate(tmp_path, 700, 2)  # steps 0..139: step 0 (left out), 1- and 2-byte varints
    assert n == 700
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2
    t0 = 1795000000.0
    for f, steps in zip(files, (range(0, 70), range(70, 140)), strict=True):
        body = f.read_bytes()
        first_len = struct.unpack("<Q", body[:8])[0]
        assert body[16 + first_len:] == _reference(steps, b.NAMES, t0)


def test_three_byte_steps_and_tensorboard_reads_them(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    b = _bench()
    steps = np.arange(16380, 16390, dtype=np.int64)  # 2-byte varints, then 3-byte from 16384
    table = b._crc32c_table()
    got = b""
    for lo, hi in ((16380, 16384), (16384, 16390)):
        s = steps[(steps >= lo) & (steps < hi)]
        got += np.concatenate([b._records(s, b._varint_len(lo), i, 1795000000.0, table)
                               for i in range(len(b.NAMES))], axis=1).tobytes()
    assert got == _reference(range(16380, 16390), b.NAMES, 1795000000.0)
    b.generate(tmp_path, 1000, 1)
    [f] = list(tmp_path.iterdir())
    events = list(EventFileLoader(str(f)).Load())
    assert len(events) == 1001 and events[0].file_version == "brain.Event:2"
    assert [(e.step, e.summary.value[0].tag) for e in events[-2:]] == [(199, b.NAMES[-2]), (199, b.NAMES[-1])]
    from validator.runs.measure import read_runs

    ev = read_runs([tmp_path])
    assert ev.errors == [] and sum(s.scalars for s in ev.streams) == 1000


def test_docs_say_what_the_generator_does() -> None:
    doc = " ".join((BENCH.parents[1] / "docs" / "runs.md").read_text().split())
    assert "byte for byte what protobuf and tensorboard's CRC write" in doc
    assert "figures measured on this project's shared 2-core VM are in its docstring" in doc
    assert "Measured on 2026-12-01 on the project's 2-core VM" in (_bench().__doc__ or "")


def test_the_bench_runs_side_by_side_and_prints_ratios_and_peak_memory(tmp_path: Path) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, str(BENCH), "--scalars", "2000", "--files", "1", "--dir", str(tmp_path),
                        "--readers", "loader,tbparse,raw,plain,ours", "--serial"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "tensorboard EventFileLoader (events)" in out and "RawEventFileLoader + Event parse" in out
    rows = {line[:46].strip(): line[46:].split() for line in out.splitlines()
            if line[:46].strip() and len(line[46:].split()) == 3}
    plain, ours = "plain loop: struct+google-crc32c+protobuf", "spec-check read_runs (scalars)"
    assert rows[ours][2] == "2000" == rows[plain][2] == rows["tensorboard RawEventFileLoader + Event parse"][2]
    assert "ratio ours/plain loop: " in out and "(aim <= 2)" in out and "ratio ours/EventFileLoader: " in out
    assert "peak memory ours " in out and "(aim < 200)" in out
    import importlib.util as iu

    assert ("ratio ours/tbparse: " in out) == (iu.find_spec("tbparse") is not None)
    if iu.find_spec("tbparse") is None:  # named, never silently dropped
        assert "tbparse SummaryReader (scalars): not measured, tbparse is not installed" in out
    b = _bench()
    assert b.main.__doc__ is None and "--ten-million" in (b.__doc__ or "")


def test_the_figures_in_the_docs_are_the_benchs() -> None:
    """docs/runs.md quotes the 1- and 10-million-scalar runs the bench's docstring records."""
    doc = " ".join((BENCH.parents[1] / "docs" / "runs.md").read_text().split())
    bench = " ".join((_bench().__doc__ or "").split())
    for figure in ("48.3", "33.4", "1.45", "492.5", "0.10", "6.2", "3.6", "1.71", "50.7", "0.12", "24.4",
                   "195 MiB", "0.25", "16.6", "0.37"):
        assert figure in doc and figure in bench, figure
    assert "20 MiB" in doc and "ours 48.3 (20 MiB)" in bench
    assert 48.3 / 33.4 <= 2 and 6.2 / 3.6 <= 2  # the aim, met by the figures quoted
