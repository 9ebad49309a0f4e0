"""A checkpoint interval longer than the run never fires within it (issue 33, class 5), and
an elastic PyTorchJob's REC-01 cites the setting that decides it (class 6)."""

from __future__ import annotations

from pathlib import Path

from tests.jobs.util import facts, value

HF = "output_dir: out\nbf16: true\nper_device_train_batch_size: 8\nsave_strategy: steps\nlogging_steps: 10\n"


def _hf(tmp_path: Path, extra: str) -> dict:
    p = tmp_path / "train.yaml"
    p.write_text(HF + extra)
    return facts(p)


def test_save_steps_beyond_a_known_run_length_never_checkpoints(tmp_path: Path) -> None:
    doc = _hf(tmp_path, "save_steps: 1000000\nmax_steps: 3000\n")
    f = doc["facts"]["job.checkpoint.enabled"]
    assert f["value"] is False
    assert "never checkpoints within the run" in f["source"] and "max_steps" in f["source"]
    assert f["location"]["line"] == 6  # save_steps, the setting to change


def test_the_failure_says_it_never_checkpoints(tmp_path: Path) -> None:
    """The words a user reads (terminal, SARIF message), not only the JSON's source field."""
    import json
    import subprocess
    import sys

    p = tmp_path / "train.yaml"
    p.write_text(HF + "save_steps: 1000000\nmax_steps: 3000\n")
    out = subprocess.run([sys.executable, "-m", "validator", "lint", str(p), "--format", "json"],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    ckpt = [f for f in json.loads(out.stdout)["findings"] if f["rule"] == "CKPT-01.checkpointing-disabled"]
    assert ckpt and ckpt[0]["status"] == "fail"
    assert "never checkpoints within the run" in ckpt[0]["message"]


def test_save_steps_within_the_run_still_checkpoints(tmp_path: Path) -> None:
    doc = _hf(tmp_path, "save_steps: 500\nmax_steps: 3000\n")
    assert value(doc, "job.checkpoint.enabled") is True


def test_a_never_firing_interval_with_an_unknown_length_is_unknown_not_a_pass(tmp_path: Path) -> None:
    doc = _hf(tmp_path, "save_steps: 1000000\nnum_train_epochs: 1\n")
    f = doc["facts"]["job.checkpoint.enabled"]
    assert "error" in f and "length in steps is not known" in f["error"]
    # an ordinary interval with an unknown length is not questioned
    assert value(_hf(tmp_path, "save_steps: 500\nnum_train_epochs: 1\n"), "job.checkpoint.enabled") is True


def _job(tmp_path: Path, max_restarts: int, command: str) -> dict:
    p = tmp_path / "job.yaml"
    p.write_text(f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: j
spec:
  elasticPolicy:
    rdzvBackend: c10d
    maxRestarts: {max_restarts}
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: img
              command: [{command}]
""")
    return facts(p)


def test_an_elastic_pytorchjob_cites_max_restarts_not_the_restart_policy(tmp_path: Path) -> None:
    doc = _job(tmp_path, 100, "torchrun, --nproc-per-node=8, train.py")
    f = doc["facts"]["job.recovery.auto_restart"]
    assert f["value"] is True and f["location"]["line"] == 8
    assert f["source"].startswith("pytorchjob: elasticPolicy.maxRestarts = 100")


def test_without_restarts_to_give_the_restart_policy_decides(tmp_path: Path) -> None:
    for mr, cmd in ((0, "torchrun, train.py"), (100, "accelerate, launch, train.py")):
        f = _job(tmp_path, mr, cmd)["facts"]["job.recovery.auto_restart"]
        assert f["value"] is True and f["location"]["line"] == 12, (mr, cmd, f)
        assert "restartPolicy = OnFailure" in f["source"]


NEMO2 = """\
trainer:
  devices: 8
  num_nodes: 2
  max_steps: 1000
{plugins}exp_manager:
  exp_dir: /results
  checkpoint_callback_params:
    every_n_train_steps: 200
model:
  micro_batch_size: 1
  global_batch_size: 128
  optim:
    config:
      bf16: True
"""


def test_a_nemo2_recipes_precision_is_read_from_its_plugin_or_its_optimizer(tmp_path: Path) -> None:
    """Issue 33, class 3: MegatronMixedPrecision's precision, else model.optim.config.bf16,
    not Lightning's fp32 default."""
    p = tmp_path / "recipe.yaml"
    p.write_text(NEMO2.format(plugins="  plugins:\n    _target_: nemo.lightning.pytorch.plugins.mixed_precision."
                                      "MegatronMixedPrecision\n    precision: bf16-mixed\n"))
    f = facts(p)["facts"]["job.precision.mode"]
    assert (f["value"], f["location"]["line"]) == ("bf16", 7)
    assert "MegatronMixedPrecision" in f["source"]
    p.write_text(NEMO2.format(plugins="  plugins: MegatronMixedPrecision\n"))
    f = facts(p)["facts"]["job.precision.mode"]
    assert (f["value"], f["location"]["line"]) == ("bf16", 15)
    assert "model.optim.config.bf16" in f["source"]


def test_a_nemo2_recipe_resumes_as_its_autoresume_says(tmp_path: Path) -> None:
    """CKPT-03 of a NeMo 2 recipe: its resume: block (AutoResume), not exp_manager's default;
    left out, AutoResume's own default (resume_if_exists=False, nemo/lightning/resume.py)."""
    p = tmp_path / "recipe.yaml"
    base = NEMO2.format(plugins="  precision: bf16-mixed\n")
    p.write_text(base + "resume:\n  resume_if_exists: true\n  resume_ignore_no_checkpoint: true\n")
    f = facts(p)["facts"]["job.checkpoint.resume"]
    assert f["value"] is True and f["source"] == "nemo: resume.resume_if_exists (AutoResume)"
    p.write_text(base + "resume:\n  resume_ignore_no_checkpoint: true\n")
    f = facts(p)["facts"]["job.checkpoint.resume"]
    assert f["value"] is False and "AutoResume" in f["source"] and "nemo/lightning/resume.py" in f["source"]
