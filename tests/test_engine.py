"""Engine paths that per-rule cases do not reach: unknown is never pass."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import built, document, run_rules
from validator.evaluate.engine import Context, evaluate
from validator.report.model import Status
from validator.rules.loader import load_pack
from validator.rules.spec import load_fact_catalogue, load_spec, resolve_parameters


def _one(findings: list, rule: str):  # type: ignore[no-untyped-def]
    [f] = [f for f in findings if f.rule == rule]
    return f


def test_missing_fact_is_an_error_not_a_pass() -> None:
    f = _one(run_rules({}, select=("MEM-02.shm-small",)), "MEM-02.shm-small")
    assert f.status is Status.ERROR and "was not gathered" in f.message
    assert "re-record it with this version" in f.message  # the usual cause: an older recording


def test_error_value_carries_reason_and_source() -> None:
    facts = {"memory.shm_size": {"error": "statvfs(/dev/shm): No such file or directory", "source": "os.statvfs"}}
    f = _one(run_rules(facts, select=("MEM-02.shm",)), "MEM-02.shm-small")
    assert f.status is Status.ERROR
    assert "No such file or directory" in f.message and f.source == "os.statvfs"


def test_wrong_type_is_an_error() -> None:
    f = _one(run_rules({"memory.shm_size": "lots"}, select=("MEM-02.shm",)), "MEM-02.shm-small")
    assert f.status is Status.ERROR and "should be quantity" in f.message


def test_condition_fact_error_is_an_error() -> None:
    facts = {"gpu.count": {"error": "NVML Shared Library Not Found"}, "gpu.devices": {"items": {}}}
    f = _one(run_rules(facts, select=("MEM-01.ecc",)), "MEM-01.ecc-disabled")
    assert f.status is Status.ERROR and "cannot tell whether the rule applies" in f.message


def test_values_are_converted_to_the_facts_unit() -> None:
    # a port rate recorded in Mb/s still compares with 400 Gb/s
    facts = {"rdma.ports": {"items": {"p:1": {"rate": "400000 Mb/s", "state": "ACTIVE"}}}}
    f = _one(run_rules(facts, select=("NET-01.fabric",)), "NET-01.fabric-port-slow")
    assert f.status is Status.PASS and f.observed == "400000 Mb/s"
    assert f.expected == "port rate >= 400000 Mb/s"
    facts = {"rdma.ports": {"items": {"p:1": {"rate": "40 GB/s", "state": "ACTIVE"}}}}  # bytes: 320 Gb/s
    assert _one(run_rules(facts, select=("NET-01.fabric",)), "NET-01.fabric-port-slow").status is Status.FAIL


def test_findings_are_sorted_and_deterministic() -> None:
    facts = {"rdma.ports": {"items": {"b:1": {"rate": "400 Gb/s"}, "a:1": {"rate": "100 Gb/s"}}}}
    one = run_rules(facts, select=("NET-01.fabric",))
    assert [f.item for f in one] == ["a:1", "b:1"]
    assert one == run_rules(facts, select=("NET-01.fabric",))


STEP_RULE = """\
rules:
  - id: MON-02.interval-long
    requirement: MON-02
    scope: node
    summary: s
    why: w
    remediation: r
    fact: memory.shm_size
    check: {op: lte, value: {formula: product, args: {a: {param: step_time}, b: 2}}}
