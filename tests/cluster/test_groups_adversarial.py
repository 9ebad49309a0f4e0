"""A hostile second read of the large-fleet memory change (value groups, packed rows,
one-pass host lists, items made when read).

The contract held here: a folded replay (``--passes fold``) says what the host-by-host
one (``--passes itemize``) says: the same verdicts on the same hosts, the same counts,
the same cluster subject digest; only a PLAT-02 comparison's ``value`` is keyed by host
list, and its message names hosts as host lists. Each test but the fleet "of every
kind" is a defect found by review, with the smallest input that shows it (fleets built
from the real DGX H100 fixture).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from validator.cluster.hosts import compress, parse_hosts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
BASE = json.loads((FIXTURES / "dgx_h100.json").read_text())


def _doc(name: str, *, hostname: str | None = None, driver: str | None = None) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["subject"]["name"] = name
    if hostname is not None:
        doc["subject"]["hostname"] = hostname
    if driver is not None:
        doc["facts"]["gpu.driver_version"] = {**doc["facts"]["gpu.driver_version"], "value": driver}
    return doc


def _write(d: Path, docs: list[tuple[str, dict[str, Any]]]) -> Path:
    d.mkdir(parents=True)
    for file, doc in docs:
        (d / file).write_text(json.dumps(doc))
    return d


def _replay(tmp: Path, facts: Path, mode: str, *args: str) -> tuple[int, dict[str, Any] | None, str]:
    """``spec-check cluster --facts DIR --passes MODE`` in this process (click's runner:
    a second each, not a fresh interpreter)."""
    from click.testing import CliRunner

    from validator.cli.cluster import cluster

    out = tmp / f"{mode}.json"
    r = CliRunner().invoke(cluster, ["--facts", str(facts), "--passes", mode, "--format", "json",
                                     "-o", str(out), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, json.loads(out.read_text()) if out.exists() else None, r.output


def _both(tmp: Path, facts: Path, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    got = {}
    for mode in ("itemize", "fold"):
        rc, result, output = _replay(tmp, facts, mode, *args)
        assert result is not None, output
        got[mode] = (rc, result)
    assert got["itemize"][0] == got["fold"][0]
    return got["itemize"][1], got["fold"][1]


def _cluster_digest(result: dict[str, Any]) -> str:
    return next(s["facts_digest"] for s in result["subjects"] if s["kind"] == "cluster")


def _plat02_values(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each PLAT-02 comparison's value, host by host (a folded one's keys are host lists)."""
    return {f["rule"]: {h: v for key, v in f["value"].items() for h in parse_hosts(key)}
            for f in result["findings"]
            if f["rule"].startswith("PLAT-02.") and f["item"] is None and isinstance(f.get("value"), dict)}


def _hosts_named(result: dict[str, Any]) -> set[str]:
    """Every host a result names: a subject, or in a folded finding's host list."""
    named = {s["name"] for s in result["subjects"] if s["kind"] == "node"}
    for f in result["findings"]:
        if "folded" in f:
            named |= set(parse_hosts(f["folded"]["names"]))
    return named


def test_a_host_number_in_other_digits_is_not_another_hosts():
    """``\\d`` matches any script's digits and ``int`` reads them: "n٣" (Arabic-Indic 3)
    was grouped as n3, so a host list lost a host and ``compress`` of a list and of a set
    differed ("n[3-4]" against "n[3,3-4]"). Only ASCII digits number a host."""
    names = ["n3", "n\u0663", "n4", "gpu\uff11"]  # ... and a fullwidth 1
    text = compress(names)
    assert text == compress(set(names))
    assert sorted(parse_hosts(text)) == sorted(names)


def test_a_host_named_by_arabic_digits_is_named_in_a_folded_replay(tmp_path):
    facts = _write(tmp_path / "fleet", [(f"f{i}.json", _doc(n)) for i, n in enumerate(["n3", "n\u0663", "n4"])])
    itemized, folded = _both(tmp_path, facts)
    assert _hosts_named(folded) == _hosts_named(itemized) == {"n3", "n\u0663", "n4"}
    assert _plat02_values(folded) == _plat02_values(itemized)
    assert set(_plat02_values(folded)["PLAT-02.driver-version-mixed"]) == {"n3", "n\u0663", "n4"}


