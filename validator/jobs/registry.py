"""The job-config formats spec-check knows: one descriptor per format, and everything
that used to be a table keyed by format name derived from them.

A format is one :class:`Format` line in ``FORMATS``: its name (the ``--kind``), what
users call it, the reader that reads it (``module:function`` under validator.jobs), the
syntax ``--kind`` reads it in, its key catalogue (``validator/jobs/keys/<name>.json``)
and the syntaxes detection scores files against it in, the markers that name it before
the evidence is weighed (``format_detection.py``), the decisive evidence only it leaves
(``evidence.py``), where its framework defaults were read (``defaults.py``), the
metric settings that emit each metric family (``metrics.py``) and its collective timeout
(``failure_detection.py``). Detection (``format_detection.py``), dispatch
(``validator.jobs.read_job``), the ``--kind`` choices, the defaults labels and the metrics
table all read this module; no other module keeps a table keyed by format name
(``tests/jobs/test_registry.py`` checks it). Adding a format is its reader module, one
line here, its key catalogue and its corpus files (CONTRIBUTING.md).

The module imports nothing of the project and nothing heavy: ``lint --help`` builds the
``--kind`` choices from it.

Three spellings of one format meet here, each once: its ``name`` (``hf``, the
``--kind``), the ``tag`` its reader records in ``job.formats`` (``hf_trainer``), and its
catalogue name (``llm-foundry`` for ``llmfoundry``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload


@dataclass(frozen=True)
class Framework:
    """Where a format's framework defaults come from, as every output labels them
    ("default of <display> (not set in your files; <snapshot>)", ``defaults.py``)."""

    display: str
    snapshot: str  # the source snapshot (repository@commit, or package version) read
    label: str  # the source prefix its defaults are recorded under ("tf-model-garden: ...")
    table: str | None = None  # its table in ``defaults.TABLES``, where it has one
    aliases: tuple[str, ...] = ()  # other source prefixes of the same framework ("accelerate launch")


@dataclass(frozen=True)
class CollectiveTimeout:
    """The framework's own default of the process-group (collective) timeout."""

    row: str  # the ``defaults.py`` row ("lightning.ddp_timeout")
    source: str | None = None  # the prefix of a reader's default source it names ("hf:")
    replaces_torch: bool = False  # the framework passes it over torch's when no file sets one


# Collective latency outside any framework: the same for every PyTorch job.
NCCL_TIMING = ("set TORCH_NCCL_ENABLE_TIMING=1 (per-collective durations), or declare the platform's NCCL "
               "profiler plugin (NCCL_PROFILER_PLUGIN, e.g. the NCCL inspector) in the profile")


@dataclass(frozen=True)
class Metrics:
    """MON-01 per metric family (``metrics.py``) for a job of this framework.

    ``settings``: family -> the setting that emits it (what a user writes); None: no
    setting of the framework's config can. ``by_default``: the families it logs with no
    setting, and the ``defaults.py`` row that says so."""

    settings: dict[str, str | None] = field(default_factory=dict)
    by_default: tuple[tuple[str, ...], str] | None = None


@dataclass(frozen=True)
class Setting:
    """A setting a fix writes (``fixes.py``), read in the framework's source: ``kind`` "key"
    (a dotted key path of the format's config file) or "flag" (a flag of its launch
    command), ``target``, ``value`` ("N": the profile's metrics interval in steps; "LOG":
    the job's own logging interval, which Megatron requires the memory interval to be a
    multiple of), and ``why``: what the framework then does, and where its source says so."""

    kind: str
    target: str
    value: object
    why: str


@dataclass(frozen=True)
class Fixes:
    """The settings that clear a finding for a job of this format: per MON-01 family, and
    for PREC-01 (full fp32 training). A family or rule it lacks has no file edit."""

    metrics: dict[str, Setting] = field(default_factory=dict)
    precision: Setting | None = None


