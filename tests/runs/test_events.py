"""validator/runs/events.py, the event-file reader of the base install: the same scalars as
tensorboard's own record reader on every real event file here, TF2 tensor scalars, and the
record lengths a corrupt or hostile file holds (issue 32: a CRC-valid length of 8 GiB mid-file
was taken for a half-written tail, so the NaN losses after it were dropped; 2**62 was
``internal error: MemoryError``)."""

from __future__ import annotations

import json
import shutil
import struct
import time
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES, RECORDINGS, measure
from validator.runs.readers import RunFileError, Tail

RUN = FIXTURES / "cpu_ddp2_crash"


def _masked(data: bytes) -> int:
    """TFRecord's masked CRC-32C, computed here by the CRC's definition (bit by bit), not by
    the code under test."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _frame(data: bytes, length: int | None = None) -> bytes:
    head = struct.pack("<Q", len(data) if length is None else length)
    return head + struct.pack("<I", _masked(head)) + data + struct.pack("<I", _masked(data))


def _event(step: int, tag: str, value: float, wall: float = 1795000000.0) -> bytes:
    """An Event{wall_time, step, summary{value{tag, simple_value}}}, encoded by hand."""
    v = b"\x0a" + bytes([len(tag)]) + tag.encode() + b"\x15" + struct.pack("<f", value)
    summary = b"\x0a" + bytes([len(v)]) + v
    return b"\x09" + struct.pack("<d", wall + step) + b"\x10" + bytes([step]) + b"\x2a" + bytes([len(summary)]) + summary


FIRST = b"\x09" + struct.pack("<d", 1795000000.0) + b"\x1a\x0dbrain.Event:2"


def _run(tmp_path: Path, body: bytes) -> tuple[Path, Path]:
    run = tmp_path / "run"
    run.mkdir()
    p = run / "events.out.tfevents.1795000000.host.1.0"
    p.write_bytes(_frame(FIRST) + body)
    return run, p


def _losses(n: int, start: int = 1, value: float = 1.0) -> bytes:
    return b"".join(_frame(_event(s, "train/loss", value)) for s in range(start, start + n))


def test_the_hand_framing_is_what_tensorboard_reads() -> None:
    """The test's own framing and CRC are tensorboard's (so the cases below are real files)."""
    pytest.importorskip("tensorboard")
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    from validator.runs import events

    for data in (b"", b"abc", FIRST, _event(3, "train/loss", 2.5)):
        assert _masked(data) == masked_crc32c(data) == events.masked_crc32c(data)


def _tensorboards_scalars(path: Path) -> list[tuple[str, int, float, float]]:
    """What tensorboard's own record reader and generated Event class give for a file."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util

    out = []
    for rec in RawEventFileLoader(str(path)).Load():
        ev = event_pb2.Event.FromString(rec)
        for v in ev.summary.value:
            if v.HasField("simple_value"):
                out.append((v.tag, ev.step, ev.wall_time, v.simple_value))
            elif v.HasField("tensor") and not v.tensor.tensor_shape.dim and v.tensor.dtype in (1, 2):
                out.append((v.tag, ev.step, ev.wall_time, float(tensor_util.make_ndarray(v.tensor))))
    return out


def _event_files() -> list[Path]:
    roots = [FIXTURES] + ([RECORDINGS] if RECORDINGS.is_dir() else [])
    return sorted(p for r in roots for p in r.rglob("*tfevents*") if p.is_file())


def test_every_real_event_file_reads_as_tensorboard_reads_it() -> None:
    pytest.importorskip("tensorboard")
    from validator.runs.events import event_file

    files = _event_files()
    assert len(files) >= 8
    total = 0
    for p in files:
        t = Tail()
        ours = [s for s in event_file(p, t) if not s[0].startswith("\x00")]
        theirs = _tensorboards_scalars(p)
        assert len(ours) == len(theirs), p
        for a, b in zip(ours, theirs, strict=True):
            assert a[:3] == b[:3] and (a[3] == b[3] or (a[3] != a[3] and b[3] != b[3])), (p, a, b)
        assert t.bytes == 0
        total += len(ours)
    assert total > 500