def test_a_host_number_too_long_for_int_is_a_plain_name(tmp_path):
    """A name ending in 5,000 digits: ``int`` refuses past 4,300 digits, and the folded
    replay died in ``compress`` (the itemized one passed). A number longer than a host
    name can be stays part of the name."""
    long = "n" + "1" * 5000
    assert compress([long, "n2"]) == compress({long, "n2"}) == f"{long},n2"
    facts = _write(tmp_path / "fleet", [(f"f{i}.json", _doc(n)) for i, n in enumerate([long, "n2", "n3"])])
    itemized, folded = _both(tmp_path, facts)
    assert _hosts_named(folded) == _hosts_named(itemized) == {long, "n2", "n3"}


def test_renamed_hosts_read_as_in_the_itemized_replay(tmp_path):
    """Two files of one subject name are named by their file names, and the host keeps
    its subject name as its hostname (``cfacts.rekey``). The folded replay kept the
    hostname the document recorded instead: its cluster document, and so the cluster
    subject's digest, differed from the itemized replay's."""
    docs = [("a.json", _doc("dup", hostname="clone")), ("b.json", _doc("dup", hostname="clone")),
            ("c.json", _doc("c1", hostname="real-c1"))]
    itemized, folded = _both(tmp_path, _write(tmp_path / "fleet", docs))
    assert _hosts_named(folded) == _hosts_named(itemized) == {"a", "b", "c1"}
    assert _cluster_digest(folded) == _cluster_digest(itemized)


def _gpus_one_odd(members: Any) -> dict[str, Any]:
    """The DGX fixture with GPU1 another model, and GPU0 carrying a "members" key."""
    doc = copy.deepcopy(BASE)
    gpus = doc["facts"]["gpu.devices"]["items"]
    gpus[1]["fields"]["name"] = {**gpus[1]["fields"]["name"], "value": "NVIDIA A100-SXM4-80GB"}
    gpus[0]["members"] = members
    return doc


def test_a_members_key_in_a_document_counts_for_nothing(tmp_path):
    """The engine weighs an item by its "members" (a fleet's value group stands for that
    many hosts). It read the key from any document's items, which the facts schema does
    not forbid: a node document whose GPU0 said ``"members": 20`` counted 26 H100s on an
    8-GPU node, could turn which GPU "differs", and ``"members": "many"`` ended in an
    internal error (exit 2). Only the groups spec-check makes itself are weighed."""
    import subprocess
    import sys

    seen = []
    for members in (None, 20, "many"):
        doc = _gpus_one_odd(members)
        if members is None:
            del doc["facts"]["gpu.devices"]["items"][0]["members"]
        path = tmp_path / f"node-{members}.json"
        path.write_text(json.dumps(doc))
        p = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(path),
                            "--select", "PLAT-01.mixed-gpu-models", "--format", "json"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 1, p.stderr
        [f] = json.loads(p.stdout)["findings"]
        seen.append((f["status"], f["message"], f["observed"]))
    assert seen[0][2] == "NVIDIA H100 80GB HBM3 (7); NVIDIA A100-SXM4-80GB (1)"
    assert seen == [seen[0]] * 3


_PROBE_DURATION_RULE = """
  - id: PLAT-02.probe-slow
    requirement: PLAT-02
    scope: cluster
    level: SHOULD
    summary: A host took long to probe
    why: A slow probe is a slow host.
    remediation: Look at the host.
    fact: cluster.probes
    field: duration
    check: {op: lte, value: 30 s}
    since: "1.0"
"""


