"""Issue 30: an HF Trainer job is judged on what the Trainer does, not skipped.

Expected verdicts written from transformers' source before running the tool:
* ``TrainingArguments.resume_from_checkpoint`` defaults to None and the Trainer does not
  resume unless ``train(resume_from_checkpoint=...)`` is given it: a job that says nothing
  about resume restarts from step 0 (CKPT-03 fails, citing the default);
* ``Trainer.train(resume_from_checkpoint=True)`` loads the last checkpoint in
  ``output_dir`` (transformers/trainer.py, ``get_last_checkpoint``); a path loads that one
  checkpoint, however old: not "the latest" (CKPT-03 fails, at its line);
* ``bf16: false`` written in the file is an explicit value, reported at its line (with
  ``fp16`` left at its default, the job trains in fp32), not as "default".
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from validator.cli import cli

BASE = (
    "model_name_or_path: meta-llama/Llama-3.1-8B\n"
    "output_dir: /ckpt\n"
    "per_device_train_batch_size: 4\n"
    "gradient_accumulation_steps: 8\n"
    "learning_rate: 2.0e-5\n"
    "bf16: false\n"
    "save_strategy: steps\n"
    "save_steps: 500\n"
    "logging_steps: 10\n"
)


def _lint(tmp_path: Path, text: str, *args: str) -> dict:
    p = tmp_path / "train.yaml"
    p.write_text(text)
    r = CliRunner().invoke(cli, ["lint", str(p), "--format", "json", "--set", "step_time=2s",
                                 "--set", "gpu_count=64", *args], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def _one(doc: dict, rule: str) -> dict:
    found = [f for f in doc["findings"] if f["rule"] == rule]
    assert len(found) == 1, [(f["rule"], f["status"]) for f in doc["findings"]]
    return found[0]


def test_a_job_silent_about_resume_fails_ckpt03_citing_the_default(tmp_path: Path) -> None:
    f = _one(_lint(tmp_path, BASE), "CKPT-03.resume-not-automatic")
    assert f["status"] == "fail", f
    assert "HF Transformers" in f["message"] and "resume_from_checkpoint" in f["message"]
    assert "transformers" in f["message"] and "trainer.py" in f["message"]


def test_a_fixed_checkpoint_path_is_not_the_latest(tmp_path: Path) -> None:
    f = _one(_lint(tmp_path, BASE + "resume_from_checkpoint: /ckpt/checkpoint-500\n"),
             "CKPT-03.resume-not-automatic")
    assert f["status"] == "fail", f
    assert f["location"]["line"] == 10
    assert "not the latest" in f["source"], f


def test_resume_true_is_the_latest_checkpoint(tmp_path: Path) -> None:
    f = _one(_lint(tmp_path, BASE + "resume_from_checkpoint: true\n"), "CKPT-03.resume-not-automatic")
    assert f["status"] == "pass", f
    assert f["location"]["line"] == 10


def test_an_explicit_bf16_false_is_reported_at_its_line(tmp_path: Path) -> None:
    f = _one(_lint(tmp_path, BASE), "PREC-01.full-precision-training")
    assert f["status"] == "fail"
    assert f["location"]["line"] == 6, f
    assert "not set in your files" not in f["message"], f["message"]
    assert f["location"]["text"].strip() == "bf16: false"


def test_ckpt02_says_the_range_and_the_direction_in_the_default_output(tmp_path: Path) -> None:
    """Daly's optimum for 64 GPUs at 50,000 GPU-h each, 60 s writes, 2 s steps: the accepted
    range is 4,583..18,331 steps; 500 is below it, a checkpoint too often. The default
    terminal output (not only --show passes or JSON) says both."""
    f = _one(_lint(tmp_path, BASE), "CKPT-02.interval-far-from-optimum")
    assert f["status"] == "fail"
    assert "below the expected range 4,583 to 18,331" in f["message"] and "too often" in f["message"], f["message"]
    p = tmp_path / "train.yaml"
    r = CliRunner().invoke(cli, ["lint", str(p), "--set", "step_time=2s", "--set", "gpu_count=64"],
                           env={"COLUMNS": "300", "NO_COLOR": "1"})
    # the finding as printed, its wrapped lines joined (a long temporary path wraps it)
    text = " ".join(r.stdout.split())
    start = text.index("FAIL CKPT-02.interval-far-from-optimum")
    line = text[start:text.index("fix:", start)]
    assert "4,583 to 18,331" in line and "too often" in line, line
    # above the range: too rarely
    f = _one(_lint(tmp_path, BASE.replace("save_steps: 500", "save_steps: 50000")), "CKPT-02.interval-far-from-optimum")
    assert "above the expected range" in f["message"] and "too rarely" in f["message"], f["message"]
    ok = _one(_lint(tmp_path, BASE.replace("save_steps: 500", "save_steps: 9000")), "CKPT-02.interval-far-from-optimum")
    assert ok["status"] == "pass" and "within the expected range 4,583 to 18,331" in ok["message"], ok["message"]
