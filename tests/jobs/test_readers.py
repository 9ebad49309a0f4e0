"""Reader details: shell resolution, heredocs, followed files, one job of many files,
line numbers in every syntax, and each format's detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.util import facts, line, value
from validator.io.source import json_key_lines, parse_toml, parse_yaml


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
    assert g["location"] == {"file": str(tmp_path / "ds" / "z3.json"), "line": 2, "text": '  "train_batch_size": 64,'}
    whole = facts(tmp_path)
    assert sorted(whole["facts"]["job.files"]["value"]) == sorted(
        [str(acc), str(tmp_path / "ds" / "z3.json")]
    )


def test_conflicting_files_are_an_error_of_the_fact_they_feed(tmp_path: Path) -> None:
    from tests.jobs.util import by_rule, findings

    (tmp_path / "a.json").write_text(
        '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}'
    )
    (tmp_path / "b.yaml").write_text("per_device_train_batch_size: 8\nbf16: true\noutput_dir: x\n")
    doc = facts(tmp_path)
    (conflict,) = value(doc, "job.config.conflicts")
    assert "job.batch.micro" in conflict and "b.yaml:1" in conflict
    micro = doc["facts"]["job.batch.micro"]
    assert "a.json:1" in micro["error"] and "b.yaml:1" in micro["error"]
    assert micro["location"]["line"] == 1 and micro["location"]["file"].endswith("b.yaml")
    # train + micro: accumulation inferred, so the divisibility rule reads the micro-batch
    f = by_rule(findings(tmp_path, sets=("gpu_count=8",)))["BATCH-01.global-batch-not-divisible"]
    assert f.status.value == "error" and "disagree" in f.message


def test_a_command_line_flag_beats_the_config_it_overrides(tmp_path: Path) -> None:
    """Accelerate says 2 nodes / 16 processes, sbatch 4 x 8, the launch line
    --num_processes 32: the flag wins over the config (no conflict); the node counts
    really disagree (an error value, not a silent 2)."""
    (tmp_path / "acc.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n"
        "num_machines: 2\nnum_processes: 16\n"
    )
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\n#SBATCH --time=02:00:00\n"
        "srun accelerate launch --config_file acc.yaml --num_processes 32 train.py\n"
    )
    for target in (tmp_path, tmp_path / "job.sbatch"):  # either read order
        doc = facts(target)
        assert (value(doc, "job.world_size"), line(doc, "job.world_size")) == (32, 5)
        assert value(doc, "job.gpu_count") == 32
        (conflict,) = value(doc, "job.config.conflicts")
        assert conflict.startswith("job.resources.nodes:")
        assert "error" in doc["facts"]["job.resources.nodes"]


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


# ---- wrong value types: an error at the key's line and an error fact, never the default


def _err(doc: dict, fragment: str) -> dict:  # type: ignore[type-arg]
    hits = [e for e in doc["errors"] if fragment in e["message"]]
    assert len(hits) == 1, doc["errors"]
    return hits[0]


@pytest.mark.parametrize(
    ("name", "text", "key", "line_no", "fact", "rules"),
    [
        (
            "ds.json",
            '{\n  "train_micro_batch_size_per_gpu": 2,\n  "steps_per_print": {"a": 1}\n}\n',
            "steps_per_print",
            3,
            "job.logging.interval_steps",
            ["MON-02.metrics-interval-too-many-steps"],
        ),
        (
            "ds.json",
            '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 2,\n'
            '  "gradient_accumulation_steps": [1, 2]\n}\n',
            "gradient_accumulation_steps",
            4,
            "job.batch.accumulation",
            ["BATCH-01.global-batch-mismatch"],
        ),
        (
            "ds.json",
            '{\n  "train_batch_size": "lots",\n  "train_micro_batch_size_per_gpu": 2\n}\n',
            "train_batch_size",
            2,
            "job.batch.global",
            ["BATCH-01.global-batch-mismatch", "BATCH-01.global-batch-not-divisible"],
        ),
        (
            "tr.yaml",
            "trainer:\n  precision: bf16-mixed\n  log_every_n_steps: often\n",
            "log_every_n_steps",
            3,
            "job.logging.interval_steps",
            ["MON-02.metrics-interval-too-many-steps", "MON-02.metrics-interval-too-long"],
        ),
        (
            "tr.yaml",
            "trainer:\n  precision: bf16-mixed\n  max_time: banana\n",
            "max_time",
            3,
            "job.duration",
            ["CKPT-01.checkpointing-disabled"],
        ),
    ],
)
def test_wrong_value_type_is_an_error_not_the_default(
    tmp_path: Path, name: str, text: str, key: str, line_no: int, fact: str, rules: list[str]
) -> None:
    from tests.jobs.util import by_rule, findings

    p = tmp_path / name
    p.write_text(text)
    doc = facts(p, step_time_s=1.0, gpu_count=8)
    e = _err(doc, key)
    assert e["line"] == line_no and "expected" in e["message"]
    f = doc["facts"][fact]
    assert "error" in f and "value" not in f, f  # not the framework default
    assert f["location"]["line"] == line_no
    got = by_rule(findings(p, sets=("gpu_count=8", "step_time=1s")))
    for rule in rules:
        assert got[rule].status.value == "error", (rule, got[rule].status, got[rule].message)


def test_wrong_value_type_is_a_lint00_error_at_its_line_via_cli(tmp_path: Path) -> None:
    from tests.jobs.util import spec_check

    p = tmp_path / "ds.json"
    p.write_text('{\n  "bf16": {"enabled": true},\n  "steps_per_print": {"a": 1}\n}\n')
    r = spec_check("lint", "--format", "json", str(p))
    out = json.loads(r.stdout)["findings"]
    (err,) = [f for f in out if f["rule"] == "LINT-00.unreadable-config"]
    assert err["status"] == "error" and err["location"]["line"] == 3
    assert "steps_per_print" in err["message"]
    mon = [f for f in out if f["rule"].startswith("MON-02")]
    assert mon and all(f["status"] != "pass" for f in mon)


def test_deepspeed_auto_is_still_not_an_error(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(
        '{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",'
        ' "gradient_accumulation_steps": "auto", "fp16": {"enabled": "auto"}}'
    )
    doc = facts(p)
    assert doc["errors"] == []
    assert value(doc, "job.batch.global") is None and value(doc, "job.batch.accumulation") == 1


# ---- sbatch reads #SBATCH only before the first command


def test_sbatch_options_after_the_first_command_are_ignored(tmp_path: Path) -> None:
    from tests.jobs.util import by_rule, findings

    p = tmp_path / "job.sbatch"
    p.write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n#SBATCH --time=04:00:00\n"
        "\nmodule load cuda\n#SBATCH --requeue\n#SBATCH --signal=B:USR1@300\n"
        "srun torchrun --nproc-per-node 8 train.py\n"
    )
    doc = facts(p)
    assert value(doc, "job.resources.nodes") == 2  # the header is read
    assert value(doc, "job.recovery.requeue") is None
    assert value(doc, "job.recovery.signal_lead") == 0.0  # no --signal in force
    ignored = doc["facts"]["job.config.ignored_keys"]
    assert any("--requeue" in x for x in ignored["value"]) and ignored["location"]["line"] == 7
    got = by_rule(findings(p))
    assert got["REC-01.no-automatic-restart"].status.value == "fail"
    assert got["REC-03.preemption-signal-too-late"].status.value == "warn"
    assert got["PREC-02.ignored-config-keys"].location.line == 7  # type: ignore[union-attr]


# ---- HF + DeepSpeed: DeepSpeed's loss_scale decides, not HF's GradScaler


@pytest.mark.parametrize("order", ["hf_first", "ds_first"])
def test_hf_fp16_under_deepspeed_takes_its_static_loss_scale(tmp_path: Path, order: str) -> None:
    from tests.jobs.util import by_rule, findings

    ds_name = "ds.json" if order == "hf_first" else "a_ds.json"
    (tmp_path / "args.json").write_text(
        json.dumps({"output_dir": "o", "fp16": True, "deepspeed": ds_name}, indent=1)
    )
    (tmp_path / ds_name).write_text(
        '{\n  "fp16": {\n    "enabled": "auto",\n    "loss_scale": 128\n  }\n}\n'
    )
    doc = facts(tmp_path)
    ls = doc["facts"]["job.precision.loss_scaling"]
    assert ls["value"] == "static" and ls["location"]["line"] == 4, ls
    assert value(doc, "job.config.conflicts") == []
    f = by_rule(findings(tmp_path))["PREC-02.fp16-without-dynamic-loss-scaling"]
    assert f.status.value == "fail"
    # loss_scale 0 (or none) is DeepSpeed's dynamic scaling
    (tmp_path / ds_name).write_text('{"fp16": {"enabled": "auto", "loss_scale": 0}}')
    assert value(facts(tmp_path), "job.precision.loss_scaling") == "dynamic"


HOSTS = {
    "hf": "output_dir: o\nfp16: true\nper_device_train_batch_size: 4\n",
    "lightning": "trainer:\n  precision: 16-mixed\n  strategy: deepspeed\n",
    "accelerate": "distributed_type: DEEPSPEED\nmixed_precision: fp16\nnum_processes: 8\n",
}
DS_STATIC = '{\n  "fp16": {\n    "enabled": true,\n    "loss_scale": 128\n  }\n}\n'


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("names", [("a_ds.json", "z_train.yaml"), ("z_ds.json", "a_train.yaml")])
def test_deepspeed_loss_scale_beats_host_gradscaler_in_any_file_order(
    tmp_path: Path, host: str, names: tuple[str, str]
) -> None:
    """The host's GradScaler is a default, DeepSpeed's loss_scale explicit: the verdict
    must not depend on which file name sorts first (it was "files disagree" one way)."""
    from tests.jobs.util import by_rule, findings

    ds, train = names
    (tmp_path / train).write_text(HOSTS[host])
    (tmp_path / ds).write_text(DS_STATIC)
    doc = facts(tmp_path)
    assert value(doc, "job.precision.loss_scaling") == "static"
    assert line(doc, "job.precision.loss_scaling") == 4
    assert value(doc, "job.config.conflicts") == []
    rule = "PREC-02.fp16-without-dynamic-loss-scaling"
    got = by_rule(findings(tmp_path))[rule]
    assert got.status.value == "fail" and got.location and got.location.file.endswith(ds)
    (tmp_path / ds).write_text('{"fp16": {"enabled": true, "loss_scale": 0}}')
    assert value(facts(tmp_path), "job.precision.loss_scaling") == "dynamic"
    assert by_rule(findings(tmp_path))[rule].status.value == "pass"


# ---- DeepSpeed infers micro from train and grad_acc


def test_deepspeed_train_and_accumulation_must_divide(tmp_path: Path) -> None:
    from tests.jobs.util import by_rule, findings

    p = tmp_path / "ds.json"
    p.write_text('{"train_batch_size":100,"gradient_accumulation_steps":3}')
    rule = "BATCH-01.global-batch-not-divisible-by-accumulation"
    bad = by_rule(findings(p, sets=("gpu_count=8",)))[rule]
    assert bad.status.value == "fail" and bad.location and bad.location.line == 1  # 24 !| 100
    p.write_text('{"train_batch_size":96,"gradient_accumulation_steps":3}')
    assert by_rule(findings(p, sets=("gpu_count=8",)))[rule].status.value == "pass"
    assert by_rule(findings(p))[rule].status.value == "skip"  # dp unknown


# ---- CKPT-02 judges only checkpointing that is on


def test_ckpt02_skips_when_checkpointing_is_disabled(tmp_path: Path) -> None:
    from tests.jobs.util import CORPUS, by_rule, findings

    f = CORPUS / "torchtitan_toml" / (
        "pytorch__torchtitan__torchtitan__models__llama3__train_configs__llama3_405b.toml"
    )
    if not f.is_file():
        pytest.skip("shared/corpus not present")
    got = by_rule(findings(f, sets=("gpu_count=128", "step_time=30")))
    for rule in ("CKPT-02.time-interval-far-from-optimum", "CKPT-02.interval-far-from-optimum"):
        assert got[rule].status.value == "skip", (rule, got[rule].message)
        assert "checkpointing enabled" in got[rule].message
    assert got["CKPT-01.checkpointing-disabled"].status.value == "fail"
    p = tmp_path / "t.toml"
    p.write_text("[checkpoint]\nenable = true\ninterval = 10\n")
    got = by_rule(findings(p, sets=("gpu_count=128", "step_time=30")))
    assert got["CKPT-02.interval-far-from-optimum"].status.value in ("pass", "fail")


# ---- Hydra composed configs, Lightning timedelta strings, old torchtitan float8


def test_hydra_composed_callbacks_group(tmp_path: Path) -> None:
    p = tmp_path / "config.yaml"
    p.write_text(
        "trainer:\n  _target_: lightning.pytorch.trainer.Trainer\n  precision: bf16-mixed\n"
        "callbacks:\n  model_checkpoint:\n    _target_: lightning.pytorch.callbacks.ModelCheckpoint\n"
        "    every_n_train_steps: 250\n  device_stats:\n"
        "    _target_: lightning.pytorch.callbacks.DeviceStatsMonitor\n"
        "logger:\n  wandb:\n    _target_: lightning.pytorch.loggers.wandb.WandbLogger\n"
    )
    doc = facts(p)
    assert (value(doc, "job.checkpoint.interval_steps"), line(doc, "job.checkpoint.interval_steps")) == (250, 5)
    assert {"gpu_utilization", "memory"} <= set(value(doc, "job.metrics.families"))
    assert "wandb" in value(doc, "job.logging.sinks")


def test_lightning_strategy_timeout_as_timedelta_text(tmp_path: Path) -> None:
    p = tmp_path / "cli.yaml"
    p.write_text(
        "trainer:\n  precision: bf16-mixed\n  strategy:\n"
        "    class_path: lightning.pytorch.strategies.DDPStrategy\n    init_args:\n"
        "      timeout: 0:00:45\n"
    )
    doc = facts(p)
    t = doc["facts"]["job.recovery.detection_timeout"]
    assert t["value"] == 45 and t["location"]["line"] == 6


def test_torchtitan_old_float8_schema_is_fp8(tmp_path: Path) -> None:
    p = tmp_path / "t.toml"
    p.write_text("[training]\nsteps = 10\n\n[float8]\nenable_float8_linear = true\n")
    doc = facts(p)
    assert (value(doc, "job.precision.mode"), line(doc, "job.precision.mode")) == ("fp8", 5)


def test_maxtext_logs_grad_norm_and_tflops_by_default(tmp_path: Path) -> None:
    """MaxText's train_step records learning/grad_norm, raw_grad_norm, param_norm and
    perf/per_device_tflops_per_sec every step: not reported missing (MON-01)."""
    p = tmp_path / "mt.yml"
    p.write_text("base_config: base.yml\nrun_name: fixed\nlog_period: 10\n")
    doc = facts(p)
    assert {"gradient_stats", "gpu_utilization"} <= set(value(doc, "job.metrics.families"))
    assert value(doc, "job.metrics.missing") == ["memory", "collective_latency"]
    p.write_text("base_config: base.yml\noptimizer_memory_host_offload: true\n")
    assert "gradient_stats" in value(facts(p), "job.metrics.missing")


def test_duplicate_json_key_value_and_line_agree(tmp_path: Path) -> None:
    """json keeps the last value of a duplicated key: its line is the last one too, and
    the ignored earlier occurrence is reported (PREC-02 ignored keys) at its line."""
    from tests.jobs.util import by_rule, findings

    p = tmp_path / "ds.json"
    p.write_text(
        '{\n  "train_micro_batch_size_per_gpu": 4,\n  "steps_per_print": 10,\n'
        '  "bf16": {"enabled": true},\n  "steps_per_print": 500\n}\n'
    )
    doc = facts(p)
    assert (value(doc, "job.logging.interval_steps"), line(doc, "job.logging.interval_steps")) == (
        500,
        5,
    )
    got = by_rule(findings(p))
    f = got["PREC-02.ignored-config-keys"]
    assert f.status.value == "fail" and f.location and f.location.line == 3
    assert "duplicate key steps_per_print" in f.message
    assert got["MON-02.metrics-interval-too-many-steps"].location.line == 5  # type: ignore[union-attr]


def test_json_key_lines_follow_the_value_json_keeps() -> None:
    """Python's json keeps a repeated key's last value; its line must be that occurrence's,
    for every JSON reader (HF args, PyTorchJob, heredoc JSON), not only DeepSpeed's."""
    from validator.io.source import json_key_lines

    text = '{\n  "save_steps": 100,\n  "args": {"a": 1},\n  "save_steps": 500\n}\n'
    assert json_key_lines(text)[("save_steps",)] == 4
    assert json_key_lines(text)[("args", "a")] == 3
    repeated: dict = {}
    json_key_lines('{"save_steps": 100, "save_steps": 500}', repeated)
    assert repeated == {("save_steps",): [1]}  # a one-line object's duplicate is still seen
