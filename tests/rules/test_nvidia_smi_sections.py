"""A fix text that tells an operator to run `nvidia-smi -q -d SECTIONS` names only sections
nvidia-smi accepts. On the real H200 (driver 580.159.04) `nvidia-smi -q -d ECC,PCIE,ROW_REMAPPER`
answered only "Failed to parse --display/-d flags", exit 2
(tests/fixtures/h200_health/nvml_counters.txt, timing.txt); NVIDIA's nvidia-smi documentation
(https://docs.nvidia.com/deploy/nvidia-smi/index.html, option -d/--display) lists the sections
below, and PCIE is not one: the PCIe link and replay counter are in the full `nvidia-smi -q`.

Only the rules pack v1.1 defines itself are held to it: v1.0 is frozen by digest
(tests/test_packs.py), and its TOPO-02.gpu-link-degraded/-narrow, which v1.1 inherits, still say
`-d PCIE`."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = {
    "MEMORY", "UTILIZATION", "ECC", "TEMPERATURE", "POWER", "CLOCK", "COMPUTE", "PIDS", "PERFORMANCE",
    "SUPPORTED_CLOCKS", "PAGE_RETIREMENT", "ACCOUNTING", "ENCODER_STATS", "SUPPORTED_GPU_TARGET_TEMP", "VOLTAGE",
    "FBC_STATS", "ROW_REMAPPER", "RESET_STATUS", "GSP_FIRMWARE_VERSION", "POWER_SMOOTHING", "POWER_PROFILES",
}
DISPLAY = re.compile(r"nvidia-smi -q\b[^`]*?-d ([A-Za-z_,]+)")


def texts(pack: str) -> dict[str, str]:
    out = {}
    for path in sorted((ROOT / "rules" / pack).glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for rule in doc.get("rules", []) if isinstance(doc, dict) else []:
            out[rule["id"]] = " ".join(str(rule.get(k, "")) for k in ("remediation", "why", "summary"))
    return out


def sections(text: str) -> list[str]:
    return [s for m in DISPLAY.finditer(text) for s in m.group(1).split(",")]


def test_the_real_driver_refused_a_list_with_pcie():
    rec = ROOT / "tests" / "fixtures" / "h200_health"
    assert (rec / "nvml_counters.txt").read_text() == "Failed to parse --display/-d flags\n"
    assert "nvidia-smi -q -d ECC,PCIE,ROW_REMAPPER" in (rec / "timing.txt").read_text()
    assert "PCIE" not in DOCUMENTED and sections("`nvidia-smi -q -d ECC,PCIE`") == ["ECC", "PCIE"]


def test_v1_1_fix_texts_name_only_documented_sections():
    rules = texts("v1.1")
    assert "TOPO-02.pcie-replays-high" in rules and "PLAT-03.error-counters-rising" in rules
    bad = {rid: s for rid, text in rules.items() if (s := [x for x in sections(text) if x not in DOCUMENTED])}
    assert bad == {}
    # the two that said -d PCIE now point at the full query and still say where to look
    assert "Replays Since Reset" in rules["TOPO-02.pcie-replays-high"]
    assert sections(rules["PLAT-03.error-counters-rising"]) == ["ECC"]


def test_the_inherited_v1_0_texts_are_the_frozen_ones():
    """Not a fix: what v1.0 (frozen) still says, so a later pack that overrides them knows where."""
    old = {rid: s for rid, t in texts("v1.0").items() if (s := [x for x in sections(t) if x not in DOCUMENTED])}
    assert old == {"TOPO-02.gpu-link-degraded": ["PCIE"], "TOPO-02.gpu-link-narrow": ["PCIE"]}
