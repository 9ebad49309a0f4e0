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

import ctypes
from collections.abc import Callable
from typing import Any

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, parse_numa, read_fact
from validator.facts.node.pci import device_dir, nearest_port, pci_vendor_counts, sysfs_bdf

NAME = "nvidia"
FACTS = ("gpu.vendor", "gpu.count", "gpu.driver_version", "gpu.cuda_version", "gpu.models",
         "gpu.devices")

EVENT_REASONS = (  # bit -> name, per nvmlClocksEventReason* / nvmlClocksThrottleReason*
    (0x1, "gpu_idle"), (0x2, "applications_clocks_setting"), (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"), (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"), (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"), (0x200, "board_limit"), (0x400, "reliability"),
)
FABRIC_STATES = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}
_HINTS = {
    "LibraryNotFound": "no NVIDIA driver (libnvidia-ml.so.1 not found)",
    "DriverNotLoaded": "the NVIDIA kernel module is not loaded",
    "LibRmVersionMismatch": "driver upgraded without a reboot or module reload",
    "NoPermission": "no access to the GPU devices (a container without them?)",
}


def reason(exc: BaseException) -> str:
    """'NotSupported: Not Supported' - the NVML error class and its message."""
    name = type(exc).__name__.removeprefix("NVMLError_")
    return f"{name}: {exc}"


def collect(ctx: Context) -> dict[str, Fact]:
    nv = ctx.nvml
    if nv is None:
        try:
            import pynvml as nv
        except ImportError as exc:
            return _all_errors(f"nvidia-ml-py is not installed ({exc})", "nvml:import")
    try:
        nv.nvmlInit()
    except nv.NVMLError as exc:
        return _init_failed(ctx, exc)
    try:
        return _collect(ctx, nv)
    finally:
        try:
            nv.nvmlShutdown()
        except nv.NVMLError:
            pass


def _all_errors(msg: str, source: str) -> dict[str, Fact]:
    return {name: error(msg, source=source) for name in FACTS}


def _init_failed(ctx: Context, exc: BaseException) -> dict[str, Fact]:
    name = type(exc).__name__.removeprefix("NVMLError_")
    on_bus = pci_vendor_counts(ctx)
    src = "nvml:nvmlInit"
    if name == "LibraryNotFound" and on_bus is not None and not on_bus.get("nvidia"):
        # no driver and no NVIDIA GPU: a node without GPUs, which is a fact, not an error
        why = f"no NVIDIA GPU on this node ({reason(exc)}; none on the PCI bus)"
        vendor = "amd" if on_bus.get("amd") else "none"
        return {
            "gpu.vendor": value(vendor, source="sysfs: PCI scan"),
            "gpu.count": value(0, source=src),
            "gpu.driver_version": error(why, source=src),
            "gpu.cuda_version": error(why, source=src),
            "gpu.models": value([], source=src),
            "gpu.devices": items([], source=src),
        }
    hint = _HINTS.get(name, "NVML could not start")
    if on_bus is None:
        bus = "the PCI scan failed too, so whether this node has GPUs is unknown"
    else:
        bus = f"{on_bus.get('nvidia', 0)} NVIDIA GPU(s) on the PCI bus"
    out = _all_errors(f"{reason(exc)}: {hint}; {bus}", src)
    if on_bus and on_bus.get("nvidia"):
        out["gpu.vendor"] = value("nvidia", source="sysfs: PCI scan")
    return out


def _call(nv: Any, fn: str, *args: Any, fallback: str | None = None) -> Any:
    """Call nv.<fn>, or nv.<fallback> when the driver lacks the newer symbol."""
    try:
        return getattr(nv, fn)(*args)
    except nv.NVMLError_FunctionNotFound:
        if fallback is None:
            raise
        return getattr(nv, fallback)(*args)


