"""One descriptor per config format: its name, what users call it, the evidence that
decides it, and its reader.

Frameworks share section names: ``trainer:`` is Lightning's, but also verl's, Levanter's
and Model Garden's; ``task:`` is Model Garden's and fairseq's; ``model:`` is everyone's.
A section name alone therefore decides nothing. What does is evidence only one framework
leaves (``Format.decisive``):

* ``targets``: the classes a Hydra ``_target_`` / LightningCLI ``class_path`` names, by
  package (``lightning.pytorch.Trainer`` is Lightning, ``composer.Trainer`` Composer,
  ``verl.trainer.config.AlgoConfig`` verl). A class states outright which program reads
  the file, so it outweighs any count of key names;
* ``keys``: top-level keys no other framework has (NeMo's ``exp_manager``, llm-foundry's
  ``train_loader``);
* ``sections``: inside a shared section, keys only this framework has there (Lightning's
  ``trainer.accelerator``/``devices``/``precision``, Model Garden's
  ``trainer.steps_per_loop``); the section counts when at least two of them are there and
  most of the section is the framework's.

Frameworks spec-check does not read (``claimed=False``: verl, fairseq, a plain Composer
trainer) are described the same way, so that their evidence can be *seen* and named in a
refusal rather than the file being misread as the claimed format whose section names it
happens to use. ``judge`` scores a candidate format against the alternatives; below the
bar the file is refused (passed over with ``--ignore-unknown``) with what was seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from validator.jobs.keys import close_match

MAX_NODES = 5000  # nodes walked looking for _target_ / class_path (a hostile file is cut short)


@dataclass(frozen=True)
class Format:
    """A config format: ``name`` (the ``--kind``), ``display`` (in messages), ``reader``
    (``module:function`` under validator.jobs; None for a format spec-check does not
    read), and its decisive evidence."""

    name: str
    display: str
    reader: str | None = None
    targets: str | None = None  # regex on a _target_ / class_path's dotted name
    keys: frozenset[str] = frozenset()
    sections: dict[str, frozenset[str]] = field(default_factory=dict)
    claimed: bool = True
    # whether the format is recognized by shared section names (``trainer:``, ``task:``):
    # it must then show decisive evidence of its own to be read
    needs_evidence: bool = False
    catalogue: str | None = None  # validator/jobs/keys/<name>.json, where it has one


_LIGHTNING_TRAINER = frozenset({
    "accelerator", "accumulate_grad_batches", "check_val_every_n_epoch", "devices",
    "enable_checkpointing", "gradient_clip_val", "gradient_clip_algorithm", "log_every_n_steps",
    "max_epochs", "min_epochs", "num_nodes", "num_sanity_val_steps", "precision", "strategy",
    "val_check_interval", "limit_train_batches", "limit_val_batches", "limit_test_batches",
    "default_root_dir", "sync_batchnorm", "fast_dev_run", "enable_progress_bar",
    "enable_model_summary", "reload_dataloaders_every_n_epochs", "deterministic", "benchmark",
    "overfit_batches", "detect_anomaly", "use_distributed_sampler", "inference_mode",
    "barebones", "plugins",
    # Lightning 1.x Trainer arguments that 2.0 removed: still Lightning's, in the releases
    # that had them (a repository pinning lightning<2 writes them)
    "gpus", "tpu_cores", "ipus", "auto_select_gpus", "amp_backend", "amp_level",
    "resume_from_checkpoint", "progress_bar_refresh_rate", "weights_summary", "checkpoint_callback",
    "flush_logs_every_n_steps", "track_grad_norm", "replace_sampler_ddp", "auto_lr_find",
    "auto_scale_batch_size", "terminate_on_nan", "stochastic_weight_avg", "prepare_data_per_node",
    "move_metrics_to_cpu", "multiple_trainloader_mode", "num_processes", "log_gpu_memory",
})

FORMATS: tuple[Format, ...] = (
    Format("deepspeed", "DeepSpeed JSON", "deepspeed:read"),
    Format("lightning", "Lightning", "lightning:read",
           targets=r"(?:lightning|pytorch_lightning|lightning_fabric)(?:\.|$)",
           keys=frozenset({"seed_everything"}),
           sections={"trainer": _LIGHTNING_TRAINER}, needs_evidence=True, catalogue="lightning"),
    Format("hf", "HF TrainingArguments", "hf:read_trainer",
           targets=r"transformers\.(?:Seq2Seq)?Training(?:Arguments)?$|transformers\.Trainer$"),
    Format("accelerate", "Accelerate config", "hf:read_accelerate"),
    Format("torchtitan", "torchtitan TOML", "torchtitan:read"),
    Format("nemo", "NeMo", "lightning:read_nemo", targets=r"nemo\.",
           keys=frozenset({"exp_manager"}),
           sections={"model": frozenset({"tensor_model_parallel_size", "pipeline_model_parallel_size",
                                         "micro_batch_size", "megatron_amp_O2"})},
           needs_evidence=True),
    Format("pytorchjob", "Kubeflow PyTorchJob", "k8s:read"),
    Format("maxtext", "MaxText", "maxtext:read"),
    Format("tfmg", "TF Model Garden", "tfmg:read", targets=r"official\.",
           keys=frozenset({"runtime"}),
           sections={
               "trainer": frozenset({"steps_per_loop", "train_steps", "checkpoint_interval",
                                     "summary_interval", "validation_interval", "validation_steps",
                                     "optimizer_config", "best_checkpoint_export_subdir",
                                     "train_tf_function", "train_tf_while_loop"}),
               "task": frozenset({"init_checkpoint", "train_data", "validation_data",
                                  "differential_privacy_config", "allow_image_summary"}),
           }, needs_evidence=True, catalogue="tfmg"),
    Format("torchtune", "torchtune recipe", "recipes:read_torchtune", targets=r"torchtune\."),
    Format("axolotl", "axolotl", "recipes:read_axolotl"),
    Format("levanter", "Levanter", "levanter:read", targets=r"levanter\.",
           keys=frozenset({"initialize_from_hf", "hf_save_path", "hf_save_steps", "eval_harness",
                           "use_hf_model_config", "z_loss_weight"}),
           sections={"trainer": frozenset({"mp", "checkpointer", "tracker", "per_device_parallelism",
                                           "fsdp_axis", "model_axis_size", "tensor_parallel_axes",
                                           "replica_dcn_axis_size", "jax_config", "steps_per_eval"})},
           needs_evidence=True, catalogue="levanter"),
    Format("litgpt", "LitGPT", "litgpt:read", targets=r"litgpt\.",
           keys=frozenset({"initial_checkpoint_dir", "logger_name", "tokenizer_dir", "out_dir",
                           "checkpoint_dir", "lora_query", "lora_value"})),
    Format("llmfoundry", "llm-foundry", "composer:read_llmfoundry", targets=r"llmfoundry\.",
           keys=frozenset({"train_loader", "eval_loader", "eval_loaders", "icl_tasks", "eval_gauntlet",
                           "variables", "autoresume", "icl_seq_len", "eval_first", "algorithms",
                           "loggers", "dist_timeout"}),
           needs_evidence=True),
    Format("olmo", "OLMo", "composer:read_olmo", targets=r"olmo(?:_core)?\.",
           keys=frozenset({"try_load_latest_save", "save_interval_ephemeral", "sharded_checkpointer",
                           "speed_monitor", "evaluators", "distributed_strategy", "save_interval_unsharded",
                           "remote_save_folder", "fused_loss", "softmax_auxiliary_loss"}),
           # OLMo's ModelConfig (d_model/n_heads are MPT's too: no evidence between them)
           sections={"model": frozenset({"mlp_ratio", "weight_tying", "block_type", "layer_norm_type",
                                         "include_bias", "bias_for_layer_norm", "rope", "flash_attention",
                                         "multi_query_attention", "attention_layer_norm", "block_group_size"})},
           needs_evidence=True),
    Format("skypilot", "SkyPilot task", "skypilot:read"),
    Format("kubernetes", "Kubernetes training resource", "k8s:read_kubernetes"),
    Format("hydra", "Hydra root config", "hydra:read"),
    # frameworks spec-check does not read: seen, named, and refused
    Format("composer", "a MosaicML Composer trainer (without llm-foundry)", targets=r"composer\.",
           claimed=False),
    Format("verl", "verl (RL post-training)", targets=r"verl\.",
           keys=frozenset({"actor_rollout_ref", "critic", "reward_model", "custom_reward_function"}),
           claimed=False),
    Format("fairseq", "fairseq", targets=r"fairseq2?\.",
           keys=frozenset({"distributed_training", "optimization", "criterion", "bmuf"}),
           claimed=False),
    Format("nemo_rl", "NeMo-RL", targets=r"nemo_rl\.",
           keys=frozenset({"grpo", "policy", "cluster"}), claimed=False),
    Format("openrlhf", "OpenRLHF", targets=r"openrlhf\.", claimed=False),
    Format("trl", "TRL", targets=r"trl\.", claimed=False),
    Format("espnet", "ESPnet", targets=r"espnet2?\.", claimed=False),
    Format("mmengine", "OpenMMLab (mmengine)", targets=r"mm(?:engine|det|seg|pretrain)\.", claimed=False),
    Format("detectron2", "detectron2", targets=r"detectron2\.", claimed=False),
)
BY_NAME = {f.name: f for f in FORMATS}
BAR = 1.0  # decisive evidence a format needs, and by which it must beat every alternative
TARGET_WEIGHT = 3.0  # a class named outright outweighs key names


@dataclass
class Seen:
    """The decisive evidence of one format found in a file: what, and its weight."""

    fmt: Format
    items: list[str]
    score: float


def targets(data: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """Every ``_target_`` / ``class_path`` string in ``data``, with its key path."""
    out: list[tuple[str, tuple[Any, ...]]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    seen = 0
    while stack and seen < MAX_NODES:
        node, path = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("_target_", "class_path") and isinstance(v, str):
                    out.append((v, (*path, k)))
                elif isinstance(v, (dict, list)):
                    stack.append((v, (*path, k)))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    stack.append((v, (*path, i)))
    return sorted(out, key=lambda t: str(t[1]))


def _fairseq_choices(data: dict[str, Any]) -> list[str]:
    """fairseq's dataclass choice (``task: {_name: audio_pretraining}``) in its sections."""
    return [f"{k}._name" for k, v in data.items() if isinstance(v, dict) and "_name" in v][:3]