def test_a_groups_verdict_on_a_member_names_the_member(tmp_path):
    """A rule pack's own cluster rule on a field the items lack (a replay's probes have
    no duration): the engine's "duration of ITEM was not gathered" named the group's
    host list, and the folded report gave that text to each member: the message was not
    the itemized one, and a fleet of n hosts wrote n messages of n names."""
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(Path(__file__).resolve().parents[2] / "rules" / "v1.0", rules)
    with (rules / "cluster.yaml").open("a") as fh:
        fh.write(_PROBE_DURATION_RULE)
    facts = _write(tmp_path / "fleet", [(f"n{i}.json", _doc(f"n{i}")) for i in range(5)])
    itemized, folded = _both(tmp_path, facts, "--rules", str(rules), "--select", "PLAT-02.probe-slow")

    def slow(result: dict[str, Any]) -> list[tuple[Any, ...]]:
        return sorted((f["status"], f["subject"], f["item"], f["message"]) for f in result["findings"])

    assert slow(folded) == slow(itemized)
    assert slow(folded)[0] == ("error", "cluster", "n0", "duration of n0 was not gathered (not in the facts "
                                                         "document: re-record it with this version)")


def test_hosts_a_host_list_cannot_name_are_not_grouped(tmp_path):
    """Replayed documents may name hosts "a,b", "n[1-2]" or "c d": a host list of a group
    holding one ("a,a,b,b,c d,...") reads back as other hosts, or not at all
    (``parse_hosts`` refuses a space). Such a collection is evaluated host by host, as
    where two groups would share one label: the PLAT-02 values are the itemized ones."""
    names = ["a,b", "a", "b", "n[1-2]", "n1", "n2", "c d", "e"]
    docs = [(f"f{i}.json", _doc(n, driver="535.104.05" if n == "e" else None)) for i, n in enumerate(names)]
    itemized, folded = _both(tmp_path, _write(tmp_path / "fleet", docs))

    def values(result: dict[str, Any]) -> dict[str, Any]:
        return {f["rule"]: f["value"] for f in result["findings"]
                if f["rule"].startswith("PLAT-02.") and f["item"] is None and isinstance(f.get("value"), dict)}

    assert values(folded) == values(itemized)
    assert set(values(folded)["PLAT-02.driver-version-mixed"]) == set(names)


def _fleet_with_everything(d: Path) -> Path:
    """40 node documents that group in many ways (other drivers, NIC firmware, no GPUs,
    an unreadable driver, hostnames of their own or shared, two files of one subject
    name), and a saved cluster document among them (by name, in the middle of the
    files) that records two hosts without node documents and each probe's duration."""
    from validator.cluster import facts as cfacts

    docs: list[tuple[str, dict[str, Any]]] = []
    for i in range(40):
        doc = _doc("dup" if i in (15, 27) else f"n{i:03d}",
                   hostname="clone" if i % 3 == 0 else None,
                   driver="535.104.05" if i in (4, 17, 18) else None)
        facts = doc["facts"]
        if i in (8, 30):
            facts["gpu.vendor"] = {"value": "none", "source": "lspci"}
        if i in (9, 21, 33):
            facts["gpu.driver_version"] = {"error": f"NVML_ERROR_{i % 2}", "source": "nvml"}
        if i in (12, 13, 17):
            for port in facts["rdma.ports"]["items"]:
                port["fields"]["fw_ver"] = {**port["fields"]["fw_ver"], "value": "28.40.1000"}
        docs.append((f"n{i:03d}.json", doc))
    rekeyed = {(f[:-5] if d_["subject"]["name"] == "dup" else d_["subject"]["name"]):
               cfacts.rekey(d_, f[:-5]) if d_["subject"]["name"] == "dup" else d_ for f, d_ in docs}
    hosts = [*rekeyed, "gone1", "gone2"]
    saved = cfacts.build(hosts, rekeyed, {"gone1": "ssh: connect timed out", "gone2": "ssh: refused"},
                         name="cluster", tool_version="0.2.0", collected_at="2026-11-23T00:00:00Z",
                         probe_seconds={h: 1.0 + k / 100 for k, h in enumerate(hosts)}, transport="ssh")
    return _write(d, [*docs, ("m-cluster.json", saved)])


