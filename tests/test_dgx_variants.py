"""Every recorded DGX H100 variant, end to end through ``spec-check check --facts``: the exact
rule, item and status each one must produce, and the exit code a fleet gate sees.

The fixtures are tests/fixtures/facts/dgx_h100*.json (probe of nodes.py trees with NVML
replays; regenerate with tests/fixtures/make_facts.py). The healthy node has no finding
besides pass and skip; each variant adds exactly the findings below and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import spec_check

FACTS = Path(__file__).parent / "fixtures" / "facts"
GPU3 = "GPU3 (GPU-e07f3a91-2c6b-4d8e-b514-73a9c0f2d837)"

# variant -> (findings that are neither pass nor skip, exit code with the default --fail-on)
VARIANTS: dict[str, tuple[set[tuple[str, str | None, str]], int]] = {
    "dgx_h100": (set(), 0),
    "dgx_h100_port_200g": ({("NET-01.fabric-port-slow", "mlx5_5:1", "fail"),
                            ("NET-01.gpu-nic-slow", GPU3, "fail")}, 1),
    "dgx_h100_port_init": ({("NET-02.port-not-active", "mlx5_9:1", "fail")}, 1),
    "dgx_h100_nic_x8": ({("TOPO-02.nic-link-narrow", "mlx5_3 (0000:2b:00.0)", "fail")}, 1),
    # GPUDirect RDMA is a SHOULD within NET-02 (spec/v1.0/requirements.yaml): DMA-BUF can replace the peer-memory
    # module, which pure Python cannot test, so its absence warns (README, "Why peermem warns")
    "dgx_h100_no_peermem": ({("NET-02.gdr-module-missing", None, "warn")}, 0),
    "dgx_h100_ecc_off": ({("MEM-01.ecc-disabled", GPU3, "fail")}, 1),
    "dgx_h100_remap_pending": ({("MEM-01.row-remap-pending",
                                 "GPU5 (GPU-73c1e8f4-9b2a-4d57-8c06-1e5f9a2b7d5b)", "fail")}, 1),
    "dgx_h100_nvlink_inactive": ({("NET-03.nvlink-inactive",
                                   "GPU2 (GPU-1c8b7e2a-5d94-4b06-a3f7-e9120c4d6a25)", "fail")}, 1),
    "dgx_h100_hw_thermal": ({("PLAT-03.clock-slowdown",
                              "GPU6 (GPU-2e6a9d1c-4f7b-48c3-b92e-07d5c3a8e16d)", "warn")}, 0),
}


def test_every_dgx_fixture_is_covered() -> None:
    on_disk = {p.stem for p in FACTS.glob("dgx_h100*.json")} - {"dgx_h100_fabric_not_started"}
    assert on_disk == set(VARIANTS)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_dgx_variant_end_to_end(variant: str) -> None:
    expected, code = VARIANTS[variant]
    r = spec_check("check", "--facts", str(FACTS / f"{variant}.json"), "--format", "json")
    assert r.returncode == code, r.stderr
    result = json.loads(r.stdout)
    got = {(f["rule"], f["item"], f["status"]) for f in result["findings"] if f["status"] not in ("pass", "skip")}
    assert got == expected
    assert result["summary"]["conformant"] is (not any(s == "fail" for _, _, s in expected))
    warns = any(s == "warn" for _, _, s in expected)
    strict = spec_check("check", "--facts", str(FACTS / f"{variant}.json"), "--fail-on", "warn")
    assert strict.returncode == (1 if code or warns else 0)


def test_fabric_manager_down_fails_every_gpu() -> None:
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100_fabric_not_started.json"), "--format", "json")
    assert r.returncode == 1
    bad = [f for f in json.loads(r.stdout)["findings"] if f["status"] not in ("pass", "skip")]
    assert {(f["rule"], f["status"]) for f in bad} == {("NET-03.fabric-manager-down", "fail")}
    assert sorted(f["item"].split()[0] for f in bad) == [f"GPU{i}" for i in range(8)]
    # the observed state in words for people; the raw value for machines
    assert all(f["observed"] == "not started" and f["value"] == "not_started" for f in bad)


def test_peermem_warning_gates_only_under_fail_on_warn() -> None:
    path = str(FACTS / "dgx_h100_no_peermem.json")
    assert spec_check("check", "--facts", path).returncode == 0
    r = spec_check("check", "--facts", path, "--fail-on", "warn")
    assert r.returncode == 1 and "NET-02.gdr-module-missing" in r.stdout
