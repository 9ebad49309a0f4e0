#!/usr/bin/env python3
"""Record real training runs for ``spec-check lint --run`` (issue 18): a two-process torchrun
job whose worker is SIGKILLed and restarted, and a run with a stall and a NaN loss.

Run on a GPU machine with torch and tensorboard installed (no internet needed; no
transformers, lightning, mlflow or torchtitan needed)::

    python scripts/device/record_runs.py "$OUT"          # both runs, about 1 minute
    python scripts/device/record_runs.py "$OUT" --only ddp2_crash

It also runs on a CPU-only machine (gloo, CPU tensors): that is how the CPU fixtures in
tests/fixtures/runs/ were made. Each run is written to ``OUT/<name>/``:

* ``console.log``: the launcher's stdout+stderr as torchrun printed them (``NCCL_DEBUG=INFO``
  is set; with two ranks on one GPU the collectives use gloo, so NCCL prints only where a
  CUDA process group is made, which it is not here);
* ``torchrun_logs/``: torchrun ``--log-dir`` (one folder per attempt and rank);
* ``tb/``: TensorBoard event files written by ``torch.utils.tensorboard.SummaryWriter``
  (rank 0): ``train/loss``, ``train/grad_norm``, ``train/tokens_per_second``,
  ``memory/max_reserved_bytes`` (CUDA) or none (CPU), ``comm/allreduce_ms``;
* ``metrics.jsonl``: the same scalars, one JSON object a line with ``step`` and ``time``;
* ``truth.jsonl``: wall-clock times (Unix seconds) written by the training script itself
  at start, at each logged step, at the kill and at the resume: the oracle.

Runs:

* ``ddp2_crash``: torchrun --nproc-per-node 2 --max-restarts 1; rank 1 kills itself with
  SIGKILL at step 45 of the first attempt (after checkpoint 40), torchrun restarts both
  ranks, they resume from the step-40 checkpoint and run to step 100.
* ``stall_nan``: one process (torchrun --nproc-per-node 1), 100 steps; the loop sleeps 8 s
  at step 60 (a stall) and logs a NaN loss at step 90.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

LOG_EVERY = 5
CKPT_EVERY = 20
STEPS = 100


def _truth(out: Path, **rec: object) -> None:
    with open(out / "truth.jsonl", "a") as f:
        f.write(json.dumps({"t": time.time(), **rec}) + "\n")


def worker(out: Path, mode: str) -> None:  # runs under torchrun
    import torch
    import torch.distributed as dist
    from torch.utils.tensorboard import SummaryWriter

    rank = int(os.environ["RANK"])
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    # a fresh file store per attempt: the agent's TCP store outlives a restart, and on a CPU VM
    # here a restarted rank read the killed rank's old address from it (gloo: connection refused)
    store = out / f".store_attempt{restart}"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=int(os.environ["WORLD_SIZE"]))
    dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ckpt = out / "ckpt" / "last.pt"
    start = 0
    if rank == 0:
        _truth(out, restart=restart, event="start")
    if ckpt.exists():
        state = torch.load(ckpt, map_location=dev)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
        if rank == 0:
            _truth(out, restart=restart, event="resume_from", step=start)
    writer = SummaryWriter(str(out / "tb")) if rank == 0 else None
    jl = open(out / "metrics.jsonl", "a") if rank == 0 else None  # noqa: SIM115 (closed after the loop)
    last = time.time()
    for step in range(start + 1, STEPS + 1):
        x = torch.randn(32, 64, device=dev)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        t0 = time.perf_counter()
        for p in model.parameters():  # data-parallel gradient average over gloo
            g = p.grad.detach().cpu()
            dist.all_reduce(g)
            p.grad.copy_(g / dist.get_world_size())
        comm_ms = (time.perf_counter() - t0) * 1e3
        gn = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1e9))
        opt.step()
        if mode == "stall_nan" and step == 60:
            time.sleep(8.0)
        if mode == "ddp2_crash" and restart == 0 and step == 45 and rank == 1:
            _truth(out, restart=restart, event="kill", step=step, rank=rank)
            os.kill(os.getpid(), signal.SIGKILL)
        if step % LOG_EVERY == 0 and rank == 0:
            now = time.time()
            value = float("nan") if (mode == "stall_nan" and step == 90) else loss.item()
            scalars = {"train/loss": value, "train/grad_norm": gn,
                       "train/tokens_per_second": 32 * 64 * LOG_EVERY / max(now - last, 1e-9),
                       "comm/allreduce_ms": comm_ms}
            if dev.type == "cuda":
                scalars["memory/max_reserved_bytes"] = float(torch.cuda.max_memory_reserved())
            last = now
            for k, v in scalars.items():
                writer.add_scalar(k, v, step)
            writer.flush()
            jl.write(json.dumps({"step": step, "time": now, **scalars}) + "\n")
            jl.flush()
            _truth(out, restart=restart, event="log", step=step)
        if step % CKPT_EVERY == 0:
            dist.barrier()
            if rank == 0:
                ckpt.parent.mkdir(exist_ok=True)
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ckpt)
    if rank == 0:
        writer.close()
        jl.close()
        _truth(out, restart=restart, event="done")
    dist.barrier()
    dist.destroy_process_group()


def record(out_root: Path, name: str) -> int:
    out = out_root / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    nproc = "2" if name == "ddp2_crash" else "1"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", nproc,
           "--max-restarts", "1", "--monitor-interval", "0.5", "--log-dir", str(out / "torchrun_logs"),
           "--tee", "3", __file__, "--worker", str(out), "--mode", name]
    # lo: a standalone job on one host; gloo's restarted ranks failed to connect over another
    # interface in a CPU VM here (the first attempt connected, the second timed out)
    env = {"GLOO_SOCKET_IFNAME": "lo", **os.environ, "NCCL_DEBUG": "INFO", "PYTHONUNBUFFERED": "1"}
    with open(out / "console.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=150).returncode
    for f in out.glob(".store_attempt*"):
        f.unlink()
    shutil.rmtree(out / "ckpt", ignore_errors=True)  # payloads are not evidence; truth.jsonl says where it resumed
    with open(out / "versions.txt", "w") as f:
        import tensorboard
        import torch

        f.write(f"torch {torch.__version__} tensorboard {tensorboard.__version__} "
                f"cuda {torch.cuda.is_available()} python {sys.version.split()[0]}\n")
    print(f"{name}: torchrun exit {rc}, {sum(1 for _ in out.rglob('*') if _.is_file())} files in {out}")
    return rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--only", choices=["ddp2_crash", "stall_nan"])
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.mode)
        return 0
    if a.out is None:
        ap.error("give OUT, the folder the runs are written to")
    rcs = [record(a.out, n) for n in (["ddp2_crash", "stall_nan"] if a.only is None else [a.only])]
    return max(rcs)


if __name__ == "__main__":
    sys.exit(main())