def _said(result: dict[str, Any]) -> tuple[Any, ...]:
    """What a result says, host by host: its fail, warn and error findings (a PLAT-02
    comparison's value expanded to hosts, its message left out: host lists there), each
    pass and skip's hosts and count, the subjects and the cluster's digest."""
    bad, hosts, counts = [], {}, {}
    for f in result["findings"]:
        key = (f["rule"], f["status"])
        if "folded" in f:
            hosts.setdefault(key, set()).update(parse_hosts(f["folded"]["names"]))
            counts[key] = counts.get(key, 0) + f["folded"]["verdicts"]
            continue
        if f["status"] in ("pass", "skip") and f["subject"] != "cluster":
            hosts.setdefault(key, set()).add(f["subject"])
            counts[key] = counts.get(key, 0) + 1
            continue
        comparison = f["rule"].startswith("PLAT-02.") and f["item"] is None and f["subject"] == "cluster"
        value = f.get("value")
        if comparison and isinstance(value, dict):
            value = {h: v for key_, v in value.items() for h in parse_hosts(key_)}
        bad.append(json.dumps([f["rule"], f["status"], f["subject"], f["item"], f["observed"], f["expected"],
                               None if comparison else f["message"], value], sort_keys=True))
    subjects = sorted((s["name"], s["kind"], s["source"]) for s in result["subjects"])
    return sorted(bad), hosts, counts, subjects, _cluster_digest(result)


def test_a_fleet_of_every_kind_of_group_says_what_it_says_host_by_host(tmp_path, monkeypatch):
    """The contract on one fleet with a bit of everything, serial and in forked workers."""
    import threading

    from validator.cluster import replay

    facts = _fleet_with_everything(tmp_path / "fleet")
    itemized, folded = _both(tmp_path, facts)
    assert _said(folded) == _said(itemized)
    plat02 = {f["rule"]: f["status"] for f in folded["findings"] if f["rule"].startswith("PLAT-02.")
              and f["item"] is None and f["subject"] == "cluster"}
    assert plat02["PLAT-02.driver-version-mixed"] == "error" and plat02["PLAT-02.nic-firmware-mixed"] == "fail"
    if threading.active_count() == 1:  # the replay forks only from a single-threaded process
        monkeypatch.setattr(replay, "PARALLEL_ABOVE", 2)
        monkeypatch.setattr(replay, "CHUNK", 7)
        rc, parallel, output = _replay(tmp_path, facts, "fold")
        assert rc == 1 and parallel is not None, output
        strip = lambda r: sorted(json.dumps(f, sort_keys=True) for f in r["findings"])  # noqa: E731
        assert strip(parallel) == strip(folded)


def test_a_skipping_sequence_keeps_to_its_length():
    """``replay._Skipping`` (the files or names around the cluster document's place) gave
    an element for an index past its start (``[-5]`` of 4 read the last file) instead of
    an IndexError: a sequence that answers any index hides an off-by-one."""
    import pytest

    from validator.cluster.replay import _Skipping

    files = _Skipping(list("abcde"), 2)  # the hosts' files: c is the cluster document
    names = _Skipping(["h0", "h1", "h2"], 1, by_position=True)  # names by file position
    assert list(files) == ["a", "b", "d", "e"] and files[-1] == "e" and files[-4] == "a"
    assert list(names) == ["h0", "", "h1", "h2"] and names[-1] == "h2" and names[-3] == ""
    for seq in (files, names):
        for k in (len(seq), -len(seq) - 1):
            with pytest.raises(IndexError):
                seq[k]


def test_a_host_range_of_digits_int_cannot_read_is_a_clear_error():
    """``expand`` took a range bound by ``str.isdigit``, which "²" and "٣" pass, then
    ``int`` refused "²" and a 5,000-digit bound: ``--hosts 'n[²]'`` was an internal error.
    A bound is ASCII digits, no longer than a host name (as ``compress`` writes them)."""
    import pytest

    from validator.errors import SpecCheckError

    for bad in ("n[²]", "n[1-²]", "n[\u0663]", "n[" + "1" * 5000 + "]"):
        with pytest.raises(SpecCheckError, match="bad host range"):
            parse_hosts(bad)
    assert parse_hosts("n[08-10]") == ["n08", "n09", "n10"]
