"""NVIDIA GPU facts through NVML (nvidia-ml-py, imported as ``pynvml`` on first use).

Follows shared/reference/node-probing.md section 1. The traps it handles:
* ``import pynvml`` never fails without a driver; ``nvmlInit()`` does. LibraryNotFound with
  no NVIDIA function on the PCI bus is a node without GPUs (vendor "none"); the same error,
  or DriverNotLoaded / LibRmVersionMismatch, with NVIDIA GPUs on the bus is a broken driver
  and every GPU fact is an error value saying so.
* Handles can fail per index with NoPermission even though the count includes them.
* busId is "00000000:18:00.0" (8-digit domain, upper case); sysfs wants "0000:18:00.0".
* NVLink: ``NVML_NVLINK_MAX_LINKS`` is an upper bound, so the count comes from field
  NVML_FI_DEV_NVLINK_LINK_COUNT, whose element carries its own ``nvmlReturn``; out-of-range
  links raise InvalidArgument, not NotSupported.
* Newer calls (GpuMaxPcieLinkGeneration, ClocksEventReasons, TemperatureV, fabric info V)
  raise FunctionNotFound on old drivers: fall back to the older name.
* Units: power mW -> W, energy mJ -> J. ``nvmlShutdown()`` always runs.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any  # Any below: pynvml's module, its device handles and results (no type stubs)

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, parse_numa, read_fact
from validator.facts.node.nvidia_counters import FIELDS as COUNTERS
from validator.facts.node.nvidia_counters import counters
from validator.facts.node.nvidia_health import (
    MissingBinding,
    binding,
    decode_reasons,
    fabric,
    memory_repair,
    nvlinks,
    reason,
    remaps,
)
from validator.facts.node.pci import device_dir, nearest_port, pci_vendor_counts, sysfs_bdf

NAME = "nvidia"
FACTS = ("gpu.vendor", "gpu.count", "gpu.driver_version", "gpu.cuda_version", "gpu.models",
         "gpu.devices", "gpu.driver_status", "gpu.rocm_version")

_HINTS = {
    "LibraryNotFound": "no NVIDIA driver (libnvidia-ml.so.1 not found)",
    "DriverNotLoaded": "the NVIDIA kernel module is not loaded",
    "LibRmVersionMismatch": "driver upgraded without a reboot or module reload",
    "NoPermission": "no access to the GPU devices (a container without them?)",
}
# init failures that are a verdict, not an unknown, when NVIDIA GPUs are on the PCI bus: the
# driver is missing or broken, so it exposes no GPU (PLAT-01 fails with the reason)
DRIVER_BROKEN = ("LibraryNotFound", "DriverNotLoaded", "LibRmVersionMismatch")
NOT_ROCM = "not applicable: NVIDIA GPUs run CUDA, not ROCm"


# what nvidia-ml-py's nvmlInit raises where libnvidia-ml.so.1 does not load, as reason() words
# it (tests/facts/test_nvidia.py checks it against the installed nvidia-ml-py)
NO_LIBRARY = "LibraryNotFound: NVML Shared Library Not Found"
LIBRARY = "libnvidia-ml.so.1"  # the name nvidia-ml-py's nvmlInit loads on Linux


def collect(ctx: Context) -> dict[str, Fact]:
    nv: Any = ctx.nvml
    if nv is None:
        if _no_driver_no_gpu(ctx):  # most CPU-only nodes and CI: the same facts, without pynvml
            return _no_gpu(NO_LIBRARY)
        try:
            import pynvml
        except ImportError as exc:
            return _all_errors(f"nvidia-ml-py is not installed ({exc})", "NVML (nvidia-smi's library)")
        nv = pynvml
    try:
        nv.nvmlInit()
    except nv.NVMLError as exc:
        return _init_failed(ctx, exc)
    try:
        return _collect(ctx, nv)
    finally:
        with contextlib.suppress(nv.NVMLError):
            nv.nvmlShutdown()


def _all_errors(msg: str, source: str) -> dict[str, Fact]:
    return {name: error(msg, source=source) for name in FACTS}


def _init_failed(ctx: Context, exc: BaseException) -> dict[str, Fact]:
    name = type(exc).__name__.removeprefix("NVMLError_")
    on_bus = pci_vendor_counts(ctx)
    src = "NVML (nvidia-smi's library): nvmlInit"
    if name == "LibraryNotFound" and on_bus is not None and not on_bus.get("nvidia"):
        return _no_gpu(reason(exc))
    hint = _HINTS.get(name, "NVML could not start")
    if on_bus is None:
        bus = "the PCI scan failed too, so whether this node has GPUs is unknown"
    else:
        bus = f"{on_bus.get('nvidia', 0)} NVIDIA GPU(s) on the PCI bus"
    why = f"{reason(exc)}: {hint}; {bus}"
    out = _all_errors(why, src)
    if on_bus and on_bus.get("nvidia"):
        out["gpu.vendor"] = value("nvidia", source="PCI devices (/sys/bus/pci/devices, as lspci lists them)")
        out["gpu.rocm_version"] = error(NOT_ROCM, source=src)
        if name in DRIVER_BROKEN:  # a known verdict: the driver exposes no GPU, and why
            out["gpu.count"] = value(0, source=src)
            out["gpu.driver_status"] = value(why, source=src)
    return out


def _no_gpu(why_nvml: str) -> dict[str, Fact]:
    """No driver and no NVIDIA GPU: a node without GPUs, which is a fact, not an error."""
    src = "NVML (nvidia-smi's library): nvmlInit"
    why = f"no NVIDIA GPU on this node ({why_nvml}; none on the PCI bus)"
    return {  # (AMD-only nodes never get here: gpu.py sends them to amdsmi)
        "gpu.vendor": value("none", source="PCI devices (/sys/bus/pci/devices, as lspci lists them)"),
        "gpu.count": value(0, source=src),
        "gpu.driver_version": error(why, source=src),
        "gpu.cuda_version": error(why, source=src),
        "gpu.models": value([], source=src),
        "gpu.devices": items([], source=src),
        "gpu.driver_status": value("no GPU driver needed: no GPU on the PCI bus", source=src),
        "gpu.rocm_version": error(why, source=src),
    }


def _no_driver_no_gpu(ctx: Context) -> bool:
    """Whether nvmlInit would raise LibraryNotFound on a node with no NVIDIA function on
    the PCI bus: the library does not load as nvidia-ml-py loads it. Then ``import pynvml``
    (a 3,000-line module that loads tempfile and ctypes.util: a tenth of a check's start-up)
    is skipped. Where nvidia-ml-py is not installed, False: collect() says so, as before."""
    on_bus = pci_vendor_counts(ctx)
    if on_bus is None or on_bus.get("nvidia"):
        return False
    import importlib.util

    if importlib.util.find_spec("pynvml") is None:
        return False
    try:
        _dlopen(LIBRARY)
    except OSError:
        return True
    return False


def _dlopen(name: str) -> None:
    """``ctypes.CDLL(name)``, as nvidia-ml-py loads the library. On Linux that is CDLL's own
    call, ``_ctypes.dlopen(name, RTLD_LOCAL)`` (its default mode there), made here without
    building ctypes' classes (a few ms of every check on a node without the library)."""
    if sys.platform.startswith("linux"):
        from _ctypes import RTLD_LOCAL, dlopen

        dlopen(name, RTLD_LOCAL)
        return
    import ctypes

    ctypes.CDLL(name)


def _call(nv: Any, fn: str, *args: object, fallback: str | None = None) -> Any:
    """Call nv.<fn>, or nv.<fallback> when the driver (FunctionNotFound) or the installed
    nvidia-ml-py (no such attribute: 12.535 lacks nvmlDeviceGetTemperatureV) lacks the newer
    name. Raises MissingBinding when the binding has neither."""
    try:
        return binding(nv, fn)(*args)
    except MissingBinding:
        if fallback is None:
            raise
        return binding(nv, fallback)(*args)
    except nv.NVMLError_FunctionNotFound:
        if fallback is None:
            raise
        return binding(nv, fallback)(*args)


def _get(nv: Any, conv: Callable[[Any], Any], fn: str, *args: object, unit: str | None = None,
         fallback: str | None = None) -> Fact:
    src = f"NVML (nvidia-smi's library): {fn}"
    try:
        raw = _call(nv, fn, *args, fallback=fallback)
    except nv.NVMLError as exc:
        return error(reason(exc), source=src)
    except MissingBinding as exc:
        return error(str(exc), source=src)
    return value(conv(raw), unit=unit, source=src)


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _collect(ctx: Context, nv: Any) -> dict[str, Fact]:
    out: dict[str, Fact] = {"gpu.vendor": value("nvidia", source="NVML (nvidia-smi's library): nvmlInit"),
                            "gpu.driver_status": value("ok", source="NVML (nvidia-smi's library): nvmlInit"),
                            "gpu.rocm_version": error(NOT_ROCM, source="NVML (nvidia-smi's library)")}
    try:
        count = nv.nvmlDeviceGetCount()
    except nv.NVMLError as exc:
        out.update({n: error(reason(exc), source="NVML (nvidia-smi's library): nvmlDeviceGetCount")
                    for n in FACTS if n not in out})
        return out
    out["gpu.count"] = value(count, source="NVML (nvidia-smi's library): nvmlDeviceGetCount")
    out["gpu.driver_version"] = _get(nv, _text, "nvmlSystemGetDriverVersion")
    out["gpu.cuda_version"] = _get(nv, lambda v: f"{v // 1000}.{(v % 1000) // 10}",
                                   "nvmlSystemGetCudaDriverVersion_v2",
                                   fallback="nvmlSystemGetCudaDriverVersion")
    members = [item(f"GPU{i}", _device(ctx, nv, i)) for i in range(count)]
    out["gpu.devices"] = items(members, source="NVML (nvidia-smi's library)")
    names = {m["fields"]["name"]["value"] for m in members if "value" in m["fields"]["name"]}
    out["gpu.models"] = value(sorted(names), source="NVML (nvidia-smi's library): nvmlDeviceGetName")
    return out


def _device(ctx: Context, nv: Any, i: int) -> dict[str, Fact]:
    f: dict[str, Fact] = {"index": value(i, source="NVML (nvidia-smi's library): nvmlDeviceGetHandleByIndex")}
    try:
        h = nv.nvmlDeviceGetHandleByIndex(i)
    except nv.NVMLError as exc:
        why = error(f"GPU {i}: {reason(exc)}", source="NVML (nvidia-smi's library): nvmlDeviceGetHandleByIndex")
        for name in FIELDS:
            f.setdefault(name, dict(why))
        return f
    f["uuid"] = _get(nv, _text, "nvmlDeviceGetUUID", h)
    f["name"] = _get(nv, _text, "nvmlDeviceGetName", h)
    f["pci_bus_id"] = _get(nv, lambda p: sysfs_bdf(_text(p.busId)), "nvmlDeviceGetPciInfo", h)
    bdf = f["pci_bus_id"].get("value")
    if bdf:
        f["numa_node"] = read_fact(device_dir(ctx, bdf) / "numa_node", parse_numa)
    else:
        f["numa_node"] = error("PCI address unknown", source="sysfs")
    f["memory_total"] = _get(nv, lambda m: int(m.total), "nvmlDeviceGetMemoryInfo", h, unit="B")
    ecc = _get(nv, list, "nvmlDeviceGetEccMode", h)
    if "value" in ecc:
        on = nv.NVML_FEATURE_ENABLED
        f["ecc_enabled"] = value(ecc["value"][0] == on, source=ecc["source"])
        f["ecc_pending"] = value(ecc["value"][1] == on, source=ecc["source"])
    else:
        f["ecc_enabled"], f["ecc_pending"] = ecc, dict(ecc)
    f.update(remaps(nv, h))
    f["retired_pages_pending"] = _get(nv, lambda v: v == nv.NVML_FEATURE_ENABLED,
                                      "nvmlDeviceGetRetiredPagesPendingStatus", h)
    f["memory_repair"] = memory_repair(nv, h, f)
    f["persistence_mode"] = _get(nv, lambda v: v == nv.NVML_FEATURE_ENABLED,
                                 "nvmlDeviceGetPersistenceMode", h)
    f["pstate"] = _get(nv, int, "nvmlDeviceGetPerformanceState", h)
    f["vbios_version"] = _get(nv, _text, "nvmlDeviceGetVbiosVersion", h)
    f["pcie_gen_current"] = _get(nv, int, "nvmlDeviceGetCurrPcieLinkGeneration", h)
    f["pcie_gen_max"] = _get(nv, int, "nvmlDeviceGetMaxPcieLinkGeneration", h)
    # no fallback to the slot-limited max: comparing a value with itself would always pass
    f["pcie_gen_device_max"] = _get(nv, int, "nvmlDeviceGetGpuMaxPcieLinkGeneration", h)
    f["pcie_width_current"] = _get(nv, int, "nvmlDeviceGetCurrPcieLinkWidth", h, unit="x")
    f["pcie_width_max"] = _get(nv, int, "nvmlDeviceGetMaxPcieLinkWidth", h, unit="x")
    f["pcie_width_device_max"] = dict(f["pcie_width_max"])  # NVML has no device-only width
    f.update(nvlinks(nv, h))
    f.update(counters(nv, h, f["nvlink_count"]))
    f.update(fabric(nv, h))
    f["throttle_reasons"] = _get(nv, decode_reasons, "nvmlDeviceGetCurrentClocksEventReasons", h,
                                 fallback="nvmlDeviceGetCurrentClocksThrottleReasons")
    f["power_draw"] = _get(nv, lambda mw: mw / 1000, "nvmlDeviceGetPowerUsage", h, unit="W")
    f["power_limit"] = _get(nv, lambda mw: mw / 1000, "nvmlDeviceGetEnforcedPowerLimit", h,
                            unit="W")
    f["energy_total"] = _get(nv, lambda mj: mj / 1000, "nvmlDeviceGetTotalEnergyConsumption", h,
                             unit="J")
    f["utilization"] = _get(nv, lambda u: int(u.gpu), "nvmlDeviceGetUtilizationRates", h, unit="%")
    f["temperature"] = _get(nv, int, "nvmlDeviceGetTemperatureV", h, nv.NVML_TEMPERATURE_GPU,
                            unit="C", fallback="nvmlDeviceGetTemperature")
    f["xgmi_inactive"] = error("not applicable: xGMI is AMD's link; see nvlink_inactive",
                               source="NVML (nvidia-smi's library)")
    if bdf:
        f.update(nearest_port(ctx, bdf))
    else:
        f.update({k: error("GPU PCI address unknown", source="NVML (nvidia-smi's library)") for k in NEAREST})
    return f


NEAREST = ("nearest_fabric_port", "nearest_fabric_distance", "nearest_fabric_rate")
FIELDS = (  # every gpu.devices field of spec/facts/node.yaml, besides index
    "uuid", "name", "pci_bus_id", "numa_node", "memory_total", "ecc_enabled", "ecc_pending",
    "remapped_rows_pending", "remapped_rows_failure", "retired_pages_pending", "memory_repair",
    "persistence_mode", "pstate", "vbios_version", "pcie_gen_current", "pcie_gen_max", "pcie_gen_device_max",
    "pcie_width_current", "pcie_width_max", "pcie_width_device_max", "nvlink_count",
    "nvlink_inactive", "nvlink_remote_switch", "fabric_state", "fabric_status",
    "throttle_reasons", "power_draw", "power_limit", "energy_total", "utilization",
    "temperature", "xgmi_inactive", *NEAREST, *COUNTERS,
)