_BF16 = "bf16 mixed precision (Ampere or newer GPUs; fp16 needs loss scaling too, PREC-02)"
_DS_TIMER = "DeepSpeed 0.16.5 (microsoft/DeepSpeed@38327e0) deepspeed/utils/timer.py ThroughputTimer.stop"
_MEGATRON_LOG = "Megatron-LM@d98e8a6 megatron/training/training.py training_log"


@dataclass(frozen=True)
class Marker:
    """A pattern of keys that names a file's format before the evidence is weighed
    (``format_detection``): in a file of ``syntax``, the markers of every format are tried
    by ``rank`` (lowest first) and the first that holds names the candidate. It holds when
    one of its ``clauses`` does; a clause is atoms separated by spaces, all of which hold:

    ``a|b``  one of these keys is at the top level; ``!a|b``: none of them is
    ``a{}``  ``a`` holds a mapping; ``!a{}``: it does not
    ``a.b|c``  ``a`` holds a mapping with key b or c; ``*.b``: some top-level mapping has key b
    ``a=v``  ``a`` holds the string v
    ``a~t:N``  t is in the first N characters of ``a``'s value as text; ``~t:N``: of the file's

    Atoms are tried left to right and clauses in order, stopping at the first that decides,
    so a costly text atom goes last.
    """

    syntax: str
    rank: int
    clauses: tuple[str, ...]


@dataclass(frozen=True)
class Format:
    """A config format: ``name`` (the ``--kind``), ``display`` (in messages), ``reader``
    (``module:function`` under validator.jobs; None for a format spec-check does not
    read, described only so its evidence can be named in a refusal), and the rest as the
    module doc says."""

    name: str
    display: str
    reader: str | None = None
    # --- decisive evidence (evidence.py)
    targets: str | None = None  # regex on a _target_ / class_path's dotted name
    keys: frozenset[str] = frozenset()
    sections: dict[str, frozenset[str]] = field(default_factory=dict)
    claimed: bool = True
    # whether the format is recognized by shared section names (``trainer:``, ``task:``):
    # it must then show decisive evidence of its own to be read
    needs_evidence: bool = False
    # a section all of whose keys its catalogue knows counts as evidence, even with one key
    whole_sections: bool = False
    # a LightningCLI ``class_path`` beside this section counts as evidence (jsonargparse syntax)
    class_path_beside: str | None = None
    # fairseq's dataclass choices (``task: {_name: ...}``) count as evidence
    dataclass_choices: bool = False
    # formats of one family are no rivals of each other (Lightning and NeMo 1.x)
    family: str | None = None
    # --- the markers that name it before evidence is weighed (format_detection.py)
    markers: tuple[Marker, ...] = ()
    # --- syntax and key catalogue (format_detection.py)
    syntax: str | None = None  # the syntax ``--kind NAME`` reads a file in; None: from the file
    catalogue: str | None = None  # validator/jobs/keys/<catalogue>.json, where it has one
    scored_in: tuple[str, ...] = ()  # syntaxes in which detection scores a file's keys against it
    hydra_groups: tuple[str, ...] = ()  # Hydra config groups whose files hold a section of its keys
    hydra_bases: bool = True  # a file of it with a Hydra ``defaults:`` list composes its bases
    manifest: bool = False  # a Kubernetes manifest: the training resource of a multi-document file
    # a composition of other configs (a Hydra root): claimed only when a config it composes,
    # or its own decisive evidence, is of a framework spec-check reads (composition.judge)
    composes: bool = False
    # --- what its reader records, and what follows from it
    tag: str | None = None  # its ``job.formats`` value, when not ``name`` ("hf_trainer")
    launch_tags: tuple[str, ...] = ()  # job.formats values of files that hold the job's launch
    precedence: int | None = None  # which framework speaks for a job of several (lower first)
    framework: Framework | None = None
    packages: tuple[str, ...] = ()  # the PyPI names its framework is installed as (pins.py)
    metrics: Metrics | None = None
    fixes: Fixes | None = None  # the settings a fix writes (fixes.py)
    collective_timeout: CollectiveTimeout | None = None

    @property
    def job_tag(self) -> str:
        return self.tag or self.name

    @property
    def decisive(self) -> bool:
        """Whether it has any decisive evidence to look for (evidence.py skips it if not)."""
        return bool(self.targets or self.keys or self.sections or self.class_path_beside
                    or self.dataclass_choices)


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

