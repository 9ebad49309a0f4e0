"""The facts a real H200 gave (spec-check 0.2.0), field by field against `nvidia-smi -q -x`
recorded at the same minute, and judged by today's rules (tests/fixtures/h200/MANIFEST.md)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.fixtures.fake_nvml import FakeNvml, load_replay
from validator.facts.node import nvidia_counters

H200 = Path(__file__).resolve().parents[1] / "fixtures" / "h200"
FACTS = json.loads((H200 / "facts.json").read_text())
SMI = ET.parse(H200 / "nvidia-smi-q.xml").getroot()
[GPU_XML] = SMI.findall("gpu")
GPU = {k: v for k, v in FACTS["facts"]["gpu.devices"]["items"][0]["fields"].items()}


def smi(path: str) -> str:
    node = GPU_XML.find(path)
    assert node is not None and node.text is not None, path
    return node.text.strip()


def enabled(text: str) -> bool:
    assert text in ("Enabled", "Disabled", "Yes", "No"), text
    return text in ("Enabled", "Yes")


def mib(text: str) -> int:
    number, unit = text.split()
    assert unit == "MiB"
    return int(number) * 2**20


def watts(text: str) -> float:
    number, unit = text.split()
    assert unit == "W"
    return float(number)


# fact field -> (nvidia-smi -q -x path, how nvidia-smi writes it)
ORACLE = {
    "name": ("product_name", str),
    "uuid": ("uuid", str),
    "vbios_version": ("vbios_version", str),
    "pci_bus_id": ("pci/pci_bus_id", lambda t: t[4:].lower()),  # 00000000:00:06.0 -> 0000:00:06.0
    "memory_total": ("fb_memory_usage/total", mib),
    "ecc_enabled": ("ecc_mode/current_ecc", enabled),
    "ecc_pending": ("ecc_mode/pending_ecc", enabled),
    "remapped_rows_pending": ("remapped_rows/remapped_row_pending", enabled),
    "remapped_rows_failure": ("remapped_rows/remapped_row_failure", enabled),
    "persistence_mode": ("persistence_mode", enabled),
    "pstate": ("performance_state", lambda t: int(t.removeprefix("P"))),
    "pcie_gen_current": ("pci/pci_gpu_link_info/pcie_gen/current_link_gen", int),
    "pcie_gen_max": ("pci/pci_gpu_link_info/pcie_gen/max_link_gen", int),
    "pcie_gen_device_max": ("pci/pci_gpu_link_info/pcie_gen/max_device_link_gen", int),
    "pcie_width_current": ("pci/pci_gpu_link_info/link_widths/current_link_width", lambda t: int(t.removesuffix("x"))),
    "pcie_width_max": ("pci/pci_gpu_link_info/link_widths/max_link_width", lambda t: int(t.removesuffix("x"))),
    "power_limit": ("gpu_power_readings/current_power_limit", watts),
    "temperature": ("temperature/gpu_temp", lambda t: int(t.removesuffix(" C"))),
    "utilization": ("utilization/gpu_util", lambda t: int(t.removesuffix(" %"))),
}


@pytest.mark.parametrize("field", sorted(ORACLE))
def test_gpu_fact_matches_nvidia_smi(field):
    path, conv = ORACLE[field]
    assert GPU[field]["value"] == conv(smi(path)), (field, GPU[field], smi(path))


def test_node_level_gpu_facts_match_nvidia_smi():
    f = FACTS["facts"]
    assert f["gpu.count"]["value"] == int(SMI.findtext("attached_gpus"))
    assert f["gpu.driver_version"]["value"] == SMI.findtext("driver_version")
    assert f["gpu.cuda_version"]["value"] == SMI.findtext("cuda_version")
    assert f["gpu.models"]["value"] == [smi("product_name")]


def test_power_draw_and_clock_reasons_match_nvidia_smi():
    assert GPU["power_draw"]["value"] == pytest.approx(watts(smi("gpu_power_readings/average_power_draw")), abs=1.0)
    active = sorted(e.tag.removeprefix("clocks_event_reason_") for e in GPU_XML.find("clocks_event_reasons")
                    if (e.text or "").strip() == "Active")
    assert GPU["throttle_reasons"]["value"] == active == ["gpu_idle"]


def test_what_nvidia_smi_calls_not_available_is_an_error_or_not_supported():
    # NVLink: nvidia-smi shows no links; NVML answered NotSupported, kept as an error value
    assert GPU["nvlink_count"]["error"] == "NotSupported: Not Supported"
    assert smi("fabric/state") == "N/A" and GPU["fabric_state"]["value"] == "not_supported"
    assert smi("retired_pages/pending_retirement") == "N/A"
    assert GPU["retired_pages_pending"]["error"] == "NotSupported: Not Supported"


def _replay_from_recording() -> dict:
    """A DGX replay device whose counter answers are exactly what the H200 answered."""
    rec = json.loads((H200 / "nvml_counters.json").read_text())

    def answer(key):
        got = rec[key]
        if "error" in got:  # "NVMLError_NotSupported" -> pynvml's NVML_ERROR_NOT_SUPPORTED
            name = got["error"].removeprefix("NVMLError_")
            return {"nvml_error": {"NotSupported": "NOT_SUPPORTED", "Timeout": "TIMEOUT"}[name]}
        return got["value"]

    data = load_replay("dgx_h100")
    dev = data["devices"][0]
    dev["ecc_total_uncorrected_volatile"] = answer("ecc_total_uncorrected_volatile")
    dev["ecc_total_uncorrected_aggregate"] = answer("ecc_total_uncorrected_aggregate")
    dev["pcie_replay_counter"] = answer("pcie_replay_counter")
    dev["nvlink_count"] = 2  # links 0 and 1, as recorded
    dev["nvlink_error_counters"] = {
        "replay": [answer("nvlink0_replay"), answer("nvlink1_replay")],
        "recovery": [answer("nvlink0_recovery"), answer("nvlink1_recovery")],
        "crc_flit": [answer("nvlink0_crc_flit"), answer("nvlink1_crc_flit")],
        "crc_data": [answer("nvlink0_crc_flit"), answer("nvlink1_crc_flit")],  # not recorded: as flit
    }
    data["devices"] = [dev]
    return data


def test_counters_read_as_the_real_h200_answered():
    nv = FakeNvml(_replay_from_recording())
    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    got = nvidia_counters.counters(nv, h, {"value": 2})
    assert got["ecc_uncorrected_volatile"]["value"] == 0
    assert got["ecc_uncorrected_aggregate"]["value"] == 0
    assert got["pcie_replay_count"]["value"] == 0
    # NotSupported on a link: the sum is unknown, never a 0 that would pass
    assert got["nvlink_replay_recovery_errors"]["error"] == "link 0 REPLAY: NotSupported: Not Supported"
    assert got["nvlink_crc_errors"]["error"] == "link 0 CRC_FLIT: NotSupported: Not Supported"
    # and where the link count itself is NotSupported (that H200), the counters say so
    none = nvidia_counters.counters(nv, h, {"error": "NotSupported: Not Supported"})
    assert none["nvlink_replay_recovery_errors"]["error"] == "NVLink count unknown: NotSupported: Not Supported"


def test_the_recorded_facts_judged_today():
    """NET-02 fails (no RDMA fabric), NET-01.gpu-nic-slow skips with NET-02's reason instead
    of an ERROR per GPU, and what spec-check 0.2.0 did not gather (Xid events, counters) is
    an error that says to re-record: never a pass on a state that was not read."""
    from tests.helpers import built
    from validator.evaluate.engine import evaluate

    b = built(rules_version="1.1")
    findings = {(f.rule, f.item): f for f in evaluate(b.ctx, b.pack, [FACTS])}
    by_rule: dict[str, list] = {}
    for (rule, _), f in findings.items():
        by_rule.setdefault(rule, []).append(f)
    assert [f.status.value for f in by_rule["NET-02.no-rdma-fabric"]] == ["fail"]
    [nic] = by_rule["NET-01.gpu-nic-slow"]
    assert nic.status.value == "skip" and "NET-02" in nic.message and nic.item is None
    for rule in ("PLAT-01.xid-node-fault", "MEM-01.ecc-uncorrectable-errors"):
        assert {f.status.value for f in by_rule[rule]} == {"error"}, rule
        assert all("not gathered" in f.message for f in by_rule[rule]), rule
    # what 0.2.0 did gather still passes as it did on the node
    old = {(f["rule"], f.get("item")): f["status"] for f in json.loads((H200 / "check.json").read_text())["findings"]}
    # issue 30: NET-03's interconnect is for multi-GPU nodes: this single-GPU node meets it
    assert old[("NET-03.no-nvlink", None)] == "skip" and findings[("NET-03.no-nvlink", None)].status.value == "pass"
    for (rule, item), status in old.items():
        if rule not in ("NET-01.gpu-nic-slow", "NET-03.no-nvlink") and (rule, item) in findings:
            assert findings[(rule, item)].status.value == status, rule


def test_the_recorded_facts_reprobed_with_a_real_kernel_log_pass_the_event_rules(tmp_path):
    """The same node's kernel log (no Xid) judged by the event rules: a pass, with the log."""
    from tests.helpers import built
    from validator.evaluate.engine import evaluate
    from validator.facts.node import gpu_events, kernel_log

    log = kernel_log.read_file(H200.parent / "kernel" / "h200_dmesg.txt")
    gpus = gpu_events._Gpus({GPU["pci_bus_id"]["value"]: "GPU0"}, None)
    doc = json.loads(json.dumps(FACTS))
    doc["facts"]["gpu.xid_events"] = gpu_events.xid_events(log, gpus)
    doc["facts"]["gpu.ras_events"] = gpu_events.ras_events(log, gpus)
    b = built(rules_version="1.1")
    got = {f.rule: f.status.value for f in evaluate(b.ctx, b.pack, [doc], select=("PLAT-01.xid", "PLAT-03.xid"))}
    assert got == {"PLAT-01.xid-node-fault": "pass", "PLAT-03.xid-warning": "pass"}
