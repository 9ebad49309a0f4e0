"""Hydra experiments as the Hydra docs write them, and Hydra applications spec-check does
not claim (issue 33, classes 1 and 2), on small written trees beside the real ones in
tests/corpus/hydra_tree (quadra, meds-torch) and tests/corpus/unclaimed_yaml (optimus-dl).

An experiment (``# @package _global_``, ``override /group: option`` entries) runs inside
its primary config (``python train.py experiment=x``): the root whose defaults list has
``experiment: null``, with the groups the experiment overrides replaced by its picks."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.jobs.util import facts, value
from validator.jobs import read_job
from validator.jobs.grouping import split_folder

TRAINER = "_target_: lightning.pytorch.trainer.Trainer\naccelerator: gpu\ndevices: 1\n"


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "configs"
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def _app(tmp_path: Path) -> Path:
    return _tree(tmp_path, {
        "train.yaml": """\
            defaults:
              - _self_
              - callbacks: default
              - trainer: default
              - experiment: null
            seed: 1
            """,
        "callbacks/default.yaml": """\
            model_checkpoint:
              _target_: lightning.pytorch.callbacks.ModelCheckpoint
              every_n_train_steps: 500
            """,
        "trainer/default.yaml": TRAINER + "precision: 32-true\n",
        "trainer/bf16.yaml": TRAINER + "precision: bf16-mixed\n",
        # the Hydra docs' form: task: {_target_}, trainer: of Lightning keys, overrides only
        "experiment/base/pretrain.yaml": """\
            # @package _global_
            defaults:
              - override /trainer: bf16
            task:
              _target_: mylab.tasks.Pretrain
            trainer:
              max_epochs: 3
              gradient_clip_val: 1.0
            """,
        # built on the other, from a subfolder of the group
        "experiment/runs/small/tiny.yaml": """\
            # @package _global_
            defaults:
              - base/pretrain
            tags: [tiny]
            """,
    })


def test_an_experiment_with_a_task_target_is_read_as_the_framework_its_targets_name(tmp_path: Path) -> None:
    root = _app(tmp_path)
    doc = facts(root / "experiment/base/pretrain.yaml")
    assert doc["errors"] == []
    assert value(doc, "job.formats") == ["lightning"]  # not refused as TF Model Garden (task:)
    assert value(doc, "job.precision.mode") == "bf16"  # its override of the primary's trainer
    files = value(doc, "job.files")
    # the primary is composed in (its callbacks), less the group the experiment overrides
    assert str(root / "train.yaml") in files and str(root / "callbacks/default.yaml") in files
    assert str(root / "trainer/default.yaml") not in files
    assert value(doc, "job.checkpoint.enabled") is True


def test_an_experiment_built_on_another_gets_its_parents_settings(tmp_path: Path) -> None:
    root = _app(tmp_path)
    doc = facts(root / "experiment/runs/small/tiny.yaml")
    assert doc["errors"] == []
    # ``- base/pretrain`` is experiment/base/pretrain.yaml: relative to the group's folder
    assert str(root / "experiment/base/pretrain.yaml") in value(doc, "job.files")
    assert value(doc, "job.precision.mode") == "bf16"
    assert doc["facts"]["job.precision.mode"]["location"]["file"] == str(root / "trainer/bf16.yaml")
    assert str(root / "trainer/default.yaml") not in value(doc, "job.files")


def test_without_the_override_the_primarys_group_is_read(tmp_path: Path) -> None:
    root = _app(tmp_path)
    exp = root / "experiment/base/pretrain.yaml"
    exp.write_text(exp.read_text().replace("  - override /trainer: bf16\n", "  - override /callbacks: default\n"))
    doc = facts(exp)
    assert value(doc, "job.precision.mode") == "fp32"
    assert doc["facts"]["job.precision.mode"]["location"]["file"] == str(root / "trainer/default.yaml")


def test_a_folder_lint_keeps_every_experiment_and_the_primary_as_entry_points(tmp_path: Path) -> None:
    root = _app(tmp_path)
    names = {d["subject"]["name"] for d in split_folder(root)}
    for f in ("train.yaml", "experiment/base/pretrain.yaml", "experiment/runs/small/tiny.yaml"):
        assert str(root / f) in names, names


def test_an_unclaimed_hydra_application_is_refused_naming_what_it_composes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "train.yaml": """\
            defaults:
              - system: cluster
              - experiment: gpt
              - _self_
            experiment:
              name: run1
            """,
        "system/cluster.yaml": "nodes: 4\ngpus_per_node: 8\n",
        "experiment/gpt.yaml": "megatron_args:\n  num_layers: 24\n  bf16: true\n",
    })
    doc = read_job([root / "train.yaml"])[0]
    (err,) = doc["errors"]
    assert "composes no config of a framework spec-check reads" in err["message"]
    assert "system/cluster.yaml" in err["message"] and "experiment/gpt.yaml" in err["message"]
    # passed over when not named (a folder under --ignore-unknown, pre-commit)
    assert read_job([root / "train.yaml"], strict=False)[0]["errors"] == []


def test_a_hydra_root_composing_a_claimed_trainer_stays_a_hydra_job(tmp_path: Path) -> None:
    root = _app(tmp_path)
    doc = facts(root / "train.yaml")
    assert doc["errors"] == []
    assert value(doc, "job.formats") == ["hydra", "lightning"]
    assert value(doc, "job.precision.mode") == "fp32"


def test_judging_a_root_never_opens_a_config_outside_its_folder(tmp_path: Path) -> None:
    """``- ../../secret`` names a file the run was not given: whether the root is claimed is
    judged without opening it, and nothing of it reaches the refusal."""
    (tmp_path / "secret.yaml").write_text("actor_rollout_ref:\n  rollout: {name: vllm}\ncritic: {}\n")
    root = tmp_path / "a" / "b"
    root.mkdir(parents=True)
    (root / "train.yaml").write_text("defaults:\n  - ../../secret\n  - _self_\nfoo: 1\n")
    (err,) = read_job([root / "train.yaml"])[0]["errors"]
    assert "actor_rollout_ref" not in err["message"] and "verl" not in err["message"]