_LIGHTNING_FW = Framework("Lightning", "Lightning-AI/pytorch-lightning@7f0c343", "lightning", "lightning")
_SHELL_LAUNCH = ("shell", "deepspeed_launcher")  # what the shell reader records beside the format
# TrainingArguments names: any one marks an HF file (weighed against the others' evidence)
_HF_ARGS = ("per_device_train_batch_size|output_dir|logging_steps|save_strategy|save_steps|learning_rate|"
            "num_train_epochs|gradient_accumulation_steps|report_to|bf16")

# The order is the ``--kind`` choices' order (and a refusal's list of them).
FORMATS: tuple[Format, ...] = (
    Format("deepspeed", "DeepSpeed JSON", "deepspeed:read", syntax="json", catalogue="deepspeed",
           scored_in=("json",), precedence=6,
           markers=(Marker("json", 10, ("train_batch_size|train_micro_batch_size_per_gpu|zero_optimization|fp16|bf16|"
                                        "gradient_accumulation_steps|steps_per_print|optimizer|wall_clock_breakdown "
                                        "!output_dir|per_device_train_batch_size",)),),
           framework=Framework("DeepSpeed", "microsoft/DeepSpeed@38327e0", "deepspeed", "deepspeed"),
           packages=("deepspeed",),
           metrics=Metrics({
               "gpu_utilization": "set steps_per_print: N (CurrSamplesPerSec every N steps)",
               "memory": "set steps_per_print: N (MemAllocated every N steps) or memory_breakdown: true",
               "collective_latency": "set comms_logger: {enabled: true} (and call deepspeed.comm.log_summary())",
               "gradient_stats": None,  # no config key: engine.get_global_grad_norm() is an API call
           }, ((), "deepspeed.logs_by_default")),
           fixes=Fixes({
               "gpu_utilization": Setting("key", "steps_per_print", "N", f"logs CurrSamplesPerSec every N global "
                                          f"steps ({_DS_TIMER})"),
               "memory": Setting("key", "steps_per_print", "N", f"logs MemAllocated and MaxMemAllocated every N "
                                 f"global steps ({_DS_TIMER})"),
           }, Setting("key", "bf16.enabled", True, f"DeepSpeed's bf16 section: {_BF16}")),
           collective_timeout=CollectiveTimeout("deepspeed.init_timeout", "deepspeed", replaces_torch=True)),
    Format("lightning", "Lightning", "lightning:read",
           targets=r"(?:lightning|pytorch_lightning|lightning_fabric)(?:\.|$)",
           keys=frozenset({"seed_everything"}),
           sections={"trainer": _LIGHTNING_TRAINER}, needs_evidence=True, whole_sections=True,
           class_path_beside="trainer", family="lightning", catalogue="lightning", scored_in=("yaml",),
           markers=(Marker("yaml", 60, ("trainer{}", "~class_path:5000", "_target_", "*._target_")),),
           hydra_groups=("trainer",), precedence=4, framework=_LIGHTNING_FW,
           metrics=Metrics({
               "gpu_utilization": "add the ThroughputMonitor callback",
               "memory": "add the DeviceStatsMonitor callback",
               "collective_latency": NCCL_TIMING,
               "gradient_stats": "log lightning.pytorch.utilities.grad_norm(...) in on_before_optimizer_step",
           }, ((), "lightning.logs_by_default")),
           packages=("lightning", "pytorch-lightning", "pytorch_lightning"),
           fixes=Fixes(precision=Setting("key", "trainer.precision", "bf16-mixed",
                                         f"Lightning 2.x Trainer(precision='bf16-mixed'): {_BF16}")),
           collective_timeout=CollectiveTimeout("lightning.ddp_timeout", "lightning", replaces_torch=True)),
    Format("hf", "HF TrainingArguments", "hf:read_trainer",
           targets=r"transformers\.(?:Seq2Seq)?Training(?:Arguments)?$|transformers\.Trainer$",
           catalogue="hf", scored_in=("yaml", "json"), tag="hf_trainer", precedence=5,
           markers=(Marker("json", 20, (_HF_ARGS,)), Marker("yaml", 70, (_HF_ARGS,))),
           framework=Framework("HF Transformers", "huggingface/transformers@00349ae", "hf", "hf"),
           packages=("transformers",),
           metrics=Metrics({
               "gpu_utilization": "set include_num_input_tokens_seen: true (train_tokens_per_second)",
               # skip_memory_metrics: false reports memory once, when train() ends: no series
               "memory": None,
               "collective_latency": NCCL_TIMING,
               "gradient_stats": "set max_grad_norm > 0 (grad_norm in the logs)",
           }, (("gradient_stats",), "hf.logs_by_default")),
           fixes=Fixes({
               "gpu_utilization": Setting("key", "include_num_input_tokens_seen", True, (
                   "Trainer.log adds num_input_tokens_seen and train_tokens_per_second to every log "
                   "(transformers 4.57.6 trainer.py Trainer.log; True means 'all', training_args.py)")),
           }, Setting("key", "bf16", True, f"TrainingArguments bf16: {_BF16}")),
           collective_timeout=CollectiveTimeout("hf.ddp_timeout", "hf:")),
    Format("accelerate", "Accelerate config", "hf:read_accelerate", catalogue="accelerate", precedence=7,
           markers=(Marker("yaml", 50, ("distributed_type|compute_environment", "deepspeed_config num_processes")),),
           framework=Framework("Accelerate", "huggingface/accelerate@16cb6eb", "accelerate", "accelerate",
                               aliases=("accelerate launch",)),
           packages=("accelerate",)),
    Format("torchtitan", "torchtitan TOML", "torchtitan:read", syntax="toml", catalogue="torchtitan",
           scored_in=("toml",), precedence=1,
           markers=(Marker("toml", 10, ("training|parallelism|checkpoint|job|metrics",)),),
           framework=Framework("torchtitan", "pytorch/torchtitan@b5bcd76", "torchtitan", "torchtitan"),
           packages=("torchtitan",),
           metrics=Metrics({
               "gpu_utilization": "keep torchtitan's metrics (tps, mfu every metrics.log_freq)",
               "memory": "keep torchtitan's metrics (memory/max_reserved every metrics.log_freq)",
               "collective_latency": NCCL_TIMING,
               "gradient_stats": "keep torchtitan's metrics (grad_norm every metrics.log_freq)",
           }, (("gpu_utilization", "memory", "gradient_stats"), "torchtitan.logs_by_default")),
           collective_timeout=CollectiveTimeout("torchtitan.train_timeout", "torchtitan:")),
    Format("nemo", "NeMo", "lightning:read_nemo", targets=r"nemo\.",
           keys=frozenset({"exp_manager"}),
           sections={"model": frozenset({"tensor_model_parallel_size", "pipeline_model_parallel_size",
                                         "micro_batch_size", "megatron_amp_O2"})},
           needs_evidence=True, family="lightning", catalogue="nemo", precedence=3,
           markers=(Marker("yaml", 40, ("exp_manager", "model.micro_batch_size|tensor_model_parallel_size")),),
           framework=Framework("NeMo", "NVIDIA/NeMo@8cfedd7", "nemo", "nemo"),
           packages=("nemo-toolkit", "nemo_toolkit"),
           metrics=Metrics({
               "gpu_utilization": "set exp_manager.log_tflops_per_sec_per_gpu: true",
               "memory": "add the DeviceStatsMonitor callback",
               "collective_latency": NCCL_TIMING,
               "gradient_stats": "log grad norms (lightning.pytorch.utilities.grad_norm) in the model",
           }, ((), "lightning.logs_by_default")),
           fixes=Fixes(precision=Setting("key", "trainer.precision", "bf16-mixed",
                                         f"NeMo's Lightning trainer precision 'bf16-mixed': {_BF16}")),
           collective_timeout=CollectiveTimeout("lightning.ddp_timeout", replaces_torch=True)),
    # launch scripts (shell.py + launch.py read all three; the syntax decides, not the name)
    Format("megatron", "Megatron-LM launch script", "shell:read", syntax="shell", catalogue="megatron",
           launch_tags=("megatron", *_SHELL_LAUNCH), precedence=0,
           framework=Framework("Megatron-LM", "NVIDIA/Megatron-LM@d98e8a6", "megatron", "megatron"),
           metrics=Metrics({
               "gpu_utilization": "set --log-throughput",
               "memory": "set --log-memory-interval N (a multiple of --log-interval) or --log-memory-to-tensorboard "
                         "(with --tensorboard-dir)",
               "collective_latency": "set --timing-log-level 1 (all-grads-sync, params-all-gather timers) with "
                                     "--log-timers-to-tensorboard",
               "gradient_stats": "set --log-params-norm or --log-num-zeros-in-grad",
           }, (("gradient_stats",), "megatron.logs_by_default")),
           fixes=Fixes({
               "gpu_utilization": Setting("flag", "--log-throughput", True, (
                   f"logs throughput per GPU (TFLOP/s/GPU) every --log-interval ({_MEGATRON_LOG})")),
               "memory": Setting("flag", "--log-memory-interval", "LOG", (
                   f"report_memory every N iterations, N a multiple of --log-interval ({_MEGATRON_LOG}; "
                   "arguments.py asserts the multiple)")),
           }, Setting("flag", "--bf16", True, f"Megatron-LM --bf16: {_BF16}")),
           collective_timeout=CollectiveTimeout("megatron.distributed_timeout", "megatron:")),
    Format("slurm", "Slurm batch script", "shell:read", syntax="shell", launch_tags=("slurm", *_SHELL_LAUNCH),
           framework=Framework("Slurm", "SchedMD/slurm@284c3b9", "sbatch", "slurm")),
    Format("torchrun", "torchrun launch script", "shell:read", syntax="shell",
           launch_tags=("torchrun", *_SHELL_LAUNCH),
           framework=Framework("torchrun", "pytorch/pytorch@010929f", "torchrun")),
    Format("pytorchjob", "Kubeflow PyTorchJob", "k8s:read", manifest=True, launch_tags=("pytorchjob",),
           markers=(Marker("yaml", 10, ("kind=PyTorchJob", "apiVersion spec~pytorchReplicaSpecs:2000")),)),
    Format("env", "environment file", "shell:read_env", syntax="env", launch_tags=("env",)),
    Format("maxtext", "MaxText", "maxtext:read", catalogue="maxtext", precedence=2,
           markers=(Marker("yaml", 20, ("base_config|per_device_batch_size|checkpoint_period|ici_fsdp_parallelism|"
                                        "dcn_data_parallelism|log_period|max_target_length !trainer",)),),
           framework=Framework("MaxText", "AI-Hypercomputer/maxtext@e591f30", "maxtext", "maxtext"),
           metrics=Metrics({
               "gpu_utilization": "keep MaxText's perf/per_device_tflops_per_sec (every step)",
               "memory": "the platform's DCGM exporter, declared in the profile (MaxText prints memory once, "
                         "after parameter init)",
               "collective_latency": "the platform's NCCL profiler plugin, declared in the profile (MaxText's "
                                     "profiler: xplane gives traces, not a time series)",
               "gradient_stats": "keep MaxText's learning/grad_norm (every step)",
           }, (("gpu_utilization", "gradient_stats"), "maxtext.logs_by_default"))),
    Format("tfmg", "TF Model Garden", "tfmg:read", targets=r"official\.",
           keys=frozenset({"runtime"}),
           sections={
               "trainer": frozenset({"steps_per_loop", "train_steps", "checkpoint_interval",
                                     "summary_interval", "validation_interval", "validation_steps",
                                     "optimizer_config", "best_checkpoint_export_subdir",
                                     "train_tf_function", "train_tf_while_loop"}),
               "task": frozenset({"init_checkpoint", "train_data", "validation_data",
                                  "differential_privacy_config", "allow_image_summary"}),
           }, needs_evidence=True, whole_sections=True, catalogue="tfmg", tag="tf_model_garden",
           # a task, or a runtime without a model, unless beside NeMo's trainer and exp_manager
           markers=(Marker("yaml", 30, ("task !trainer{}", "task !exp_manager", "runtime !model !trainer{}",
                                        "runtime !model !exp_manager")),),
           framework=Framework("TF Model Garden", "tensorflow/models@0de1746", "tf-model-garden", "tfmg"),
           packages=("tf-models-official", "tf-models-nightly")),
    Format("torchtune", "torchtune recipe", "recipes:read_torchtune", targets=r"torchtune\.",
           catalogue="torchtune", scored_in=("yaml",),
           framework=Framework("torchtune", "torchtune 0.6.1", "torchtune", "torchtune"),
           fixes=Fixes(precision=Setting("key", "dtype", "bf16", f"torchtune recipes' dtype: {_BF16} (recipes refuse "
                                         "fp16)")),
           packages=("torchtune",)),
    Format("axolotl", "axolotl", "recipes:read_axolotl", catalogue="axolotl", scored_in=("yaml",),
           framework=Framework("axolotl", "axolotl 0.19.0", "axolotl", "axolotl"),
           packages=("axolotl",)),
    Format("levanter", "Levanter", "levanter:read", targets=r"levanter\.",
           keys=frozenset({"initialize_from_hf", "hf_save_path", "hf_save_steps", "eval_harness",
                           "use_hf_model_config", "z_loss_weight"}),
           sections={"trainer": frozenset({"mp", "checkpointer", "tracker", "per_device_parallelism",
                                           "fsdp_axis", "model_axis_size", "tensor_parallel_axes",
                                           "replica_dcn_axis_size", "jax_config", "steps_per_eval"})},
           needs_evidence=True, whole_sections=True, catalogue="levanter", scored_in=("yaml",),
           framework=Framework("levanter", "levanter 1.2.dev1644", "levanter", "levanter"),
           packages=("levanter",)),
    Format("litgpt", "LitGPT", "litgpt:read", targets=r"litgpt\.",
           keys=frozenset({"initial_checkpoint_dir", "logger_name", "tokenizer_dir", "out_dir",
                           "checkpoint_dir", "lora_query", "lora_value"}),
           catalogue="litgpt", scored_in=("yaml",),
           framework=Framework("LitGPT", "litgpt 0.5.13", "litgpt", "litgpt"),
           packages=("litgpt",)),
    Format("llmfoundry", "llm-foundry", "composer:read_llmfoundry", targets=r"llmfoundry\.",
           keys=frozenset({"train_loader", "eval_loader", "eval_loaders", "icl_tasks", "eval_gauntlet",
                           "variables", "autoresume", "icl_seq_len", "eval_first", "algorithms",
                           "loggers", "dist_timeout"}),
           needs_evidence=True, catalogue="llm-foundry", scored_in=("yaml",),
           framework=Framework("llm-foundry (Composer)", "llm-foundry 0.22.0", "llm-foundry", "llm-foundry"),
           packages=("llm-foundry", "llm_foundry")),
    Format("olmo", "OLMo", "composer:read_olmo", targets=r"olmo(?:_core)?\.",
           keys=frozenset({"try_load_latest_save", "save_interval_ephemeral", "sharded_checkpointer",
                           "speed_monitor", "evaluators", "distributed_strategy", "save_interval_unsharded",
                           "remote_save_folder", "fused_loss", "softmax_auxiliary_loss"}),
           # OLMo's ModelConfig (d_model/n_heads are MPT's too: no evidence between them)
           sections={"model": frozenset({"mlp_ratio", "weight_tying", "block_type", "layer_norm_type",
                                         "include_bias", "bias_for_layer_norm", "rope", "flash_attention",
                                         "multi_query_attention", "attention_layer_norm", "block_group_size"})},
           needs_evidence=True, catalogue="olmo", scored_in=("yaml",),
           framework=Framework("OLMo", "ai2-olmo 0.6.0", "OLMo", "olmo"),
           packages=("ai2-olmo", "ai2_olmo")),
    Format("skypilot", "SkyPilot task", "skypilot:read", catalogue="skypilot", scored_in=("yaml",),
           launch_tags=("skypilot",),
           framework=Framework("SkyPilot", "skypilot 0.14.1", "skypilot", "skypilot"),
           packages=("skypilot", "skypilot-nightly")),
    Format("kubernetes", "Kubernetes training resource", "k8s:read_kubernetes", manifest=True,
           launch_tags=("mpijob", "rayjob", "jobset", "volcano-job", "trainjob")),
    Format("hydra", "Hydra root config", "hydra:read", hydra_bases=False, composes=True),
    # frameworks spec-check does not read: seen, named, and refused
    Format("composer", "a MosaicML Composer trainer (without llm-foundry)", targets=r"composer\.",
           claimed=False),
    Format("verl", "verl (RL post-training)", targets=r"verl\.",
           keys=frozenset({"actor_rollout_ref", "critic", "reward_model", "custom_reward_function"}),
           claimed=False),
    Format("fairseq", "fairseq", targets=r"fairseq2?\.",
           keys=frozenset({"distributed_training", "optimization", "criterion", "bmuf"}),
           dataclass_choices=True, claimed=False),
    Format("nemo_rl", "NeMo-RL", targets=r"nemo_rl\.",
           keys=frozenset({"grpo", "policy", "cluster"}), claimed=False),
    Format("openrlhf", "OpenRLHF", targets=r"openrlhf\.", claimed=False),
    Format("trl", "TRL", targets=r"trl\.", claimed=False),
    Format("espnet", "ESPnet", targets=r"espnet2?\.", claimed=False),
    Format("mmengine", "OpenMMLab (mmengine)", targets=r"mm(?:engine|det|seg|pretrain)\.", claimed=False),
    Format("detectron2", "detectron2", targets=r"detectron2\.", claimed=False),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}

