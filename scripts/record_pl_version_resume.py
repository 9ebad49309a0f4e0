#!/usr/bin/env python3
"""Record a Lightning run in Lightning's own default layout: resumed into a new version folder.

    python3 -m venv .venv-rec && .venv-rec/bin/pip install torch==2.13.0 lightning tensorboard
    .venv-rec/bin/python scripts/record_pl_version_resume.py tests/fixtures/runs/pl_cpu_version_resume

What it does, on CPU, with Lightning's TensorBoardLogger and CSVLogger left to choose their
version folders (no ``version=``), as most users leave them:

1. ``torchrun --standalone --nproc-per-node 1 --max-restarts 1`` runs the training worker; the
   worker checkpoints every 20 steps (``last.ckpt``) and SIGKILLs itself at step 57 (as a lost
   GPU kills a rank). torchrun logs the failure and starts the worker again; it resumes from
   the step-40 checkpoint, and both loggers write the resumed part into ``version_1``, whose
   first step (49, the first logged after 40) continues from the checkpoint.
2. Some seconds later, a separate fit from scratch (no checkpoint, ``python`` alone, no
   launcher): ``version_2`` starts again at step 9. That is a new fit, not a restart.

``truth.jsonl`` holds the wall times the worker wrote itself (start, each logged step, the
kill, the resume, the end; ``restart`` is torchrun's restart count, ``fit`` 0 for the
torchrun job and 1 for the separate fit). ``console.log`` is torchrun's and the workers'
stdout and stderr. Checkpoint payloads are removed at the end.
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

KILL_AT = 57
MAX_STEPS = 100


def _truth(out: Path, **rec: object) -> None:
    with open(out / "truth.jsonl", "a") as f:
        f.write(json.dumps({"t": time.time(), **rec}) + "\n")


def worker(out: Path, fit: int) -> None:
    import lightning as L
    import torch
    from lightning.pytorch.callbacks import ModelCheckpoint, ThroughputMonitor
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger
    from lightning.pytorch.utilities import grad_norm

    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

    class Net(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], i: int) -> torch.Tensor:
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("train_loss", loss)
            step = self.global_step
            if step % 10 == 9:
                _truth(out, fit=fit, restart=attempt, event="log", step=step)
            if fit == 0 and attempt == 0 and step == KILL_AT:
                _truth(out, fit=fit, restart=attempt, event="kill", step=step)
                os.kill(os.getpid(), signal.SIGKILL)
            return loss

        def on_before_optimizer_step(self, optimizer: torch.optim.Optimizer) -> None:
            self.log_dict(grad_norm(self, norm_type=2))

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    torch.manual_seed(fit)
    x = torch.randn(2400, 32)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)
    ckdir = out / ("ckpt" if fit == 0 else "ckpt_fit1")
    ckpt = ModelCheckpoint(dirpath=ckdir, every_n_train_steps=20, save_last=True, save_top_k=0)
    tput = ThroughputMonitor(batch_size_fn=lambda b: b[0].shape[0])
    trainer = L.Trainer(max_steps=MAX_STEPS if fit == 0 else 40, accelerator="cpu", devices=1,
                        log_every_n_steps=10, enable_progress_bar=False, enable_model_summary=False,
                        logger=[TensorBoardLogger(out, name="tb"), CSVLogger(out, name="csv")],
                        callbacks=[ckpt, tput])
    last = ckdir / "last.ckpt"
    _truth(out, fit=fit, restart=attempt, event="start")
    if last.exists():
        _truth(out, fit=fit, restart=attempt, event="resume_from", ckpt=str(last.relative_to(out)),
               step=int(torch.load(last, weights_only=False)["global_step"]))
    trainer.fit(Net(), data, ckpt_path=str(last) if last.exists() else None)
    _truth(out, fit=fit, restart=attempt, event="done")


def record(out: Path) -> None:
    import importlib.metadata as md
    import platform

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "versions.txt").write_text(
        f"python {platform.python_version()}\n"
        + "".join(f"{d} {md.version(d)}\n" for d in ("torch", "lightning", "tensorboard")))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "1",
                "--max-restarts", "1", "--monitor-interval", "0.5"]
    with open(out / "console.log", "ab") as log:
        rc = subprocess.run([*torchrun, __file__, "--worker", str(out), "0"], stdout=log,
                            stderr=subprocess.STDOUT, env=env, timeout=900).returncode
        print(f"torchrun job: exit {rc}")
        time.sleep(20)  # a separate fit, started later by hand
        rc = subprocess.run([sys.executable, __file__, "--worker", str(out), "1"], stdout=log,
                            stderr=subprocess.STDOUT, env=env, timeout=900).returncode
        print(f"separate fit: exit {rc}")
    for d in ("ckpt", "ckpt_fit1"):
        shutil.rmtree(out / d, ignore_errors=True)  # payloads are not evidence


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        record(Path(sys.argv[1]).resolve())
