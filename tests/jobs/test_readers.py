"""Reader details: shell resolution, heredocs, followed files, one job of many files,
line numbers in every syntax, and each format's detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.util import facts, line, value
from validator.jobs.source import json_key_lines, parse_toml, parse_yaml


def test_json_key_lines_nested_and_arrays() -> None:
    text = (
        '{\n  "a": 1,\n  "b": {\n    "c": [\n      {"d": 2},\n      3\n    ]\n  },\n'
        '  "e\\"x": true\n}\n'
    )
    lines = json_key_lines(text)
    assert lines[("a",)] == 2 and lines[("b",)] == 3 and lines[("b", "c")] == 4
    assert lines[("b", "c", 0, "d")] == 5 and lines[("b", "c", 1)] == 6 and lines[('e"x',)] == 9


def test_toml_lines_tables_and_dotted_keys() -> None:
    t = parse_toml(
        "# c\n[training]\nsteps = 10\n\n[quantize.linear.float8]\nenable = true\nx.y = 1\n",
        "f.toml",
    )
    assert (
        t.line("training", "steps") == 3 and t.line("quantize", "linear", "float8", "enable") == 6
    )
    assert t.line("quantize", "linear", "float8", "x", "y") == 7


def test_yaml_lines_and_merge_keys() -> None:
    t = parse_yaml("base: &b\n  x: 1\nchild:\n  <<: *b\n  y: 2\n", "f.yaml")
    assert t.data["child"] == {"x": 1, "y": 2} and t.line("child", "y") == 5


SBATCH = """#!/bin/bash
#SBATCH --nodes=4
#SBATCH --gpus-per-node=8
#SBATCH --time=02:00:00
#SBATCH --requeue
#SBATCH --signal=B:USR1@300
export NCCL_ALGO=Ring
export NCCL_DEBUG=WARN
TP=${TP:-2}
PP=2
MBS=2
GBS=$((MBS * 64))
ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size ${PP}
    --micro-batch-size $MBS
)
ARGS+=(--global-batch-size $GBS --bf16)
LOG="--log-interval 10 \\
     --save /ckpt --load /ckpt --save-interval 500"
cat > ds.json <<EOF
{
  "train_micro_batch_size_per_gpu": 2,
  "steps_per_print": 10
}
EOF
srun torchrun --nnodes $SLURM_NNODES --nproc-per-node 8 --max-restarts 3 \\
    pretrain_gpt.py ${ARGS[@]} $LOG