# Frameworks whose defaults a job relies on without being a config format of their own.
OTHER_FRAMEWORKS: tuple[Framework, ...] = (
    Framework("PyTorch", "pytorch/pytorch@010929f", "torch.distributed", "torch"),
)


def register(fmt: Format) -> None:
    """Add a format (a plug-in, or a test's throwaway one): detection, dispatch, the
    ``--kind`` choices, defaults and metrics see it from now on."""
    global FORMATS
    if fmt.name in BY_NAME:
        raise ValueError(f"format {fmt.name!r} is registered already")
    FORMATS = (*FORMATS, fmt)
    BY_NAME[fmt.name] = fmt
    _DERIVED.clear()


def unregister(name: str) -> None:
    """Remove a format ``register`` added."""
    global FORMATS
    FORMATS = tuple(f for f in FORMATS if f.name != name)
    BY_NAME.pop(name, None)
    _DERIVED.clear()


_DERIVED: dict[str, object] = {}  # derived tables, rebuilt on first use after a (un)register


def _derived(key: str, build: object) -> object:
    out = _DERIVED.get(key)
    if out is None:
        out = _DERIVED[key] = build() if callable(build) else build
    return out


def kinds() -> tuple[str, ...]:
    """The formats spec-check reads (``--kind`` choices), in ``FORMATS`` order."""
    return _derived("kinds", lambda: tuple(f.name for f in FORMATS if f.claimed))  # type: ignore[return-value]


