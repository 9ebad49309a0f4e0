#!/bin/bash
# Megatron-LM GPT pretraining, fp32 by mistake, logging every 1000 iterations, saving
# checkpoints it never loads back
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPT_ARGS="
    --num-layers 24 \
    --hidden-size 1024 \
    --num-attention-heads 16 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --micro-batch-size 4 \
    --global-batch-size 256 \
    --lr 3.0e-4 \
    --train-iters 500000 \
    --tensor-model-parallel-size 2 \
"
OUTPUT_ARGS="
    --log-interval 1000 \
    --save-interval 2000 \
    --eval-interval 1000 \
    --eval-iters 10 \
"
torchrun --nproc-per-node 8 --nnodes 2 --max-restarts 2 --rdzv-backend c10d pretrain_gpt.py \
    $GPT_ARGS $OUTPUT_ARGS --save /ckpt
