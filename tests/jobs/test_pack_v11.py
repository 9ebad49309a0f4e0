"""Rule pack v1.1 on real job files: REC-02 by failure mode, MON-01 per metric family with
platform-provided families, CKPT-01 for short runs, and defaults named with their source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import built
from tests.jobs.util import CORPUS, spec_check
from validator.evaluate.engine import evaluate
from validator.jobs import read_job
from validator.report.model import Finding, Status


def lint(*paths: Path, sets: tuple[str, ...] = (), step_time: float | None = None,
         version: str = "1.1") -> dict[str, Finding]:
    b = built(*sets, rules_version=version)
    doc = read_job(list(paths), None, step_time_s=step_time)[0]
    doc = {k: v for k, v in doc.items() if k != "errors"}
    return {f.rule: f for f in evaluate(b.ctx, b.pack, [doc])}


MEGATRON = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --time=48:00:00
{env}
{launcher} --nproc-per-node 8 --nnodes 2 --max-restarts 3 --rdzv-backend c10d {ft} \\
    pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 \\
    --tensor-model-parallel-size 2 --bf16 --save /ckpt --load /ckpt --save-interval 500 {more}
"""


def megatron(tmp_path: Path, *, launcher: str = "torchrun", ft: str = "", env: str = "", more: str = "") -> Path:
    p = tmp_path / "train.sh"
    p.write_text(MEGATRON.format(launcher=launcher, ft=ft, env=env, more=more))
    return p


def test_a_heartbeat_watchdog_decides_hang_detection(tmp_path: Path) -> None:
    """A 10-minute collective timeout behind a 30 s heartbeat is a 35 s detection (30 s +
    ft_launcher's 5 s check interval), and the finding says which mechanism and where."""
    f = lint(megatron(tmp_path, launcher="ft_launcher", ft="--ft-rank-heartbeat-timeout 30",
                      more="--enable-ft-package"))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 35
    assert "NVRx ft_launcher rank heartbeat" in hang.message
    assert f"--ft-rank-heartbeat-timeout 30 at {tmp_path / 'train.sh'}:5" in hang.message
    assert "read in nvidia-resiliency-ext 0.7.0, fault_tolerance/config.py" in hang.message  # 5 s check interval
    assert "slower: NCCL watchdog (collective timeout) 600 s" in hang.message
    crash = f["REC-02.crash-detection-too-slow"]
    assert crash.status is Status.PASS and crash.value == 0.3 and "ft_launcher worker monitor" in crash.message
    assert "REC-02.detection-timeout-too-long" not in f  # disabled in v1.1


def test_a_collective_timeout_alone_fails_naming_the_default_and_its_source(tmp_path: Path) -> None:
    f = lint(megatron(tmp_path))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.FAIL and hang.value == 600
    assert ("default of Megatron-LM (not set in your files; NVIDIA/Megatron-LM@d98e8a6): "
            "--distributed-timeout-minutes = 10 min (600 s) (read in megatron-core 0.19.2, "
            "megatron/training/config/common_config.py)") in hang.message
    assert "no heartbeat watchdog configured" in hang.message
    assert "heartbeat watchdog first" in hang.remediation and "dangerous at scale" in hang.remediation
    crash = f["REC-02.crash-detection-too-slow"]
    assert crash.status is Status.PASS and "torchrun worker monitor" in crash.message
    assert "(read in torch 2.0.1-2.3.1, torch/distributed/run.py" in crash.message


def test_an_explicit_collective_timeout_is_quoted_at_its_line(tmp_path: Path) -> None:
    f = lint(megatron(tmp_path, more="--distributed-timeout-minutes 1"))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 60
    assert re.search(r"megatron: --distributed-timeout-minutes at .*train\.sh:\d", hang.message)


def test_a_watchdog_that_does_not_tear_down_detects_nothing(tmp_path: Path) -> None:
    f = lint(megatron(tmp_path, env="export TORCH_NCCL_ASYNC_ERROR_HANDLING=0",
                      more="--distributed-timeout-minutes 1"))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.FAIL and hang.observed == "unlimited"
    assert "TORCH_NCCL_ASYNC_ERROR_HANDLING=0" in hang.message and "does not end the process" in hang.message


def test_megatron_inprocess_restart_counts_at_its_defaults(tmp_path: Path) -> None:
    f = lint(megatron(tmp_path, more="--inprocess-restart"))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 60
    assert "Megatron in-process restart" in hang.message and "default of Megatron-LM" in hang.message


