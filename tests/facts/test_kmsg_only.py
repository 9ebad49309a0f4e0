"""The live kernel log read with ``only`` (the GPU events' markers) keeps exactly the records
the full read keeps that hold a marker, and counts the rest as the full read does.

Why: ``read_kmsg`` skips, without decoding or parsing them, the /dev/kmsg records that
cannot name a GPU event (thousands a run, on a real node: 2,224 on this VM). The reference
here is the full read as it was before (every read parsed with ``parse_line``), run on the
real H200's /dev/kmsg records, this machine's own /dev/kmsg when it can be read, hand-made
edge cases (escapes, another shape, no shape, a marker in a continuation line, bad UTF-8)
and generated reads.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.facts.node import gpu_events, kernel_log
from validator.facts.node.kernel_log import Record, kmsg_records, parse_line

H200_KMSG = Path(__file__).resolve().parents[1] / "fixtures" / "kernel" / "h200_kmsg.txt"
MARKS = (gpu_events.XID_MARK, gpu_events.RAS_MARK)
XID = "NVRM: Xid (PCI:0000:18:00): 79, pid=2104, name=python3, GPU has fallen off the bus."
RAS = "amdgpu 0000:c1:00.0: amdgpu: 3 new uncorrectable hardware errors detected in umc block"


def _reference(reads: list[bytes], cap: int = kernel_log.MAX_RECORDS) -> tuple[list[Record], int]:
    """The full read as written before ``only``: each read's first line through parse_line."""
    records: list[Record] = []
    unparsed = 0
    for chunk in reads:
        if len(records) >= cap:
            break
        rec = parse_line(chunk.decode("utf-8", errors="replace").split("\n", 1)[0])
        if rec is None:
            unparsed += 1
        else:
            records.append(rec)
    return records, unparsed


def _same(reads: list[bytes]) -> None:
    full, unparsed = _reference(reads)
    assert kmsg_records(reads) == (full, unparsed)
    kept = [r for r in full if any(m in r.message for m in MARKS)]
    assert kmsg_records(reads, MARKS) == (kept, unparsed)


def _h200_reads() -> list[bytes]:
    return [line.encode() + b"\n" for line in H200_KMSG.read_text().splitlines()]


EDGES = [
    f"3,4000,5000000,-;{XID}".encode(),
    f"4,4001,5000001,-,caller=T1;{RAS}".encode(),
    b"4,4002,5000002,-;NVRM:\\x20Xid (PCI:0000:18:00): 79, pid=1, name=a, escaped",  # an escape makes the marker
    b"4,4003,5000003,-;plain record\n SUBSYSTEM=pci\n DEVICE=+pci:NVRM: Xid (PCI:0000:18:00): 1, x",
    b"6,4004,5000004,-;bad \xff\xfe utf-8 NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=b, c",
    b"6,4005,5000005,-;bad \xff utf-8 only",
    "\u0664,4006,5000006,-;arabic-indic digit priority".encode(),  # \d in text, not in bytes
    b"[   12.345678] dmesg-shaped NVRM: Xid (PCI:0000:18:00): 31, pid=1, name=c, d",
    b"[   12.345679] dmesg-shaped, no marker",
    b"no shape at all",
    b"no shape, NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=d, e",
    b"6,4007,5000007,-;",
    b"6,4008,5000008,-;cut mid-marker NVRM: X",
    b"",
    b"\r\n",
    b"6,4009,99999999999999999999,-;usec too long",
    b"6,4010,5000010;no flags",
]


def test_the_real_h200_records_keep_the_same_events():
    reads = _h200_reads()
    assert len(reads) > 100
    _same(reads)
    # with the events inserted among the real records, in the drivers' own formats
    _same(reads[:50] + EDGES + reads[50:])


@pytest.mark.parametrize("edge", EDGES, ids=range(len(EDGES)))
def test_each_edge_case_alone(edge):
    _same([edge])
    _same([edge + b"\n"])


def test_the_record_cap_counts_skipped_records(monkeypatch):
    reads = _h200_reads()[:20] + EDGES + _h200_reads()[20:40]
    for cap in (1, 5, 19, 20, 21, 25, 30):
        monkeypatch.setattr(kernel_log, "MAX_RECORDS", cap)
        full, unparsed = _reference(reads, cap)
        assert kmsg_records(reads) == (full, unparsed)
        assert kmsg_records(reads, MARKS) == ([r for r in full if any(m in r.message for m in MARKS)], unparsed)


def test_this_machines_kmsg_keeps_the_same_events():
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        pytest.skip(f"/dev/kmsg: {exc.strerror}")
    try:
        reads = list(kernel_log._kmsg_reads(fd, Path("/dev/kmsg")))
    finally:
        os.close(fd)
    assert reads
    _same(reads)
    _same(reads + EDGES)


def test_read_kmsg_with_only_keeps_the_marked_record(tmp_path):
    path = tmp_path / "kmsg"
    path.write_bytes(f"3,1,5000000,-;{XID}\n".encode())
    assert [r.message for r in kernel_log.read_kmsg(path, MARKS).records] == [XID]
    path.write_bytes(b"3,1,5000000,-;nothing of a GPU\n")
    log = kernel_log.read_kmsg(path, MARKS)
    assert log.records == [] and log.unparsed == 0


_PIECES = st.sampled_from([b"6,", b"12,", b"4000,", b"5000000,", b"-;", b"-,caller=T1;", b";", b",", b"\n",
                           b" SUBSYSTEM=pci", b"\\x09", b"\\x20", b"\\x5c", b"\\", b"x", b"\xff", b"\r",
                           b"NVRM: Xid", b" (PCI:0000:18:00): 79, pid=1, name=a, b", b"NVRM: ",
                           b"uncorrectable hardware errors detected in", b" umc block", b"amdgpu 0000:c1:00.0: ",
                           b"[  12.5] ", b"kernel: ", b"Nov 27 03:12:01 host ", "\u0663".encode(), b"7", b" "])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=12).map(b"".join), max_size=8))
def test_generated_reads_keep_the_same_events(reads):
    _same(reads)
