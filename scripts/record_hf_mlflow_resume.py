#!/usr/bin/env python3
"""Record an HF Trainer run reporting to MLflow (a file store), killed and resumed under torchrun.

    python3 -m venv .venv-rec && .venv-rec/bin/pip install torch==2.13.0 transformers accelerate mlflow-skinny
    .venv-rec/bin/python scripts/record_hf_mlflow_resume.py tests/fixtures/runs/hf_mlflow_cpu_resume

On CPU: a two-layer GPT-2-shaped model built from its config (no download), trained on random
tokens with ``report_to=["mlflow"]``, ``logging_steps=10``, ``save_steps=50``, under
``torchrun --standalone --nproc-per-node 1 --max-restarts 1``. The worker SIGKILLs itself at
step 73 (as a lost GPU kills a rank); torchrun logs the failure and starts it again, and it
resumes from ``checkpoint-50`` (``resume_from_checkpoint``). HF's MLflowCallback starts a new
MLflow run in the same experiment for the resumed part (no ``MLFLOW_RUN_ID`` given), as it
does for any user who restarts a job this way.

``truth.jsonl`` holds the wall times the worker wrote itself (a TrainerCallback: start, each
logged step, the kill, the resume, the end; ``restart`` is torchrun's restart count).
``console.log`` is torchrun's and the worker's output. Checkpoint payloads are removed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

KILL_AT = 73
MAX_STEPS = 120


def _truth(out: Path, **rec: object) -> None:
    with open(out / "truth.jsonl", "a") as f:
        f.write(json.dumps({"t": time.time(), **rec}) + "\n")


def worker(out: Path) -> None:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

    class Truth(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args, state, control, logs=None, **kw):  # type: ignore[no-untyped-def]
            if logs and "loss" in logs:
                _truth(out, restart=restart, event="log", step=state.global_step)

        def on_step_end(self, args, state, control, **kw):  # type: ignore[no-untyped-def]
            if restart == 0 and state.global_step == KILL_AT:
                _truth(out, restart=restart, event="kill", step=state.global_step)
                os.kill(os.getpid(), signal.SIGKILL)

    class Tokens(torch.utils.data.Dataset):  # type: ignore[type-arg]
        def __init__(self) -> None:
            g = torch.Generator().manual_seed(0)
            self.x = torch.randint(0, 256, (4096, 32), generator=g)

        def __len__(self) -> int:
            return len(self.x)

        def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
            return {"input_ids": self.x[i], "labels": self.x[i]}

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=256, n_positions=32, n_embd=64, n_layer=2, n_head=2))
    args = TrainingArguments(output_dir=str(out / "ckpt"), max_steps=MAX_STEPS, per_device_train_batch_size=8,
                             logging_steps=10, save_steps=50, report_to=["mlflow"], use_cpu=True,
                             dataloader_num_workers=0, disable_tqdm=True, seed=0)
    last = None
    if (out / "ckpt").is_dir():
        done = sorted((p for p in (out / "ckpt").glob("checkpoint-*")), key=lambda p: int(p.name.split("-")[1]))
        last = str(done[-1]) if done else None
    _truth(out, restart=restart, event="start")
    if last:
        _truth(out, restart=restart, event="resume_from", ckpt=Path(last).name)
    Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[Truth()]).train(resume_from_checkpoint=last)
    _truth(out, restart=restart, event="done")


def record(out: Path) -> None:
    import importlib.metadata as md
    import platform

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "versions.txt").write_text(
        f"python {platform.python_version()}\n"
        + "".join(f"{d} {md.version(d)}\n" for d in ("torch", "transformers", "accelerate", "mlflow-skinny")))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1",
           "MLFLOW_TRACKING_URI": (out / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true",
           "MLFLOW_EXPERIMENT_NAME": "hf_cpu", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "1",
                "--max-restarts", "1", "--monitor-interval", "0.5"]
    with open(out / "console.log", "ab") as log:
        rc = subprocess.run([*torchrun, __file__, "--worker", str(out)], stdout=log, stderr=subprocess.STDOUT,
                            env=env, timeout=1200).returncode
    print(f"torchrun job: exit {rc}")
    shutil.rmtree(out / "ckpt", ignore_errors=True)  # payloads are not evidence
    for p in out.rglob("artifacts"):
        shutil.rmtree(p, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]))
    else:
        record(Path(sys.argv[1]).resolve())
