"""Which reader a file needs, decided from its content (``--kind`` forces it).

File names lie (``config.yaml`` can be any of six formats), so detection looks at the
keys: ``apiVersion``+``kind: PyTorchJob``; ``base_config``/``per_device_batch_size``
(MaxText); ``runtime``/``task``/``trainer.steps_per_loop`` (Model Garden);
``exp_manager`` or a Megatron ``model:`` batch (NeMo); ``distributed_type`` (Accelerate);
``trainer:``/``class_path``/``_target_`` (Lightning); TrainingArguments field names (HF);
DeepSpeed's batch/precision/ZeRO keys in JSON. Shell scripts are recognized by a
shebang, ``#SBATCH`` or launcher words; env files by ``KEY=VALUE`` lines only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

KINDS = (
    "deepspeed",
    "lightning",
    "hf",
    "accelerate",
    "torchtitan",
    "nemo",
    "megatron",
    "slurm",
    "torchrun",
    "pytorchjob",
    "env",
    "maxtext",
    "tfmg",
)
SHELL_KINDS = ("megatron", "slurm", "torchrun")
STRUCTURED_EXT = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
SHELL_EXT = {".sh", ".bash", ".slurm", ".sbatch", ".sub"}

DS_KEYS = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "zero_optimization",
    "fp16",
    "bf16",
    "gradient_accumulation_steps",
    "steps_per_print",
    "optimizer",
    "wall_clock_breakdown",
}
HF_KEYS = {
    "per_device_train_batch_size",
    "output_dir",
    "logging_steps",
    "save_strategy",
    "save_steps",
    "learning_rate",
    "num_train_epochs",
    "gradient_accumulation_steps",
    "report_to",
    "bf16",
}
ACC_KEYS = {
    "distributed_type",
    "compute_environment",
    "num_processes",
    "mixed_precision",
    "num_machines",
}
MAXTEXT_KEYS = {
    "base_config",
    "per_device_batch_size",
    "checkpoint_period",
    "ici_fsdp_parallelism",
    "dcn_data_parallelism",
    "log_period",
    "max_target_length",
}


def syntax_of(path: Path, text: str) -> str:
    """json | yaml | toml | shell | env."""
    ext = path.suffix.lower()
    head = text.lstrip()[:1]
    if ext in STRUCTURED_EXT:
        return STRUCTURED_EXT[ext]
    if ext in SHELL_EXT or text.startswith("#!") or re.search(r"^\s*#SBATCH", text, re.M):
        return "shell"
    if ext == ".env" or path.name.startswith(".env"):
        return "env"
    if head in "{[" and head:
        return "json" if head == "{" else "toml"
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    if lines and all(re.match(r"^(export\s+)?[A-Za-z_]\w*=", ln) for ln in lines):
        return "env"
    if re.search(r"^\s*(torchrun|srun|deepspeed|accelerate launch|python)\b", text, re.M):
        return "shell"
    return "yaml"


def kind_of_tree(syntax: str, data: Any) -> str | None:
    """The format of a parsed structured file, or None when it is no known job config."""
    if not isinstance(data, dict):
        return None
    keys = set(data)
    if syntax == "toml":
        return (
            "torchtitan"
            if keys & {"training", "parallelism", "checkpoint", "job", "metrics"}
            else None
        )
    if syntax == "json":
        if len(keys & DS_KEYS) >= 1 and not keys & {"output_dir", "per_device_train_batch_size"}:
            return "deepspeed"
        if keys & HF_KEYS:
            return "hf"
        return None
    if data.get("kind") == "PyTorchJob" or (
        "apiVersion" in keys and "pytorchReplicaSpecs" in str(data.get("spec"))[:2000]
    ):
        return "pytorchjob"
    if len(keys & MAXTEXT_KEYS) >= 1 and "trainer" not in keys:
        return "maxtext"
    trainer = data.get("trainer")
    if (
        ("runtime" in keys or "task" in keys)
        and (
            not isinstance(trainer, dict)
            or (keys & {"runtime", "task"} and "exp_manager" not in keys)
        )
        and ("model" not in keys or "task" in keys)
    ):
        return "tfmg"
    if "exp_manager" in keys or (
        isinstance(data.get("model"), dict)
        and {"micro_batch_size", "tensor_model_parallel_size"} & set(data["model"])
    ):
        return "nemo"
    if keys & {"distributed_type", "compute_environment"} or (
        "deepspeed_config" in keys and "num_processes" in keys
    ):
        return "accelerate"
    if (
        isinstance(trainer, dict)
        or "class_path" in str(data)[:5000]
        or "_target_" in keys
        or any(isinstance(v, dict) and "_target_" in v for v in data.values())
    ):
        return "lightning"
    if keys & HF_KEYS:
        return "hf"
    return None