def _get(nv: Any, conv: Callable[[Any], Any], fn: str, *args: Any, unit: str | None = None,
         fallback: str | None = None) -> Fact:
    src = f"nvml:{fn}"
    try:
        raw = _call(nv, fn, *args, fallback=fallback)
    except nv.NVMLError as exc:
        return error(reason(exc), source=src)
    return value(conv(raw), unit=unit, source=src)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _collect(ctx: Context, nv: Any) -> dict[str, Fact]:
    out: dict[str, Fact] = {"gpu.vendor": value("nvidia", source="nvml:nvmlInit")}
    try:
        count = nv.nvmlDeviceGetCount()
    except nv.NVMLError as exc:
        out.update({n: error(reason(exc), source="nvml:nvmlDeviceGetCount")
                    for n in FACTS if n != "gpu.vendor"})
        return out
    out["gpu.count"] = value(count, source="nvml:nvmlDeviceGetCount")
    out["gpu.driver_version"] = _get(nv, _text, "nvmlSystemGetDriverVersion")
    out["gpu.cuda_version"] = _get(nv, lambda v: f"{v // 1000}.{(v % 1000) // 10}",
                                   "nvmlSystemGetCudaDriverVersion_v2",
                                   fallback="nvmlSystemGetCudaDriverVersion")
    members = [item(f"GPU{i}", _device(ctx, nv, i)) for i in range(count)]
    out["gpu.devices"] = items(members, source="nvml")
    names = {m["fields"]["name"]["value"] for m in members if "value" in m["fields"]["name"]}
    out["gpu.models"] = value(sorted(names), source="nvml:nvmlDeviceGetName")
    return out


def _device(ctx: Context, nv: Any, i: int) -> dict[str, Fact]:
    f: dict[str, Fact] = {"index": value(i, source="nvml:nvmlDeviceGetHandleByIndex")}
    try:
        h = nv.nvmlDeviceGetHandleByIndex(i)
    except nv.NVMLError as exc:
        why = error(f"GPU {i}: {reason(exc)}", source="nvml:nvmlDeviceGetHandleByIndex")
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
    f.update(_remaps(nv, h))
    f["retired_pages_pending"] = _get(nv, lambda v: v == nv.NVML_FEATURE_ENABLED,
                                      "nvmlDeviceGetRetiredPagesPendingStatus", h)
    f["memory_repair"] = _memory_repair(nv, h, f)
    f["persistence_mode"] = _get(nv, lambda v: v == nv.NVML_FEATURE_ENABLED,
                                 "nvmlDeviceGetPersistenceMode", h)
    f["pstate"] = _get(nv, int, "nvmlDeviceGetPerformanceState", h)
    f["pcie_gen_current"] = _get(nv, int, "nvmlDeviceGetCurrPcieLinkGeneration", h)
    f["pcie_gen_max"] = _get(nv, int, "nvmlDeviceGetMaxPcieLinkGeneration", h)
    f["pcie_gen_device_max"] = _get(nv, int, "nvmlDeviceGetGpuMaxPcieLinkGeneration", h,
                                    fallback="nvmlDeviceGetMaxPcieLinkGeneration")
    f["pcie_width_current"] = _get(nv, int, "nvmlDeviceGetCurrPcieLinkWidth", h, unit="x")
    f["pcie_width_max"] = _get(nv, int, "nvmlDeviceGetMaxPcieLinkWidth", h, unit="x")
    f["pcie_width_device_max"] = dict(f["pcie_width_max"])  # NVML has no device-only width
    f.update(_nvlinks(nv, h))
    f.update(_fabric(nv, h))
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
                               source="nvml")
    if bdf:
        f.update(nearest_port(ctx, bdf))
    else:
        f.update({k: error("GPU PCI address unknown", source="nvml") for k in NEAREST})
    return f


def decode_reasons(mask: int) -> list[str]:
    names = [name for bit, name in EVENT_REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in EVENT_REASONS)
    if rest:
        names.append(f"unknown_{rest:#x}")
    return names


def _remaps(nv: Any, h: Any) -> dict[str, Fact]:
    src = "nvml:nvmlDeviceGetRemappedRows"
    try:
        _corr, _unc, pending, failure = nv.nvmlDeviceGetRemappedRows(h)
    except nv.NVMLError_NotSupported as exc:
        why = f"{reason(exc)} (row remapping needs Ampere or newer"
        try:
            if nv.nvmlDeviceGetMigMode(h)[0] == nv.NVML_DEVICE_MIG_ENABLE:
                why = f"{reason(exc)} (not reported while MIG is enabled"
        except nv.NVMLError:
            pass
        return {"remapped_rows_pending": error(why + ")", source=src),
                "remapped_rows_failure": error(why + ")", source=src)}
    except nv.NVMLError as exc:
        return {"remapped_rows_pending": error(reason(exc), source=src),
                "remapped_rows_failure": error(reason(exc), source=src)}
    return {"remapped_rows_pending": value(bool(pending), source=src),
            "remapped_rows_failure": value(bool(failure), source=src)}


