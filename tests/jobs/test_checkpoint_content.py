"""CKPT-01 requires periodic checkpoints of model *and optimizer* state: a model-only or
weights-only save (Megatron ``--no-save-optim``, HF ``save_only_model``, Lightning
``ModelCheckpoint(save_weights_only=True)``) is no such checkpoint, at the line that makes
it so. Verdicts cite the mechanism that decides them (REC-01: ``#SBATCH --requeue``, not
torchrun's ``--max-restarts 0`` default it overrides); a value that restores a default
(``CUDA_LAUNCH_BLOCKING=0``) is no debug setting; a DeepSpeed JSON written for a host
(``"auto"`` values) is not judged on its ``steps_per_print`` (docs/lint.md)."""

from __future__ import annotations

from pathlib import Path

from tests.jobs.util import facts, line, value

MEGATRON = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --requeue
export CUDA_LAUNCH_BLOCKING=0
torchrun --nproc-per-node 8 pretrain_gpt.py \\
  --save /ckpt --load /ckpt --save-interval 1000 \\
  --no-save-optim \\
  --no-save-rng \\
  --bf16
"""


def test_megatron_no_save_optim_is_no_checkpoint_of_optimizer_state(tmp_path: Path) -> None:
    p = tmp_path / "pretrain.sh"
    p.write_text(MEGATRON)
    doc = facts(p)
    assert value(doc, "job.checkpoint.enabled") is False
    assert line(doc, "job.checkpoint.enabled") == 7
    assert "--no-save-optim" in doc["facts"]["job.checkpoint.enabled"]["source"]
    # --no-save-rng: a resume, but not an exact one
    assert "--no-save-rng" in doc["facts"]["job.checkpoint.resume"]["source"]
    # without the flag, --save is a checkpoint
    p.write_text(MEGATRON.replace("  --no-save-optim \\\n", ""))
    assert value(facts(p), "job.checkpoint.enabled") is True


def test_requeue_decides_automatic_restart_not_torchruns_default(tmp_path: Path) -> None:
    p = tmp_path / "pretrain.sh"
    p.write_text(MEGATRON)
    doc = facts(p)
    f = doc["facts"]["job.recovery.auto_restart"]
    assert f["value"] is True and line(doc, "job.recovery.auto_restart") == 3
    assert "requeue" in f["source"] and "max-restarts" not in f["source"]


def test_cuda_launch_blocking_0_is_no_debug_setting(tmp_path: Path) -> None:
    p = tmp_path / "pretrain.sh"
    p.write_text(MEGATRON)
    assert not [x for x in value(facts(p), "job.comm.nccl_discouraged") if "CUDA_LAUNCH_BLOCKING" in x]
    p.write_text(MEGATRON.replace("CUDA_LAUNCH_BLOCKING=0", "CUDA_LAUNCH_BLOCKING=1"))
    assert [x for x in value(facts(p), "job.comm.nccl_discouraged") if "CUDA_LAUNCH_BLOCKING" in x]


def test_hf_save_only_model(tmp_path: Path) -> None:
    p = tmp_path / "args.yaml"
    p.write_text("output_dir: out\nsave_strategy: steps\nsave_steps: 100\nsave_only_model: true\nbf16: true\n"
                 "per_device_train_batch_size: 2\nlogging_steps: 10\n")
    doc = facts(p)
    assert (value(doc, "job.checkpoint.enabled"), line(doc, "job.checkpoint.enabled")) == (False, 4)


def test_lightning_save_weights_only(tmp_path: Path) -> None:
    p = tmp_path / "cli.yaml"
    p.write_text("trainer:\n  precision: bf16-mixed\n  callbacks:\n"
                 "    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
                 "      init_args:\n        every_n_train_steps: 100\n        save_weights_only: true\n")
    doc = facts(p)
    assert (value(doc, "job.checkpoint.enabled"), line(doc, "job.checkpoint.enabled")) == (False, 7)


def test_deepspeed_json_for_a_host_is_not_judged_on_steps_per_print(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text('{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",\n'
                 ' "steps_per_print": 2000, "bf16": {"enabled": "auto"}}\n')
    doc = facts(p)
    f = doc["facts"]["job.logging.interval_steps"]
    assert f["value"] is None and "host" in f["source"]
    # alone, with no host's values, steps_per_print is the engine's interval
    p.write_text('{"train_batch_size": 64, "steps_per_print": 2000, "bf16": {"enabled": true}}\n')
    assert value(facts(p), "job.logging.interval_steps") == 2000


def test_the_host_of_a_deepspeed_template_is_named_when_the_job_shows_it(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text('{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",'
                                      ' "steps_per_print": 2000, "bf16": {"enabled": "auto"}}\n')
    acc = tmp_path / "acc.yaml"
    acc.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n"
                   "  deepspeed_config_file: ds.json\nnum_processes: 8\nmixed_precision: bf16\n")
    f = facts(acc)["facts"]["job.logging.interval_steps"]
    assert f["value"] is None and "filled in by Accelerate (its config is in this job)" in f["source"]


def test_a_full_state_checkpoint_beside_weights_only_ones_is_a_checkpoint(tmp_path: Path) -> None:
    # best-model copies saved weights-only, and a full checkpoint every 100 epochs: the job
    # does save model and optimizer state (OMatG's train_ode.yaml, tests/corpus), in any order
    best = ("    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
            "      init_args:\n        monitor: val_loss\n        every_n_train_steps: 50\n"
            "        save_weights_only: true\n")
    full = ("    - class_path: lightning.pytorch.callbacks.ModelCheckpoint\n"
            "      init_args:\n        every_n_train_steps: 1000\n        save_weights_only: false\n")
    p = tmp_path / "cli.yaml"
    for first, second, at in ((best, full, 9), (full, best, 4)):
        p.write_text("trainer:\n  precision: bf16-mixed\n  callbacks:\n" + first + second)
        doc = facts(p)
        assert (value(doc, "job.checkpoint.enabled"), line(doc, "job.checkpoint.enabled")) == (True, at)
        # the interval is the full checkpoint's, not the weights-only copy's
        assert value(doc, "job.checkpoint.interval_steps") == 1000
