"""NVML paths of the probe, replayed with FakeNvml (real pynvml error classes)."""

from __future__ import annotations

from pathlib import Path

import pynvml
import pytest

from tests.facts.catalogue import check_facts, fields
from tests.fixtures import nodes
from tests.fixtures.fake_nvml import FakeNvml, load_replay
from validator.facts.node import nvidia_health


@pytest.fixture(scope="module")
def dgx_root(tmp_path_factory):
    return nodes.dgx_h100(tmp_path_factory.mktemp("dgx"))


def replay(name="dgx_h100", **top):
    data = load_replay(name)
    data.update(top)
    return data


def gpu(facts, i):
    return fields(facts, "gpu.devices", f"GPU{i}")


# --- the fake fails the way pynvml does ----------------------------------------------------

def test_fake_raises_pynvmls_own_classes():
    nv = FakeNvml("dgx_h100")
    with pytest.raises(pynvml.NVMLError_Uninitialized):
        nv.nvmlDeviceGetCount()
    with pytest.raises(pynvml.NVMLError_Uninitialized):  # the real module, same class
        pynvml.nvmlDeviceGetCount()
    nv.nvmlInit()
    with pytest.raises(pynvml.NVMLError_InvalidArgument):
        nv.nvmlDeviceGetNvLinkState(nv.nvmlDeviceGetHandleByIndex(0), 18)
    with pytest.raises(pynvml.NVMLError_NotSupported) as exc:
        nv.nvmlDeviceGetRetiredPagesPendingStatus(nv.nvmlDeviceGetHandleByIndex(0))
    assert exc.value.value == pynvml.NVML_ERROR_NOT_SUPPORTED
    assert str(exc.value) == "Not Supported"
    info = nv.nvmlDeviceGetPciInfo(nv.nvmlDeviceGetHandleByIndex(0))
    assert isinstance(info, pynvml.nvmlPciInfo_t) and info.busId == "00000000:18:00.0"


def _nvml_loads() -> bool:
    """True where the real libnvidia-ml.so.1 loads (a machine with an NVIDIA driver)."""
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True


@pytest.mark.skipif(_nvml_loads(), reason="this machine has an NVIDIA driver: NVML starts, "
                    "so the real module cannot show a driver-less node here")
def test_real_pynvml_without_driver_is_a_gpu_free_node(tmp_path):
    f = nodes.plain_host(tmp_path).probe(nvml=pynvml)  # the real module, no libnvidia-ml here
    assert (f["gpu.vendor"]["value"], f["gpu.count"]["value"]) == ("none", 0)
    assert "LibraryNotFound: NVML Shared Library Not Found" in f["gpu.driver_version"]["error"]


def test_driverless_node_without_nvidia_on_the_bus_skips_pynvml_with_the_same_facts(tmp_path, monkeypatch):
    """Where libnvidia-ml.so.1 does not load and no NVIDIA function is on the bus, the probe
    writes what nvmlInit's LibraryNotFound gives, without importing pynvml (start-up)."""
    import builtins

    from validator.facts.node import nvidia

    host = nodes.plain_host(tmp_path)
    via_nvml = host.probe(nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    real_import, real_dlopen = builtins.__import__, nvidia._dlopen

    def no_pynvml(name, *args, **kwargs):
        if name == "pynvml":
            raise AssertionError("pynvml imported on a node without driver or NVIDIA GPU")
        return real_import(name, *args, **kwargs)

    def no_library(name, *args, **kwargs):
        if name == nvidia.LIBRARY:
            raise OSError(f"{name}: cannot open shared object file: No such file or directory")
        return real_dlopen(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    monkeypatch.setattr(nvidia, "_dlopen", no_library)  # ctypes.CDLL's load (tests/facts/test_host_live.py)
    skipped = host.probe(query_drivers=True)
    gpu_facts = [*nvidia.FACTS, "gpu.memory_total"]  # the GPU source's (events come from the kernel log)
    assert gpu_facts and {k: skipped[k] for k in gpu_facts} == {k: via_nvml[k] for k in gpu_facts}
    assert skipped["gpu.vendor"]["value"] == "none"


def test_the_skipped_pynvml_words_are_the_installed_nvidia_ml_pys():
    """NO_LIBRARY and LIBRARY are what the installed nvidia-ml-py raises and loads."""
    import inspect

    from validator.facts.node import nvidia

    assert nvidia_health.reason(pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)) == nvidia.NO_LIBRARY
    assert f'CDLL("{nvidia.LIBRARY}")' in inspect.getsource(pynvml._LoadNvmlLibrary)


def test_nvidia_on_the_bus_or_a_loadable_library_still_asks_nvml(dgx_root, tmp_path, monkeypatch):
    """The shortcut is only for a driver-less node without NVIDIA GPUs: with GPUs on the bus
    NVML is asked (its error says what is broken), and where the library loads too."""
    from validator.facts.node import nvidia
    from validator.facts.node.base import Context

    def ctx(root):
        from validator.facts.node import pci

        c = Context(sysfs=root.sysfs, procfs=root.procfs, rootfs=root.rootfs)

        c.facts.update(pci.collect(c))
        return c

    # the library load (ctypes.CDLL's dlopen: tests/facts/test_host_live.py compares the two)
    monkeypatch.setattr(nvidia, "_dlopen", lambda *a, **k: (_ for _ in ()).throw(OSError("not here")))
    assert nvidia._no_driver_no_gpu(ctx(dgx_root)) is False  # NVIDIA GPUs on the bus
    plain = ctx(nodes.plain_host(tmp_path))
    assert nvidia._no_driver_no_gpu(plain) is True
    monkeypatch.setattr(nvidia, "_dlopen", lambda *a, **k: None)  # the library loads
    assert nvidia._no_driver_no_gpu(plain) is False


# --- init failures -------------------------------------------------------------------------

def test_library_not_found_without_nvidia_on_the_bus(tmp_path):
    nv = FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []})
    f = nodes.plain_host(tmp_path).probe(nvml=nv)
    check_facts(f)
    assert f["gpu.vendor"]["value"] == "none"
    assert f["gpu.count"]["value"] == 0
    assert f["gpu.devices"]["items"] == [] and f["gpu.models"]["value"] == []
    assert nv.shutdown_calls == 0  # nothing to shut down after a failed init


