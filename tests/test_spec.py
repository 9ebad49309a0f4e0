"""The requirement catalogue is the README's requirement table, as data: IDs and levels are a contract."""

from __future__ import annotations

import pytest

from validator.errors import SpecCheckError
from validator.rules.spec import load_spec, resolve_parameters
from validator.values.units import Quantity

CATALOGUE = {
    "NET-01": "MUST", "NET-02": "MUST", "NET-03": "MUST", "NET-04": "SHOULD",
    "TOPO-01": "SHOULD", "TOPO-02": "MUST", "TOPO-03": "SHOULD",
    "COMM-01": "SHOULD", "COMM-02": "SHOULD",
    "MEM-01": "MUST", "MEM-02": "MUST", "MEM-03": "SHOULD",
    "CKPT-01": "MUST", "CKPT-02": "MUST", "CKPT-03": "MUST",
    "REC-01": "MUST", "REC-02": "MUST", "REC-03": "SHOULD",
    "MON-01": "MUST", "MON-02": "MUST", "MON-03": "SHOULD",
    "PREC-01": "MUST", "PREC-02": "MUST", "BATCH-01": "MUST",
    "PLAT-01": "MUST", "PLAT-02": "MUST", "PLAT-03": "SHOULD", "ENER-01": "SHOULD",
}


def test_ids_and_levels_are_the_contract() -> None:
    spec = load_spec("1.0")
    assert {r.id: r.level for r in spec.requirements} == CATALOGUE
    assert [r.id for r in spec.requirements] == list(CATALOGUE)
    for r in spec.requirements:
        assert r.statement.strip() and r.rationale.strip() and r.scopes


def test_every_parameter_has_a_cited_source_and_parses() -> None:
    spec = load_spec("1.0")
    used = {p for r in spec.requirements for p in r.parameters}
    assert used == set(spec.parameters)
    for name, p in spec.parameters.items():
        assert p.source.strip() and p.description.strip(), name
    values = resolve_parameters(spec)
    assert values["fabric_port_rate"].value == Quantity(400e9, "bitrate")
    assert values["gpu_mtbf"].value.to("GPU-h") == 50000
    assert values["recovery_bound"].value.base == 90
    assert not values["step_time"].is_set  # unknown until a job or --set says


def test_parameter_defaults_match_design() -> None:
    v = resolve_parameters(load_spec("1.0"))
    assert v["measured_efficiency"].value == 0.95
    assert v["gpu_nic_distances"].value == ["PIX", "PXB"]
    assert v["shm_min"].value.base == 2**30
    assert v["memlock_min"].text == "unlimited"
    assert v["checkpoint_write_time"].value.base == 60
    assert v["checkpoint_required_above"].value.base == 3600
    assert v["detection_timeout_max"].value.base == 60
    assert v["metrics_interval_max"].value.base == 60


def test_unknown_spec_version() -> None:
    with pytest.raises(SpecCheckError, match='no spec version "0.9"'):
        load_spec("0.9")


@pytest.mark.parametrize("typed", ["[48, 79]", "[48,79]", " 48, 79 ", "48,79"])
def test_a_list_set_as_it_is_shown_is_the_list(typed: str) -> None:
    """`spec show` prints lists as `[48, 63, ...]`; `--set xid_fail=[48,79]` read as the
    strings "[48" and "79]" silently took Xid 79 out of the node-fault list."""
    v = resolve_parameters(load_spec("1.0"), sets=(f"xid_fail={typed}",))
    assert [str(x) for x in v["xid_fail"].value] == ["48", "79"]


@pytest.mark.parametrize("typed", ["[48, 79", "48 79", "48,79]"])
def test_a_list_that_is_no_list_is_refused(typed: str) -> None:
    with pytest.raises(SpecCheckError, match="xid_fail"):
        resolve_parameters(load_spec("1.0"), sets=(f"xid_fail={typed}",))