def _memory_repair(nv: Any, h: Any, f: dict[str, Fact]) -> Fact:
    """row_remapping on Ampere and later, page_retirement before: which calls apply."""
    src = "nvml:nvmlDeviceGetArchitecture"
    try:
        arch = int(nv.nvmlDeviceGetArchitecture(h))
    except nv.NVMLError as exc:
        arch, why = None, reason(exc)
    else:
        why = "architecture unknown to NVML"
    if arch is not None and arch != nv.NVML_DEVICE_ARCH_UNKNOWN:
        kind = "row_remapping" if arch >= nv.NVML_DEVICE_ARCH_AMPERE else "page_retirement"
        return value(kind, source=src)
    # no architecture: judge by which of the two calls the GPU answers
    if "value" in f["remapped_rows_pending"]:
        return value("row_remapping", source="nvml:nvmlDeviceGetRemappedRows")
    if "value" in f["retired_pages_pending"]:
        return value("page_retirement", source="nvml:nvmlDeviceGetRetiredPagesPendingStatus")
    return error(f"{why}; neither remapped rows nor retired pages answered", source=src)


def _nvlinks(nv: Any, h: Any) -> dict[str, Fact]:
    src = "nvml:nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_LINK_COUNT)"
    names = ("nvlink_count", "nvlink_inactive", "nvlink_remote_switch")
    try:
        fv = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_NVLINK_LINK_COUNT])[0]
        if fv.nvmlReturn != nv.NVML_SUCCESS:
            raise nv.NVMLError(fv.nvmlReturn)
        count = int(fv.value.uiVal)
    except nv.NVMLError as exc:
        return {n: error(reason(exc), source=src) for n in names}
    inactive, active = [], []
    try:
        for link in range(count):
            try:
                state = nv.nvmlDeviceGetNvLinkState(h, link)
            except (nv.NVMLError_InvalidArgument, nv.NVMLError_NotSupported):
                inactive.append(link)  # counted as present but not usable
                continue
            (active if state == nv.NVML_FEATURE_ENABLED else inactive).append(link)
        remote = [nv.nvmlDeviceGetNvLinkRemoteDeviceType(h, link) for link in active]
    except nv.NVMLError as exc:
        return {"nvlink_count": value(count, source=src),
                "nvlink_inactive": error(reason(exc), source="nvml:nvmlDeviceGetNvLinkState"),
                "nvlink_remote_switch": error(reason(exc), source="nvml:nvmlDeviceGetNvLink*")}
    switch = bool(remote) and all(t == nv.NVML_NVLINK_DEVICE_TYPE_SWITCH for t in remote)
    return {"nvlink_count": value(count, source=src),
            "nvlink_inactive": value(inactive, source="nvml:nvmlDeviceGetNvLinkState"),
            "nvlink_remote_switch": value(switch,
                                          source="nvml:nvmlDeviceGetNvLinkRemoteDeviceType")}


def _fabric(nv: Any, h: Any) -> dict[str, Fact]:
    src = "nvml:nvmlDeviceGetGpuFabricInfoV"
    info = nv.c_nvmlGpuFabricInfoV_t()
    try:
        nv.nvmlDeviceGetGpuFabricInfoV(h, ctypes.byref(info))
    except (nv.NVMLError_FunctionNotFound, nv.NVMLError_NotSupported):
        return {"fabric_state": value("not_supported", source=src),
                "fabric_status": value("not_supported", source=src)}
    except nv.NVMLError as exc:
        return {"fabric_state": error(reason(exc), source=src),
                "fabric_status": error(reason(exc), source=src)}
    state = FABRIC_STATES.get(int(info.state), f"unknown_{int(info.state)}")
    status = "ok" if info.status == nv.NVML_SUCCESS else (
        nv.nvmlExceptionClass(info.status).__name__.removeprefix("NVMLError_"))
    return {"fabric_state": value(state, source=src), "fabric_status": value(status, source=src)}


NEAREST = ("nearest_fabric_port", "nearest_fabric_distance", "nearest_fabric_rate")
FIELDS = (
    "uuid", "name", "pci_bus_id", "numa_node", "memory_total", "ecc_enabled", "ecc_pending",
    "remapped_rows_pending", "remapped_rows_failure", "retired_pages_pending",
    "memory_repair", "persistence_mode", "pstate", "pcie_gen_current", "pcie_gen_max", "pcie_gen_device_max",
    "pcie_width_current", "pcie_width_max", "pcie_width_device_max", "nvlink_count",
    "nvlink_inactive", "nvlink_remote_switch", "fabric_state", "fabric_status",
    "throttle_reasons", "power_draw", "power_limit", "energy_total", "utilization",
    "temperature", "xgmi_inactive", *NEAREST,
)
