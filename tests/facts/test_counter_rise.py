"""Error counters that rose between two probes of one node, GPUs matched by UUID."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from validator.facts.node import counter_rise

ROOT = Path(__file__).resolve().parents[2]
DGX = json.loads((ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json").read_text())


def _later(changes):
    doc = copy.deepcopy(DGX)
    for (gpu, field), v in changes.items():
        m = next(m for m in doc["facts"]["gpu.devices"]["items"] if m["id"] == gpu)
        m["fields"][field] = v
    return doc


def _risen(doc, at="2026-11-18T00:05:00+00:00"):  # 300 s after the fixture was recorded
    fact = counter_rise.rises(DGX, doc["facts"], datetime.fromisoformat(at))
    return {m["id"]: m["fields"]["risen"].get("value", m["fields"]["risen"].get("error")) for m in fact["items"]}


def test_nothing_rose_between_two_identical_probes():
    assert set(map(tuple, _risen(DGX).values())) == {()}


def test_a_rising_counter_is_named_with_before_after_and_interval():
    got = _risen(_later({("GPU3", "pcie_replay_count"): {"value": 40},
                         ("GPU3", "nvlink_crc_errors"): {"value": 12}}))
    assert got["GPU3"] == ["pcie_replay_count 0 -> 40 in 300 s", "nvlink_crc_errors 0 -> 12 in 300 s"]
    assert got["GPU0"] == []


def test_gpus_are_matched_by_uuid_not_index():
    doc = copy.deepcopy(DGX)
    items = doc["facts"]["gpu.devices"]["items"]
    items[0]["fields"]["uuid"], items[1]["fields"]["uuid"] = items[1]["fields"]["uuid"], items[0]["fields"]["uuid"]
    items[0]["fields"]["pcie_replay_count"] = {"value": 5}  # GPU0 now holds GPU1's UUID
    got = _risen(doc)
    assert got["GPU0"] == ["pcie_replay_count 0 -> 5 in 300 s"]


def test_unknown_is_never_no_rise():
    doc = _later({("GPU2", "ecc_uncorrected_volatile"): {"error": "Unknown: Unknown Error"}})
    doc["facts"]["gpu.devices"]["items"][5]["fields"]["uuid"] = {"value": "GPU-new"}
    got = _risen(doc)
    assert got["GPU2"] == "unreadable in one of the two probes: ecc_uncorrected_volatile"
    assert got["GPU5"] == "GPU5 (GPU-new) is not in the earlier probe"


def test_probe_since_an_earlier_probe_end_to_end(tmp_path):
    """`spec-check probe --since` on this machine's own earlier probe: it compares (this
    machine may have no GPU: then the comparison says so or lists none)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = tmp_path / "first.json"
    subprocess.run([sys.executable, "-m", "validator", "probe", "-o", str(first)], check=True, env=env,
                   timeout=120, capture_output=True)
    r = subprocess.run([sys.executable, "-m", "validator", "probe", "--since", str(first)], env=env,
                       timeout=120, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fact = json.loads(r.stdout)["facts"]["gpu.counter_rises"]
    assert fact.get("source", "").startswith("compared with the probe of ") or "error" in fact
    bad = subprocess.run([sys.executable, "-m", "validator", "probe", "--since", str(tmp_path / "absent.json")],
                         env=env, timeout=60, capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_without_since_the_fact_says_how_to_compare():
    from validator.facts.node.base import Context

    assert counter_rise.collect(Context())["gpu.counter_rises"] == {"items": [], "source": counter_rise.NOT_COMPARED}
    assert datetime.now(timezone.utc)  # (the live path passes the probe's own time)
