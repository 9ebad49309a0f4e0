"""A fix asks only for what is missing (rule pack v1.1).

v1.0's CKPT-02 fix said "pass --set step_time=SECONDS and --set gpu_count=N" on every
finding, also where both had been passed or read from the job; CKPT-01's summary and
TOPO-03's fix did the same with step_time and nvlink_domain_size. In v1.1 a rule's own
texts ask for no ``--set`` key; the finding names one only where its value is unknown (a
formula's skip, or the source of a fact a ``when`` with ``cite: true`` rests on)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import built
from tests.jobs.util import CORPUS, findings

HF = CORPUS / "hf_trainer_yaml/huggingface__alignment-handbook__recipes__zephyr-7b-beta__dpo__config_full.yaml"
NEMO = CORPUS / "nemo_yaml/NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_gpt_config.yaml"
# MON-02's in-steps rule applies only where the interval in time is unknown, that is where
# the step time is: its "or pass --set step_time" is asked only when it is missing
ASKS_ONLY_WHEN_MISSING = {"MON-02.metrics-interval-too-many-steps"}


def test_no_v11_rule_text_asks_for_a_set_key_it_may_already_have() -> None:
    for rule in built(rules_version="1.1").pack.rules:
        if rule.id in ASKS_ONLY_WHEN_MISSING:
            continue
        for text in (rule.summary, rule.remediation):
            assert "--set" not in text, (rule.id, text)


def _ckpt(path: Path, *sets: str) -> dict[str, object]:
    return {f.rule: f for f in findings(path, sets=sets, rules_version="1.1") if f.requirement == "CKPT-02"}


def test_ckpt02_fix_does_not_ask_for_gpu_count_and_step_time_once_given() -> None:
    if not HF.is_file():
        pytest.skip("shared/corpus not present")
    got = _ckpt(HF, "step_time=2", "gpu_count=64")["CKPT-02.interval-far-from-optimum"]
    assert got.status.value == "fail"
    assert "--set" not in got.remediation and "--set" not in got.message
    assert "save_steps" in got.remediation


def test_ckpt02_names_only_the_missing_set_key() -> None:
    if not NEMO.is_file():
        pytest.skip("shared/corpus not present")
    # NeMo's trainer.devices x num_nodes gives the GPU count: only the step time is asked for
    got = _ckpt(NEMO)["CKPT-02.interval-far-from-optimum"]
    assert got.status.value == "skip"
    assert "pass --set step_time=SECONDS" in got.message and "gpu_count" not in got.message
    got = _ckpt(NEMO, "gpu_count=1024")["CKPT-02.interval-far-from-optimum"]
    assert "gpu_count" not in got.message and "gpu_count" not in got.remediation


def test_ckpt01_cites_the_run_length_and_asks_for_step_time_only_when_unknown(tmp_path: Path) -> None:
    cfg = tmp_path / "hf.yaml"
    cfg.write_text('output_dir: out\nper_device_train_batch_size: 4\nsave_strategy: "no"\n'
                   "max_steps: 100000\nbf16: true\nlogging_steps: 10\n")

    def ckpt01(*sets: str) -> str:
        (f,) = [f for f in findings(cfg, sets=sets, rules_version="1.1")
                if f.rule == "CKPT-01.checkpointing-disabled"]
        assert f.status.value == "fail"
        assert "--set" not in f.remediation
        return f.message

    unknown = ckpt01()
    assert "pass --set step_time=SECONDS" in unknown and "counted as unbounded" in unknown
    known = ckpt01("step_time=2")
    assert "--set" not in known
    assert "train steps x step time = 100000 x 2 s" in known


def test_topo03_fix_no_longer_asks_for_the_domain_size_it_was_given(tmp_path: Path) -> None:
    sh = tmp_path / "run.sh"
    sh.write_text("#!/bin/bash\n#SBATCH --nodes=32\n#SBATCH --gpus-per-node=8\n"
                  "torchrun --nnodes 32 --nproc_per_node 8 pretrain_gpt.py "
                  "--tensor-model-parallel-size 128 --micro-batch-size 1 --global-batch-size 64 --bf16\n")
    (f,) = [f for f in findings(sh, sets=("nvlink_domain_size=72",), rules_version="1.1")
            if f.rule == "TOPO-03.tensor-parallel-exceeds-nvlink-domain"]
    assert f.status.value == "warn" and "72" in f.expected
    assert "--set" not in f.remediation


def test_cite_is_refused_outside_a_when(tmp_path: Path) -> None:
    from validator.errors import SpecCheckError
    from validator.rules.loader import load_pack

    b = built(rules_version="1.1")
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text("id: test\nspec_version: '1.0'\n")
    (pack / "job.yaml").write_text(
        "rules:\n  - id: NET-01.x\n    requirement: NET-01\n    scope: node\n    summary: s\n"
        "    why: w\n    remediation: r\n    fact: rdma.ports\n    field: rate\n"
        "    check: {op: gte, value: 1}\n"
        "    where: [{field: state, op: eq, value: ACTIVE, cite: true}]\n")
    with pytest.raises(SpecCheckError, match='"cite" belongs to a "when" condition'):
        load_pack(b.ctx.spec, b.ctx.catalogue, pack_path=pack)
