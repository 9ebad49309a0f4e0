"""NVML error counters: uncorrectable ECC, PCIe replays, NVLink replay/recovery/CRC errors.

Counters since the driver loaded (volatile) or over the GPU's life (aggregate). What a real
H200 answered (shared/recordings/h200-node/nvml_counters.json) shapes the traps:
* ECC totals answer 0 on a healthy GPU; with ECC off they raise NotSupported (an error
  value, which MEM-01's rule skips because ECC is off).
* NVLink counters raise NotSupported on a GPU without NVLink (that H200); on a GPU with
  links each link is read and summed, and one link that cannot be read makes the sum an
  error value naming the link: a sum over the readable links would pass unknown links.
* The PCIe replay counter answers on every GPU the driver supports.
"""

from __future__ import annotations

from typing import Any  # Any below: pynvml's module, its device handles and results (no type stubs)

from validator.facts.document import Fact, error, value
from validator.facts.node.nvidia_health import MissingBinding, binding, reason

FIELDS = ("ecc_uncorrected_volatile", "ecc_uncorrected_aggregate", "pcie_replay_count",
          "nvlink_replay_recovery_errors", "nvlink_crc_errors")


def counters(nv: Any, h: Any, nvlink_count: Fact) -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    for name, kind in (("ecc_uncorrected_volatile", "NVML_VOLATILE_ECC"),
                       ("ecc_uncorrected_aggregate", "NVML_AGGREGATE_ECC")):
        out[name] = _read(nv, "nvmlDeviceGetTotalEccErrors", h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                          getattr(nv, kind), what=kind.removeprefix("NVML_"))
    out["pcie_replay_count"] = _read(nv, "nvmlDeviceGetPcieReplayCounter", h)
    out.update(_nvlink(nv, h, nvlink_count))
    return out


def _read(nv: Any, fn: str, *args: object, what: str = "") -> Fact:
    src = f"NVML (nvidia-smi's library): {fn}" + (f"({what})" if what else "")
    try:
        return value(int(binding(nv, fn)(*args)), source=src)
    except nv.NVMLError as exc:
        return error(reason(exc), source=src)
    except MissingBinding as exc:
        return error(str(exc), source=src)


def _nvlink(nv: Any, h: Any, nvlink_count: Fact) -> dict[str, Fact]:
    src = "NVML (nvidia-smi's library): nvmlDeviceGetNvLinkErrorCounter"
    names = ("nvlink_replay_recovery_errors", "nvlink_crc_errors")
    if "value" not in nvlink_count:
        why = f"NVLink count unknown: {nvlink_count.get('error', 'not read')}"
        return {n: error(why, source=src) for n in names}
    groups = {"nvlink_replay_recovery_errors": ("NVML_NVLINK_ERROR_DL_REPLAY", "NVML_NVLINK_ERROR_DL_RECOVERY"),
              "nvlink_crc_errors": ("NVML_NVLINK_ERROR_DL_CRC_FLIT", "NVML_NVLINK_ERROR_DL_CRC_DATA")}
    out: dict[str, Fact] = {}
    for name, kinds in groups.items():
        total = 0
        failed: Fact | None = None
        for link in range(int(nvlink_count["value"])):
            for kind in kinds:
                try:
                    total += int(binding(nv, "nvmlDeviceGetNvLinkErrorCounter")(h, link, getattr(nv, kind)))
                except nv.NVMLError as exc:
                    failed = error(f"link {link} {kind.removeprefix('NVML_NVLINK_ERROR_DL_')}: {reason(exc)}",
                                   source=src)
                    break
                except MissingBinding as exc:
                    failed = error(str(exc), source=src)
                    break
            if failed:
                break
        out[name] = failed or value(total, source=f"{src}, summed over {nvlink_count['value']} links")
    return out
