"""The cluster rules on value groups say what they say host by host.

A large fleet's cluster document is evaluated with its per-host collections grouped
(``validator.cluster.groups``) and a replay's cluster document makes its items when read
(``cluster.facts.fleet_document``); both are shortcuts, so each is held here against the
plain path: the engine on the document with an item per host.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.cluster import facts as cfacts
from validator.cluster.groups import grouped
from validator.cluster.hosts import compress, parse_hosts
from validator.cluster.rows import StringTable
from validator.facts.document import digest, error, value

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"


def _built() -> Any:
    from validator.cli.common import RunOptions, build

    return build(RunOptions(), ("cluster",))


def _fields(driver: str = "550.54.15", vbios: Any = "96.00.89.00.01", gpus: int = 8,
            nic: str = "28.39.1002") -> dict[str, Any]:
    none = gpus == 0
    return {
        "gpu_model": value("none" if none else "NVIDIA H100 80GB HBM3", source="gpu.models"),
        "gpu_count": value(gpus, source="gpu.count"),
        "driver_version": value("none" if none else driver, source="gpu.driver_version"),
        "cuda_version": value("none" if none else "12.4", source="gpu.cuda_version"),
        "gpu_vbios": vbios if isinstance(vbios, dict) else value("none" if none else vbios,
                                                                   source="gpu.devices.vbios_version"),
        "nic_firmware": value(nic, source="rdma.ports.fw_ver"),
    }


def _fleet() -> tuple[list[str], dict[str, dict[str, Any]], dict[str, str]]:
    """60 hosts: most alike; three on another driver (two of them also on other NIC
    firmware: two groups for one value), one whose VBIOS could not be read, four without
    GPUs; four recorded as probed without node facts (two reasons)."""
    names = [f"gpu{i:03d}" for i in range(60)]
    fields = {}
    for i, n in enumerate(names):
        if i in (7, 31):
            f = _fields(driver="535.104.05", nic="28.40.1000")
        elif i == 44:
            f = _fields(driver="535.104.05")
        elif i == 12:
            f = _fields(vbios=error("GPU3: NVML_ERROR_UNKNOWN", source="gpu.devices"))
        elif i in (50, 51, 52, 53):
            f = _fields(gpus=0)
        else:
            f = _fields()
        fields[n] = {"hostname": value(f"node-{i}"), **f}
    failures = {"gpu003": "ssh: connect timed out", "gpu020": "ssh: connect timed out",
                "gpu021": "no node facts for this host in --facts", "gpu059": "ssh: connect timed out"}
    for h in failures:
        del fields[h]
    return names, fields, failures


def _document(names: list[str], fields: dict[str, Any], failures: dict[str, str]) -> dict[str, Any]:
    return cfacts.build(names, fields, failures, name="cluster", tool_version="0", collected_at="t",
                        transport="ssh", fields_of=fields)


def _hosts_in(text: str) -> set[str]:
    """The hosts a message names: host lists, comma-separated, as both paths write them."""
    return set(parse_hosts(text.replace(", ", ",")))


def _expanded_value(v: dict[str, Any]) -> dict[str, Any]:
    return {h: x for hl, x in v.items() for h in parse_hosts(hl)}


def test_grouped_cluster_rules_say_what_per_host_rules_say():
    from validator.cluster.result import HOST_RULES
    from validator.evaluate.engine import evaluate
    from validator.report.model import Status

    built = _built()
    names, fields, failures = _fleet()
    doc = _document(names, fields, failures)
    plain = evaluate(built.ctx, built.pack, [doc])
    rules = [r for r in built.pack.rules if r.scope == "cluster"]
    groups = grouped(doc, rules)
    assert len(groups.doc["facts"]["cluster.hosts"]["items"]) == 5  # alike, driver x2, vbios, no GPU
    assert len(groups.doc["facts"]["cluster.probes"]["items"]) == 3  # ok, and two reasons
    on_groups = evaluate(built.ctx, built.pack, [groups.doc])

    # a per-item verdict on a group is each member's: expanded, the same findings
    fact_of = {r.id: r.fact for r in rules}
    expanded = []
    for f in on_groups:
        members = groups.members.get((fact_of[f.rule], f.item)) if f.item else None
        if members is None:
            continue
        assert f.rule in HOST_RULES  # whether each host was probed, and its facts its own and current
        # as the fleet report re-homes it (result._on_member): the words that name the group name the host
        expanded += [(f.rule, name, f.status, f.message.replace(f.item, name), f.observed, f.expected)
                     for name, _ in members]
    per_host = [(f.rule, f.item, f.status, f.message, f.observed, f.expected) for f in plain
                if f.rule in HOST_RULES]
    assert sorted(expanded) == sorted(per_host)
    assert len([p for p in per_host if p[0] == "PLAT-02.host-not-probed"]) == 60

    # an all_equal verdict: same status, expected and counts; the same hosts named
    aggregate = {f.rule: f for f in plain if f.item is None}
    seen = set()
    for f in on_groups:
        if f.item is not None:
            continue
        p = aggregate[f.rule]
        seen.add(f.rule)
        assert (f.status, f.expected, f.observed) == (p.status, p.expected, p.observed), f.rule
        if isinstance(p.value, dict):
            assert _expanded_value(f.value) == p.value, f.rule
        if f.status in (Status.FAIL, Status.WARN):
            named = re.match(r".*: (.*) differs? \(", f.message).group(1)
            was = re.match(r".*: (.*) differs? \(", p.message).group(1)
            assert _hosts_in(named) == _hosts_in(was), f.rule
        if f.status is Status.ERROR:
            assert "gpu012: GPU3: NVML_ERROR_UNKNOWN" in f.message == p.message
    assert seen == set(aggregate)
    driver = next(f for f in on_groups if f.rule == "PLAT-02.driver-version-mixed")
    assert driver.status is Status.FAIL and "535.104.05 (3)" in driver.observed
    assert _hosts_in(re.match(r".*: (.*) differ \(", driver.message).group(1)) == {"gpu007", "gpu031", "gpu044"}


def test_a_collection_a_rule_reads_whole_is_not_grouped():
    """A rule whose condition reads cluster.hosts whole would see the groups, not the
    hosts: that collection stays as it is."""
    from dataclasses import replace

    from validator.rules.loader import Condition

    built = _built()
    names, fields, failures = _fleet()
    doc = _document(names, fields, failures)
    rules = [r for r in built.pack.rules if r.scope == "cluster"]
    odd = replace(rules[1], when=(*rules[1].when, Condition(fact="cluster.hosts", op="exists")))
    groups = grouped(doc, [*rules, odd])
    assert groups.doc["facts"]["cluster.hosts"] is doc["facts"]["cluster.hosts"]
    assert len(groups.doc["facts"]["cluster.probes"]["items"]) == 3


def test_a_fleet_document_is_the_built_document():
    """The replay's document, its items made when read, holds what ``build`` makes and
    has its digest (what the result's cluster subject vouches for)."""
    names = [f"n{i:02d}" for i in range(1200)]  # past the digest's 512 items at a time
    rest = {k: v for k, v in _fields().items()}
    no_gpu = {k: v for k, v in _fields(gpus=0).items()}
    fields = {n: {"hostname": value("other" if i == 3 else n), **(no_gpu if i % 100 == 7 else rest)}
              for i, n in enumerate(names)}
    built = cfacts.build(names, fields, {}, name="fleet", tool_version="9", collected_at="t",
                         transport="replay", fields_of=fields)
    made = cfacts.fleet_document(names, lambda k: fields[names[k]], sum(cfacts.has_gpus(f) for f in fields.values()),
                                 name="fleet", tool_version="9", collected_at="t", transport="replay")
    assert digest(made) == digest(built)
    for fact in built["facts"]:
        got = made["facts"][fact]
        want = built["facts"][fact]
        if "items" in want:
            assert list(got["items"]) == want["items"] and got["items"][-3:] == want["items"][-3:]
            assert {k: v for k, v in got.items() if k != "items"} == {k: v for k, v in want.items() if k != "items"}
        else:
            assert got == want, fact
    with pytest.raises(TypeError):
        json.dumps(made)  # never written as an empty list


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["n", "dgx", "a-", "x", "10.0.0."]), st.integers(0, 1200),
                          st.sampled_from([0, 2, 3, 5])), max_size=40),
       st.booleans())
