"""What `scripts/device/health_on_gpu.sh` recorded on a real H200 (issue 23, deliverable 6),
judged again by today's code and checked against oracles spec-check did not write
(tests/fixtures/h200_health/MANIFEST.md says what each file is and how it was made)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REC = ROOT / "tests" / "fixtures" / "h200_health"
ORACLE = ROOT / "tests" / "fixtures" / "h200"  # the same kind of node, earlier that day
FACTS = json.loads((REC / "facts.json").read_text())
[GPU_ITEM] = FACTS["facts"]["gpu.devices"]["items"]
GPU = GPU_ITEM["fields"]


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def findings(path: Path) -> dict[tuple[str, str | None], dict]:
    return {(f["rule"], f.get("item")): f for f in json.loads(path.read_text())["findings"]}


def test_the_recording_is_of_the_h200_its_manifest_names():
    env = (REC / "env.txt").read_text().splitlines()
    assert env[0] == "date: 2026-11-27T04:36:52Z" == "date: " + FACTS["collected_at"]
    assert "nvidia-ml-py 13.610.43" in env and "NVIDIA H200, 580.159.04, 00000000:00:06.0" in env
    assert FACTS["schema"] == "spec-check/facts/3"
    assert (GPU["name"]["value"], GPU["pci_bus_id"]["value"]) == ("NVIDIA H200", "0000:00:06.0")
    assert FACTS["facts"]["gpu.driver_version"]["value"] == "580.159.04"
    # the start-up timings were taken on this very GPU
    for name in ("startup_timing.txt", "startup_timing_main.txt"):
        assert GPU["uuid"]["value"] in (REC / name).read_text()


# -- (1) health --npd --------------------------------------------------------------------------

def test_npd_on_the_recorded_facts_gives_what_the_node_gave():
    """node-problem-detector's contract (exit 1 = problem, one line of at most 80 characters)
    on the recorded facts with today's code: the line the live `health --npd` printed on the
    node, and the line `--facts` printed there. Today's code judges these facts exactly as the
    code of 04:36 UTC did (every rule and item: test_check_on_the_recorded_facts_...), so the
    line is the same: the one failure is NET-02 (the VM has no RDMA port); NET-01.gpu-nic-slow
    skips with NET-02's reason; no Xid, counters 0."""
    r = cli("health", "--npd", "--facts", str(REC / "facts.json"))
    lines = r.stdout.splitlines()
    assert (r.returncode, r.stderr, len(lines)) == (1, "", 1), (r.returncode, r.stdout, r.stderr)
    assert len(lines[0]) <= 80
    assert lines[0] == "spec-check FAIL: NET-02.no-rdma-fabric"
    for name in ("npd", "npd_facts"):
        assert (REC / f"{name}.txt").read_text() == r.stdout
        assert int((REC / f"{name}.rc").read_text()) == r.returncode


def test_check_on_the_recorded_facts_judges_every_rule_as_the_node_did(tmp_path):
    """`check --facts` today against the live `check` on the node: the same status for every
    (rule, item) the node judged. The pack's digest differs (rule texts edited since), the
    verdicts do not."""
    out = tmp_path / "check.json"
    r = cli("check", "--facts", str(REC / "facts.json"), "--format", "json", "-o", str(out))
    assert r.returncode == int((REC / "check.rc").read_text()) == 1, r.stderr
    then, now = findings(REC / "check.json"), findings(out)
    # issue 30: the AMD rule is not applicable on this NVIDIA node (the recording passed it)
    assert then[("MEM-01.amd-uncorrectable-error-event", None)]["status"] == "pass"
    then[("MEM-01.amd-uncorrectable-error-event", None)]["status"] = "skip"
    # and NET-03's interconnect is for multi-GPU nodes: this single-GPU node meets it
    assert then[("NET-03.no-nvlink", None)]["status"] == "skip"
    then[("NET-03.no-nvlink", None)]["status"] = "pass"
    # rules added to the pack after the recording (MON-03's live-scrape rules) skip on it: no
    # endpoint was named when it was made; every rule the node judged is judged the same
    added = {k: f["status"] for k, f in now.items() if k not in then}
    assert added and set(added.values()) == {"skip"} and all(k[0].startswith("MON-03.") for k in added)
    assert {k: f["status"] for k, f in now.items() if k in then} == {k: f["status"] for k, f in then.items()}
    assert [k for k, f in now.items() if f["status"] == "fail"] == [("NET-02.no-rdma-fabric", None)]
    assert not [k for k, f in now.items() if f["status"] == "error"]
    nic = now[("NET-01.gpu-nic-slow", None)]
    assert nic["status"] == "skip" and "NET-02" in nic["message"]


# -- (2) the new facts against oracles spec-check did not write ---------------------------------

def _nvml(key: str) -> dict:
    return json.loads((ORACLE / "nvml_counters.json").read_text())[key]