def test_tf2_tensor_scalars_are_read_and_other_tensors_are_not(tmp_path: Path) -> None:
    """tf.summary.scalar in TF2 writes a rank-0 float tensor (float_val or tensor_content);
    a double tensor is read too; a rank-1 or string tensor is no scalar."""
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2

    from validator.runs.events import event_file

    def ev(step: int, tensor: tensor_pb2.TensorProto) -> bytes:
        return event_pb2.Event(wall_time=1795000000.0 + step, step=step, summary=summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="loss", tensor=tensor)])).SerializeToString()

    rank1 = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2)])
    body = b"".join(_frame(x) for x in (
        ev(1, tensor_pb2.TensorProto(dtype=1, float_val=[2.5])),
        ev(2, tensor_pb2.TensorProto(dtype=1, tensor_content=struct.pack("<f", 1.25))),
        ev(3, tensor_pb2.TensorProto(dtype=2, double_val=[0.1])),
        ev(4, tensor_pb2.TensorProto(dtype=2, tensor_content=struct.pack("<d", 0.2))),
        ev(5, tensor_pb2.TensorProto(dtype=1, tensor_shape=rank1, float_val=[1.0, 2.0])),
        ev(6, tensor_pb2.TensorProto(dtype=7, string_val=[b"text"]))))
    _, p = _run(tmp_path, body)
    got = [(s, x) for _, s, _, x in event_file(p, Tail())]
    assert got == [(1, 2.5), (2, 1.25), (3, 0.1), (4, 0.2)]
    assert [s[:2] + (s[3],) for s in _tensorboards_scalars(p)] == [("loss", s, x) for s, x in got]


def _nan_after(length: int) -> bytes:
    """Ten losses, one record whose CRC-valid length is ``length`` with 64 bytes of data (a
    corrupt length, as a bit flip in the length and its CRC together leaves it), then ten NaN
    losses: a run whose NaNs lie after the corrupt record."""
    head = struct.pack("<Q", length)
    corrupt = head + struct.pack("<I", _masked(head)) + b"\x00" * 64
    return _losses(10) + corrupt + _losses(10, start=11, value=float("nan"))


@pytest.mark.parametrize("length", [8 << 30, 1 << 62, (1 << 64) - 1])
def test_a_length_over_2_gib_is_corruption_naming_file_record_and_offset(tmp_path: Path, length: int) -> None:
    run, p = _run(tmp_path, _nan_after(length))
    t0 = time.process_time()
    ev, facts = measure(run)
    assert time.process_time() - t0 < 5
    [err] = ev.errors
    offset = len(_frame(FIRST)) + len(_losses(10))
    assert (err.file, err.message) == (str(p), f"record 12 at byte {offset}: a length of {length:,} bytes, over "
                                                "the 2 GiB an Event can have (a corrupt record)")
    fields = {i["id"]: i["fields"] for i in facts["job.metrics.measured"]["items"]}
    assert "error" in fields[str(p)]["nonfinite"]
    assert "could not be read past it" in fields["loss"]["nonfinite"]["error"]  # none read is no pass


def test_a_length_over_2_gib_through_the_cli_never_passes_nonfinite_values(tmp_path: Path) -> None:
    run, _p = _run(tmp_path, _nan_after(8 << 30))
    r = spec_check("lint", "--run", str(run), "--format", "json")
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    findings = json.loads(r.stdout)["findings"]
    assert not [f for f in findings if f["rule"] == "MON-02.nonfinite-values" and f["status"] == "pass"]
    errs = [f for f in findings if f["status"] == "error"]
    assert any("record 12 at byte" in f["message"] and "8,589,934,592 bytes" in f["message"] for f in errs)


def test_a_length_past_the_end_with_records_after_it_is_corruption(tmp_path: Path) -> None:
    """Under 2 GiB, but longer than the rest of the file, while whole records follow its
    header: a corrupt length, and the NaN losses after it are not silently dropped."""
    run, p = _run(tmp_path, _nan_after(1 << 20))
    [err] = measure(run)[0].errors
    offset = len(_frame(FIRST)) + len(_losses(10))
    assert err.file == str(p) and err.message.startswith(f"record 12 at byte {offset}: a length of 1,048,576 "
                                                         "bytes runs past the end of the file")
    assert f"a whole record follows at byte {offset + 12 + 64}" in err.message