def test_torchft_in_torchtitan(tmp_path: Path) -> None:
    p = tmp_path / "llama3_8b.toml"
    p.write_text('[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\nflavor = "8B"\n\n'
                 '[training]\nsteps = 1000\nlocal_batch_size = 1\n\n[metrics]\nlog_freq = 10\n\n'
                 '[fault_tolerance]\nenable = true\nprocess_group_timeout_ms = 20000\n')
    f = lint(p)
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 20
    assert "torchft process-group timeout" in hang.message and f"{p}:17" in hang.message
    # torchtitan logs throughput, memory and grad norm by default; no latency metric
    assert f["MON-01.memory-not-emitted"].status is Status.PASS
    lat = f["MON-01.collective-latency-not-emitted"]
    assert lat.status is Status.FAIL and "TORCH_NCCL_ENABLE_TIMING=1" in lat.message


HF = "output_dir: out\nper_device_train_batch_size: 4\nmax_steps: 10\nsave_strategy: \"no\"\nbf16: true\n"


def test_metric_families_are_judged_one_by_one_with_the_setting_that_emits_them(tmp_path: Path) -> None:
    p = tmp_path / "hf.yaml"
    p.write_text(HF)
    f = lint(p)
    gpu = f["MON-01.gpu-utilization-not-emitted"]
    assert gpu.status is Status.FAIL and "hf_trainer: to emit it, set include_num_input_tokens_seen: true" in gpu.message
    assert "logs by default (transformers/trainer.py): loss, learning rate, grad_norm" in gpu.message
    assert f["MON-01.gradient-stats-not-emitted"].status is Status.PASS
    p.write_text(HF + "include_num_input_tokens_seen: true\n")
    gpu = lint(p)["MON-01.gpu-utilization-not-emitted"]
    assert gpu.status is Status.PASS and gpu.location is not None and gpu.location.line == 6
    # no TrainingArguments setting logs memory during training: skip_memory_metrics: false
    # reports it once, when train() ends (transformers 4.57.6 TrainerMemoryTracker), so memory
    # is an unknown the files cannot decide, not a failure with a setting to turn on
    p.write_text(HF + "skip_memory_metrics: false\n")
    mem = lint(p)["MON-01.memory-not-emitted"]
    assert mem.status is Status.ERROR and "no hf_trainer setting that spec-check reads emits memory" in mem.message


def test_families_the_platform_provides_pass_as_such(tmp_path: Path) -> None:
    p = tmp_path / "hf.yaml"
    p.write_text(HF)
    f = lint(p, sets=("platform_metric_families=gpu_utilization,memory,collective_latency",))
    for rule in ("gpu-utilization", "memory", "collective-latency"):
        got = f[f"MON-01.{rule}-not-emitted"]
        assert got.status is Status.PASS, got.message
        assert "provided by the platform (declared in the profile" in got.message


def test_a_short_run_needs_no_checkpoint_and_says_why(tmp_path: Path) -> None:
    p = tmp_path / "hf.yaml"
    p.write_text(HF)
    short = lint(p, step_time=5)["CKPT-01.checkpointing-disabled"]
    assert short.status is Status.PASS
    assert short.message == ("the whole run is shorter than the length above which the spec requires checkpoints: no checkpoint is needed "
                             "(observed 50 s)")
    unknown = lint(p)["CKPT-01.checkpointing-disabled"]
    assert unknown.status is Status.FAIL and "--set step_time=SECONDS" in unknown.message
    assert unknown.location is not None and unknown.location.line == 4  # save_strategy: "no"


def test_the_cli_judges_with_v1_0_when_asked(tmp_path: Path) -> None:
    p = tmp_path / "hf.yaml"
    p.write_text(HF)
    old = spec_check("lint", str(p), "--rules-version", "1.0", "--select", "REC-02,MON-01", "--format", "json")
    new = spec_check("lint", str(p), "--rules-version", "1.1", "--select", "REC-02,MON-01", "--format", "json")
    assert '"MON-01.metric-families-missing"' in old.stdout and "hang-detection" not in old.stdout
    assert '"REC-02.hang-detection-too-slow"' in new.stdout and "metric-families-missing" not in new.stdout


# ---- defaults: one table per framework, named by every finding that relies on one ----------

def test_docs_defaults_is_generated_from_the_tables() -> None:
    from validator.jobs.defaults import markdown

    doc = Path(__file__).resolve().parents[2] / "docs" / "defaults.md"
    assert doc.read_text() == markdown(), "run: python -m validator.jobs.defaults > docs/defaults.md"