COUNTERS = {  # fact field -> the key of the same NVML call in nvml_counters.json
    "ecc_uncorrected_volatile": "ecc_total_uncorrected_volatile",
    "ecc_uncorrected_aggregate": "ecc_total_uncorrected_aggregate",
    "pcie_replay_count": "pcie_replay_counter",
}


@pytest.mark.parametrize("field", sorted(COUNTERS))
def test_a_counter_is_the_value_nvml_answers_on_an_h200(field):
    """The oracle is NVML called by hand on an H200 of the same kind earlier that day (another
    GPU: nvml_counters.txt, the nvidia-smi run meant as this node's oracle, failed; see the
    MANIFEST). Counts since the driver loaded on a healthy GPU are 0 on both; what matters is
    that the fact is a value with the NVML call as its source, not an error or a default."""
    fact = GPU[field]
    assert set(fact) == {"value", "source"}, fact
    assert fact["value"] == _nvml(COUNTERS[field])["value"] == 0
    assert fact["source"].startswith("nvml:")


def test_the_pcie_replay_counter_and_ecc_totals_match_nvidia_smi_xml():
    """The same counters as `nvidia-smi -q -x` writes them (pci/replay_counter, the DRAM and
    SRAM uncorrectable ECC counts summed) on the oracle node."""
    [gpu] = ET.parse(ORACLE / "nvidia-smi-q.xml").getroot().findall("gpu")
    assert int(gpu.findtext("pci/replay_counter")) == GPU["pcie_replay_count"]["value"]
    for kind in ("volatile", "aggregate"):
        node = gpu.find(f"ecc_errors/{kind}")
        total = sum(int(e.text) for e in node if "uncorrectable" in e.tag and (e.text or "").strip().isdigit())
        assert total == GPU[f"ecc_uncorrected_{kind}"]["value"], kind


@pytest.mark.parametrize("field", ["nvlink_replay_recovery_errors", "nvlink_crc_errors"])
def test_nvlink_counters_are_an_error_saying_notsupported_never_a_zero(field):
    """NVML answers NotSupported for the NVLink counters of that H200 (nvml_counters.json:
    nvlink0/1 replay, recovery, crc_flit) and for the link count itself; the fact says so."""
    for key in ("nvlink0_replay", "nvlink0_recovery", "nvlink0_crc_flit", "nvlink1_crc_flit"):
        assert _nvml(key) == {"error": "NVMLError_NotSupported", "text": "Not Supported"}
    assert "value" not in GPU[field]
    assert GPU[field]["error"] == "NVLink count unknown: NotSupported: Not Supported"
    assert GPU["nvlink_count"]["error"] == "NotSupported: Not Supported"


def test_no_xid_on_that_node_as_its_own_kernel_log_shows():
    """gpu.xid_events (read from /dev/kmsg by the probe) is an empty list, and the kernel log
    the script saved at the same minute has no Xid line, by a plain regex (not spec-check's parser)."""
    xid = re.compile(r"NVRM: Xid \(")
    assert FACTS["facts"]["gpu.xid_events"] == {"items": [], "source": "/dev/kmsg"}
    assert FACTS["facts"]["gpu.ras_events"] == {"items": [], "source": "/dev/kmsg"}
    dmesg = (REC / "dmesg.txt").read_text()
    assert "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04" in dmesg  # the driver logs here
    assert not xid.search(dmesg)
    kmsg = (REC / "kmsg_head.txt").read_text()  # the first 200 records only: boot, before the driver
    assert kmsg.startswith("5,0,0,-;Linux version 6.18.44-fc-v657-gpu") and not xid.search(kmsg)
    assert FACTS["facts"]["gpu.counter_rises"]["items"] == []  # no --since in the recorded run


def test_the_nvidia_smi_run_meant_as_oracle_failed_and_the_script_no_longer_asks_it():
    """nvml_counters.txt is `nvidia-smi -q -d ECC,PCIE,ROW_REMAPPER` on driver 580: exit 2 and
    only its parse error. The script now asks one section per call and records `-q -x`."""
    assert (REC / "nvml_counters.txt").read_text() == "Failed to parse --display/-d flags\n"
    assert re.search(r"^nvidia_smi\s+rc=2 ", (REC / "timing.txt").read_text(), re.M)
    script = (ROOT / "scripts" / "device" / "health_on_gpu.sh").read_text()
    calls = [ln for ln in script.splitlines() if ln.startswith("step ") and " nvidia-smi " in ln]
    assert calls and not [c for c in calls if re.search(r"-d \S*,", c)], calls  # one section a call
    assert any("nvidia-smi -q -x " in c for c in calls)


# -- (3) check --kernel-log on the recorded dmesg -----------------------------------------------