def test_host_lists_in_one_pass_are_the_general_ones(parts, ascending):
    """``compress`` of names in ascending order takes one pass without a set; its text is
    the general path's (a set of the same names), padded and unpadded numbers joined."""
    names = [f"{p}{n:0{w}d}" for p, n, w in parts]
    if ascending:
        names.sort(key=lambda s: (s.rstrip("0123456789"), int(s[len(s.rstrip("0123456789")):])))
    text = compress(names)
    assert text == compress(set(names))
    assert sorted(parse_hosts(text)) == sorted(set(names)) if names else text == ""


def test_a_fleet_of_names_in_order_is_compressed_in_spans():
    """25,000 names in file order (dgx10000 on joining dgx[00000-09999]) are read once,
    into spans: no set or list of every name or number (traced: a few KiB, where the
    general path's set of the same names is megabytes)."""
    import tracemalloc

    names = [f"dgx{i:05d}" for i in range(25000) if i % 1000 != 500]
    table = StringTable(names)
    tracemalloc.start()
    try:
        text = compress(table)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == compress(set(names))
    assert text.startswith("dgx[00000-00499,00501-01499,") and text.endswith("24501-24999]")
    assert peak < 64 * 1024, peak


def test_a_string_table_gives_back_what_went_in():
    strings = ["dgx00001", "", "naïve-ß", "\ud800lone", "x" * 300]
    t = StringTable(strings)
    assert list(t) == strings and [t[i] for i in range(len(t))] == strings
    assert t[-1] == strings[-1] and t[1:3] == strings[1:3] and len(t) == 5
    with pytest.raises(IndexError):
        t[5]
