"""AMD GPU facts through amdsmi, guarded: its import misbehaves where ROCm is missing.

Traps (shared/reference/node-probing.md section 6):
* ``import amdsmi`` without libamd_smi.so prints two lines to **stdout** and raises
  ``KeyError`` (not ImportError). stdout is captured around the import (JSON output would
  be corrupted otherwise) and any Exception becomes an error value quoting it.
* Unsupported numbers come back as the string "N/A"; each is an error value.
* Only the calls whose shapes the reference documents are used; the remaining GPU fields are
  error values saying this version does not gather them on AMD (unknown is never pass).
  None of this has run against real AMD hardware.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any  # Any below: the amdsmi module, its handles and results (no type stubs)

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context, parse_numa, read_fact
from validator.facts.node.nvidia import FACTS, FIELDS, NEAREST
from validator.facts.node.pci import device_dir, nearest_port

NAME = "amd"
# FACTS is the GPU facts, shared with the NVIDIA source


def load_amdsmi() -> Any:
    import amdsmi

    return amdsmi


def collect(ctx: Context) -> dict[str, Fact]:
    loader = ctx.amdsmi_loader or load_amdsmi
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            amdsmi = loader()
            amdsmi.amdsmi_init()
    except Exception as exc:  # KeyError from the import is the common case
        printed = " ".join(captured.getvalue().split())
        msg = f"amdsmi unavailable: {type(exc).__name__}: {exc}"
        if printed:
            msg += f" (it printed: {printed[:300]})"
        return {n: error(msg, source="amd-smi's library (amdsmi)") for n in FACTS}
    try:
        return _collect(ctx, amdsmi)
    except Exception as exc:
        msg = f"amdsmi failed: {type(exc).__name__}: {exc}"
        return {n: error(msg, source="amd-smi's library (amdsmi)") for n in FACTS}
    finally:
        with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
            amdsmi.amdsmi_shut_down()


def _get(fn: Callable[..., Any], conv: Callable[[Any], Any], *args: object,
         unit: str | None = None) -> Fact:
    src = f"amd-smi's library (amdsmi): {getattr(fn, '__name__', 'call')}"
    try:
        raw = conv(fn(*args))
    except Exception as exc:
        return error(f"{type(exc).__name__}: {exc}", source=src)
    if raw == "N/A":
        return error("not supported on this GPU (N/A)", source=src)
    return value(raw, unit=unit, source=src)


def rocm_version(smi: Any) -> Fact:
    """``amdsmi_get_rocm_version()`` -> ``(ok, "6.4.1")`` (amdsmi of ROCm 6.4 and later; older
    bindings lack it, which is an error value naming the binding, never a guess)."""
    src = "amd-smi's library (amdsmi): amdsmi_get_rocm_version"
    fn = getattr(smi, "amdsmi_get_rocm_version", None)
    if fn is None:
        return error("amdsmi_get_rocm_version not supported by this amdsmi (ROCm 6.4 or later has it)",
                     source=src)
    try:
        raw = fn()
    except Exception as exc:
        return error(f"{type(exc).__name__}: {exc}", source=src)
    ok, text = raw if isinstance(raw, tuple) and len(raw) == 2 else (True, raw)
    if ok is not True or not isinstance(text, str) or not text or text == "N/A":
        return error(f"amdsmi could not read the ROCm version ({text!r})", source=src)
    return value(text, source=src)


def _collect(ctx: Context, smi: Any) -> dict[str, Fact]:
    handles = list(smi.amdsmi_get_processor_handles())
    out: dict[str, Fact] = {
        "gpu.vendor": value("amd", source="amd-smi's library (amdsmi)"),
        "gpu.count": value(len(handles), source="amd-smi's library (amdsmi): amdsmi_get_processor_handles"),
        "gpu.cuda_version": error("not applicable: AMD GPUs run ROCm, not CUDA; see gpu.rocm_version",
                                  source="amd-smi's library (amdsmi)"),
        "gpu.rocm_version": rocm_version(smi),
        "gpu.driver_status": value("ok", source="amd-smi's library (amdsmi): amdsmi_init"),
    }
    if handles:
        out["gpu.driver_version"] = _get(smi.amdsmi_get_gpu_driver_info,
                                         lambda d: str(d["driver_version"]), handles[0])
    else:
        out["gpu.driver_version"] = error("no AMD GPU seen by amdsmi", source="amd-smi's library (amdsmi)")
    members = [item(f"GPU{i}", _device(ctx, smi, i, h)) for i, h in enumerate(handles)]
    out["gpu.devices"] = items(members, source="amd-smi's library (amdsmi)")
    names = {m["fields"]["name"]["value"] for m in members if "value" in m["fields"]["name"]}
    out["gpu.models"] = value(sorted(names), source="amd-smi's library (amdsmi): amdsmi_get_gpu_asic_info")
    return out


def _device(ctx: Context, smi: Any, i: int, h: Any) -> dict[str, Fact]:
    f: dict[str, Fact] = {
        "index": value(i, source="amd-smi's library (amdsmi): amdsmi_get_processor_handles"),
        "uuid": _get(smi.amdsmi_get_gpu_device_uuid, str, h),
        "name": _get(smi.amdsmi_get_gpu_asic_info, lambda a: str(a["market_name"]), h),
        "pci_bus_id": _get(smi.amdsmi_get_gpu_device_bdf, lambda b: str(b).lower(), h),
        "memory_total": _get(smi.amdsmi_get_gpu_vram_usage,
                             lambda v: v["vram_total"] * 2**20, h, unit="B"),
        "xgmi_inactive": _get(smi.amdsmi_get_gpu_xgmi_link_status, _inactive_links, h),
        "utilization": _get(smi.amdsmi_get_gpu_activity, lambda a: a["gfx_activity"], h,
                            unit="%"),
        # the same field as NVIDIA's nvmlDeviceGetVbiosVersion (PLAT-02 compares it across nodes)
        "vbios_version": _get(smi.amdsmi_get_gpu_vbios_info, lambda v: str(v["version"]), h),
    }
    bdf = f["pci_bus_id"].get("value")
    if bdf:
        f["numa_node"] = read_fact(device_dir(ctx, bdf) / "numa_node", parse_numa)
        f.update(nearest_port(ctx, bdf))
    else:
        for name in ("numa_node", *NEAREST):
            f[name] = error("GPU PCI address unknown", source="amd-smi's library (amdsmi)")
    for name in FIELDS:
        f.setdefault(name, error("not gathered for AMD GPUs by this version", source="amd-smi's library (amdsmi)"))
    return f


def _inactive_links(status: dict[str, Any]) -> list[int]:
    """Indices whose xGMI status is D (down) or X (disabled); U is up."""
    return [i for i, s in enumerate(status["status"]) if s in ("D", "X")]