"""


def _custom(tmp_path: Path, text: str, sets: tuple[str, ...] = (), facts: dict | None = None) -> list:  # type: ignore[type-arg]
    d = tmp_path / "p"
    d.mkdir(parents=True)
    (d / "pack.yaml").write_text('id: p\nspec_version: "1.0"\n')
    (d / "r.yaml").write_text(text)
    spec = load_spec("1.0")
    cat = load_fact_catalogue()
    ctx = Context(spec, cat, resolve_parameters(spec, sets=sets))
    doc = document(facts if facts is not None else {"memory.shm_size": "1 GiB"})
    return evaluate(ctx, load_pack(spec, cat, pack_path=d), [doc])


def test_unset_parameter_skips_and_names_the_set_key(tmp_path: Path) -> None:
    [f] = _custom(tmp_path, STEP_RULE)
    assert f.status is Status.SKIP and "--set step_time=VALUE" in f.message


def test_job_subjects_are_not_judged_by_node_rules() -> None:
    b = built()
    doc = document({"memory.shm_size": "1 MiB"}, kind="job")
    assert evaluate(b.ctx, b.pack, [doc], select=("MEM-02",)) == []


def test_hostile_values_are_errors_never_passes() -> None:
    """Values a recording can hold that no probe writes: each is an error, not a verdict."""
    cases = [
        ({"rdma.ports": {"items": {"p:1": {"rate": {"value": "unlimited", "unit": "Gb/s"}}}}}, "NET-01.fabric-port-slow"),
        ({"rdma.port_count": {"value": float("inf")}}, "NET-02.no-rdma-fabric"),
        ({"rdma.port_count": {"value": float("nan")}}, "NET-02.no-rdma-fabric"),
        ({"telemetry.exporters": {"value": "x"}}, "MON-03.no-telemetry-exporter"),
        ({"telemetry.exporters": {"value": {"a": 1}}}, "MON-03.no-telemetry-exporter"),
        ({"rdma.port_count": {"items": {}}}, "NET-02.no-rdma-fabric"),
        ({"rdma.gdr_module": {"value": 1}, "gpu.vendor": "nvidia", "rdma.port_count": 1}, "NET-02.gdr-module-missing"),
    ]
    for facts, rule in cases:
        f = _one(run_rules(facts, select=(rule,)), rule)
        assert f.status is Status.ERROR, (facts, f.status, f.message)


def test_a_collection_where_a_count_belongs_cannot_skip_gpu_rules() -> None:
    facts = {"gpu.count": {"items": {}}, "gpu.devices": {"items": {"GPU0": {"ecc_enabled": False}}}}
    f = _one(run_rules(facts, select=("MEM-01.ecc",)), "MEM-01.ecc-disabled")
    assert f.status is Status.ERROR


def test_an_unreadable_collection_gives_its_own_reason() -> None:
    """rdma.ports as an error value: the finding names why ("cannot list ..."), not that the
    fact "is not a collection"."""
    from validator.facts.document import error

    reason = "cannot list /sys/class/infiniband/mlx5_0/ports: No such file or directory"
    found = run_rules({"rdma.ports": error(reason, source="/sys/class/infiniband"),
                       "rdma.port_count": error(reason)},
                      select=("NET-01.fabric-port-slow", "NET-02.port-not-active"))
    assert found and all(f.status is Status.ERROR for f in found)
    for f in found:
        assert reason in f.message and "not a collection" not in f.message


def test_a_down_port_is_judged_by_net02_not_by_its_rate() -> None:
    """A DOWN port at 10 Gb/s: NET-01 skips it with the rule's reason, NET-02 fails it."""
    facts = {"rdma.ports": {"items": {"mlx5_1:1": {"rate": "10 Gb/s", "state": "DOWN", "phys_state": "Polling"},
                                      "mlx5_0:1": {"rate": "400 Gb/s", "state": "ACTIVE", "phys_state": "LinkUp"}}},
             "rdma.port_count": 2}
    found = {(f.rule, f.item): f for f in run_rules(facts, select=("NET-01.fabric", "NET-02.port"))}
    slow = found[("NET-01.fabric-port-slow", "mlx5_1:1")]
    assert slow.status is Status.SKIP
    assert slow.message == "port not active; see NET-02 (observed DOWN)"
    assert found[("NET-01.fabric-port-slow", "mlx5_0:1")].status is Status.PASS
    assert found[("NET-02.port-not-active", "mlx5_1:1")].status is Status.FAIL
    every_down = {"rdma.ports": {"items": {"mlx5_1:1": {"rate": "10 Gb/s", "state": "DOWN"}}}}
    [only] = run_rules(every_down, select=("NET-01.fabric",))
    assert only.status is Status.SKIP and "no ACTIVE RDMA fabric port" in only.message