def evidence(fmt: Format, data: dict[str, Any], group: str | None = None,
             found: list[tuple[str, tuple[Any, ...]]] | None = None) -> Seen:
    """``fmt``'s decisive evidence in ``data``. ``group``: the Hydra config group the file
    is composed under (``trainer`` for ``configs/trainer/ddp.yaml``), whose keys are then
    that section's."""
    items: list[str] = []
    score = 0.0
    found = targets(data) if found is None else found
    if fmt.targets:
        rx = re.compile(fmt.targets)
        mine = sorted({t for t, _ in found if rx.match(t)})
        if mine:
            score += TARGET_WEIGHT
            items.append("_target_ " + ", ".join(mine[:3]) + (" ..." if len(mine) > 3 else ""))
    keys = [k for k in data if isinstance(k, str)]
    top = [k for k in keys if k in fmt.keys]
    if top:
        score += len(top)
        items.append("keys " + ", ".join(top[:4]))
    for sect, own in fmt.sections.items():
        # a config-group file (configs/trainer/ddp.yaml), or a file of Lightning Trainer
        # arguments copied out of its folder: its keys are the section's
        alone = sect not in data and (group == sect or (fmt.name == "lightning" and sect == "trainer"))
        block = data if alone else data.get(sect)
        if not isinstance(block, dict) or not block:
            continue
        # a likely typo of a key only it has counts (``precison``), inside a real section
        hit = [k for k in block if isinstance(k, str)
               and (k in own or (block is not data and len(block) <= 200 and close_match(k, own)))]
        # at least two, and a quarter of the section (a verl ``trainer:`` with a ``logger``
        # is no Lightning Trainer); or one, in a section all of whose keys the format has
        if (len(hit) >= 2 and len(hit) * 4 >= len(block)) or (hit and _all_known(fmt, sect, block)):
            score += 1.0
            name = f"{sect} keys at the top level" if block is data else f"{sect}:"
            items.append(f"{name} {', '.join(hit[:4])}")
    if fmt.name == "lightning" and "trainer" in data and any(p[-1] == "class_path" for _, p in found):
        # LightningCLI's syntax (jsonargparse, which LitGPT's CLI uses too: only beside a
        # ``trainer:``), whatever class it names
        score += 1.0
        items.append("class_path (LightningCLI)")
    if fmt.name == "fairseq":
        choices = _fairseq_choices(data)
        if choices:
            score += len(choices)
            items.append("dataclass choices " + ", ".join(choices))
    return Seen(fmt, items, score)


