"""docs/runs.md: each figure and name it states is the code's (the behaviours it describes
are tested in test_recordings, test_bad_input and test_streams)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import built
from validator.runs import cadence, events, readers, sniff
from validator.runs.families import FAMILIES, classify
from validator.runs.measure import AS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "runs.md").read_text()
FLAT = " ".join(DOC.split())  # sentences as read, whatever the line breaks


def test_figures_are_the_code() -> None:
    assert f"at most {sniff.MAX_FILES:,} files" in FLAT
    assert f"longer than {readers.MAX_LINE >> 20} MiB" in FLAT
    assert f"at least {cadence.STALL_FACTOR:g}x the median and {cadence.STALL_MIN_S:g} s" in FLAT
    assert f"repeats after more than {cadence.SAME_STEP_RESTART_S:g} s" in FLAT
    assert "TensorBoard event files need no extra and no tensorboard" in FLAT and "[runs]" not in FLAT
    assert events.MAX_RECORD == 2**31 - 1 and "a length over 2 GiB" in FLAT


def test_the_table_of_kinds_is_the_code() -> None:
    rows = set(re.findall(r"^\| ([^|]+?) \| ", DOC, re.M)) - {"read as", "rule"}
    kinds = {r for r in rows if not r.startswith("MON-02")}
    assert kinds == set(AS.values())


def test_families_and_rules_are_the_pack() -> None:
    assert "Families: " + ", ".join(FAMILIES) + "." in FLAT
    pack = built(rules_version="1.1").pack
    rules = {r.id: r for r in pack.rules}
    named = re.findall(r"^\| (MON-02\.[\w-]+) \| (\(SHOULD\) )?", DOC, re.M)
    assert {n for n, _ in named} == {r for r in rules if r.startswith("MON-02.measured") or r in (
        "MON-02.metrics-stalled", "MON-02.nonfinite-values")}
    for n, should in named:
        assert (rules[n].level == "SHOULD") == bool(should), n


def test_device_stats_cpu_counts_for_no_family() -> None:
    for k in ("cpu_percent", "cpu_vm_percent", "cpu_swap_percent"):
        assert classify(f"DeviceStatsMonitor.on_train_batch_end/{k}") is None
    assert classify("DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current").family == "memory"


def test_which_framework_rows_are_pinned() -> None:
    import yaml

    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "validator" / "runs" / "tags.yaml").read_text())
    version = {fw["name"]: fw["version"] for fw in data["frameworks"]}
    assert (version["HF transformers"], version["Lightning"]) == ("5.17.0", "2.6.6")
    assert version["torchtitan"].startswith("commit ")
    assert (version["Megatron-LM"], version["NeMo"], version["DeepSpeed monitor"]) == ("core_v0.19.0", "2.4.0",
                                                                                      "0.19.5")
    for fw in data["frameworks"]:
        if fw["name"] in ("Megatron-LM", "NeMo", "DeepSpeed monitor"):
            at = fw["read_at"]
            assert re.fullmatch(r"[0-9a-f]{40}", at["commit"]) and at["files"] and at["ref"] in FLAT
            assert at["ref"].lstrip("v") == fw["version"] and at["commit"] in fw["source"]
    assert "scripts/check_framework_tags.py" in FLAT
    assert "torchtitan at the commit its names were read at" in FLAT