def test_every_default_key_the_v11_readers_cite_is_in_a_table() -> None:
    from validator.jobs import defaults, metrics, registry
    from validator.jobs import failure_detection as detection

    root = Path(detection.__file__).parent
    keys = set()
    for mod in ("failure_detection.py", "metrics.py", "registry.py"):
        keys |= set(re.findall(r'(?:cite|value_of)\("([\w.]+)"\)', (root / mod).read_text()))
        keys |= set(re.findall(r'"(\w+\.\w+)"\)', (root / mod).read_text())) & {
            f"{t}.{r}" for t, tab in defaults.TABLES.items() for r in tab.rows}
    keys |= {k for _, k in detection.collective_defaults()} | {
        f.metrics.by_default[1] for f in registry.FORMATS if f.metrics and f.metrics.by_default}
    assert metrics.FAMILIES
    assert keys, "no default cited"
    for k in keys:
        defaults.row(k)  # KeyError names a missing row


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_each_v11_finding_that_rests_on_a_default_names_it() -> None:
    """Over the public corpus: a REC-02/MON-01 v1.1 verdict either quotes the job's own setting
    (file:line) or names the framework default with its version and source file."""
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml", ".yml", ".sh",
                                                                                 ".toml", ".slurm"))
    judged = 0
    for path in files:
        for f in lint(path).values():
            if f.status not in (Status.PASS, Status.FAIL) or not f.rule.startswith(("REC-02.", "MON-01.")):
                continue
            if "provided by the platform" in f.message or f.rule == "REC-02.measured-recovery-too-slow":
                continue
            judged += 1
            own = re.search(r" at \S+:\d+", f.message) or f.observed == "emitted"
            # not emitted: rests on no default, and names the setting that would emit it
            own = own or (f.observed == "not emitted" and ": to emit it, " in f.message)
            named = (re.search(r"default of .+ \(not set in your files.*\(read in .+, [\w/.]+", f.message)
                     or "logs by default (" in f.message)
            assert own or named, (path.name, f.rule, f.message)
    assert judged > 20


# the defaults the readers fill in for a config that leaves the setting out, against the table
_MINIMAL = {
    "hf.yaml": "output_dir: out\nper_device_train_batch_size: 4\nbf16: true\n",
    "lightning.yaml": "trainer:\n  accelerator: gpu\n  devices: 8\n  precision: bf16-mixed\n",
    "train.toml": '[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\nflavor = "8B"\n\n'
                  "[training]\nsteps = 1000\nlocal_batch_size = 1\n",
    "run.sh": "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --micro-batch-size 1 "
              "--global-batch-size 64 --bf16\n",
    "ds.json": '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n',
}


@pytest.mark.parametrize(("file", "fact", "key"), [
    ("hf.yaml", "job.logging.interval_steps", "hf.logging_steps"),
    ("hf.yaml", "job.recovery.detection_timeout", "hf.ddp_timeout"),
    ("hf.yaml", "job.checkpoint.interval_steps", "hf.save_steps"),
    ("lightning.yaml", "job.logging.interval_steps", "lightning.log_every_n_steps"),
    ("train.toml", "job.logging.interval_steps", "torchtitan.log_freq"),
    ("train.toml", "job.recovery.detection_timeout", "torchtitan.train_timeout"),
    ("train.toml", "job.checkpoint.enabled", "torchtitan.checkpoint_enable"),
    ("lightning.yaml", "job.batch.accumulation", "lightning.accumulate_grad_batches"),
    ("run.sh", "job.logging.interval_steps", "megatron.log_interval"),
    ("run.sh", "job.recovery.detection_timeout", "megatron.distributed_timeout"),
    ("run.sh", "job.recovery.max_restarts", "torch.max_restarts"),
    ("ds.json", "job.logging.interval_steps", "deepspeed.steps_per_print"),  # None: not a step interval
])
def test_reader_defaults_agree_with_the_tables(tmp_path: Path, file: str, fact: str, key: str) -> None:
    from validator.jobs.defaults import value_of

    p = tmp_path / file
    p.write_text(_MINIMAL[file])
    doc = read_job([p], None)[0]
    assert doc["facts"][fact]["value"] == value_of(key), (fact, doc["facts"][fact])