def test_a_record_cut_at_the_end_is_a_half_written_tail(tmp_path: Path) -> None:
    """The same length past the end with nothing whole after it: a writer mid-flush."""
    last = _frame(_event(11, "train/loss", 1.0) + b"\x00" * 3000)
    for cut in (5, 12, 20, len(last) - 1):
        shutil.rmtree(tmp_path / "run", ignore_errors=True)
        run, _p = _run(tmp_path, _losses(10) + last[:cut])
        ev, _ = measure(run)
        assert ev.errors == [] and ev.streams[0].scalars == 10, cut
        assert f"last {cut} bytes passed over: record 12 (half-written)" in ev.read[0]["note"]


@pytest.mark.parametrize(("where", "what"), [(3, "its length fails its CRC-32C"),
                                             (14, "its data fails its CRC-32C")])
def test_a_flipped_byte_names_the_record_and_its_offset(tmp_path: Path, where: int, what: str) -> None:
    body = bytearray(_losses(10))
    rec = len(_frame(_event(1, "train/loss", 1.0)))
    body[4 * rec + where] ^= 0x01
    run, p = _run(tmp_path, bytes(body))
    [err] = measure(run)[0].errors
    assert (err.file, err.message) == (str(p), f"record 6 at byte {len(_frame(FIRST)) + 4 * rec}: {what} "
                                               "(a corrupt record)")


def test_data_that_is_no_event_names_the_record(tmp_path: Path) -> None:
    run, _p = _run(tmp_path, _losses(2) + _frame(b"\x0a\xff\xff"))
    [err] = measure(run)[0].errors
    assert err.message == f"record 4 at byte {len(_frame(FIRST)) + len(_losses(2))}: not an Event (DecodeError)"


def test_records_after_a_corrupt_file_in_the_next_file_are_still_read(tmp_path: Path) -> None:
    run, _p = _run(tmp_path, _nan_after(8 << 30))
    (run / "events.out.tfevents.1795000100.host.2.0").write_bytes(_frame(FIRST) + _losses(5, start=30))
    ev, _ = measure(run)
    assert len(ev.errors) == 1 and ev.streams[0].families["loss"].last_step == 34


def test_reading_a_huge_cut_length_scans_the_rest_in_bounded_memory(tmp_path: Path) -> None:
    """A 1.5 GiB length whose file ends 8 MiB later (zeros: a preallocated tail) is looked
    through a chunk at a time, and is a tail (no whole record in it)."""
    _, p = _run(tmp_path, b"")
    head = struct.pack("<Q", 3 << 29)
    with open(p, "ab") as f:
        f.write(_losses(3) + head + struct.pack("<I", _masked(head)) + b"\x00" * (8 << 20))
    from validator.runs.events import event_file

    t = Tail()
    assert len(list(event_file(p, t))) == 3 and t.what == "record 5 (half-written)"



def test_a_big_graph_record_is_checked_in_chunks_and_passed_over(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A record over BIG_RECORD (a TF1 graph_def) is CRC-checked a chunk at a time and holds
    no scalar; a big summary is still parsed; a flipped byte in the big graph is corruption."""
    from validator.runs import events

    monkeypatch.setattr(events, "BIG_RECORD", 1000)
    monkeypatch.setattr(events, "SCAN_CHUNK", 256)
    graph = b"\x09" + struct.pack("<d", 1795000000.0) + b"\x22\xa0\x1f" + b"g" * 4000  # graph_def = 4
    big_summary = _event(7, "train/loss", 3.0) + b"\x52\xa0\x1f" + b"s" * 4000  # + source_metadata (10)
    body = _losses(3) + _frame(graph) + _losses(2, start=4) + _frame(big_summary)
    _, p = _run(tmp_path, body)
    got = [(s, x) for _, s, _, x in events.event_file(p, Tail())]
    assert got == [(1, 1.0), (2, 1.0), (3, 1.0), (4, 1.0), (5, 1.0), (7, 3.0)]
    data = bytearray(p.read_bytes())
    at = len(_frame(FIRST)) + len(_losses(3))
    data[at + 12 + 2000] ^= 0x01
    p.write_bytes(bytes(data))
    with pytest.raises(RunFileError, match=f"record 5 at byte {at}: its data fails its CRC-32C"):
        list(events.event_file(p, Tail()))