"""


def test_sbatch_megatron_script(tmp_path: Path) -> None:
    p = tmp_path / "job.sbatch"
    p.write_text(SBATCH)
    doc = facts(p)
    assert doc["errors"] == []
    assert (value(doc, "job.resources.nodes"), line(doc, "job.resources.nodes")) == (4, 2)
    assert value(doc, "job.world_size") == 32
    assert (value(doc, "job.parallel.tp"), line(doc, "job.parallel.tp")) == (2, 14)
    assert value(doc, "job.parallel.dp") == 8  # 32 / (2 x 2)
    assert (value(doc, "job.batch.global"), line(doc, "job.batch.global")) == (128, 18)
    assert (
        value(doc, "job.checkpoint.interval_steps"),
        line(doc, "job.checkpoint.interval_steps"),
    ) == (500, 20)
    assert value(doc, "job.checkpoint.resume") is True
    assert (value(doc, "job.logging.interval_steps"), line(doc, "job.logging.interval_steps")) == (
        10,
        19,
    )
    assert (value(doc, "job.recovery.signal_lead"), line(doc, "job.recovery.signal_lead")) == (
        300,
        6,
    )
    assert (
        value(doc, "job.recovery.auto_restart") is True
        and value(doc, "job.recovery.max_restarts") == 3
    )
    assert value(doc, "job.resources.time_limit") == 7200
    assert (value(doc, "job.comm.nccl_algo"), line(doc, "job.comm.nccl_algo")) == ("Ring", 7)
    assert value(doc, "job.comm.nccl_discouraged") == []
    assert value(doc, "job.precision.mode") == "bf16"
    assert value(doc, "job.batch.micro") == 2  # Megatron's and the heredoc DeepSpeed JSON agree
    assert "deepspeed" in value(doc, "job.formats")


def test_unknown_shell_values_are_not_guessed(tmp_path: Path) -> None:
    p = tmp_path / "run.sh"
    p.write_text(
        "#!/bin/bash\nMBS=$(python -c 'print(4)')\ntorchrun --nnodes $NNODES train.py "
        "--micro-batch-size $MBS --global-batch-size ${GBS} --save-interval $1\n"
    )
    doc = facts(p)
    assert value(doc, "job.batch.micro") is None and value(doc, "job.batch.global") is None
    assert (
        value(doc, "job.resources.nodes") is None
        and value(doc, "job.checkpoint.interval_steps") is None
    )


def test_slurm_runtime_variables_resolve_from_header_only(tmp_path: Path) -> None:
    p = tmp_path / "a.sh"
    p.write_text(
        "#!/bin/bash\n#SBATCH -N 2\nNN=${SLURM_NNODES:-1}\n"
        "torchrun --nnodes $NN --nproc_per_node=4 t.py\n"
    )
    assert value(facts(p), "job.world_size") == 8
    p.write_text(
        "#!/bin/bash\nNN=${SLURM_NNODES:-1}\ntorchrun --nnodes $NN --nproc_per_node=4 t.py\n"
    )
    assert value(facts(p), "job.world_size") is None


def test_accelerate_follows_deepspeed_json_and_dir_is_one_job(tmp_path: Path) -> None:
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "z3.json").write_text(
        json.dumps(
            {
                "train_batch_size": 64,
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 4,
                "bf16": {"enabled": "auto"},
            },
            indent=2,
        )
    )
    acc = tmp_path / "accelerate.yaml"
    acc.write_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\nnum_machines: 1\n"
        "deepspeed_config:\n  deepspeed_config_file: ds/z3.json\n"
    )
    doc = facts(acc)
    assert value(doc, "job.formats") == ["accelerate", "deepspeed"]
    assert value(doc, "job.precision.mode") == "bf16"  # "auto" in the JSON defers to Accelerate
    assert value(doc, "job.parallel.dp") == 8 and value(doc, "job.batch.global") == 64
    g = doc["facts"]["job.batch.global"]
    assert g["location"] == {"file": str(tmp_path / "ds" / "z3.json"), "line": 2}
    whole = facts(tmp_path)
    assert sorted(whole["facts"]["job.files"]["value"]) == sorted(
        [str(acc), str(tmp_path / "ds" / "z3.json")]
    )


def test_conflicting_files_are_reported_first_wins(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(
        '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}'
    )
    (tmp_path / "b.yaml").write_text("per_device_train_batch_size: 8\nbf16: true\noutput_dir: x\n")
    doc = facts(tmp_path)
    assert value(doc, "job.batch.micro") == 4
    (conflict,) = value(doc, "job.config.conflicts")
    assert "job.batch.micro" in conflict and "b.yaml:1" in conflict


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("ds.json", '{"train_batch_size": 8}', "deepspeed"),
        ("args.json", '{"output_dir": "x", "per_device_train_batch_size": 2}', "hf_trainer"),
        ("cli.yaml", "trainer:\n  precision: bf16-mixed\nmodel:\n  class_path: M\n", "lightning"),
        (
            "hydra.yaml",
            "_target_: lightning.pytorch.trainer.Trainer\nprecision: 16-mixed\n",
            "lightning",
        ),
        (
            "nemo.yaml",
            "trainer:\n  precision: bf16\nexp_manager:\n  resume_if_exists: true\n",
            "nemo",
        ),
        ("acc.yaml", "distributed_type: MULTI_GPU\nnum_processes: 8\n", "accelerate"),
        ("mt.yml", "base_config: base.yml\nper_device_batch_size: 2\n", "maxtext"),
        (
            "exp.yaml",
            "runtime:\n  mixed_precision_dtype: bfloat16\ntrainer:\n  train_steps: 10\n",
            "tf_model_garden",
        ),
        ("pj.yaml", "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec: {}\n", "pytorchjob"),
        ("t.toml", "[training]\nsteps = 1\n", "torchtitan"),
        ("job.env", "NCCL_DEBUG=INFO\n", "env"),
        ("launch", "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n", "torchrun"),
    ],
)
def test_detection_from_content(tmp_path: Path, name: str, text: str, fmt: str) -> None:
    p = tmp_path / name
    p.write_text(text)
    doc = facts(p)
    assert doc["errors"] == [] and fmt in value(doc, "job.formats")


def test_kind_forces_the_reader(tmp_path: Path) -> None:
    p = tmp_path / "weird.cfg"
    p.write_text("trainer:\n  precision: 16-mixed\n")
    assert "lightning" in value(facts(p), "job.formats")
    doc = facts(p, kind="nemo")
    assert (
        "nemo" in value(doc, "job.formats")
        and value(doc, "job.precision.loss_scaling") == "dynamic"
    )


def test_maxtext_inheritance_and_model_file(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "base.yml").write_text(
        "dtype: bfloat16\ncheckpoint_period: 1000\nlog_period: 100\nrun_name: ''\n"
    )
    (tmp_path / "models" / "m.yml").write_text("checkpoint_period: 200\n")
    child = tmp_path / "child.yml"
    child.write_text("base_config: base.yml\nmodel_name: m\nrun_name: fixed\nlog_period: 10\n")
    doc = facts(child)
    ck = doc["facts"]["job.checkpoint.interval_steps"]
    assert ck["value"] == 200 and ck["location"]["file"].endswith("models/m.yml")
    assert (value(doc, "job.logging.interval_steps"), line(doc, "job.logging.interval_steps")) == (
        10,
        4,
    )
    assert value(doc, "job.checkpoint.resume") is True
    assert doc["facts"]["job.precision.mode"]["location"]["file"].endswith("base.yml")


def test_tf_model_garden_says_what_is_inherited(tmp_path: Path) -> None:
    p = tmp_path / "exp.yaml"
    p.write_text(
        "runtime:\n  mixed_precision_dtype: bfloat16\n  loss_scale: dynamic\ntask:\n  train_data:\n"
        "    global_batch_size: 64\n"
    )
    doc = facts(p)
    assert "registered experiment" in doc["facts"]["job.checkpoint.interval_steps"]["source"]
    assert any("no effect" in x for x in value(doc, "job.precision.problems"))


def test_deepspeed_two_half_modes_and_static_scale(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(
        '{"fp16": {"enabled": true, "loss_scale": 128}, "bf16": {"enabled": true},'
        ' "train_batch_size": 8}'
    )
    doc = facts(p)
    assert value(doc, "job.precision.loss_scaling") == "static"
    assert any("more than one" in x for x in value(doc, "job.precision.problems"))


def test_detection_timeout_is_the_longest_explicit_one(tmp_path: Path) -> None:
    p = tmp_path / "run.sh"
    p.write_text(
        "#!/bin/bash\nexport TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=120\n"
        "torchrun --nnodes 2 --nproc-per-node 8 --rdzv-conf join_timeout=900,close_timeout=30 \\\n"
        "    pretrain_gpt.py --distributed-timeout-minutes 1 --micro-batch-size 1\n"
    )
    doc = facts(p)
    t = doc["facts"]["job.recovery.detection_timeout"]
    assert t["value"] == 900 and t["location"]["line"] == 3 and "join_timeout" in t["source"]


def test_launchers_follow_the_configs_they_name() -> None:
    here = Path(__file__).parents[1] / "acceptance" / "jobs" / "positive"
    doc = facts(here / "torchtitan_slurm" / "run.sbatch")
    assert "torchtitan" in value(doc, "job.formats")  # --job.config_file llama3_8b.toml
    doc = facts(here / "deepspeed_accelerate" / "launch.slurm")  # --config_file -> deepspeed_config_file
    assert {"accelerate", "deepspeed", "hf_trainer"} <= set(value(doc, "job.formats"))
    assert value(doc, "job.config.conflicts") == []