def test_deepspeed_without_steps_per_print_never_logs_and_mon02_says_whose_default(tmp_path: Path) -> None:
    """DeepSpeed >= 0.15.2 prints no periodic line unless steps_per_print is set (its default is
    None, not the 10 of 0.15.1): MON-02 fails under both packs, naming the default's origin."""
    p = tmp_path / "ds.json"
    p.write_text(_MINIMAL["ds.json"])
    fact = read_job([p], None)[0]["facts"]["job.logging.interval_time"]
    assert fact["value"] == "unlimited"
    assert fact["source"].startswith("default of DeepSpeed (not set in your files; ")
    assert "steps_per_print = None (never) (read in deepspeed 0.19.8, deepspeed/runtime/constants.py" in fact["source"]
    for version in ("1.0", "1.1"):
        f = lint(p, version=version)["MON-02.metrics-interval-too-long"]
        assert f.status is Status.FAIL and f.observed.startswith("never (no periodic metrics) (default of DeepSpeed")
        assert "STEPS_PER_PRINT_DEFAULT" in f.message, f.message
    # set, it is the job's own interval; under an HF Trainer the Trainer's logging_steps counts
    p.write_text('{"train_micro_batch_size_per_gpu": 4, "steps_per_print": 50}\n')
    assert lint(p)["MON-02.metrics-interval-too-many-steps"].status is Status.PASS
    hf = tmp_path / "hf.yaml"
    hf.write_text("output_dir: out\nper_device_train_batch_size: 4\nbf16: true\ndeepspeed:\n"
                  "  train_micro_batch_size_per_gpu: 4\n")
    doc = read_job([hf], None)[0]["facts"]
    assert doc["job.logging.interval_steps"]["value"] == 500 and doc["job.logging.interval_time"]["value"] is None
    # "auto" values: a host fills the config in and logs on its own schedule, which it cannot show
    p.write_text('{"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"}}\n')
    skip = lint(p)["MON-02.metrics-interval-too-many-steps"]
    assert skip.status is Status.SKIP and "lint it with the host's config" in skip.message
    assert "steps_per_print = None (never) (read in deepspeed 0.19.8" in skip.message
    assert lint(p)["MON-02.metrics-interval-too-long"].status is Status.SKIP


def test_slurm_requeue_alone_waits_for_slurmd_timeout(tmp_path: Path) -> None:
    p = tmp_path / "job.sbatch"
    p.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --requeue\n#SBATCH --time=24:00:00\n"
                 "srun python pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 --bf16\n")
    crash = lint(p)["REC-02.crash-detection-too-slow"]
    assert crash.status is Status.FAIL and crash.value == 300
    assert "Slurm requeue (node marked DOWN)" in crash.message and "SlurmdTimeout (slurm.conf) = 5 min" in crash.message


def test_the_watchdogs_own_heartbeat_is_no_gpu_detector_but_torchft_is(tmp_path: Path) -> None:
    f = lint(megatron(tmp_path, env="export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=30"))
    assert f["REC-02.hang-detection-too-slow"].value == 600  # guards the watchdog thread, not a GPU
    f = lint(megatron(tmp_path, env="export TORCHFT_TIMEOUT_SEC=20"))
    hang = f["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 20 and "torchft Manager timeout" in hang.message


def test_nemo_fault_tolerance_heartbeat(tmp_path: Path) -> None:
    p = tmp_path / "gpt.yaml"
    p.write_text("trainer:\n  devices: 8\n  num_nodes: 2\n  precision: bf16\n  max_steps: 1000\n"
                 "exp_manager:\n  create_fault_tolerance_callback: true\n  fault_tolerance:\n"
                 "    rank_heartbeat_timeout: 45\n"
                 "model:\n  micro_batch_size: 1\n  global_batch_size: 64\n  tensor_model_parallel_size: 1\n")
    hang = lint(p)["REC-02.hang-detection-too-slow"]
    assert hang.status is Status.PASS and hang.value == 45
    assert "NeMo fault-tolerance rank heartbeat" in hang.message and f"{p}:7" in hang.message


def test_a_family_the_files_cannot_show_is_an_error_not_a_failure(tmp_path: Path) -> None:
    """A launcher alone cannot show what the training loop logs; DeepSpeed's config has no key
    for gradient statistics. Unknown is never a pass, nor a failure nobody could back."""
    f = lint(megatron(tmp_path))  # the launch script is here: collective latency can be judged
    assert f["MON-01.collective-latency-not-emitted"].status is Status.FAIL
    p = tmp_path / "job.sbatch"
    p.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=24:00:00\nsrun torchrun train.py\n")
    f = lint(p)
    mem = f["MON-01.memory-not-emitted"]
    assert mem.status is Status.ERROR and "lint the training config together with them" in mem.message
    # a training config alone is the config: it is never asked to be linted "together with" itself
    tt = tmp_path / "recipe.yaml"
    tt.write_text("model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\nbatch_size: 4\nepochs: 1\n"
                  "dtype: bf16\noptimizer:\n  _component_: torch.optim.AdamW\n")
    mem = lint(tt)["MON-01.memory-not-emitted"]
    assert mem.status is Status.ERROR and "together with" not in mem.message
    assert f["MON-01.collective-latency-not-emitted"].status is Status.FAIL  # settable in this script
    ds = tmp_path / "ds.json"
    ds.write_text('{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n')
    grad = lint(ds)["MON-01.gradient-stats-not-emitted"]
    assert grad.status is Status.ERROR and "no deepspeed setting that spec-check reads emits gradient stats" in grad.message
    assert lint(ds, sets=("platform_metric_families=gradient_stats",))[
        "MON-01.gradient-stats-not-emitted"].status is Status.PASS
