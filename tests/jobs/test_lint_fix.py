"""``spec-check lint --fix`` and ``--diff`` as users run them, and the bad input they refuse:
a file the lint could not read, a read-only file, a symlink out of the job's folder, a file
edited between read and write (one line each, nothing written, exit 2)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
NEWUSER = HERE / "fixes" / "newuser"


def _run(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(cmd)
    assert argv[0] == "spec-check"
    return subprocess.run([sys.executable, "-m", "validator", *argv[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def configs(tmp_path: Path) -> Path:
    shutil.copytree(NEWUSER, tmp_path / "configs")
    return tmp_path


def _texts(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((root / "configs").iterdir())}


def test_diff_prints_the_edits_and_writes_nothing(configs: Path) -> None:
    before = _texts(configs)
    r = _run("spec-check lint configs/ --diff", configs)
    assert r.returncode == 1, r.stderr
    assert "+include_num_input_tokens_seen: true\n" in r.stdout
    assert "-bf16: false          # kept off while debugging\n" in r.stdout
    assert "+bf16: true          # kept off while debugging\n" in r.stdout  # the comment stays
    assert '+    "steps_per_print": 100,\n' in r.stdout
    assert _texts(configs) == before
    assert "Traceback" not in r.stderr


def test_fix_applies_them_keeping_the_layout_and_lints_again(configs: Path) -> None:
    r = _run("spec-check lint configs/ --fix", configs)
    assert "Traceback" not in r.stderr
    assert "spec-check: fixed configs/train.yaml" in r.stderr
    after = _texts(configs)
    yaml_lines = after["train.yaml"].splitlines()
    old_lines = (NEWUSER / "train.yaml").read_text().splitlines()
    assert yaml_lines[0] == "# HF TrainingArguments for train.py"
    changed = [(a, b) for a, b in zip(old_lines, yaml_lines, strict=False) if a != b]
    assert changed == [("bf16: false          # kept off while debugging", "bf16: true          # kept off while debugging"),
                       ("logging_steps: 500", "logging_steps: 100")]
    assert yaml_lines[len(old_lines):] == ["include_num_input_tokens_seen: true"]
    ds = json.loads(after["ds_config.json"])
    assert ds["steps_per_print"] == 100 and ds["zero_optimization"]["stage"] == 2
    assert after["ds_config.json"].count("\n") == (NEWUSER / "ds_config.json").read_text().count("\n") + 1
    # linted again: what the edits fixed is gone from the report
    assert "PREC-01" not in r.stdout and "MON-02" not in r.stdout
    again = _run("spec-check lint configs/ --diff", configs)
    assert again.returncode == 0 and again.stdout == ""


def test_a_read_only_file_is_refused_and_nothing_is_written(configs: Path) -> None:
    ds = configs / "configs" / "ds_config.json"
    ds.chmod(0o444)
    before = _texts(configs)
    r = _run("spec-check lint configs/ --fix", configs)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == ["spec-check: error: configs/ds_config.json: cannot fix: the file is read-only"]
    assert _texts(configs) == before


def test_a_symlink_out_of_the_job_folder_is_refused(configs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.json"
    shutil.move(configs / "configs" / "ds_config.json", outside)
    os.symlink(outside, configs / "configs" / "ds_config.json")
    before = outside.read_text()
    r = _run("spec-check lint configs/ds_config.json --fix", configs)
    assert r.returncode == 2
    assert "configs/ds_config.json: cannot fix: it is a symlink to" in r.stderr
    assert "outside the job's folder" in r.stderr and r.stderr.count("\n") == 1
    assert outside.read_text() == before


def test_a_file_edited_between_read_and_write_is_refused(configs: Path) -> None:
    from validator.api.fix import plan_fixes, write_fixes
    from validator.api.lint import lint_jobs
    from validator.api.verb_options import LintOptions

    job = configs / "configs" / "train.sbatch"
    outcome = lint_jobs(LintOptions(paths=(job,)))
    plan = plan_fixes(outcome)
    assert plan.edits and not plan.problems
    yaml = configs / "configs" / "train.yaml"
    yaml.write_text(yaml.read_text() + "seed: 7\n")  # someone saves the file meanwhile
    ds_before = (configs / "configs" / "ds_config.json").read_text()
    problems = write_fixes(plan, outcome.roots)
    assert problems == [f"{yaml}: cannot fix: the file changed since it was read; lint it again"]
    assert yaml.read_text().endswith("seed: 7\n") and "include_num_input_tokens_seen" not in yaml.read_text()
    assert (configs / "configs" / "ds_config.json").read_text() == ds_before


def test_a_fix_on_a_file_the_lint_could_not_read_is_refused(configs: Path) -> None:
    from dataclasses import replace

    from validator.api.fix import plan_fixes
    from validator.api.lint import lint_jobs
    from validator.api.verb_options import LintOptions

    outcome = lint_jobs(LintOptions(paths=(configs / "configs" / "train.sbatch",)))
    plan = plan_fixes(replace(outcome, texts={}))
    assert plan.problems and all(p.endswith("cannot fix: the lint could not read this file") for p in plan.problems)


def test_an_edit_that_needs_a_value_is_listed_with_what_to_pass(configs: Path) -> None:
    """CKPT-02 without the step time: its fix is not applied, and the line says what to pass."""
    job = configs / "configs" / "train.sbatch"
    r = _run(f"spec-check lint {job} --diff --set gpu_count=32", configs)
    assert "Traceback" not in r.stderr
    r2 = _run(f"spec-check lint {job} --diff --set gpu_count=32 --set step_time=2", configs)
    assert "+save_steps: " in r2.stdout  # with the step time, Daly's interval is the edit


def test_a_result_with_broken_fixes_is_refused_by_report(configs: Path, tmp_path: Path) -> None:
    """A lint result read back (``spec-check report``) carries its fixes into SARIF; a fix
    missing what SARIF needs is one line and exit 2, not a crash."""
    out = tmp_path / "r.json"
    _run(f"spec-check lint configs/ --format json -o {out}", configs)
    doc = json.loads(out.read_text())
    good = _run(f"spec-check report {out} --format sarif", configs)
    assert good.returncode == 0 and "artifactChanges" in good.stdout
    f = next(f for f in doc["findings"] if f.get("fixes"))
    f["fixes"][0]["replace"] = {"start": 3}
    out.write_text(json.dumps(doc))
    bad = _run(f"spec-check report {out} --format sarif", configs)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert ".fixes[0].replace.end: expected a JSON integer" in bad.stderr