def _all_known(fmt: Format, sect: str, block: dict[str, Any]) -> bool:
    from validator.jobs.keys import catalogue

    cat = catalogue(fmt.catalogue) if fmt.catalogue else None
    known = cat.known(sect) if cat is not None else None
    return bool(known) and all(k in known or k == "_target_" for k in block)


@dataclass
class Judgement:
    kind: str | None
    why: str  # what was seen, in words (for a refusal)


def judge(kind: str, data: dict[str, Any], group: str | None = None) -> Judgement:
    """Keep ``kind`` (the format the markers and key counts picked) only when its evidence
    holds against every alternative: no other format's decisive evidence at least as
    strong, and, for a format recognized by shared section names, evidence of its own."""
    fmt = BY_NAME.get(kind)
    if fmt is None or not isinstance(data, dict):
        return Judgement(kind, "")
    found = targets(data)
    mine = evidence(fmt, data, group, found)
    rivals = [s for s in (evidence(f, data, group, found) for f in FORMATS if f.name != kind
                          and not (kind in ("lightning", "nemo") and f.name in ("lightning", "nemo")))
              if s.score >= BAR]
    rivals.sort(key=lambda s: -s.score)
    strongest = rivals[0] if rivals else None
    refused = (fmt.needs_evidence and mine.score < BAR) or (
        strongest is not None and strongest.score >= mine.score
    )
    if not refused:
        return Judgement(kind, "")
    return Judgement(None, describe(fmt, mine, rivals, data))


def describe(fmt: Format, mine: Seen, rivals: list[Seen], data: dict[str, Any]) -> str:
    """A refusal in words: what was seen of each format, and why that is not enough."""
    shared = [k for k in ("trainer", "task", "model", "data", "optimizer") if k in data]
    parts = []
    if rivals:
        parts.append("; ".join(
            f"{s.fmt.display}{'' if s.fmt.claimed else ' (a format spec-check does not read)'}: "
            + ", ".join(s.items) for s in rivals[:3]))
    own = ", ".join(mine.items) if mine.items else "nothing decisive"
    names = ", ".join(s + ":" for s in shared)
    text = (f"it looks like {fmt.display} only by names frameworks share ({names}); "
            if shared else f"it looks like {fmt.display} only by key names; ")
    text += f"{fmt.display} evidence: {own}"
    if parts:
        text += "; seen instead: " + parts[0]
    return text


def reader(kind: str) -> Any:
    """The reader function of ``kind`` (imported on use: lint start-up stays light)."""
    import importlib

    fmt = BY_NAME[kind]
    if fmt.reader is None:
        raise KeyError(kind)
    mod, _, fn = fmt.reader.partition(":")
    return getattr(importlib.import_module(f"validator.jobs.{mod}"), fn)
