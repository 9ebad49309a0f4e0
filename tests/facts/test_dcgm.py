"""DCGM diagnostics: dcgmi's JSON of both versions, each test mapped to its requirement; an
absent DCGM is a skip that says so, a hanging dcgmi an error after its deadline."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import built
from validator.evaluate.engine import evaluate
from validator.facts.node import dcgm

KERNEL = Path(__file__).resolve().parents[1] / "fixtures" / "kernel"
ROOT = Path(__file__).resolve().parents[2]
# NVIDIA/DCGM@686e1024 testing/python3/dcgm_diag_schema.json, the properties this module reads
DCGM4_SCHEMA = {
    "type": "object", "required": ["DCGM Diagnostic"],
    "properties": {"DCGM Diagnostic": {"type": "object", "properties": {"test_categories": {
        "type": "array", "items": {"type": "object", "required": ["category", "tests"], "properties": {
            "category": {"type": "string"},
            "tests": {"type": "array", "items": {"type": "object", "required": ["name", "results", "test_summary"],
                      "properties": {"name": {"type": "string"},
                                     "results": {"type": "array", "items": {"type": "object", "required": [
                                         "entity_group", "entity_group_id", "entity_id", "status"]}},
                                     "test_summary": {"type": "object", "required": ["status"]}}}}}}}}}},
}


def _parsed(name: str, rc: int = 0):
    return dcgm.parse_output((KERNEL / name).read_text(), rc, "", "dcgmi diag -r 1 -j")


def _tests(facts):
    return {m["id"]: {k: v.get("value", v.get("error")) for k, v in m["fields"].items()} for m in facts["dcgm.tests"]["items"]}


def test_dcgm3_pass_output_of_gcms_tests():
    f = _parsed("dcgm3_pass.json")
    assert f["dcgm.diag_status"]["value"] == "ran"
    t = _tests(f)
    assert set(t) >= {"Blacklist", "NVML Library", "Page Retirement/Row Remap", "Inforom"}
    assert {v["result"] for v in t.values()} == {"pass"}
    assert t["Page Retirement/Row Remap"]["requirement"] == "MEM-01"
    assert t["NVML Library"]["requirement"] == "PLAT-01"


def test_dcgm3_fail_output_maps_fail_and_warn():
    t = _tests(_parsed("dcgm3_fail.json", rc=205))  # dcgmi exits non-zero and still prints JSON
    assert t["Persistence Mode"]["result"] == "fail" and t["Environment Variables"]["result"] == "warn"


def test_dcgm4_output_follows_dcgms_schema_and_keeps_its_warnings():
    doc = json.loads((KERNEL / "dcgm4_fail.json").read_text())
    jsonschema.validate(doc, DCGM4_SCHEMA)
    t = _tests(_parsed("dcgm4_fail.json", rc=226))
    assert t["memory"] == {"category": "Hardware", "requirement": "MEM-01", "result": "fail",
                           "detail": "GPU 1: A memory mismatch was detected on GPU 1, but no error was reported by CUDA or ECC"}
    assert t["pcie"]["result"] == "skip" and t["pcie"]["requirement"] == "TOPO-02"


def test_findings_per_test_under_the_pack():
    facts = {**_parsed("dcgm4_fail.json")}
    b = built(rules_version="1.1")
    doc = {"schema": "spec-check/facts/3", "subject": {"kind": "node", "name": "n1"}, "facts": facts}
    got = {f.item: f.status.value for f in evaluate(b.ctx, b.pack, [doc], select=("PLAT-01.dcgm-diag-failed",))}
    assert got == {"software": "pass", "memory": "fail", "pcie": "skip"}


def test_a_diagnostic_that_skipped_every_test_shows_no_pass():
    doc = json.loads((KERNEL / "dcgm4_fail.json").read_text())
    for cat in doc["DCGM Diagnostic"]["test_categories"]:
        for test in cat["tests"]:
            test["test_summary"]["status"] = "Skip"
            for r in test["results"]:
                r["status"] = "Skip"
    facts = dcgm.parse_output(json.dumps(doc), 0, "", "dcgmi diag -r 1 -j")
    b = built(rules_version="1.1")
    sub = {"schema": "spec-check/facts/3", "subject": {"kind": "node", "name": "n1"}, "facts": facts}
    found = evaluate(b.ctx, b.pack, [sub], select=("PLAT-01.dcgm-diag-failed",))
    [f] = found
    assert f.status.value == "skip" and f.message == "DCGM skipped every test: the diagnostic judged nothing"


@pytest.mark.parametrize(("stdout", "rc", "stderr", "words"), [
    ("", 255, "Error: unable to establish a connection to the specified host: localhost", "is nv-hostengine running?"),
    ('{"DCGM Diagnostic": {"test_categories": [], "runtime_error": "Unable to run: no GPU"}}', 1, "", "Unable to run"),
    ('{"something": 1}', 0, "", "unknown shape"),
    ('{"DCGM Diagnostic": {"test_categories": [{"category": "x", "tests": [', 0, "", "not JSON"),
    ('{"DCGM GPU Diagnostic": {"test_categories": []}}', 0, "", "lists no test"),
])
def test_bad_answers_are_errors_with_the_reason(stdout, rc, stderr, words):
    f = dcgm.parse_output(stdout, rc, stderr, "dcgmi diag -r 1 -j")
    assert words in f["dcgm.diag_status"]["error"] and "error" in f["dcgm.tests"]


def _fake_dcgmi(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "dcgmi"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_a_hanging_dcgmi_is_an_error_after_the_deadline(tmp_path):
    exe = _fake_dcgmi(tmp_path, "exec sleep 30")
    t0 = time.monotonic()
    f = dcgm.run(str(exe), 1, deadline=0.5)
    assert time.monotonic() - t0 < 10
    assert f["dcgm.diag_status"]["error"] == "dcgmi diag -r 1 -j did not finish in 0.5 s (hung? nv-hostengine unresponsive?)"


def _check(tmp_path: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run([sys.executable, "-m", "validator", "check", "--format", "json", *args],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    return {f["rule"] + (f" {f['item']}" if f.get("item") else ""): f for f in json.loads(r.stdout)["findings"]}


def test_check_dcgm_diag_runs_dcgmi_and_judges_each_test(tmp_path):
    _fake_dcgmi(tmp_path, f'[ "$*" = "diag -r 2 -j" ] || exit 3\ncat {KERNEL / "dcgm4_fail.json"}\nexit 226')
    got = _check(tmp_path, "--dcgm-diag", "2", "--select", "PLAT-01.dcgm")
    assert got["PLAT-01.dcgm-diag-failed memory"]["status"] == "fail"
    assert "A memory mismatch was detected on GPU 1" in got["PLAT-01.dcgm-diag-failed memory"]["message"]


def test_check_dcgm_diag_asked_for_and_not_run_is_an_error(tmp_path):
    """``--dcgm-diag N`` where dcgmi is absent: the GPU test a prolog relies on did not run.
    An error finding (exit 1), never a skip behind a conformant exit code (issue 30)."""
    env_path = tmp_path / "empty"
    env_path.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(env_path)}
    r = subprocess.run([sys.executable, "-m", "validator", "check", "--format", "json", "--dcgm-diag", "1",
                        "--select", "PLAT-01.dcgm"], capture_output=True, text=True, timeout=120, env=env,
                       cwd=env_path)
    [f] = json.loads(r.stdout)["findings"]
    assert f["status"] == "error" and "dcgmi not found" in f["message"] and "--dcgm-diag 1" in f["message"]
    assert r.returncode == 1, r.stderr


def test_check_without_dcgm_diag_is_a_skip_that_says_so(tmp_path):
    got = _check(tmp_path, "--select", "PLAT-01.dcgm")
    [f] = got.values()
    assert f["status"] == "skip" and "not requested" in f["message"]
