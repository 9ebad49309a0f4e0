"""Xid and amdgpu RAS events from the kernel log: real logs of a real H200 with event lines
inserted in the drivers' own formats (tests/fixtures/kernel/MANIFEST.md)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.facts.catalogue import check_facts
from tests.fixtures import nodes
from tests.fixtures.fake_nvml import FakeNvml
from validator.facts.node import gpu_events, kernel_log

KERNEL = Path(__file__).resolve().parents[1] / "fixtures" / "kernel"
DMESG = KERNEL / "h200_dmesg.txt"
KMSG = KERNEL / "h200_kmsg.txt"
# the driver's format string (kernel_rc.c): "NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s"
XID_79 = "NVRM: Xid (PCI:0000:18:00): 79, pid=2104, name=python3, GPU has fallen off the bus."


@pytest.fixture(scope="module")
def dgx(tmp_path_factory):
    return nodes.dgx_h100(tmp_path_factory.mktemp("dgx"))


def _log(tmp_path: Path, *extra: str, base: Path = DMESG) -> Path:
    p = tmp_path / "kernel.log"
    p.write_text(base.read_text() + "".join(line + "\n" for line in extra))
    return p


def _events(facts, name="gpu.xid_events"):
    return {m["id"]: {k: v.get("value", v.get("error")) for k, v in m["fields"].items()}
            for m in facts[name]["items"]}


def test_the_real_logs_parse_line_for_line():
    dmesg = kernel_log.read_file(DMESG)
    kmsg = kernel_log.read_file(KMSG)
    assert (len(dmesg.records), dmesg.unparsed) == (293, 0)
    assert (len(kmsg.records), kmsg.unparsed) == (150, 0)
    nvrm = [r for r in dmesg.records if r.message.startswith("NVRM:")]
    assert [r.since_boot for r in nvrm] == [0.505759, 1.187711, 3.67918]
    assert kmsg.records[1].message.startswith("x86/split lock detection")
    assert kmsg.now_since_boot == pytest.approx(0.088868)


def test_a_real_log_without_xid_gives_no_event(dgx):
    f = dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=DMESG)
    check_facts(f)
    assert f["gpu.xid_events"] == {"items": [], "source": str(DMESG)}
    assert f["gpu.ras_events"]["items"] == []


def test_xid_events_name_gpu_pci_number_time_and_text(dgx, tmp_path):
    log = _log(tmp_path,
               f"[  100.000001] {XID_79}",
               "[  101.500000] NVRM: Xid (PCI:0000:2a:00 GPU-I:01 GPU-CI:00): 31, pid=7, name=x, MMU Fault",
               "[  102.000000] NVRM: Xid (PCI:0000:3a:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception")
    f = dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=log)
    check_facts(f)
    ev = _events(f)
    first = ev["PCI:0000:18:00 Xid 79 at 100.000001 s after boot"]
    assert first == {"xid": 79, "pci_bus_id": "0000:18:00", "gpu": "GPU0",
                     "text": "pid=2104, name=python3, GPU has fallen off the bus.",
                     "time": "100.000001 s after boot", "age": 2.0}
    mig = ev["PCI:0000:2a:00 Xid 31 at 101.500000 s after boot"]
    assert (mig["gpu"], mig["text"]) == ("GPU1", "(GPU-I:01 GPU-CI:00) pid=7, name=x, MMU Fault")
    assert ev["PCI:0000:3a:00 Xid 13 at 102.000000 s after boot"]["gpu"] == "GPU2"
    src = f["gpu.xid_events"]["items"][0]["fields"]["xid"]["source"]
    assert src == f"{log}:294"  # file:line of the event


def test_a_cut_line_is_an_error_never_an_xid(dgx, tmp_path):
    log = _log(tmp_path, "[  5.0] NVRM: Xid (PCI:0000:18:00): 7", "[  6.0] NVRM: Xid (PCI:0000:18:")
    ev = _events(dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=log))
    cut_number = ev["PCI:0000:18:00 Xid 7 at 5.000000 s after boot"]["xid"]
    assert "cut mid-way" in cut_number  # "7" may be the start of "79"
    assert "no known shape" in ev["line 295"]["xid"]


def test_an_xid_of_a_gpu_the_node_does_not_have_is_an_error(dgx, tmp_path):
    log = _log(tmp_path, "[  5.0] NVRM: Xid (PCI:0000:77:00): 79, pid=1, name=x, GPU has fallen off the bus.")
    ev = _events(dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=log))
    [e] = ev.values()
    assert e["xid"].startswith("Xid 79 of PCI 0000:77:00: PCI 0000:77:00 is no GPU of this node (GPUs: 0000:18:00.0,")


def test_a_gpu_that_fell_off_is_matched_on_the_pci_bus(dgx, tmp_path):
    """NVML no longer lists a GPU that fell off the bus; the PCI scan still has it."""
    data = FakeNvml("dgx_h100").data
    data["devices"] = data["devices"][1:]  # GPU at 18:00 gone from the driver
    log = _log(tmp_path, f"[  5.0] {XID_79}")
    [e] = _events(dgx.probe(nvml=FakeNvml(data), kernel_log=log)).values()
    assert e["xid"] == 79 and e["gpu"] == "0000:18:00.0 (on the PCI bus, not seen by the GPU driver)"


@pytest.mark.parametrize("line", [
    # dmesg -T, journalctl -k (short, short-iso, short-monotonic), /dev/kmsg
    f"[Fri Nov 27 03:12:01 2026] {XID_79}",
    f"Nov 27 03:12:01 gpu-7 kernel: {XID_79}",
    f"Nov 27 03:12:01 gpu-7 kernel: [  100.000001] {XID_79}",
    f"2026-11-27T03:12:01+0000 gpu-7 kernel: {XID_79}",
    f"[  100.000001] gpu-7 kernel: {XID_79}",
    f"3,900,100000001,-;{XID_79}",
])
def test_every_saved_log_format(tmp_path, line):
    log = kernel_log.parse_lines([line], "saved")
    assert log.unparsed == 0
    ev = gpu_events.xid_events(log, gpu_events._Gpus({"0000:18:00.0": "GPU0"}, None))
    [m] = ev["items"]
    assert m["fields"]["xid"]["value"] == 79 and m["fields"]["gpu"]["value"] == "GPU0"
    assert "value" in m["fields"]["age"]


def test_lines_of_no_known_shape_are_counted_and_an_xid_in_one_still_counts():
    log = kernel_log.parse_lines(["garbage", f"?? {XID_79}"], "saved")
    assert log.unparsed == 2
    [m] = gpu_events.xid_events(log, gpu_events._Gpus({"0000:18:00.0": "GPU0"}, None))["items"]
    assert m["fields"]["xid"]["value"] == 79
    assert m["fields"]["age"]["error"] == "the line carries no time stamp"


@pytest.mark.parametrize("line", [f"[{'9' * 5000}.5] {XID_79}", f"3,900,{'9' * 5000},-;{XID_79}"])
def test_a_time_stamp_beyond_any_uptime_is_no_time_stamp(line):
    """A 5000-digit stamp once read as "inf s after boot": it is a line of no known shape."""
    log = kernel_log.parse_lines([line], "saved")
    assert log.unparsed == 1
    [m] = gpu_events.xid_events(log, gpu_events._Gpus({"0000:18:00.0": "GPU0"}, None))["items"]
    assert m["fields"]["age"]["error"] == "the line carries no time stamp"


def test_age_counts_from_the_logs_last_line_and_the_lookback_filters(tmp_path):
    from tests.helpers import run_rules

    log = kernel_log.parse_lines([f"[  10.0] {XID_79}", "[ 7210.0] later"], "saved")
    [m] = gpu_events.xid_events(log, gpu_events._Gpus({"0000:18:00.0": "GPU0"}, None))["items"]
    assert m["fields"]["age"]["value"] == 7200.0
    age = m["fields"]["age"]["value"]
    facts = {"gpu.xid_events": {"items": {m["id"]: {"xid": m["fields"]["xid"]["value"], "age": f"{age} s"}}},
             # the rule applies on a node with an NVIDIA GPU on its PCI bus (issue 30)
             "accel.pci_count": 1, "gpu.vendor": "nvidia"}
    since_boot = run_rules(facts, select=("PLAT-01.xid-node-fault",), rules_version="1.1")
    last_hour = run_rules(facts, select=("PLAT-01.xid-node-fault",), sets=("xid_lookback=1 h",),
                          rules_version="1.1")
    assert [f.status.value for f in since_boot] == ["fail"]
    assert [f.status.value for f in last_hour] == ["pass"]


def test_amdgpu_ras_events_new_counts_only(tmp_path):
    lines = [  # amdgpu_ras.c: the old and the >= 6.8 wording, and the "in total" summary
        "[ 50.0] amdgpu 0000:c1:00.0: amdgpu: 2 uncorrectable hardware errors detected in UMC block",
        "[ 51.0] amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 1, 1 new uncorrectable hardware errors detected in GFX block",
        "[ 51.0] amdgpu 0000:c1:00.0: amdgpu: socket: 0, die: 1, 3 uncorrectable hardware errors detected in total in GFX block",
        "[ 52.0] amdgpu 0000:d1:00.0: amdgpu: 1 uncorrectable hardware errors detected in UMC block",
    ]
    log = kernel_log.parse_lines(lines, "saved")
    ev = gpu_events.ras_events(log, gpu_events._Gpus({"0000:c1:00.0": "GPU0"}, {"0000:c1:00.0"}))
    got = {m["id"]: (m["fields"]["count"].get("value", m["fields"]["count"].get("error"))) for m in ev["items"]}
    assert got["0000:c1:00.0 UMC at 50.000000 s after boot"] == 2
    assert got["0000:c1:00.0 GFX at 51.000000 s after boot"] == 1
    assert "no GPU of this node" in got["0000:d1:00.0 UMC at 52.000000 s after boot"]
    assert len(got) == 3  # the "in total" line is not an event


def test_a_recorded_tree_does_not_read_this_hosts_log(dgx):
    f = dgx.probe(nvml=FakeNvml("dgx_h100"))
    assert f["gpu.xid_events"]["error"].startswith("not read: probing a recorded tree")


def test_an_unreadable_log_is_an_error_with_both_reasons(monkeypatch, tmp_path):
    monkeypatch.setattr(kernel_log, "read_kmsg", lambda *a: (_ for _ in ()).throw(
        kernel_log.KernelLogError("cannot open /dev/kmsg: Operation not permitted")))
    monkeypatch.setenv("PATH", str(tmp_path))  # no journalctl
    with pytest.raises(kernel_log.KernelLogError) as exc:
        kernel_log.read_live()
    assert str(exc.value) == "cannot open /dev/kmsg: Operation not permitted; journalctl not found"


def test_kmsg_reading_never_blocks(tmp_path):
    """A FIFO with one record and a writer that stays open: a blocking read would hang."""
    fifo = tmp_path / "kmsg"
    os.mkfifo(fifo)
    w = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # holds the FIFO open, as the kernel does
    try:
        os.write(w, f"3,1,5000000,-;{XID_79}\n".encode())
        log = kernel_log.read_kmsg(fifo)
    finally:
        os.close(w)
    assert [r.message for r in log.records] == [XID_79]


def test_the_live_kmsg_of_this_machine_reads_or_says_why():
    try:
        log = kernel_log.read_kmsg()
    except kernel_log.KernelLogError as exc:
        assert "/dev/kmsg" in str(exc)
    else:
        assert log.records and log.now_since_boot is not None


def test_a_huge_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_log, "MAX_BYTES", 10)
    with pytest.raises(kernel_log.KernelLogError, match="over the 10 byte limit"):
        kernel_log.read_file(DMESG)
    with pytest.raises(kernel_log.KernelLogError, match="cannot read"):
        kernel_log.read_file(tmp_path / "absent")
    assert errno.ENOENT  # (the errno text, not a traceback)


@pytest.mark.parametrize("name", ["facts.json", "nvidia-smi-q.xml", "empty"])
def test_a_file_that_is_no_kernel_log_is_an_error_not_a_clean_log(dgx, tmp_path, name):
    """--kernel-log naming the wrong file (a facts document, nvidia-smi output, an empty
    file) must not read as a log without Xid events: the events are unknown."""
    real = Path(__file__).resolve().parents[1] / "fixtures" / "h200" / name
    src = tmp_path / name
    src.write_bytes(real.read_bytes() if name != "empty" else b"")
    f = dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=src)
    for fact in ("gpu.xid_events", "gpu.ras_events"):
        assert "no line of" in f[fact].get("error", ""), f[fact]


def test_a_journal_with_no_entries_is_a_clean_log(dgx, tmp_path):
    src = tmp_path / "journal.txt"
    src.write_text("-- No entries --\n")
    f = dgx.probe(nvml=FakeNvml("dgx_h100"), kernel_log=src)
    assert f["gpu.xid_events"] == {"items": [], "source": str(src)}


@pytest.mark.parametrize("line", [
    "4,1234,5678901,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.",
    "6,17,1000000,-,caller=T1;rcu: \\x09RCU restricting CPUs\r",
    "not a kmsg record",
])
def test_read_kmsg_reads_a_record_as_parse_line_does(tmp_path, line):
    """read_kmsg parses the /dev/kmsg shape inline (thousands of records a run): the same
    record as parse_line gives, or the line counted as unparsed."""
    from validator.facts.node.kernel_log import parse_line, read_kmsg

    path = tmp_path / "kmsg"
    path.write_bytes(line.encode() + b"\n")  # a file reads as one record (the first line of one read)
    log = read_kmsg(path)
    want = parse_line(line)
    assert log.records == ([] if want is None else [want])
    assert log.unparsed == (1 if want is None else 0)