def test_nic_link_rules_see_nic_links_only() -> None:
    """A filter drops GPU links without a finding; NIC findings carry the device name."""
    links = {"0000:18:00.0": {"role": "gpu", "name": "GPU0", "current_width": 8, "max_width": 16},
             "0000:19:00.0": {"role": "nic", "name": "mlx5_0", "current_width": 8, "max_width": 16},
             "0000:2b:00.0": {"role": "nic", "name": "mlx5_3", "current_width": 16, "max_width": 16},
             "0000:3b:00.0": {"role": {"error": "cannot read class"}, "current_width": 16, "max_width": 16}}
    found = run_rules({"pcie.links": {"items": links}}, select=("TOPO-02.nic-link-narrow",))
    assert [(f.item, f.status) for f in found] == [
        ("0000:3b:00.0", Status.ERROR), ("mlx5_0 (0000:19:00.0)", Status.FAIL), ("mlx5_3 (0000:2b:00.0)", Status.PASS)]
    assert "cannot read class" in found[0].message
    gpu_only = {"0000:18:00.0": links["0000:18:00.0"]}
    [only] = run_rules({"pcie.links": {"items": gpu_only}}, select=("TOPO-02.nic-link-narrow",))
    assert only.status is Status.SKIP and only.message == "no fabric NIC PCIe links on this node"


FW_RULE = """\
rules:
  - id: PLAT-02.ib-firmware-mixed
    requirement: PLAT-02
    scope: node
    summary: s
    why: w
    remediation: r
    fact: rdma.ports
    field: fw_ver
    check: {op: all_equal}
    filter:
      - {field: link_layer, op: eq, value: InfiniBand}
"""


def test_an_undecidable_filter_item_makes_an_aggregate_an_error(tmp_path: Path) -> None:
    """all_equal over the InfiniBand ports, one port's link layer unreadable and its firmware
    different: it may be the port that differs, so the comparison is unknown, never a pass."""
    ports = {"mlx5_0:1": {"link_layer": "InfiniBand", "fw_ver": "28.39.1002"},
             "mlx5_1:1": {"link_layer": {"error": "cannot read link_layer"}, "fw_ver": "28.36.1010"},
             "mlx5_2:1": {"link_layer": "Ethernet", "fw_ver": "22.0"}}
    [f] = _custom(tmp_path, FW_RULE, facts={"rdma.ports": {"items": ports}})
    assert f.status is Status.ERROR
    assert f.message.startswith("mlx5_1:1: ") and "cannot read link_layer" in f.message
    del ports["mlx5_1:1"]  # decided: Ethernet is filtered out, the InfiniBand port is alone
    [f] = _custom(tmp_path / "2", FW_RULE, facts={"rdma.ports": {"items": ports}})
    assert f.status is Status.PASS


def test_a_where_reason_quotes_an_observed_value_with_parentheses_whole() -> None:
    """The rule's own reason is followed by the value seen, even one holding "(": it is
    carried apart from the condition's text, not cut back out of it."""
    facts = {"rdma.ports": {"items": {"mlx5_1:1": {"rate": "10 Gb/s", "state": "DOWN (4: cable unplugged)"},
                                      "mlx5_0:1": {"rate": "400 Gb/s", "state": "ACTIVE"}}}}
    slow = _one([f for f in run_rules(facts, select=("NET-01.fabric",)) if f.item == "mlx5_1:1"],
                "NET-01.fabric-port-slow")
    assert slow.status is Status.SKIP
    assert slow.message == "port not active; see NET-02 (observed DOWN (4: cable unplugged))"