class Kinds(Sequence[str]):
    """``kinds()`` as a sequence read on each use: a click ``--kind`` choice built once at
    import still offers a format registered later."""

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        return kinds()[i]

    def __len__(self) -> int:
        return len(kinds())

    def __iter__(self) -> Iterator[str]:
        return iter(kinds())


def catalogued(syntax: str = "yaml") -> dict[str, str]:
    """kind -> key catalogue, for the formats whose files detection scores in ``syntax``."""
    return _derived("catalogued:" + syntax, lambda: {  # type: ignore[return-value]
        f.name: f.catalogue or f.name for f in FORMATS if syntax in f.scored_in})


def markers(syntax: str) -> tuple[tuple[str, Marker], ...]:
    """(kind, marker) of every format's markers in ``syntax``, in the order they are tried."""
    return _derived("markers:" + syntax, lambda: tuple(sorted(  # type: ignore[return-value]
        ((f.name, m) for f in FORMATS for m in f.markers if m.syntax == syntax), key=lambda km: km[1].rank)))


def hydra_groups() -> dict[str, tuple[str, ...]]:
    """kind -> the Hydra config groups whose files hold one of its sections."""
    return _derived("hydra_groups", lambda: {  # type: ignore[return-value]
        f.name: f.hydra_groups for f in FORMATS if f.hydra_groups})


