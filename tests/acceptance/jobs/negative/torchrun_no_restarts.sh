#!/bin/bash
#SBATCH --nodes=8
#SBATCH --gpus-per-node=8
#SBATCH --time=48:00:00
export NCCL_TREE_THRESHOLD=0
export NCCL_DEBUG=INFO
torchrun --nnodes 8 --nproc-per-node 8 train.py --deepspeed ds.json
