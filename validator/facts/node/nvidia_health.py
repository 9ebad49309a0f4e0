"""NVML queries that take more than one call, or whose errors carry meaning.

Kept apart from nvidia.py so that each stays small. The traps (reference section 1):
* Row remapping is NotSupported while MIG is enabled and before Ampere; which of remapped
  rows or retired pages applies is ``memory_repair``, from the architecture.
* ``NVML_NVLINK_MAX_LINKS`` is an upper bound: the per-GPU count is the field value
  NVML_FI_DEV_NVLINK_LINK_COUNT, whose element has its own ``nvmlReturn``; a link index past
  the GPU's links raises InvalidArgument (not NotSupported). A link whose state cannot be
  read is listed as inactive: unknown is never pass.
* Fabric info takes ``ctypes.byref`` of a ``c_nvmlGpuFabricInfoV_t``; FunctionNotFound (old
  driver) and NotSupported (no NVSwitch) both mean "not_supported".
* The installed nvidia-ml-py may be older than the calls: 12.535.161 has no
  ``nvmlDeviceGetGpuFabricInfoV`` / ``c_nvmlGpuFabricInfoV_t`` / ``nvmlDeviceGetTemperatureV``
  (AttributeError, not an NVMLError). A missing binding is a per-fact error value naming the
  nvidia-ml-py version, after the older call where one exists; it never sinks the GPU source.
"""

from __future__ import annotations

from typing import Any  # Any below: pynvml's module, its device handles and results (no type stubs)

from validator.facts.document import Fact, error, value

EVENT_REASONS = (  # bit -> name, per nvmlClocksEventReason* / nvmlClocksThrottleReason*
    (0x1, "gpu_idle"), (0x2, "applications_clocks_setting"), (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"), (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"), (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"), (0x200, "board_limit"), (0x400, "reliability"),
)
FABRIC_STATES = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}

class MissingBinding(Exception):
    """The installed nvidia-ml-py does not define a function or structure the probe uses."""

    def __init__(self, name: str):
        super().__init__(f"{name} not supported by nvidia-ml-py {binding_version()} "
                         "(upgrade nvidia-ml-py to read it)")


def binding_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-ml-py")
    except PackageNotFoundError:
        return "(version unknown)"


def binding(nv: Any, name: str) -> Any:
    """nv.<name>, or MissingBinding when this nvidia-ml-py predates it."""
    try:
        return getattr(nv, name)
    except AttributeError:
        raise MissingBinding(name) from None


def reason(exc: BaseException) -> str:
    """'NotSupported: Not Supported' - the NVML error class and its message."""
    name = type(exc).__name__.removeprefix("NVMLError_")
    return f"{name}: {exc}"


def decode_reasons(mask: int) -> list[str]:
    names = [name for bit, name in EVENT_REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in EVENT_REASONS)
    if rest:
        names.append(f"unknown_{rest:#x}")
    return names


def remaps(nv: Any, h: Any) -> dict[str, Fact]:
    src = "NVML (nvidia-smi's library): nvmlDeviceGetRemappedRows"
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


def memory_repair(nv: Any, h: Any, f: dict[str, Fact]) -> Fact:
    """row_remapping on Ampere and later, page_retirement before: which calls apply."""
    src = "NVML (nvidia-smi's library): nvmlDeviceGetArchitecture"
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
        return value("row_remapping", source="NVML (nvidia-smi's library): nvmlDeviceGetRemappedRows")
    if "value" in f["retired_pages_pending"]:
        return value("page_retirement", source="NVML (nvidia-smi's library): nvmlDeviceGetRetiredPagesPendingStatus")
    return error(f"{why}; neither remapped rows nor retired pages answered", source=src)


def nvlinks(nv: Any, h: Any) -> dict[str, Fact]:
    src = "NVML (nvidia-smi's library): nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_LINK_COUNT)"
    names = ("nvlink_count", "nvlink_inactive", "nvlink_remote_switch")
    try:
        fv = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_NVLINK_LINK_COUNT])[0]
        if fv.nvmlReturn != nv.NVML_SUCCESS:
            raise nv.NVMLError(fv.nvmlReturn)
        count = int(fv.value.uiVal)
    except nv.NVMLError as exc:
        return {n: error(reason(exc), source=src) for n in names}
    out = {"nvlink_count": value(count, source=src)}
    state_src = "NVML (nvidia-smi's library): nvmlDeviceGetNvLinkState"
    inactive: list[int] = []
    active: list[int] = []
    try:
        for link in range(count):
            try:
                state = nv.nvmlDeviceGetNvLinkState(h, link)
            except (nv.NVMLError_InvalidArgument, nv.NVMLError_NotSupported):
                inactive.append(link)  # counted as present but not usable
                continue
            (active if state == nv.NVML_FEATURE_ENABLED else inactive).append(link)
    except nv.NVMLError as exc:
        why = error(reason(exc), source=state_src)
        return {**out, "nvlink_inactive": why, "nvlink_remote_switch": dict(why)}
    out["nvlink_inactive"] = value(inactive, source=state_src)
    remote_src = "NVML (nvidia-smi's library): nvmlDeviceGetNvLinkRemoteDeviceType"
    try:
        remote = [nv.nvmlDeviceGetNvLinkRemoteDeviceType(h, link) for link in active]
    except nv.NVMLError as exc:
        out["nvlink_remote_switch"] = error(reason(exc), source=remote_src)
        return out
    switch = bool(remote) and all(t == nv.NVML_NVLINK_DEVICE_TYPE_SWITCH for t in remote)
    out["nvlink_remote_switch"] = value(switch, source=remote_src)
    return out


def fabric(nv: Any, h: Any) -> dict[str, Fact]:
    """Fabric state through the V call, or the pre-V call where the binding lacks it."""
    src = "NVML (nvidia-smi's library): nvmlDeviceGetGpuFabricInfoV"
    try:
        try:
            call, info = binding(nv, "nvmlDeviceGetGpuFabricInfoV"), binding(nv, "c_nvmlGpuFabricInfoV_t")()
        except MissingBinding as missing:
            src = "NVML (nvidia-smi's library): nvmlDeviceGetGpuFabricInfo"
            try:
                call, info = binding(nv, "nvmlDeviceGetGpuFabricInfo"), binding(nv, "c_nvmlGpuFabricInfo_t")()
            except MissingBinding:
                raise missing from None
        import ctypes  # with a GPU driver only: not on check's start path elsewhere

        call(h, ctypes.byref(info))
    except MissingBinding as exc:
        return {"fabric_state": error(str(exc), source=src), "fabric_status": error(str(exc), source=src)}
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