def test_check_kernel_log_on_the_recorded_dmesg_finds_no_xid(tmp_path):
    """The Xid rules judge the saved log (cited as their source), pass, and nothing errors about
    it; the rest of the report is this machine's, so only its exit is bounded (0 or 1, never 2)."""
    out = tmp_path / "kl.json"
    log = REC / "dmesg.txt"
    r = cli("check", "--kernel-log", str(log), "--format", "json", "-o", str(out))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    now = findings(out)
    doc = json.loads(out.read_text())
    gpu_here = any(f["rule"] == "PLAT-01.no-accelerator" and f["status"] == "pass" for f in doc["findings"])
    for rule in ("PLAT-01.xid-node-fault", "PLAT-03.xid-warning"):
        f = now[(rule, None)]
        if gpu_here:
            assert (f["status"], f["observed"], f["source"]) == ("pass", "none", str(log)), f
        else:  # issue 30: on a machine with no GPU an Xid rule judges nothing: a skip, never a pass
            assert f["status"] == "skip" and "accelerators on the PCI bus" in f["message"], f
    assert not [k for k, f in now.items() if f["status"] == "error" and str(log) in str(f.get("source"))]
    # on the node, the same file gave the same verdicts
    then = findings(REC / "kernel_log_check.json")
    for rule in ("PLAT-01.xid-node-fault", "PLAT-03.xid-warning"):
        assert then[(rule, None)]["status"] == "pass"
        assert then[(rule, None)]["source"] == "/tmp/o/health/dmesg.txt"


# -- (4) --dcgm-diag without DCGM ----------------------------------------------------------------

def test_dcgm_asked_for_and_absent_was_a_skip_on_the_node_and_is_an_error_today(tmp_path):
    assert (REC / "dcgm_absent.txt").read_text() == "dcgmi not on PATH\n"
    f = findings(REC / "dcgm_check.json")[("PLAT-01.dcgm-diag-failed", None)]
    assert f["status"] == "skip" and "dcgmi not found" in f["message"], f
    # today's code, with no dcgmi on PATH: an error (issue 30: asked for and not run; a
    # prolog relying on it must not lose its GPU test unseen), never a pass
    out = tmp_path / "dcgm.json"
    bindir = Path(sys.executable).parent
    r = cli("check", "--dcgm-diag", "1", "--format", "json", "-o", str(out), env={"PATH": str(bindir)})
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    now = findings(out)
    dcgm = {k: g for k, g in now.items() if "dcgm" in k[0]}
    assert {k: g["status"] for k, g in dcgm.items()} == {("PLAT-01.dcgm-diag-failed", None): "error"}
    assert "dcgmi not found" in dcgm[("PLAT-01.dcgm-diag-failed", None)]["message"]
    assert r.returncode == 1


# -- the live record format against dmesg, both from that node at the same minute ----------------

def test_kmsg_records_read_as_the_same_messages_dmesg_printed():
    """kmsg_head.txt (`head -n 200 /dev/kmsg`) and dmesg.txt are the same boot's log: each
    /dev/kmsg record parses to the message and boot time of the dmesg line in the same place.
    /dev/kmsg escapes a tab as \\x09 (kernel/printk/printk.c, msg_add_ext_text); before the
    fix five records (``rcu: \\x09RCU restricting CPUs ...``) kept the escape and differed."""
    from validator.facts.node import kernel_log

    records = [ln for ln in (REC / "kmsg_head.txt").read_text().splitlines() if not ln.startswith(" ")]
    lines = (REC / "dmesg.txt").read_text().splitlines()[:len(records)]
    assert len(records) == 199  # 200 lines, one of them a record's " SUBSYSTEM=acpi" continuation
    got = [kernel_log.parse_line(r) for r in records]
    want = [kernel_log.parse_line(ln) for ln in lines]
    assert None not in got and None not in want
    assert [(g.message, g.since_boot) for g in got] == [(w.message, w.since_boot) for w in want]
    assert sum("\t" in g.message for g in got) == 5


@pytest.mark.parametrize(("record", "message"), [
    ("6,1,2,-;a\\x09b", "a\tb"),
    ("6,1,2,-;back\\x5cx09slash", "back\\x09slash"),  # an escaped backslash stays a literal text
    ("6,1,2,-;caf\\xc3\\xa9", "caf\u00e9"),  # bytes from 0x80 are escaped one by one: UTF-8 again
    ("6,1,2,-;bad \\xff byte", "bad \ufffd byte"),
    ("6,1,2,-;NVRM: Xid (PCI:0000:00:06): 79, pid=1, name=x, GPU has fallen off the bus.",
     "NVRM: Xid (PCI:0000:00:06): 79, pid=1, name=x, GPU has fallen off the bus."),
])
def test_kmsg_escapes_are_undone(record, message):
    from validator.facts.node import kernel_log

    assert kernel_log.parse_line(record).message == message