@pytest.mark.parametrize(("code", "cls", "hint"), [
    ("LIBRARY_NOT_FOUND", "LibraryNotFound", "no NVIDIA driver"),
    ("DRIVER_NOT_LOADED", "DriverNotLoaded", "kernel module is not loaded"),
    ("LIB_RM_VERSION_MISMATCH", "LibRmVersionMismatch", "without a reboot"),
    ("NO_PERMISSION", "NoPermission", "no access"),
])
def test_init_failure_with_nvidia_gpus_on_the_bus(dgx_root, code, cls, hint):
    f = dgx_root.probe(nvml=FakeNvml({"init_error": code, "devices": []}))
    check_facts(f)
    assert f["gpu.vendor"]["value"] == "nvidia"  # the PCI scan knows that much
    for name in ("gpu.driver_version", "gpu.cuda_version", "gpu.models",
                 "gpu.devices", "gpu.memory_total"):
        assert f[name]["error"].startswith(f"{cls}: "), name
        assert hint in f[name]["error"] and "8 NVIDIA GPU(s) on the PCI bus" in f[name]["error"]
    # the sysfs side still reports the GPUs' links, named by address
    assert fields(f, "pcie.links", "0000:18:00.0")["name"] == "0000:18:00.0"


@pytest.mark.parametrize("code", ["LIBRARY_NOT_FOUND", "DRIVER_NOT_LOADED", "LIB_RM_VERSION_MISMATCH"])
def test_a_broken_driver_is_a_plat01_failure_with_the_reason(dgx_root, code):
    """8 NVIDIA GPUs on the bus and no working driver: a known verdict (FAIL), not an ERROR."""
    from tests.helpers import built
    from validator.evaluate.engine import evaluate
    from validator.facts.document import new_document
    from validator.report.model import Status

    dmesg = Path(__file__).resolve().parents[1] / "fixtures" / "kernel" / "h200_dmesg.txt"  # no Xid
    f = dgx_root.probe(nvml=FakeNvml({"init_error": code, "devices": []}), kernel_log=dmesg)
    assert f["gpu.count"]["value"] == 0
    b = built()
    doc = new_document("node", "dgx", f, tool_version="t", collected_at="2026-01-01T00:00:00Z")
    found = [x for x in evaluate(b.ctx, b.pack, [doc], select=("PLAT-01",))]
    status = {x.rule: x.status for x in found}
    assert status["PLAT-01.gpu-driver-not-working"] is Status.FAIL
    assert status["PLAT-01.driver-missing-gpus"] is Status.FAIL
    driver = next(x for x in found if x.rule == "PLAT-01.gpu-driver-not-working")
    assert "8 NVIDIA GPU(s) on the PCI bus" in (driver.observed or "")
    assert (driver.observed or "").startswith(pynvml.nvmlExceptionClass(getattr(pynvml, f"NVML_ERROR_{code}"))
                                              .__name__.removeprefix("NVMLError_"))
    assert not any(x.status is Status.ERROR for x in found)


