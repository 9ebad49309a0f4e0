"""Issue 30, the smaller points: MEM-02 says whose limit it judged; one mismatch is one
finding (a TP-16 job on 8-GPU NVLink domains got a TOPO-03 warning from the pack's
parameter and another from the nodes' facts)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from validator.cli import cli

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts"

TP16 = """#!/bin/bash
#SBATCH --nodes=4
#SBATCH --gpus-per-node=8
#SBATCH --time=24:00:00
#SBATCH --requeue
srun torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 16 \\
  --pipeline-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 64 --bf16 \\
  --save /ckpt --load /ckpt --save-interval 1000
"""


def _json(*args: str) -> dict:
    r = CliRunner().invoke(cli, [*args, "--format", "json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def test_memlock_finding_names_whose_limit_it_read() -> None:
    doc = _json("check", "--facts", str(FACTS / "dgx_h100.json"), "--select", "MEM-02.memlock")
    [f] = doc["findings"]
    assert "of slurmd (pid 1650)" in f["message"], f["message"]


def test_one_tensor_parallel_mismatch_is_one_finding(tmp_path: Path) -> None:
    job = tmp_path / "train.sbatch"
    job.write_text(TP16)
    alone = _json("lint", str(job), "--set", "step_time=2s")
    warned = [f["rule"] for f in alone["findings"] if f["requirement"] == "TOPO-03" and f["status"] == "warn"]
    assert warned == ["TOPO-03.tensor-parallel-exceeds-nvlink-domain"]
    # with the nodes' facts, the nodes' NVLink domain judges it, once
    both = _json("lint", str(job), "--set", "step_time=2s", "--nodes", str(FACTS / "dgx_h100.json"))
    tp = [f for f in both["findings"] if f["requirement"] == "TOPO-03" and "tensor-parallel" in f["rule"]]
    assert [(f["rule"], f["status"]) for f in tp if f["status"] == "warn"] == [
        ("TOPO-03.job-tensor-parallel-exceeds-node-nvlink", "warn")], tp
    pack = next(f for f in tp if f["rule"] == "TOPO-03.tensor-parallel-exceeds-nvlink-domain")
    assert pack["status"] == "skip" and "TOPO-03.job-tensor-parallel-exceeds-node-nvlink" in pack["message"]
