#!/usr/bin/env bash
# Record NCCL_DEBUG=INFO logs for `lint --nodes/--run` (validator/jobnodes) on a real GPU node.
# Needs torch with CUDA and NCCL. Writes into OUT (default $OUT or ./nccl-job-nodes):
#   facts.json                    spec-check probe -o of this node
#   nccl_info_two_ranks_one_gpu.log  torchrun --nproc-per-node <GPUs+1>: more processes than
#                                 GPUs (ranks share a GPU: NCCL's "Duplicate GPU detected" or
#                                 the job's own failure), the PLAT-01 mismatch as NCCL prints it
#   nccl_info_all_gpus.log        torchrun --nproc-per-node <GPUs>: ring/tree/NVLS channel lines
#                                 of an all-reduce over every GPU of the node
#   nccl_info_ifname_prefix.log   NCCL_SOCKET_IFNAME=^lo,docker (the exclude form) and
#                                 NCCL_IB_HCA='=mlx5_0:1' (exact form, port suffix)
#   versions.txt                  torch, NCCL and driver versions
# Each run is bounded by `timeout 120`; a failing run is recorded, not retried.
set -u
OUT=${1:-${OUT:-./nccl-job-nodes}}
mkdir -p "$OUT"
PY=${PYTHON:-python}
NG=$($PY -c 'import torch; print(torch.cuda.device_count())')
cat > "$OUT/allreduce.py" <<'PYEOF'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
local = int(os.environ["LOCAL_RANK"]) % max(torch.cuda.device_count(), 1)
torch.cuda.set_device(local)
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print("allreduce ok", t[0].item(), "nccl", torch.cuda.nccl.version(), flush=True)
dist.destroy_process_group()
PYEOF
$PY -m validator probe -o "$OUT/facts.json" || true
{ $PY -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$OUT/versions.txt" 2>&1
run() {  # name, env..., -- torchrun args
  local name=$1; shift
  env NCCL_DEBUG=INFO "$@" > "$OUT/$name.log" 2>&1
  echo "exit $?" >> "$OUT/$name.log"
}
run nccl_info_all_gpus timeout 120 torchrun --standalone --nproc-per-node "$NG" "$OUT/allreduce.py"
run nccl_info_two_ranks_one_gpu timeout 120 torchrun --standalone --nproc-per-node $((NG + 1)) "$OUT/allreduce.py"
run nccl_info_ifname_prefix NCCL_SOCKET_IFNAME='^lo,docker' NCCL_IB_HCA='=mlx5_0:1' timeout 120 \
  torchrun --standalone --nproc-per-node "$NG" "$OUT/allreduce.py"
ls -l "$OUT"
