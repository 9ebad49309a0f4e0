"""The AMD backend: a guarded amdsmi import, and the documented amdsmi shapes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.facts.catalogue import check_facts, fields
from tests.fixtures import nodes
from validator.facts.node import amd

MI300X = {"vendor": "0x1002", "device": "0x74a1", "class": "0x120000"}


@pytest.fixture
def mi300x(tmp_path):
    """A plain host plus two MI300X functions and one RDMA NIC beside the first."""
    tree = nodes.plain_host(tmp_path)
    b = nodes.Builder(tmp_path)
    sw = ["pci0000:10", "0000:10:01.0", "0000:11:00.0"]
    for chain in ([*sw, "0000:12:00.0", "0000:13:00.0"], [*sw, "0000:12:01.0", "0000:14:00.0"]):
        b.bridges(chain[:-1], nodes.PEX_BRIDGE, 0)
    b.pci([*sw, "0000:12:00.0", "0000:13:00.0"], MI300X)
    nic = [*sw, "0000:12:01.0", "0000:14:00.0"]
    b.pci(nic, nodes.CX7)
    b.ib("mlx5_0", nic, link_layer="Ethernet", rate="400 Gb/sec (8X HDR)")
    b.pci(["pci0000:80", "0000:80:01.0", "0000:81:00.0"], MI300X, numa=1)
    return tree


def noisy_missing_library():
    print("libamd_smi.so: cannot open shared object file: No such file or directory")
    print("Unable to find libamd_smi.so library try installing amd-smi-lib "
          "from your package manager")
    raise KeyError("libamd_smi.so")


def fake_amdsmi():
    handles = ["h0", "h1"]
    bdf = {"h0": "0000:13:00.0", "h1": "0000:81:00.0"}
    return SimpleNamespace(
        amdsmi_init=lambda: None,
        amdsmi_shut_down=lambda: None,
        amdsmi_get_processor_handles=lambda: handles,
        amdsmi_get_gpu_driver_info=lambda h: {"driver_name": "amdgpu", "driver_version": "6.8.5"},
        amdsmi_get_gpu_device_uuid=lambda h: f"uuid-{h}",
        amdsmi_get_gpu_asic_info=lambda h: {"market_name": "AMD Instinct MI300X"},
        amdsmi_get_gpu_device_bdf=lambda h: bdf[h].upper(),
        amdsmi_get_gpu_vram_usage=lambda h: {"vram_total": 196592, "vram_used": 281},
        amdsmi_get_gpu_xgmi_link_status=lambda h: {
            "status": ["U"] * 6 + (["D"] if h == "h1" else ["U"]) + ["N/A"], "total_links": 8},
        amdsmi_get_gpu_activity=lambda h: {"gfx_activity": "N/A" if h == "h1" else 12},
        amdsmi_get_gpu_vbios_info=lambda h: {"name": "MI300X", "build_date": "2024/03/01 10:00",
                                             "part_number": "113-M3000100-102", "version": "022.040.003.043.000001"},
        amdsmi_get_rocm_version=lambda: (True, "6.4.1"),
    )


def test_missing_library_is_captured_not_printed(mi300x, capsys):
    f = mi300x.probe(amdsmi_loader=noisy_missing_library)
    assert capsys.readouterr().out == ""  # JSON output would be corrupted otherwise
    check_facts(f)
    err = f["gpu.count"]["error"]
    assert err.startswith("amdsmi unavailable: KeyError: 'libamd_smi.so'")
    assert "Unable to find libamd_smi.so" in err
    assert f["accel.pci_count"]["value"] == 2


def test_not_installed(mi300x):
    import importlib.util

    f = mi300x.probe(query_drivers=True)  # the real import: not installed here, or installed without ROCm
    expected = "KeyError" if importlib.util.find_spec("amdsmi") else "ModuleNotFoundError"
    assert f["gpu.vendor"]["error"].startswith(f"amdsmi unavailable: {expected}")


def test_amd_devices(mi300x):
    f = mi300x.probe(amdsmi_loader=fake_amdsmi)
    check_facts(f)
    assert (f["gpu.vendor"]["value"], f["gpu.count"]["value"]) == ("amd", 2)
    assert f["gpu.driver_version"]["value"] == "6.8.5"
    assert "ROCm" in f["gpu.cuda_version"]["error"]
    assert f["gpu.models"]["value"] == ["AMD Instinct MI300X"]
    assert f["gpu.memory_total"]["value"] == 2 * 196592 * 2**20
    g0, g1 = fields(f, "gpu.devices", "GPU0"), fields(f, "gpu.devices", "GPU1")
    assert (g0["pci_bus_id"], g0["numa_node"], g0["xgmi_inactive"]) == ("0000:13:00.0", 0, [])
    assert (g0["nearest_fabric_port"], g0["nearest_fabric_distance"]) == ("mlx5_0:1", "PIX")
    assert g0["nearest_fabric_rate"] == 400
    assert g1["xgmi_inactive"] == [6]
    assert g1["nearest_fabric_distance"] == "SYS"
    assert g1["utilization"]["error"] == "not supported on this GPU (N/A)"
    assert "not gathered for AMD" in g0["ecc_enabled"]["error"]
    # the fields PLAT-02 compares across a fleet, named as on NVIDIA nodes
    assert f["gpu.rocm_version"]["value"] == "6.4.1"
    assert g0["vbios_version"] == "022.040.003.043.000001"
    assert f["gpu.driver_status"]["value"] == "ok"


@pytest.mark.parametrize(("answer", "needle"), [
    (None, "amdsmi_get_rocm_version not supported by this amdsmi"),
    ((False, "N/A"), "could not read the ROCm version"),
    (RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED"), "RuntimeError: AMDSMI_STATUS_NOT_SUPPORTED"),
])
def test_rocm_version_unreadable_is_an_error_value(mi300x, answer, needle):
    def loader():
        smi = fake_amdsmi()
        if answer is None:
            del smi.amdsmi_get_rocm_version  # an amdsmi older than ROCm 6.4

        elif isinstance(answer, Exception):
            def fail():
                raise answer
            smi.amdsmi_get_rocm_version = fail
        else:
            smi.amdsmi_get_rocm_version = lambda: answer
        return smi

    f = mi300x.probe(amdsmi_loader=loader)
    check_facts(f)
    assert needle in f["gpu.rocm_version"]["error"]
    assert f["gpu.count"]["value"] == 2


def test_amdsmi_call_failure_is_an_error_value(mi300x):
    def broken():
        smi = fake_amdsmi()

        def fail(h):
            raise RuntimeError("AMDSMI_STATUS_NOT_SUPPORTED")

        smi.amdsmi_get_gpu_xgmi_link_status = fail
        return smi

    f = mi300x.probe(amdsmi_loader=broken)
    assert fields(f, "gpu.devices", "GPU0")["xgmi_inactive"]["error"] == (
        "RuntimeError: AMDSMI_STATUS_NOT_SUPPORTED")


def test_inactive_links_helper():
    assert amd._inactive_links({"status": ["U", "X", "D", "N/A"]}) == [1, 2]
