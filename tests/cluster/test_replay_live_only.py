"""A rule on a fact only the live node gives is a skip on replayed facts, saying why, never
an error a profile can turn on (issue 34, deliverable 5).

The fleet of tests/reports/fixtures/fleet was recorded from trees, where a dcgm-exporter runs
but its /metrics cannot be scraped: `telemetry.families` is an error with ``live_only``. A
profile declaring ``platform_metric_families`` (what makes a job's MON-01 pass) then asks
MON-03.platform-family-not-exported to judge it on every node.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from validator.errors import FactsFileError
from validator.facts import document

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "tests" / "reports" / "fixtures" / "fleet"
JOB = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm"
REASON = ("replayed facts: scraped only on the live node (a dcgm-exporter runs in the recorded process tree; "
          "run spec-check check there)")


def spec_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}, timeout=300)


def statuses(path: Path) -> Counter[str]:
    return Counter(f["status"] for f in json.loads(path.read_text())["findings"])


def test_a_fleet_replayed_with_the_jobs_profile_merges_with_the_job_without_new_errors(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text("parameters: {platform_metric_families: [memory]}\n")
    plain, fleet, job = tmp_path / "plain.json", tmp_path / "fleet.json", tmp_path / "job.json"
    assert spec_check("cluster", "--facts", str(FLEET), "--format", "json", "-o", str(plain)).returncode == 1
    assert spec_check("cluster", "--facts", str(FLEET), "--profile", str(profile), "--format", "json",
                      "-o", str(fleet)).returncode == 1  # the fixture fleet's own failures (ECC, NVLink, port)
    assert spec_check("lint", str(JOB), "--profile", str(profile), "--format", "json", "-o", str(job)).returncode == 0
    assert statuses(fleet)["error"] == statuses(plain)["error"] == 0
    judged = [f for f in json.loads(fleet.read_text())["findings"]
              if f["rule"] == "MON-03.platform-family-not-exported"]
    assert judged and {(f["status"], f["message"]) for f in judged} == {("skip", REASON)}
    merged = tmp_path / "merged.json"
    r = spec_check("report", str(fleet), str(job), "--format", "json", "-o", str(merged))
    assert r.returncode == 0 and "error:" not in r.stderr, r.stderr  # report renders; it does not judge again
    assert statuses(merged)["error"] == 0
    shown = spec_check("report", str(fleet), str(job))
    assert " 0 error," in shown.stdout


def test_an_error_of_another_kind_is_still_an_error(tmp_path: Path) -> None:
    """Only ``live_only`` makes the skip: the same fact unreadable for another reason is an error."""
    doc = json.loads((FLEET / "gpu-a01.json").read_text())
    del doc["facts"]["telemetry.families"]["live_only"]
    path = tmp_path / "gpu-a01.json"
    path.write_text(json.dumps(doc))
    r = spec_check("check", "--facts", str(path), "--set", "platform_metric_families=memory", "--format", "json",
                   "--select", "MON-03.platform")
    [f] = json.loads(r.stdout)["findings"]
    assert f["status"] == "error" and "could not be read" in f["message"]


@pytest.mark.parametrize("fact", [{"value": 1, "live_only": True}, {"error": "x", "live_only": "yes"}])
def test_live_only_is_true_and_only_on_an_error(fact: dict[str, object]) -> None:
    doc = document.new_document("node", "n", {"telemetry.families": fact}, tool_version="0",
                                 collected_at="2026-01-01T00:00:00Z")  # type: ignore[dict-item]
    with pytest.raises(FactsFileError, match="live_only must be true, and only on an error"):
        document.validate(doc, "x.json")
