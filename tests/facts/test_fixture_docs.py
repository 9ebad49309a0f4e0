"""The committed facts documents in tests/fixtures/facts are current and well-formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.facts.catalogue import check_facts, fields
from tests.fixtures import make_facts
from validator.facts.document import load

FACTS_DIR = Path(make_facts.__file__).parent / "facts"


@pytest.mark.parametrize("name", sorted(make_facts.SCENARIOS))
def test_committed_document_is_current(name):
    path = FACTS_DIR / f"{name}.json"
    assert path.is_file(), f"run python tests/fixtures/make_facts.py ({path} missing)"
    committed = load(path)
    check_facts(committed["facts"])
    fresh = json.loads(make_facts.render(make_facts.build(name)))
    assert committed == fresh, f"{path} is stale: run python tests/fixtures/make_facts.py"


def test_documents_hold_no_temporary_paths():
    for path in FACTS_DIR.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert "/tmp" not in text and "pytest-" not in text, path


@pytest.mark.parametrize(("name", "fact", "item", "field", "expected"), [
    ("dgx_h100_port_200g", "rdma.ports", "mlx5_5:1", "rate", 200),
    ("dgx_h100_port_init", "rdma.ports", "mlx5_9:1", "state", "INIT"),
    ("dgx_h100_nic_x8", "pcie.links", "0000:2b:00.0", "current_width", 8),
    ("dgx_h100_ecc_off", "gpu.devices", "GPU3", "ecc_enabled", False),
    ("dgx_h100_remap_pending", "gpu.devices", "GPU5", "remapped_rows_pending", True),
    ("dgx_h100_nvlink_inactive", "gpu.devices", "GPU2", "nvlink_inactive", [7]),
    ("dgx_h100_fabric_not_started", "gpu.devices", "GPU0", "fabric_state", "not_started"),
    ("dgx_h100_hw_thermal", "gpu.devices", "GPU6", "throttle_reasons",
     ["hw_slowdown", "hw_thermal_slowdown"]),
])
def test_each_variant_carries_its_failure(name, fact, item, field, expected):
    facts = load(FACTS_DIR / f"{name}.json")["facts"]
    assert fields(facts, fact, item)[field] == expected
    healthy = load(FACTS_DIR / "dgx_h100.json")["facts"]
    assert fields(healthy, fact, item)[field] != expected


def test_no_peermem_variant():
    missing = load(FACTS_DIR / "dgx_h100_no_peermem.json")["facts"]
    assert missing["rdma.gdr_module"]["value"] is False
    assert load(FACTS_DIR / "dgx_h100.json")["facts"]["rdma.gdr_module"]["value"] is True