def by_precedence() -> tuple[Format, ...]:
    """The formats that can speak for a job's framework, the one that wins first."""
    return _derived("precedence", lambda: tuple(sorted(  # type: ignore[return-value]
        (f for f in FORMATS if f.precedence is not None), key=lambda f: f.precedence or 0)))


def launch_tags() -> frozenset[str]:
    """``job.formats`` values of files that hold a job's launch."""
    return _derived("launch", lambda: frozenset(  # type: ignore[return-value]
        t for f in FORMATS for t in f.launch_tags))


def frameworks() -> tuple[Framework, ...]:
    """Every framework whose defaults are labelled (``defaults.py``)."""
    return _derived("frameworks", lambda: (*OTHER_FRAMEWORKS, *(  # type: ignore[return-value]
        f.framework for f in FORMATS if f.framework is not None)))


def framework_by_label() -> dict[str, Framework]:
    """Source prefix of a default ("tf-model-garden", "accelerate launch") -> its framework."""
    return _derived("by_label", lambda: {  # type: ignore[return-value]
        label: fw for fw in frameworks() for label in (fw.label, *fw.aliases)})


def label_of_table() -> dict[str, str]:
    """A ``defaults.TABLES`` table -> its framework's source prefix."""
    return _derived("by_table", lambda: {  # type: ignore[return-value]
        fw.table: fw.label for fw in frameworks() if fw.table})


def display_by_catalogue() -> dict[str, str]:
    """A key catalogue's name -> its framework's display name."""
    return _derived("by_catalogue", lambda: {  # type: ignore[return-value]
        f.catalogue: f.framework.display for f in FORMATS if f.catalogue and f.framework is not None})


def packages() -> dict[str, tuple[str, ...]]:
    """A key catalogue's name -> the PyPI names its framework is installed as."""
    return _derived("packages", lambda: {  # type: ignore[return-value]
        f.catalogue: f.packages for f in FORMATS if f.catalogue and f.packages})


def reader(kind: str):  # type: ignore[no-untyped-def]
    """The reader function of ``kind`` (imported on use: lint start-up stays light)."""
    import importlib

    fmt = BY_NAME[kind]
    if fmt.reader is None:
        raise KeyError(kind)
    mod, _, fn = fmt.reader.partition(":")
    module = importlib.import_module(mod if "." in mod else f"validator.jobs.{mod}")
    return getattr(module, fn)