def test_missing_pynvml_module(dgx_root, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pynvml(name, *args, **kwargs):
        if name == "pynvml":
            raise ImportError("No module named 'pynvml'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pynvml)
    f = dgx_root.probe(query_drivers=True)
    assert "nvidia-ml-py is not installed" in f["gpu.count"]["error"]
    assert f["rdma.port_count"]["value"] == 8


# --- a healthy DGX H100 --------------------------------------------------------------------

def test_dgx_h100_system_facts(dgx_root):
    nv = FakeNvml("dgx_h100")
    f = dgx_root.probe(nvml=nv)
    assert f["gpu.driver_version"]["value"] == "550.90.07"
    assert f["gpu.cuda_version"]["value"] == "12.4"  # from the int 12040
    assert f["gpu.models"]["value"] == ["NVIDIA H100 80GB HBM3"]
    assert (nv.init_calls, nv.shutdown_calls, nv.initialized) == (1, 1, 0)


def test_dgx_h100_device_fields(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100"))
    g = gpu(f, 0)
    assert g["pci_bus_id"] == "0000:18:00.0"  # from NVML "00000000:18:00.0"
    assert g["uuid"] == "GPU-4a3f9c2e-1b7d-5e80-9f21-6c0d8e3a7b11"
    assert g["memory_total"] == 85520809984
    assert (g["ecc_enabled"], g["ecc_pending"]) == (True, True)
    assert (g["remapped_rows_pending"], g["remapped_rows_failure"]) == (False, False)
    assert g["memory_repair"] == "row_remapping"  # Hopper
    assert g["retired_pages_pending"]["error"] == "NotSupported: Not Supported"
    assert (g["persistence_mode"], g["pstate"]) == (True, 0)
    assert (g["pcie_gen_current"], g["pcie_gen_max"], g["pcie_gen_device_max"]) == (5, 5, 5)
    widths = (g["pcie_width_current"], g["pcie_width_max"], g["pcie_width_device_max"])
    assert widths == (16, 16, 16)
    assert (g["nvlink_count"], g["nvlink_inactive"], g["nvlink_remote_switch"]) == (18, [], True)
    assert (g["fabric_state"], g["fabric_status"]) == ("completed", "ok")
    assert g["throttle_reasons"] == ["gpu_idle"]
    assert g["power_draw"] == pytest.approx(71.234)  # 71234 mW
    assert g["power_limit"] == 700.0
    assert g["energy_total"] == pytest.approx(912345.678)  # mJ -> J
    assert (g["utilization"], g["temperature"]) == (0, 31)
    assert "AMD" in g["xgmi_inactive"]["error"]
    raw = next(m for m in f["gpu.devices"]["items"] if m["id"] == "GPU0")["fields"]
    assert (raw["power_draw"]["unit"], raw["energy_total"]["unit"], raw["temperature"]["unit"]) == (
        "W", "J", "C")


def test_nvlink_states_read_only_within_the_link_count(dgx_root):
    nv = FakeNvml("dgx_h100")
    dgx_root.probe(nvml=nv)
    assert nv.calls.count("nvmlDeviceGetNvLinkState") == 8 * 18  # not NVML_NVLINK_MAX_LINKS


# --- failing variants ----------------------------------------------------------------------

def test_ecc_disabled(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100_ecc_off"))
    assert (gpu(f, 3)["ecc_enabled"], gpu(f, 3)["ecc_pending"]) == (False, False)
    assert gpu(f, 2)["ecc_enabled"] is True


def test_remap_pending(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100_remap_pending"))
    assert gpu(f, 5)["remapped_rows_pending"] is True
    assert gpu(f, 5)["remapped_rows_failure"] is False


def test_inactive_nvlink(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100_nvlink_inactive"))
    assert gpu(f, 2)["nvlink_inactive"] == [7]
    assert gpu(f, 2)["nvlink_remote_switch"] is True  # the 17 active links reach NVSwitches


def test_fabric_not_started(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100_fabric_not_started"))
    assert {gpu(f, i)["fabric_state"] for i in range(8)} == {"not_started"}


def test_hw_thermal_slowdown(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml("dgx_h100_hw_thermal"))
    assert gpu(f, 6)["throttle_reasons"] == ["hw_slowdown", "hw_thermal_slowdown"]
    assert gpu(f, 6)["temperature"] == 92


# --- per-call error paths ------------------------------------------------------------------

def test_no_permission_on_one_index(dgx_root):
    f = dgx_root.probe(nvml=FakeNvml(replay(handle_errors={"3": "NO_PERMISSION"})))
    check_facts(f)
    assert f["gpu.count"]["value"] == 8
    g3 = gpu(f, 3)
    assert g3["index"] == 3
    assert g3["ecc_enabled"]["error"] == "GPU 3: NoPermission: Insufficient Permissions"
    assert gpu(f, 4)["ecc_enabled"] is True
    assert f["gpu.memory_total"]["error"].startswith("GPU3 memory unknown: GPU 3: NoPermission")


def test_remaps_not_supported_under_mig(dgx_root):
    data = replay()
    data["devices"][1]["mig_mode"] = [1, 1]
    f = dgx_root.probe(nvml=FakeNvml(data))
    err = gpu(f, 1)["remapped_rows_pending"]["error"]
    assert err == "NotSupported: Not Supported (not reported while MIG is enabled)"
    assert gpu(f, 1)["memory_repair"] == "row_remapping"


def test_remaps_not_supported_without_mig(dgx_root):
    data = replay()
    data["devices"][0]["remapped_rows"] = {"nvml_error": "NOT_SUPPORTED"}
    data["devices"][0]["architecture"] = {"nvml_error": "NOT_SUPPORTED"}
    data["devices"][0]["retired_pages_pending"] = 0
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert "needs Ampere or newer" in gpu(f, 0)["remapped_rows_failure"]["error"]
    assert gpu(f, 0)["memory_repair"] == "page_retirement"  # judged by what answered
    assert gpu(f, 0)["retired_pages_pending"] is False


def test_out_of_range_link_raises_invalid_argument(dgx_root):
    data = replay()
    data["devices"][4]["nvlink_count"] = 19  # one more than the driver has: InvalidArgument
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert gpu(f, 4)["nvlink_count"] == 19
    assert gpu(f, 4)["nvlink_inactive"] == [18]  # unreadable is never counted as active


def test_link_not_supported_per_link(dgx_root):
    data = replay()
    data["devices"][0]["nvlink_state"][3] = {"nvml_error": "NOT_SUPPORTED"}
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert gpu(f, 0)["nvlink_inactive"] == [3]


def test_link_count_field_carries_its_own_error(dgx_root):
    data = replay()
    data["devices"][2]["nvlink_count"] = {"nvml_error": "NOT_SUPPORTED"}
    f = dgx_root.probe(nvml=FakeNvml(data))
    for name in ("nvlink_count", "nvlink_inactive", "nvlink_remote_switch"):
        assert gpu(f, 2)[name]["error"] == "NotSupported: Not Supported"


def test_other_link_errors_are_error_values(dgx_root):
    data = replay()
    data["devices"][0]["nvlink_remote_type"] = {"nvml_error": "GPU_IS_LOST"}
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert gpu(f, 0)["nvlink_remote_switch"]["error"] == "GpuIsLost: GPU is lost"
    assert (gpu(f, 0)["nvlink_count"], gpu(f, 0)["nvlink_inactive"]) == (18, [])


def test_link_state_errors_are_error_values(dgx_root):
    data = replay()
    data["devices"][1]["nvlink_state"][0] = {"nvml_error": "UNKNOWN"}
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert gpu(f, 1)["nvlink_inactive"]["error"] == "Unknown: Unknown Error"
    assert gpu(f, 1)["nvlink_remote_switch"]["error"] == "Unknown: Unknown Error"


@pytest.mark.parametrize("how", ["functions_missing", "not_supported"])
def test_fabric_info_unavailable(dgx_root, how):
    data = replay()
    if how == "functions_missing":
        data["functions_missing"] = ["nvmlDeviceGetGpuFabricInfoV"]
    else:
        data["devices"][0]["fabric"] = {"nvml_error": "NOT_SUPPORTED"}
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert (gpu(f, 0)["fabric_state"], gpu(f, 0)["fabric_status"]) == (
        "not_supported", "not_supported")


def test_fabric_status_names_the_nvml_error(dgx_root):
    data = replay()
    data["devices"][0]["fabric"] = {"state": 3, "status": pynvml.NVML_ERROR_NOT_READY,
                                    "cliqueId": 1, "healthMask": 0}
    f = dgx_root.probe(nvml=FakeNvml(data))
    assert gpu(f, 0)["fabric_status"] == "NotReady"


def test_old_driver_falls_back_to_older_calls(dgx_root):
    data = replay(functions_missing=[
        "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
        "nvmlDeviceGetTemperatureV", "nvmlSystemGetCudaDriverVersion_v2"])
    nv = FakeNvml(data)
    f = dgx_root.probe(nvml=nv)
    g = gpu(f, 0)
    assert g["throttle_reasons"] == ["gpu_idle"]
    assert g["temperature"] == 31
    # no fallback for the device-only maximum: the slot-limited value would compare with itself
    assert "Function Not Found" in g["pcie_gen_device_max"]["error"]
    assert f["gpu.cuda_version"]["value"] == "12.4"
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" in nv.calls


OLD_BINDING = ["c_nvmlGpuFabricInfoV_t", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetTemperatureV"]


def test_fake_hides_missing_bindings_like_an_old_pynvml():
    nv = FakeNvml(replay(bindings_missing=OLD_BINDING))
    for name in OLD_BINDING:
        assert not hasattr(nv, name), name
    assert hasattr(nv, "nvmlDeviceGetTemperature") and hasattr(nv, "c_nvmlGpuFabricInfo_t")


def test_old_nvidia_ml_py_falls_back_per_fact(dgx_root):
    """nvidia-ml-py 12.535.161 defines none of OLD_BINDING: the older calls answer instead,
    and nothing else is lost (an AttributeError once wiped every GPU fact)."""
    nv = FakeNvml(replay(bindings_missing=OLD_BINDING))
    f = dgx_root.probe(nvml=nv)
    check_facts(f)
    assert f["gpu.count"]["value"] == 8
    g = gpu(f, 0)
    assert g["temperature"] == 31 and g["fabric_state"] == "completed" and g["fabric_status"] == "ok"
    assert "nvmlDeviceGetTemperature" in nv.calls and "nvmlDeviceGetGpuFabricInfo" in nv.calls
    assert nv.shutdown_calls == 1


def test_binding_without_any_fallback_is_an_error_value(dgx_root):
    data = replay(bindings_missing=[*OLD_BINDING, "nvmlDeviceGetGpuFabricInfo", "nvmlDeviceGetTemperature",
                                    "nvmlDeviceGetTotalEnergyConsumption"])
    f = dgx_root.probe(nvml=FakeNvml(data))
    check_facts(f)
    devices = {m["id"]: m["fields"] for m in f["gpu.devices"]["items"]}
    assert len(devices) == 8
    fields0 = devices["GPU0"]
    for name in ("fabric_state", "fabric_status", "temperature", "energy_total"):
        assert "not supported by nvidia-ml-py" in fields0[name]["error"], name
    assert "nvmlDeviceGetGpuFabricInfoV not supported" in fields0["fabric_state"]["error"]
    assert fields0["uuid"]["value"].startswith("GPU-") and fields0["power_draw"]["value"] > 0


def test_decode_reasons():
    assert nvidia_health.decode_reasons(0) == []
    assert nvidia_health.decode_reasons(0x4 | 0x400) == ["sw_power_cap", "reliability"]
    assert nvidia_health.decode_reasons(0x1000 | 0x1) == ["gpu_idle", "unknown_0x1000"]


def test_shutdown_runs_even_when_collection_crashes(dgx_root):
    data = replay()
    del data["driver_version"]  # a KeyError inside the replay: a crash, not an NVMLError
    nv = FakeNvml(data)
    f = dgx_root.probe(nvml=nv)
    assert nv.shutdown_calls == 1 and nv.initialized == 0
    assert f["gpu.count"]["error"].startswith("gpu source failed: KeyError")
    assert f["rdma.port_count"]["value"] == 8


def test_every_name_the_probe_uses_exists_in_real_pynvml():
    import re
    from pathlib import Path

    import validator.facts.node.nvidia_health as health

    used = set()
    for mod in (nvidia_health, health):
        used |= set(re.findall(r"\bnv\.(\w+)", Path(mod.__file__).read_text()))
    nvidia_src = Path(nvidia_health.__file__).with_name("nvidia.py").read_text()
    used |= set(re.findall(r"\bnv\.(\w+)", nvidia_src))
    used |= set(re.findall(r'"(nvml\w+)"', nvidia_src))  # names called through _get/_call
    used |= set(re.findall(r'"((?:nvml|c_nvml)\w+)"', Path(health.__file__).read_text()))
    missing = sorted(name for name in used if not hasattr(pynvml, name))
    assert missing == []
    assert "nvmlDeviceGetGpuFabricInfoV" in used and "nvmlDeviceGetFieldValues" in used


def test_fake_signatures_match_pynvml():
    import inspect

    for name, member in inspect.getmembers(FakeNvml, inspect.isfunction):
        if not name.startswith("nvml"):
            continue
        real = inspect.signature(getattr(pynvml, name))
        fake = inspect.signature(member)
        required = [p for p in real.parameters.values() if p.default is inspect.Parameter.empty]
        assert len(fake.parameters) - 1 == len(required), name
