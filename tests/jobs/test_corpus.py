"""Every real config of shared/corpus lints (exit 0 or 1, no parse error), with the facts
that matter asserted per file, and the spec findings each one really has, at their line."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from tests.jobs.util import CORPUS, by_rule, facts, findings, line, spec_check, value

pytestmark = pytest.mark.skipif(
    not (CORPUS / "MANIFEST.tsv").is_file(), reason="shared/corpus not present"
)


def _manifest() -> list[str]:
    if not (CORPUS / "MANIFEST.tsv").is_file():
        return []
    with (CORPUS / "MANIFEST.tsv").open() as fh:
        return [row["local_file"] for row in csv.DictReader(fh, delimiter="\t")]


FILES = _manifest()

# file (start of its name) -> {fact: value} or {fact: (value, line)}
EXPECTED: dict[str, dict[str, Any]] = {
    "hiyouga__LLaMA-Factory": {
        "job.formats": ["deepspeed"],
        "job.precision.mode": None,
        "job.batch.micro": None,
        # "auto" values: the HF Trainer's template; steps_per_print: 10000000 is DeepSpeed's
        # console line there, the metrics interval the host's (docs/lint.md)
        "job.logging.interval_steps": (None, None),
        "job.config.ignored_keys": [
            "monitor_config (DeepSpeed reads monitors only from top-level "
            "tensorboard/wandb/csv_monitor/comet)",
            "comms_config (DeepSpeed's comms logging key is comms_logger)",
        ],
        "job.recovery.detection_timeout": 600,
    },
    "huggingface__accelerate__examples__deepspeed_config_templates": {
        "job.precision.mode": ("fp16", 3),
        "job.precision.loss_scaling": ("dynamic", 4),
        "job.batch.accumulation": (1, 46),
        "job.batch.global": None,
        # "auto" values: a template Accelerate / the HF Trainer fills in; steps_per_print is
        # DeepSpeed's console line there, the metrics interval the host's (docs/lint.md)
        "job.logging.interval_steps": (None, None),
    },
    "microsoft__DeepSpeedExamples__training__bing_bert": {
        "job.precision.mode": ("fp16", 21),
        "job.batch.global": (65536, 2),
        "job.batch.micro": (64, 3),
        "job.batch.rule": "divisible",
        "job.logging.interval_steps": (1000, 4),
    },
    "microsoft__DeepSpeedExamples__training__data_efficiency": {
        "job.precision.mode": ("fp32", None),
        "job.batch.global": (32, 2),
        "job.batch.micro": (32, 3),
    },
    "microsoft__DeepSpeedExamples__training__pipeline_parallelism": {
        "job.precision.mode": "fp32",
        "job.batch.global": (256, 2),
        "job.batch.micro": (8, 3),
        "job.logging.interval_steps": (10, 17),
    },
    "microsoft__DeepSpeed__tests": {
        "job.precision.mode": ("fp16", 13),
        "job.batch.micro": (8, 2),
        "job.batch.accumulation": (3, 3),
        "job.batch.global": None,
        "job.logging.interval_steps": (1, 4),
    },
    "huggingface__accelerate__examples__config_yaml_templates__deepspeed": {
        "job.world_size": (2, 12),
        "job.formats": ["accelerate"],
    },
    "huggingface__accelerate__examples__torch_native_parallelism": {
        "job.precision.mode": ("bf16", 16),
        "job.world_size": (8, 18),
        "job.parallel.tp": (2, 23),
        "job.parallel.dp": (4, 21),
        "job.resources.nodes": (1, 17),
    },
    "huggingface__alignment-handbook__recipes__zephyr": {
        "job.precision.mode": ("bf16", 27),
        "job.batch.micro": (8, 46),
        "job.batch.accumulation": (2, 32),
        "job.checkpoint.enabled": (True, 49),
        "job.checkpoint.interval_steps": (100, 50),
        "job.logging.interval_steps": (10, 39),
        "job.recovery.detection_timeout": 1800,
    },
    "ashleve__lightning-hydra-template": {
        "job.checkpoint.enabled": (True, 3),
        "job.checkpoint.interval_steps": None,
    },
    "microsoft__torchgeo": {
        "job.precision.mode": "fp32",
        "job.logging.interval_steps": (5, 4),
        "job.checkpoint.enabled": True,
    },
    "AI-Hypercomputer__maxtext__src__maxtext__configs__base": {
        "job.precision.mode": ("bf16", 114),
        "job.batch.micro": (12.0, 731),
        "job.checkpoint.enabled": (True, 53),
        "job.checkpoint.interval_steps": (10000, 57),
        "job.checkpoint.resume": (False, 21),
        "job.logging.interval_steps": (100, 837),
        "job.comm.grad_dtype": ("fp32", 111),
        "job.train_steps": (150001, 836),
    },
    "AI-Hypercomputer__maxtext__src__maxtext__configs__gpu": {
        "job.checkpoint.enabled": (False, 8),
        "job.batch.micro": (6, 17),
        "job.train_steps": (30, 6),
        "job.precision.mode": ("bf16", None),
    },
    "NVIDIA__Megatron-LM__examples__mixtral": {
        "job.precision.mode": ("bf16", 79),
        "job.batch.micro": (1, 69),
        "job.batch.global": (256, 70),
        "job.parallel.pp": (4, 84),
        "job.parallel.ep": (8, 85),
        "job.resources.gpus_per_node": (8, 20),
        "job.checkpoint.interval_steps": (10000, 92),
        "job.checkpoint.resume": (True, 96),
        "job.logging.interval_steps": (1, 91),
        "job.recovery.max_restarts": 0,
        "job.world_size": None,
        "job.recovery.detection_timeout": 600,
    },
    "NVIDIA__Megatron-LM__examples__megatron_fsdp": {
        "job.precision.mode": ("bf16", 134),
        "job.batch.micro": (4, 41),
        "job.batch.global": (2048, 42),
        "job.checkpoint.interval_steps": (100, 122),
        "job.checkpoint.resume": (True, 120),
        "job.recovery.detection_timeout": (3600, 29),
        "job.comm.grad_dtype": ("bf16", 151),
        "job.metrics.missing": [],
    },
    "huggingface__alignment-handbook__recipes__launch": {
        "job.resources.gpus_per_node": (8, 5),
        "job.resources.time_limit": (259200, 10),
        "job.recovery.requeue": (True, 9),
        "job.recovery.max_restarts": (1, 153),
        "job.recovery.signal_lead": 0.0,
        "job.comm.nccl_discouraged": [
            "NCCL_ASYNC_ERROR_HANDLING (legacy name; use TORCH_NCCL_ASYNC_ERROR_HANDLING)"
        ],
    },
    "NVIDIA__NeMo-Framework-Launcher": {
        "job.precision.mode": ("bf16", 19),
        "job.resources.nodes": (128, 16),
        "job.resources.gpus_per_node": (8, 17),
        "job.world_size": 1024,
        "job.parallel.tp": (4, 62),
        "job.parallel.pp": (8, 63),
        "job.parallel.dp": 32,
        "job.batch.global": (2048, 59),
        "job.resources.time_limit": (26 * 86400, 12),
        "job.checkpoint.interval_steps": (2000, 27),
        "job.checkpoint.resume": (True, 41),
    },
    "NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_gpt": {
        "job.precision.mode": ("bf16", 11),
        "job.batch.micro": (4, 81),
        "job.batch.global": (8, 82),
        "job.world_size": 1,
        "job.checkpoint.resume": (True, 52),
    },
    "NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_llama": {
        "job.precision.mode": ("fp32", 6),
        "job.batch.micro": (4, 49),
        "job.batch.global": (8, 50),
    },
    "tensorflow__models__official__nlp": {
        # runtime.mixed_precision_dtype is not in the file: the registered experiment's
        # value is an inherited default the linter cannot see: unknown, not fp32
        "job.precision.mode": (None, None),
        "job.batch.global": (512, 7),
        "job.checkpoint.interval_steps": (20000, 26),
        "job.logging.interval_steps": (1000, 45),
        "job.train_steps": (1000000, 46),
    },
    "tensorflow__models__official__vision": {
        "job.precision.mode": ("fp16", 3),
        "job.precision.loss_scaling": ("dynamic", 4),
        "job.batch.global": (2048, 20),
        "job.checkpoint.interval_steps": (625, 38),
        "job.logging.interval_steps": (625, 37),
    },
    "pytorch__torchtitan__torchtitan__models__deepseek_v3": {
        "job.precision.mode": "bf16",
        "job.batch.micro": (4, 38),
        "job.checkpoint.enabled": (False, 56),
        "job.checkpoint.interval_steps": (500, 58),
        "job.logging.interval_steps": (10, 14),
        "job.recovery.detection_timeout": 100,
    },
    "pytorch__torchtitan__torchtitan__models__llama3__": {
        "job.precision.mode": ("fp8", 21),
        "job.parallel.tp": (8, 41),
        "job.checkpoint.enabled": (False, 47),
    },
    "pytorch__torchtitan__torchtitan__models__llama3_ft": {
        "job.recovery.detection_timeout": (15.0, 85),
        "job.recovery.auto_restart": (True, 88),
        "job.logging.interval_steps": (1, 17),
    },
    "aws-samples__awsome-distributed-training": {
        "job.recovery.max_restarts": (100, 10),
        "job.recovery.auto_restart": (True, 10),  # elasticPolicy.maxRestarts decides (issue 33)
        "job.checkpoint.interval_steps": (50, 100),
        "job.checkpoint.resume": (True, 106),
        "job.comm.nccl_discouraged": [
            "TORCH_DISTRIBUTED_DEBUG=DETAIL (debugging only)",
            "NCCL_DEBUG=INFO (debugging only; use WARN)",
        ],
    },
}

# file -> [(rule, status, line)]: the spec problems each real config really has
FINDINGS: dict[str, list[tuple[str, str, int | None]]] = {
    "hiyouga__LLaMA-Factory": [
        ("PREC-02.ignored-config-keys", "fail", 38),
        ("MON-02.metrics-interval-too-many-steps", "skip", None),  # the host's interval (was fail, 33)
    ],
    "microsoft__DeepSpeedExamples__training__pipeline_parallelism": [
        ("PREC-01.full-precision-training", "fail", None)
    ],
    "NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_llama": [
        ("PREC-01.full-precision-training", "fail", 6)
    ],
    "pytorch__torchtitan__torchtitan__models__llama3__": [
        ("CKPT-01.checkpointing-disabled", "fail", 47)
    ],
    "pytorch__torchtitan__torchtitan__models__deepseek_v3": [
        ("CKPT-01.checkpointing-disabled", "fail", 56),
        ("REC-02.detection-timeout-too-long", "fail", None),
    ],
    "huggingface__alignment-handbook__recipes__launch": [
        ("COMM-01.nccl-debug-settings-in-production", "warn", 134),
        ("REC-03.preemption-signal-too-late", "warn", None),
    ],
    "aws-samples__awsome-distributed-training": [
        ("COMM-01.nccl-debug-settings-in-production", "warn", 61)
    ],
    "NVIDIA__Megatron-LM__examples__mixtral": [("REC-01.no-automatic-restart", "fail", None)],
    "NVIDIA__NeMo-Framework-Launcher": [
        ("BATCH-01.global-batch-not-divisible", "pass", 59),
        ("TOPO-03.degrees-do-not-divide-world-size", "pass", 16),
    ],
    # an inherited default is no evidence of fp32 training: skipped, not failed;
    # summary_interval: 1000 steps is beyond the profile's 100-step metrics bound
    "tensorflow__models__official__nlp": [
        ("PREC-01.full-precision-training", "skip", None),
        ("MON-02.metrics-interval-too-many-steps", "fail", 45),
    ],
    # summary_interval: 625 (once per epoch of ImageNet at batch 2048)
    "tensorflow__models__official__vision": [
        ("MON-02.metrics-interval-too-many-steps", "fail", 37)
    ],
    # "steps_per_print": 1000 / 200 / 2000: above the 100-step metrics bound
    "microsoft__DeepSpeedExamples__training__bing_bert": [
        ("MON-02.metrics-interval-too-many-steps", "fail", 4)
    ],
    "microsoft__DeepSpeedExamples__training__data_efficiency": [
        ("MON-02.metrics-interval-too-many-steps", "fail", 4)
    ],
    # "auto" values (a template for Accelerate / the HF Trainer): the host's interval,
    # unknown alone, so MON-02 skips (it failed on steps_per_print: 2000 before round 3)
    "huggingface__accelerate__examples__deepspeed_config_templates": [
        ("MON-02.metrics-interval-too-many-steps", "skip", None)
    ],
    # run_name: "" gives every restart a new timestamped directory: no auto-resume
    "AI-Hypercomputer__maxtext__src__maxtext__configs__base": [
        ("CKPT-03.resume-not-automatic", "fail", 21)
    ],
    # enable_checkpointing: false with no time limit (duration unknown: counted as long)
    "AI-Hypercomputer__maxtext__src__maxtext__configs__gpu": [
        ("CKPT-01.checkpointing-disabled", "fail", 8)
    ],
    # a debug config, but [checkpoint] enable = false with no bound on its duration
    "pytorch__torchtitan__torchtitan__models__llama3_ft": [
        ("CKPT-01.checkpointing-disabled", "fail", 58)
    ],
    # --distributed-timeout-minutes 60: a dead rank is noticed after an hour
    "NVIDIA__Megatron-LM__examples__megatron_fsdp": [
        ("REC-02.detection-timeout-too-long", "fail", 29)
    ],
}


def _key(local: str) -> str:
    name = Path(local).name
    matches = [k for k in EXPECTED if name.startswith(k)]
    assert len(matches) == 1, (name, matches)
    return matches[0]


def test_every_corpus_file_has_expectations() -> None:
    assert len(FILES) >= 25
    for f in FILES:
        _key(f)


@pytest.mark.parametrize("local", FILES, ids=[Path(f).name[:60] for f in FILES])
def test_corpus_file_facts(local: str) -> None:
    doc = facts(CORPUS / local)
    assert doc["errors"] == [], doc["errors"]
    assert doc["facts"]["job.files"]["value"], "recognized as a job config"
    for name, want in EXPECTED[_key(local)].items():
        if isinstance(want, tuple):
            assert (value(doc, name), line(doc, name)) == want, (name, doc["facts"][name])
        else:
            assert value(doc, name) == want, (name, doc["facts"][name])
    for name, f in doc["facts"].items():
        if f.get("value") is not None and name not in (
            "job.formats",
            "job.files",
            "job.config.conflicts",
        ):
            assert f.get("source"), f"{name} has no source"


@pytest.mark.parametrize(
    "local",
    [f for f in FILES if any(Path(f).name.startswith(k) for k in FINDINGS)],
    ids=lambda f: Path(f).name[:60],
)
def test_corpus_spec_findings_at_their_line(local: str) -> None:
    got = by_rule(findings(CORPUS / local))
    key = next(k for k in FINDINGS if Path(local).name.startswith(k))
    for rule, status, ln in FINDINGS[key]:
        f = got[rule]
        assert f.status.value == status, (rule, f.status, f.message)
        assert (f.location.line if f.location else None) == ln, (rule, f.location)


def test_batch_arithmetic_decided_with_gpu_count() -> None:
    """bing_bert: 65536 = 64 x grad_acc x dp holds for 8 GPUs, not for 24 (65536 % 1536 != 0)."""
    f = (
        CORPUS / "deepspeed_json" / "microsoft__DeepSpeedExamples__training__bing_bert__"
        "deepspeed_bsz64k_lamb_config_seq128.json"
    )
    skip = by_rule(findings(f))["BATCH-01.global-batch-not-divisible"]
    assert skip.status.value == "skip" and "--set gpu_count" in skip.message
    assert (
        by_rule(findings(f, sets=("gpu_count=8",)))[
            "BATCH-01.global-batch-not-divisible"
        ].status.value
        == "pass"
    )
    bad = by_rule(findings(f, sets=("gpu_count=24",)))["BATCH-01.global-batch-not-divisible"]
    assert bad.status.value == "fail" and bad.location and bad.location.line == 2


def test_checkpoint_interval_judged_with_step_time() -> None:
    """NeMo GPT-3 175B: 1024 GPUs, a checkpoint every 2000 steps (on validation)."""
    f = (
        CORPUS
        / "nemo_yaml"
        / "NVIDIA__NeMo-Framework-Launcher__launcher_scripts__conf__training__gpt3__175b.yaml"
    )
    skip = by_rule(findings(f))["CKPT-02.interval-far-from-optimum"]
    assert skip.status.value == "skip" and "step_time" in skip.message
    # 1024 GPUs: M = 48.8 h, tau ~ 4,570 s; at 10 s/step 2000 steps = 20,000 s > 2 tau
    got = by_rule(findings(f, sets=("step_time=10s",)))
    fail = got["CKPT-02.interval-far-from-optimum"]
    assert fail.status.value == "fail" and fail.location and fail.location.line == 27
    # an interval in steps is judged in steps: the expected range is the step counts to set
    assert " within 228 to 911 (Daly's optimum for 1,024 GPUs" in fail.expected, fail.expected
    assert got["CKPT-02.time-interval-far-from-optimum"].status.value == "skip"
    ok = by_rule(findings(f, sets=("step_time=2.5s",)))["CKPT-02.interval-far-from-optimum"]
    assert ok.status.value == "pass"


@pytest.mark.parametrize("folder", sorted({Path(f).parent.as_posix() for f in FILES}))
def test_corpus_folder_lints_as_one_job_via_cli(folder: str) -> None:
    r = spec_check("lint", "--format", "json", str(CORPUS / folder))
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    assert "LINT-00" not in r.stdout


def test_tf_inherited_precision_is_skipped_naming_the_key() -> None:
    """wiki_books_pretrain.yaml does not set runtime.mixed_precision_dtype: the registered
    experiment decides it, which a YAML linter cannot see; the dataclass default (None =
    fp32) is not evidence of fp32 training, so PREC-01 skips and says what to set."""
    f = (
        CORPUS / "tf_model_garden_yaml" / "tensorflow__models__official__nlp__configs__"
        "experiments__wiki_books_pretrain.yaml"
    )
    mode = facts(f)["facts"]["job.precision.mode"]
    assert mode["value"] is None  # a precision or null, never a sentence
    assert mode["source"].startswith("inherited default: tf-model-garden: runtime.mixed_precision_dtype")
    p = by_rule(findings(f))["PREC-01.full-precision-training"]
    assert p.status.value == "skip"
    assert "inherited default" in p.message and "runtime.mixed_precision_dtype" in p.message
