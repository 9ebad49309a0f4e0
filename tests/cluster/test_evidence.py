"""Whether each host's facts are its own and current (issue 35, deliverable 2): the auditor's
8-node fleet (copied files, one GPU UUID everywhere, one hostname in every file, facts dated
2019 and 2027) replayed itemized and folded, and each check alone on a fleet that is
otherwise its own. Expected verdicts are written from the scenario, before running."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from validator.cluster import evidence
from validator.facts.node.host import _board_serial, _machine_id

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "facts" / "dgx_h100.json"
CLOCK = "1795000000"  # 2026-11-18T11:06:40Z, conftest's pinned clock
OWN, STALE = "PLAT-02.facts-not-own", "PLAT-02.facts-stale"


def host_doc(name: str, *, collected_at: str = "2026-11-18T00:00:00Z", uuids_of: str | None = None,
             machine_of: str | None = None) -> dict[str, Any]:
    """The DGX fixture as host ``name``, with GPU UUIDs and a machine ID of its own (or of
    ``uuids_of`` / ``machine_of``: another host's)."""
    doc = copy.deepcopy(json.loads(FIXTURE.read_text()))
    doc["subject"] = {"kind": "node", "name": name}
    doc["collected_at"] = collected_at
    facts = doc["facts"]
    facts["host.hostname"]["value"] = name
    tag = hashlib.sha256((uuids_of or name).encode()).hexdigest()
    for i, m in enumerate(facts["gpu.devices"]["items"]):
        m["fields"]["uuid"]["value"] = f"GPU-{tag[:8]}-{i:04d}-4000-8000-{tag[8:20]}"
    facts["host.machine_id"]["value"] = hashlib.md5((machine_of or name).encode()).hexdigest()
    facts["host.board_serial"]["value"] = f"SN-{name}"
    return doc


def write(folder: Path, docs: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for file, doc in docs.items():
        (folder / file).write_text(json.dumps(doc))
    return folder


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": CLOCK}
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def replay(folder: Path, *args: str, passes: str = "itemize") -> tuple[int, dict[str, Any]]:
    r = run_cli("cluster", "--facts", str(folder), "--passes", passes, "--format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def verdicts(result: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """(rule, host) -> (status, message) of the two evidence rules' itemized findings (a
    folded replay folds its passes: they are counted by ``passes``)."""
    return {(f["rule"], f["subject"]): (f["status"], f["message"]) for f in result["findings"]
            if f["rule"] in (OWN, STALE) and not f.get("folded")}


def passes(result: dict[str, Any], rule: str) -> int:
    """How many hosts passed ``rule``, itemized or folded."""
    return sum((f.get("folded") or {}).get("subjects", 1) for f in result["findings"]
               if f["rule"] == rule and f["status"] == "pass")


@pytest.fixture(scope="module")
def auditor_fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The issue's fleet: every file a copy of dgx-h100-01's document (its hostname in all
    eight), hosts 1-5 byte-identical, 6-8 with GPUs 1-7 of their own but GPU0 shared, host 7
    dated 2019 and host 8 dated 2027-06-01."""
    base = host_doc("dgx-h100-01")
    docs = {}
    for i in range(1, 9):
        d = copy.deepcopy(base)
        if i > 5:
            for m in d["facts"]["gpu.devices"]["items"][1:]:
                m["fields"]["uuid"]["value"] = m["fields"]["uuid"]["value"][:-2] + f"{i:02d}"
            d["facts"]["host.machine_id"]["value"] = hashlib.md5(f"m{i}".encode()).hexdigest()
            d["facts"]["memory.total"]["value"] += i
        if i == 7:
            d["collected_at"] = "2019-03-01T00:00:00Z"
        if i == 8:
            d["collected_at"] = "2027-06-01T00:00:00Z"
        docs[f"dgx-h100-{i:02d}.json"] = d
    return write(tmp_path_factory.mktemp("auditor") / "fleet", docs)


@pytest.mark.parametrize("mode", ["itemize", "fold"])
def test_the_auditors_fleet_is_refused_host_by_host(auditor_fleet: Path, mode: str) -> None:
    code, result = replay(auditor_fleet, passes=mode)
    assert code == 1
    assert not result["summary"]["conformant"]
    v = verdicts(result)
    hosts = [f"dgx-h100-{i:02d}" for i in range(1, 9)]
    for h in hosts:  # every host's facts are a copy in some way: each an error naming files
        status, message = v[(OWN, h)]
        assert status == "error", (h, status)
        assert "shares" in message and ".json" in message, message
    for h in hosts[1:]:  # every file but the first holds dgx-h100-01's facts under another name
        assert f'{h}.json holds the facts of "dgx-h100-01"' in v[(OWN, h)][1]
    assert 'holds the facts of' not in v[(OWN, "dgx-h100-01")][1]
    assert "shares its facts (the same bytes) with dgx-h100-02.json" in v[(OWN, "dgx-h100-01")][1]
    assert "shares a GPU UUID with" in v[(OWN, "dgx-h100-06")][1]  # GPU0 only
    assert "same bytes" not in v[(OWN, "dgx-h100-06")][1]
    assert v[(STALE, "dgx-h100-07")][0] == "fail"  # 2019: older than 30 d
    status, message = v[(STALE, "dgx-h100-08")]
    assert status == "error" and "2027-06-01T00:00:00Z" in message and "future-dated" in message
    assert passes(result, STALE) == 6
    assert all(v.get((STALE, h), ("pass",))[0] == "pass" for h in hosts[:6])


def test_itemized_and_folded_replays_agree(auditor_fleet: Path) -> None:
    _, itemized = replay(auditor_fleet, passes="itemize")
    _, folded = replay(auditor_fleet, passes="fold")
    def problems(result: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
        return {k: v for k, v in verdicts(result).items() if v[0] != "pass"}

    assert problems(itemized) == problems(folded) and len(problems(itemized)) == 10
    assert passes(itemized, STALE) == passes(folded, STALE) == 6


def test_a_fleet_whose_facts_are_its_own_passes_both(tmp_path: Path) -> None:
    folder = write(tmp_path / "f", {f"node{i}.json": host_doc(f"node{i}") for i in range(1, 5)})
    for mode in ("itemize", "fold"):
        _, result = replay(folder, passes=mode)
        assert verdicts(result) == {} or {s for s, _ in verdicts(result).values()} == {"pass"}
        assert passes(result, OWN) == passes(result, STALE) == 4
        node1 = next(s for s in result["subjects"] if s["name"] == "node1")
        assert node1["machine_id"] == hashlib.md5(b"node1").hexdigest()
        assert node1["board_serial"] == "SN-node1"
        assert node1["probe_version"]


def test_a_file_named_after_another_host(tmp_path: Path) -> None:
    folder = write(tmp_path / "f", {"node1.json": host_doc("node1"), "node7.json": host_doc("node8")})
    _, result = replay(folder)
    v = verdicts(result)
    assert v[(OWN, "node1")][0] == "pass"
    status, message = v[(OWN, "node8")]
    assert status == "error" and 'node7.json holds the facts of "node8"' in message


def test_a_shared_machine_id_alone(tmp_path: Path) -> None:
    folder = write(tmp_path / "f", {"a.json": host_doc("a"), "b.json": host_doc("b", machine_of="a")})
    _, result = replay(folder)
    v = verdicts(result)
    for h, other in (("a", "b.json"), ("b", "a.json")):
        status, message = v[(OWN, h)]
        assert status == "error" and f"shares its machine ID with {other}" in message


def test_a_host_outside_the_recorded_fleet(tmp_path: Path) -> None:
    """A --save-facts folder recorded hosts a and b; a third file dropped in is no entry of it."""
    from validator.cluster import facts as cfacts

    saved = tmp_path / "saved"
    docs = {h: host_doc(h) for h in ("a", "b")}
    doc = cfacts.build(["a", "b"], docs, {}, name="cluster", tool_version="test",
                       collected_at="2026-11-18T00:00:00Z", transport="ssh")
    write(saved, {"cluster.json": doc, "a.json": docs["a"], "b.json": docs["b"], "c.json": host_doc("c")})
    for mode in ("itemize", "fold"):
        _, result = replay(saved, passes=mode)
        v = verdicts(result)
        status, message = v[(OWN, "c")]
        assert status == "error" and "not an entry of the recorded fleet" in message and "cluster.json" in message
        assert v.get((OWN, "a"), ("pass",))[0] == "pass"


def test_the_bound_is_the_profiles_and_the_rules_can_be_ignored(auditor_fleet: Path, tmp_path: Path) -> None:
    folder = write(tmp_path / "f", {"old.json": host_doc("old", collected_at="2019-03-01T00:00:00Z"),
                                    "new.json": host_doc("new")})
    _, result = replay(folder)
    assert verdicts(result)[(STALE, "old")][0] == "fail"
    stale = next(f for f in result["findings"] if f["rule"] == STALE and f["subject"] == "old")
    assert "720 h" in stale["expected"] or "30 d" in stale["expected"]
    _, result = replay(folder, "--set", "facts_max_age=3000d")
    assert verdicts(result)[(STALE, "old")][0] == "pass"
    _, result = replay(folder, "--ignore", "PLAT-02.facts-stale")
    assert (STALE, "old") not in verdicts(result)
    _, result = replay(folder, "--rules-version", "1.1")
    assert verdicts(result) == {}  # pack v1.1 as released: no evidence rules


def test_a_live_fleet_with_a_cloned_machine_id() -> None:
    """A live run has no files: the duplicates are still judged (a cloned image's machine ID)."""
    from validator.cluster import facts as cfacts

    docs = {"a": host_doc("a"), "b": host_doc("b", machine_of="a"), "c": host_doc("c")}
    doc = cfacts.build(["a", "b", "c"], docs, {}, name="cluster", tool_version="test",
                       collected_at="2026-11-18T00:00:00Z", transport="ssh")
    fields = {m["id"]: m["fields"] for m in doc["facts"]["cluster.hosts"]["items"]}
    assert "error" in fields["a"]["own_facts"] and "host b" in fields["a"]["own_facts"]["error"]
    assert fields["c"]["own_facts"]["value"] == "ok"
    assert fields["c"]["facts_age"]["unit"] == "h"


@pytest.mark.parametrize(("collected", "expect"), [
    ("2026-11-18T11:06:40Z", 0), ("2026-11-18T10:06:40Z", 1), ("2026-11-18T10:06:39Z", 61 / 60),
    ("2026-11-18T09:46:40Z", 80 / 60),
    ("2026-11-18T11:10:00Z", 0),  # 200 s ahead: within the 5-minute clock skew
])
def test_age_in_hours_rounds_up_to_the_minute(collected: str, expect: float) -> None:
    from datetime import datetime, timezone

    now = datetime(2026, 11, 18, 11, 6, 40, tzinfo=timezone.utc)
    assert evidence.age(collected, now)["value"] == expect


@pytest.mark.parametrize(("collected", "words"), [
    (None, "records no collected_at"), ("", "records no collected_at"), ("yesterday", "not an ISO 8601 time"),
    (1763424000, "not an ISO 8601 time (a int"), (["2026-11-18T00:00:00Z"], "(a list"),
    ("2026-11-18T11:12:41Z", "future-dated"),
])
def test_age_errors(collected: object, words: str) -> None:
    from datetime import datetime, timezone

    now = datetime(2026, 11, 18, 11, 6, 40, tzinfo=timezone.utc)
    assert words in evidence.age(collected, now)["error"]


def test_a_bound_in_minutes_is_judged_to_the_minute(tmp_path: Path) -> None:
    """80 minutes old under a 90-minute bound passes (an age rounded up to the hour read 2 h)."""
    folder = write(tmp_path / "f", {"n1.json": host_doc("n1", collected_at="2026-11-18T09:46:40Z"),
                                    "n2.json": host_doc("n2", collected_at="2026-11-18T09:30:00Z")})
    for mode in ("itemize", "fold"):
        _, result = replay(folder, "--set", "facts_max_age=90min", passes=mode)
        v = verdicts(result)
        assert v.get((STALE, "n1"), ("pass",))[0] == "pass" and v[(STALE, "n2")][0] == "fail", v


def test_a_collected_at_that_is_no_string_is_an_error_in_both_replays(tmp_path: Path) -> None:
    odd = host_doc("n2")
    odd["collected_at"] = ["2026-11-18T00:00:00Z"]
    folder = write(tmp_path / "f", {"n1.json": host_doc("n1"), "n2.json": odd})
    for mode in ("itemize", "fold"):
        code, result = replay(folder, passes=mode)
        status, message = verdicts(result)[(STALE, "n2")]
        assert code == 1 and status == "error" and "not an ISO 8601 time" in message, (mode, message)
        # the subject records no time (a list is none), as the result's schema allows; HTML and
        # OSCAL render it (they failed on a number or a list before)
        assert next(x for x in result["subjects"] if x["name"] == "n2")["collected_at"] is None
        import jsonschema

        schema = json.loads((Path(__file__).resolve().parents[2] / "spec" / "result.schema.json").read_text())
        jsonschema.validate(result, schema)
        for fmt in ("html", "oscal"):
            r = run_cli("cluster", "--facts", str(folder), "--passes", mode, "--format", fmt)
            assert r.returncode == 1 and "Traceback" not in r.stderr and r.stdout, (fmt, r.stderr)


def test_machine_id_and_board_serial_as_a_probe_reads_them(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    assert "error" in _machine_id(tmp_path)  # neither file
    (tmp_path / "etc/machine-id").write_text("uninitialized\n")  # systemd's first boot
    assert "error" in _machine_id(tmp_path)
    (tmp_path / "etc/machine-id").write_text("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    assert _machine_id(tmp_path)["value"] == "3d1219c7c4c5404aaa1f6d2a48adfda4"
    serial = tmp_path / "board_serial"
    for placeholder in ("Default string", "To be filled by O.E.M.", "0000000000", " "):
        serial.write_text(placeholder + "\n")
        assert "error" in _board_serial(serial), placeholder
    serial.write_text("1582123456789\n")
    assert _board_serial(serial)["value"] == "1582123456789"
    assert "error" in _board_serial(tmp_path / "missing")


def test_file_names_host() -> None:
    names = ("10.0.0.7", "node07.cluster.example")
    assert evidence.file_names_host(Path("node07.json"), names)  # the short host name
    assert evidence.file_names_host(Path("10.0.0.7.json"), names)
    assert not evidence.file_names_host(Path("node08.json"), names)
    assert evidence.file_names_host(Path("a_b.json"), ("a/b",))  # as --save-facts names it


def test_a_single_nodes_old_or_future_facts_are_a_note_and_the_verdict_stands(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.json"
    fresh.write_text(json.dumps(host_doc("fresh")))
    r = run_cli("check", "--facts", str(fresh))
    assert r.returncode == 0 and "note" not in r.stderr, r.stderr
    for name, when, words in (("old", "2019-03-01T00:00:00Z", "older than facts_max_age 30 d (default)"),
                              ("ahead", "2027-06-01T00:00:00Z", "future-dated facts")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(host_doc(name, collected_at=when)))
        r = run_cli("check", "--facts", str(path))
        assert r.returncode == 0, r.stderr  # the node's verdict is its facts'
        assert r.stderr.startswith(f"spec-check: note: {path}: ") and words in r.stderr, r.stderr
        assert len(r.stderr.splitlines()) == 1
    r = run_cli("check", "--facts", str(tmp_path / "old.json"), "--set", "facts_max_age=3000d")
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_oscal_names_each_nodes_probe_and_machine(tmp_path: Path) -> None:
    folder = write(tmp_path / "f", {"node1.json": host_doc("node1"), "node2.json": host_doc("node2")})
    r = run_cli("cluster", "--facts", str(folder), "--format", "oscal")
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    props = [{p["name"]: p["value"] for p in item.get("props", [])}
             for result in doc["assessment-results"]["results"]
             for item in result.get("local-definitions", {}).get("inventory-items", [])]
    node1 = next(p for p in props if p.get("machine-id") == hashlib.md5(b"node1").hexdigest())
    assert node1["board-serial"] == "SN-node1" and node1["probe-version"]
