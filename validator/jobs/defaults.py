"""Framework defaults: how a default is labelled wherever it is used, and the tables of the
defaults the job rules rely on.

**Tables.** A value a job does not set is judged at its framework's default (a hang is
noticed after torch's 10-minute NCCL timeout when nothing shorter is configured). Such a
verdict is only as good as the default, so every default a reader fills in or a rule pack
v1.1 mechanism relies on is a row of ``TABLES``: one table per framework, each row read in
the framework's own source at the version named, with the file (and symbol) it was read
in. Readers fill a default in only through :func:`fill`, which records the row's key on the
fact (``Entry.key``); ``tests/jobs/test_defaults.py`` scans the readers for any other way
and checks that every row is used. ``docs/defaults.md`` is generated from the tables
(``python -m validator.jobs.defaults``) and a test keeps the two equal.

**Labels.** Every output says of such a value that it is the *default of <framework>*
(``frameworks()``, from each format's descriptor in ``registry.py``: display name, and the
source snapshot named in
``shared/reference/training-configs.md``), that it is *not set in your files*, the setting
and value, the version and source file the row was read in (:func:`cite`), and where it
would be set (:func:`origin`): "default of PyTorch (not set in your files;
pytorch/pytorch@010929f): init_process_group(timeout=) for NCCL = 10 min (600 s) (read in
torch 2.2.2-2.14.1, torch/distributed/constants.py (default_pg_nccl_timeout), ...); set it
in run.sh". A default no table holds (the model's own "no energy logging configured") keeps
a plain ``default:`` label (:func:`describe`).

The precedence the job model applies (documented in docs/lint.md): a value passed on
the command line (``--set``) wins over the job's files; a value a file sets wins over a
framework default; a default is used only where no file sets the value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from validator.jobs import registry

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def frameworks() -> dict[str, tuple[str, str]]:
    """Source prefix -> (framework, where the default was read: repository@commit, or the
    release its key catalogue was read from): each format's ``Format.framework``."""
    return {label: (fw.display, fw.snapshot) for label, fw in registry.framework_by_label().items()}


def _framework(label: str) -> tuple[str, str] | None:
    fw = registry.framework_by_label().get(label)
    return (fw.display, fw.snapshot) if fw is not None else None


NOT_SET = "not set in your files"


def framework_of(detail: str) -> tuple[str, str] | None:
    """The framework whose default ``detail`` ("megatron: --log-interval = 100") is, and
    where it was read: the table above, else the framework's key catalogue
    (``validator/jobs/keys``: package and version it was generated from)."""
    head = detail.split(":", 1)[0].strip() if ":" in detail else detail.split(" ", 1)[0]
    fw = _framework(head)
    if fw is not None:
        return fw
    from validator.jobs import keys

    cat = keys.catalogue(head) if head.replace("-", "").isalnum() else None
    if cat is None:
        return None
    return registry.display_by_catalogue().get(head, head), f"{cat.package} {cat.version}"


def describe(detail: str, file: str | None) -> str:
    """The source text of a default: ``default of <framework> <version> (not set in your
    files): <key = value>; set it in <file>``. A default that is no framework's (``no
    energy logging configured``) keeps its plain ``default:`` wording."""
    fw = framework_of(detail)
    if fw is None:
        return f"default: {detail}"
    name, version = fw
    key = detail.split(":", 1)[1].strip() if ":" in detail else detail
    return f"default of {name} ({NOT_SET}; {version}): {key}{where_to_set(key, file)}"


_ENV = re.compile(r"[A-Z][A-Z0-9_]{2,}")


def where_to_set(setting: str, file: str | None) -> str:
    """"; set it in FILE" only where FILE can hold ``setting``: an environment variable goes
    in a launch script (or the environment that launches a config file), a launcher's flag on
    the launch command, an API call (``init_process_group(timeout=)``) in the training code,
    a scheduler's setting in its own configuration; a config key in the config file."""
    if not file:
        return ""
    from validator.jobs.edits import syntax_of

    head = setting.split(" = ", 1)[0].strip()
    first = head.split()[0] if head.split() else head
    script = syntax_of(file) in ("shell", "env")
    if _ENV.fullmatch(first):
        return f"; set it in {file}" if script else (
            "; it is an environment variable: export it in the script or scheduler that launches the job")
    if "(" in head or head.startswith("<") or "slurm.conf" in head:
        return "; set in the training code or the cluster's configuration, not in a config file"
    if first.startswith("--") or re.search(r"\s--\w", head):  # a flag (of a launcher: "torchrun --max-restarts")
        return f"; set it in {file}" if script else "; set it on the launch command (the script that runs the job)"
    if script:
        return "; set it in the job's training config"
    return f"; set it in {file}"


@dataclass(frozen=True)
class Default:
    setting: str  # as the user writes it
    value: JSONValue  # in seconds for durations; None = disabled / never
    unit: str | None
    source_file: str  # where in the framework's source it was read
    version: str | None = None  # when it differs from the table's version
    note: str = ""


@dataclass(frozen=True)
class Table:
    framework: str
    version: str  # the version the rows were read at
    rows: dict[str, Default]


# MaxText's base.yml (src/maxtext/configs/base.yml at AI-Hypercomputer/maxtext@e591f30): the keys
# the MaxText reader uses, each a row of the maxtext table; a key no layer of a config sets
# takes this value
MAXTEXT_BASE: dict[str, JSONValue] = {
    "dtype": "bfloat16",
    "grad_dtype": "float32",
    "quantization": "",
    "enable_checkpointing": True,
    "checkpoint_period": 10_000,
    "log_period": 100,
    "enable_tensorboard": True,
    "per_device_batch_size": 12.0,
    "gradient_accumulation_steps": 1,
    "steps": 150_001,
    "run_name": "",
    "gcs_metrics": False,
    "monitor_goodput": False,
    "elastic_enabled": False,
    "model_name": "default",
    "ici_tensor_parallelism": 1,
    "dcn_tensor_parallelism": 1,
    "ici_pipeline_parallelism": 1,
    "dcn_pipeline_parallelism": 1,
    "ici_context_parallelism": 1,
    "dcn_context_parallelism": 1,
    "enable_wandb": False,
    "optimizer_memory_host_offload": False,
}


TABLES: dict[str, Table] = {t.framework: t for t in (
    Table("torch", "2.2.2-2.14.1", {
        "pg_nccl_timeout": Default("init_process_group(timeout=) for NCCL", 600, "s",
                                   "torch/distributed/constants.py (default_pg_nccl_timeout)",
                                   note="1800 s in torch 2.0.1 and 2.1.2"),
        "monitor_interval": Default("torchrun --monitor-interval", 5, "s", "torch/distributed/run.py",
                                    version="2.0.1-2.3.1", note="0.1 s from torch 2.4.1; the larger is used"),
        "max_restarts": Default("torchrun --max-restarts", 0, None, "torch/distributed/run.py"),
        "nnodes": Default("torchrun --nnodes", 1, None, "torch/distributed/run.py", version="pytorch@010929f",
                          note='"1:1": one node'),
        "nproc_per_node": Default("torchrun --nproc-per-node", 1, None, "torch/distributed/run.py",
                                  version="pytorch@010929f", note='"1": one process'),
        "grad_scaler": Default("torch.amp.GradScaler()", "dynamic", None, "torch/amp/grad_scaler.py",
                               version="pytorch@0202916",
                               note="init_scale 2**16, halved on inf/NaN, doubled after 2000 clean steps"),
        "async_error_handling": Default("TORCH_NCCL_ASYNC_ERROR_HANDLING", 3, None,
                                        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", version="2.6.0",
                                        note="1 and 3 end the process on a timeout; 0 and 2 do not"),
        "heartbeat_timeout_sec": Default("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", 480, "s",
                                         "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", version="2.6.0",
                                         note="guards the watchdog thread itself, not a GPU"),
        "enable_timing": Default("TORCH_NCCL_ENABLE_TIMING", False, None,
                                 "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", version="2.6.0",
                                 note="getCvarBool(TORCH_NCCL_ENABLE_TIMING, false); the name and its "
                                      "NCCL_ENABLE_TIMING alias in ProcessGroupNCCL.hpp of 2.2.2-2.14.1"),
    }),
    Table("nvrx", "nvidia-resiliency-ext 0.7.0", {
        "monitor_interval": Default("ft_launcher --monitor-interval", 0.3, "s", "fault_tolerance/launcher.py"),
        "workload_check_interval": Default("ft_launcher --ft-workload-check-interval", 5.0, "s",
                                           "fault_tolerance/config.py"),
        "rank_heartbeat_timeout": Default("ft_launcher --ft-rank-heartbeat-timeout", None, "s",
                                          "fault_tolerance/config.py", note="2700 s in 0.4.1"),
        "max_restarts": Default("ft_launcher --max-restarts", 0, None, "fault_tolerance/launcher.py"),
    }),
    Table("megatron", "megatron-core 0.19.2", {
        "distributed_timeout": Default("--distributed-timeout-minutes", 600, "s",
                                       "megatron/training/config/common_config.py"),
        "inprocess_soft_timeout": Default("--inprocess-soft-timeout", 60, "s", "megatron/training/arguments.py"),
        "inprocess_heartbeat_timeout": Default("--inprocess-heartbeat-timeout", 60, "s",
                                               "megatron/training/arguments.py"),
        "log_interval": Default("--log-interval", 100, "steps", "megatron/training/config/training_config.py"),
        "precision": Default("--bf16 / --fp16", "fp32 (both False)", None, "megatron/core/model_parallel_config.py",
                             version="Megatron-LM@d98e8a6"),
        "save": Default("--save", None, None, "megatron/training/config/training_config.py",
                        version="Megatron-LM@d98e8a6", note="no checkpoint directory: nothing is saved"),
        "tensor_parallel": Default("--tensor-model-parallel-size", 1, None,
                                   "megatron/core/model_parallel_config.py", version="Megatron-LM@d98e8a6"),
        "pipeline_parallel": Default("--pipeline-model-parallel-size", 1, None,
                                     "megatron/core/model_parallel_config.py", version="Megatron-LM@d98e8a6"),
        "context_parallel": Default("--context-parallel-size", 1, None, "megatron/core/model_parallel_config.py",
                                    version="Megatron-LM@d98e8a6"),
        "logs_by_default": Default("(stdout line every --log-interval)", "iteration time, loss, grad norm",
                                   None, "megatron/training/training.py"),
    }),
    Table("deepspeed", "0.19.8", {
        "init_timeout": Default("deepspeed.init_distributed(timeout=) / DEEPSPEED_TIMEOUT", 600, "s",
                                "deepspeed/constants.py", note="30 min in 0.14.5-0.19.5"),
        "steps_per_print": Default("steps_per_print", None, "steps",
                                   "deepspeed/runtime/constants.py (STEPS_PER_PRINT_DEFAULT)",
                                   note="10 up to 0.15.1; drives the progress print and the samples/sec report"),
        "gradient_accumulation_steps": Default(
            "gradient_accumulation_steps", 1, None, "deepspeed/runtime/config.py (_set_batch_related_parameters)",
            note="GRADIENT_ACCUMULATION_STEPS_DEFAULT is None: 1 when one batch size is given, inferred with both"),
        "precision": Default("fp16.enabled / bf16.enabled", "fp32 (both False)", None,
                             "deepspeed/runtime/constants.py (FP16_ENABLED_DEFAULT, BFLOAT16_ENABLED_DEFAULT)"),
        "launcher_restarts": Default("deepspeed launcher (no restart option)", 0, None,
                                     "deepspeed/launcher/launch.py (sigkill_handler)",
                                     note="a failed rank ends every rank; nothing restarts them"),
        "logs_by_default": Default("(monitor)", "learning rate, loss scale", None, "deepspeed/runtime/engine.py"),
    }),
    Table("hf", "transformers 4.57.6 and 5.23.0", {  # save_*, batch, precision: read at 4.57.6
        "per_device_train_batch_size": Default("per_device_train_batch_size", 8, None,
                                               "transformers/training_args.py", version="transformers 4.57.6"),
        "gradient_accumulation_steps": Default("gradient_accumulation_steps", 1, None,
                                               "transformers/training_args.py", version="transformers 4.57.6"),
        "ddp_timeout": Default("ddp_timeout", 1800, "s", "transformers/training_args.py"),
        "logging_strategy": Default("logging_strategy", "steps", None, "transformers/training_args.py"),
        "logging_steps": Default("logging_steps", 500, "steps", "transformers/training_args.py"),
        "save_strategy": Default("save_strategy", "steps", None, "transformers/training_args.py"),
        "save_steps": Default("save_steps", 500, "steps", "transformers/training_args.py"),
        "precision": Default("bf16 / fp16", "fp32 (both False)", None, "transformers/training_args.py"),
        "bf16": Default("bf16", False, None, "transformers/training_args.py"),
        "fp16": Default("fp16", False, None, "transformers/training_args.py"),
        "resume_from_checkpoint": Default(
            "resume_from_checkpoint", None, None, "transformers/trainer.py (Trainer.train)",
            note="None: the Trainer starts from step 0; True: the last checkpoint in output_dir; "
                 "a path: that one checkpoint"),
        "max_grad_norm": Default("max_grad_norm", 1.0, None, "transformers/training_args.py",
                                 note="grad_norm is logged when it is > 0 (4.38.0-5.2.0, transformers/trainer.py); "
                                      "from 5.3.0 at 0 too (Trainer._get_grad_norm)"),
        "logs_by_default": Default("(log every logging_steps)", "loss, learning rate, grad_norm", None,
                                   "transformers/trainer.py"),
    }),
    Table("lightning", "2.6.6", {
        "ddp_timeout": Default("DDPStrategy(timeout=)", 1800, "s", "lightning/pytorch/strategies/ddp.py"),
        "log_every_n_steps": Default("log_every_n_steps", 50, "steps", "lightning/pytorch/trainer/trainer.py"),
        "accumulate_grad_batches": Default("accumulate_grad_batches", 1, None, "lightning/pytorch/trainer/trainer.py"),
        "enable_checkpointing": Default("enable_checkpointing", True, None, "lightning/pytorch/trainer/trainer.py",
                                        note="None -> True: a ModelCheckpoint saving every epoch"),
        "fabric_timeout": Default("Fabric DDPStrategy/FSDPStrategy(timeout=)", 1800, "s",
                                  "lightning/fabric/strategies/fsdp.py (default_pg_timeout)"),
        "precision": Default("Trainer(precision=)", "32-true", None,
                             "lightning/pytorch/trainer/connectors/accelerator_connector.py"),
        "logs_by_default": Default("(self.log in the LightningModule)", "what the module logs; no device stats",
                                   None, "lightning/pytorch/callbacks/device_stats_monitor.py"),
    }),
    Table("torchtitan", "0.3.0", {
        "train_timeout": Default("comm.train_timeout_seconds", 100, "s", "torchtitan/config/configs.py"),
        "init_timeout": Default("comm.init_timeout_seconds", 300, "s", "torchtitan/config/configs.py"),
        "log_freq": Default("metrics.log_freq", 10, "steps", "torchtitan/components/metrics.py"),
        "checkpoint_enable": Default("checkpoint.enable", False, None, "torchtitan/components/checkpointer/base.py"),
        "checkpoint_interval": Default("checkpoint.interval", 500, "steps",
                                       "torchtitan/components/checkpointer/base.py"),
        "load_step": Default("checkpoint.load_step", -1, None, "torchtitan/components/checkpointer/base.py",
                             note="-1: resume from the latest step in checkpoint.folder"),
        "mixed_precision_param": Default("training.mixed_precision_param", "bfloat16", None,
                                         "torchtitan/config/configs.py"),
        "mixed_precision_reduce": Default("training.mixed_precision_reduce", "float32", None,
                                          "torchtitan/config/configs.py"),
        "ft_process_group_timeout": Default("fault_tolerance.process_group_timeout_ms", 10.0, "s",
                                            "torchtitan/experiments/torchft/manager.py"),
        "logs_by_default": Default("(every metrics.log_freq)", "loss, grad_norm, tps, tflops, mfu, memory",
                                   None, "torchtitan/components/metrics.py"),
    }),
    Table("maxtext", "0.2.5", {
        **{k: Default(k, v, "steps" if k in ("log_period", "checkpoint_period") else None,
                      "src/maxtext/configs/base.yml", version="AI-Hypercomputer/maxtext@e591f30")
           for k, v in MAXTEXT_BASE.items()},
        "logs_by_default": Default("(every step)", "loss, grad_norm, step time, TFLOP/s, tokens/s", None,
                                   "maxtext/common/metric_logger.py"),
    }),
    Table("tfmg", "tf-models-official 2.20.0", {
        "summary_interval": Default("trainer.summary_interval", 1000, "steps", "official/core/config_definitions.py"),
        "accumulation": Default("(no gradient accumulation setting)", 1, None, "official/core/base_trainer.py",
                                note="one optimizer step per batch"),
        "restore": Default("(checkpoint restore)", "latest in model_dir", None, "orbit/controller.py",
                           note="restore_checkpoint(): checkpoint_manager.restore_or_initialize()"),
    }),
    Table("slurm", "26.11.0 (SchedMD/slurm@284c3b9)", {
        "slurmd_timeout": Default("SlurmdTimeout (slurm.conf)", 300, "s", "doc/man/man5/slurm.conf.5"),
        "signal": Default("sbatch --signal", None, "s", "doc/man/man1/sbatch.1",
                          note="no signal before the job's end time: SIGTERM at the limit, SIGKILL KillWait later"),
    }),
    Table("kubeflow", "kubeflow/training-operator@2f18ab7", {
        "replicas": Default("<kind>ReplicaSpecs.<role>.replicas", 1, None,
                            "pkg/apis/kubeflow.org/v1/pytorch_defaults.go (setDefaultReplicas(spec, 1))",
                            note="the same in tensorflow_, xgboost_, paddlepaddle_defautls and jax_defaults.go"),
        "mpi_worker_replicas": Default("mpiReplicaSpecs.Worker.replicas", 0, None,
                                       "pkg/apis/kubeflow/v2beta1/default.go (setDefaultsTypeWorker)",
                                       version="kubeflow/mpi-operator@0b32af3",
                                       note="0 also in training-operator's v1 mpi_defaults.go; the launcher: 1"),
    }),
    Table("jobset", "kubernetes-sigs/jobset@0336a8f", {
        "replicas": Default("replicatedJobs[].replicas", 1, None,
                            "api/jobset/v1alpha2/jobset_types.go (+kubebuilder:default=1)"),
    }),
    Table("kubernetes", "kubernetes/kubernetes@045bbb1", {
        "job_parallelism": Default("Job spec.parallelism", 1, None, "pkg/apis/batch/v1/defaults.go (SetDefaults_Job)"),
    }),
    Table("kuberay", "ray-project/kuberay@026f143", {
        "worker_replicas": Default("rayClusterSpec.workerGroupSpecs[].replicas", 0, None,
                                   "ray-operator/apis/ray/v1/raycluster_types.go (+kubebuilder:default:=0)",
                                   note="no worker pod unless set (the head pod runs alone)"),
    }),
    # Volcano v1.15.1 (volcano-sh/volcano@0a56ed3; the API types in its staging/src/volcano.sh/apis,
    # the same in volcano-sh/apis@536f121): TaskSpec.Replicas is a plain int32 with omitempty and
    # no +kubebuilder:default, the CRD schema has none (config/crd/volcano/bases/
    # batch.volcano.sh_jobs.yaml: minimum 0), the mutating webhook fills in minAvailable from
    # replicas but never replicas (pkg/webhooks/admission/jobs/mutate/mutate_job.go mutateSpec), and
    # the controller creates ts.Replicas pods (pkg/controllers/job/job_controller_actions.go
    # syncJob: for i := 0; i < int(ts.Replicas)): a task without replicas runs no pod
    Table("volcano", "volcano-sh/volcano@0a56ed3 (v1.15.1)", {
        "task_replicas": Default("spec.tasks[].replicas", 0, None,
                                 "staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/job.go (TaskSpec.Replicas)",
                                 note="no default in the CRD or the admission webhook (mutate_job.go mutateSpec); "
                                      "the controller creates that many pods (job_controller_actions.go syncJob): "
                                      "none"),
    }),
    Table("accelerate", "1.15.0", {
        "max_restarts": Default("accelerate launch --max_restarts", 0, None, "accelerate/commands/launch.py"),
        "mixed_precision": Default("mixed_precision", "no", None, "accelerate/commands/launch.py",
                                   note='unset in the config and on the command line: "no" (fp32)'),
    }),
    Table("nemo", "nemo_toolkit 2.5.0", {
        "create_checkpoint_callback": Default("exp_manager.create_checkpoint_callback", True, None,
                                              "nemo/utils/exp_manager.py (ExpManagerConfig)"),
        "resume_if_exists": Default("exp_manager.resume_if_exists", False, None,
                                    "nemo/utils/exp_manager.py (ExpManagerConfig)"),
        # NeMo 2 (llm.train(resume=AutoResume(...)), a recipe's resume: block): its own default,
        # not exp_manager's (read at NVIDIA/NeMo@0585ad8, unchanged in the 2.x API)
        "autoresume_if_exists": Default("resume.resume_if_exists (AutoResume)", False, None,
                                        "nemo/lightning/resume.py (AutoResume.__init__)"),
    }),
    Table("llm-foundry", "0.22.0", {
        "save_folder": Default("save_folder", None, None, "llmfoundry/utils/config_utils.py (TrainConfig)",
                               note="no folder: Composer saves no checkpoints"),
        "save_interval": Default("save_interval", "1000ba", None, "llmfoundry/utils/config_utils.py (TrainConfig)"),
        "dist_timeout": Default("dist_timeout", 600, "s", "llmfoundry/utils/config_utils.py (TrainConfig)"),
        "precision": Default("precision", "amp_bf16", None, "llmfoundry/utils/config_utils.py (TrainConfig)"),
        "console_log_interval": Default("console_log_interval", "1ba", None,
                                        "llmfoundry/utils/config_utils.py (TrainConfig)"),
    }),
    Table("olmo", "ai2-olmo 0.6.0", {
        "save_folder": Default("save_folder", "./", None, "olmo/config.py (TrainConfig)"),
        "save_interval": Default("save_interval", 1000, "steps", "olmo/config.py (TrainConfig)"),
        "precision": Default("precision", "fp32 (None)", None, "olmo/config.py (TrainConfig)"),
        "console_log_interval": Default("console_log_interval", 1, "steps", "olmo/config.py (TrainConfig)"),
        "try_load_latest_save": Default("try_load_latest_save", False, None, "olmo/config.py (TrainConfig)",
                                        note="False: a restart loads load_path (or starts from step 0), "
                                             "not the latest save"),
    }),
    Table("levanter", "1.2.dev1644", {
        "train_batch_size": Default("trainer.train_batch_size", 512, None, "levanter/trainer.py (TrainerConfig)"),
        "num_train_steps": Default("trainer.num_train_steps", 400_000, None, "levanter/trainer.py (TrainerConfig)"),
        "save_interval": Default("trainer.checkpointer.save_interval", 900, "s",
                                 "levanter/checkpoint.py (CheckpointerConfig)"),
        "mp": Default("trainer.mp", "f32", None, "levanter/trainer.py (TrainerConfig)",
                      note='jmp.get_policy("f32"): compute in fp32'),
        "load_checkpoint": Default("trainer.load_checkpoint", None, None, "levanter/trainer.py (TrainerConfig)",
                                   note="None: resume from the latest checkpoint found, if any"),
    }),
    Table("litgpt", "0.5.13", {
        "save_interval": Default("train.save_interval", 1000, "steps", "litgpt/args.py (TrainArgs)"),
        "log_interval": Default("train.log_interval", 1, "steps", "litgpt/args.py (TrainArgs)"),
    }),
    Table("torchtune", "0.6.1", {
        "log_every_n_steps": Default("log_every_n_steps", 1, "steps",
                                     "recipes/full_finetune_distributed.py (cfg.get)"),
    }),
    Table("axolotl", "0.19.0", {
        "bf16": Default("bf16", "auto", None, "axolotl/utils/schemas/config.py",
                        note="auto: bf16 where the GPU supports it"),
        "gradient_accumulation_steps": Default("gradient_accumulation_steps", 1, None,
                                               "axolotl/utils/schemas/training.py"),
    }),
    Table("skypilot", "0.14.1", {
        "num_nodes": Default("num_nodes", 1, None, "sky/task.py (Task)"),
    }),
)}


def row(key: str) -> tuple[Table, Default]:
    """``"torch.pg_nccl_timeout"`` -> its table and row (KeyError names the key)."""
    framework, _, name = key.partition(".")
    table = TABLES[framework]
    return table, table.rows[name]


def value_of(key: str) -> JSONValue:
    return row(key)[1].value


def _shown(d: Default) -> str:
    if d.value is None:
        return "None (never)" if d.unit in ("s", "steps") else "None"
    if d.value == "":
        return '""'
    if d.unit == "steps" and d.value == 1:
        return "1 step"
    if d.unit == "s":
        if d.value >= 60 and d.value % 60 == 0:
            return f"{d.value // 60:g} min ({d.value:g} s)"
        return f"{d.value:g} s"
    return f"{d.value}" + (f" {d.unit}" if d.unit else "")


_NAMES = {"nvrx": "NVIDIA Resiliency Extension", "volcano": "Volcano"}


def cite(key: str) -> str:
    """The default as a finding names it, labelled as every default is ("default of
    <framework> (not set in your files; <snapshot>)"), then the setting, its value, and the
    version and source file the table's row was read in."""
    table, d = row(key)
    if key.endswith(".logs_by_default"):
        return f"{_version(table, d)} logs by default ({d.source_file}): {d.value}"
    label = "torchrun" if d.setting.startswith("torchrun") else registry.label_of_table().get(table.framework)
    fw = _framework(label or "")
    head = (f"default of {fw[0]} ({NOT_SET}; {fw[1]})" if fw
            else f"default of {_NAMES.get(table.framework, table.framework)} ({NOT_SET})")
    note = f", {d.note}" if d.note else ""
    return f"{head}: {d.setting} = {_shown(d)} (read in {_version(table, d)}, {d.source_file}{note})"


_ROW: object = object()  # fill(): "the row's own value"


class Fills(Protocol):
    """What ``fill`` fills in: the job model (validator/jobs/model.py imports this module,
    so this one names only the method it calls)."""

    def default(self, name: str, value: JSONValue, file: str | None, source: str, line: int | None = None,
                key: str | None = None) -> None: ...


def fill(m: Fills, fact: str, key: str, file: str | None, *, value: JSONValue = _ROW, line: int | None = None,
         why: str = "") -> None:
    """Record the framework default ``key`` (a row of ``TABLES``) as ``fact``'s value where no
    file sets it: the one way a reader fills in a default, so each one is a row read in the
    framework's own source (a test scans the readers for any other). ``value``: the fact's
    value where it is derived from the row's (``save_strategy = steps`` -> checkpointing on);
    ``why`` says how; ``line``: the key that implies it (``fp16: true`` -> GradScaler)."""
    _, d = row(key)
    v = d.value if value is _ROW else value
    m.default(fact, v, file, _said(key) + why, line=line, key=key)


def _said(key: str) -> str:
    """A filled-in default as the reader records it ("hf: save_steps = 500 steps")."""
    framework = key.partition(".")[0]
    d = row(key)[1]
    return f"{registry.label_of_table().get(framework, framework)}: {d.setting} = {_shown(d)}"


def origin(key: str, file: str | None, source: str = "") -> str:
    """A filled-in default as every output shows it: :func:`cite` (framework, version, source
    file), how the fact follows from it (what ``fill`` was told, in ``source``), and where the
    user would set it."""
    why = source.removeprefix("default: ").removeprefix(_said(key))
    return f"{cite(key)}{why}{where_to_set(row(key)[1].setting, file)}"


def read_in(key: str) -> str:
    """Where a row was read ("torch 2.6.0, torch/csrc/.../ProcessGroupNCCL.cpp"), for a text that
    quotes a default without resting a value on it."""
    table, d = row(key)
    return f"{_version(table, d)}, {d.source_file}"


def _version(table: Table, d: Default) -> str:
    """"torch 2.6.0", "megatron-core 0.19.2": the package and version a row was read in."""
    version = d.version or table.version
    return f"{table.framework} {version}" if version[:1].isdigit() else version


def markdown() -> str:
    """docs/defaults.md: every table, as the findings cite them."""
    out = ["# Framework defaults the job rules rely on", "",
           "Generated by `python -m validator.jobs.defaults > docs/defaults.md` from",
           "`validator/jobs/defaults.py`; a test keeps this file equal to the tables. Each row was read",
           "in the framework's source at the version named (see `shared/reference/recovery-and-metrics.md`",
           "and the released packages). A reader fills a default in only from these rows",
           "(`defaults.fill`; `tests/jobs/test_defaults.py` scans the readers for any other), and a",
           "finding that relies on one names it: framework, version, source file.", ""]
    for t in TABLES.values():
        out += [f"## {t.framework} {t.version}", "", "| key | setting | default | read in | note |",
                "|---|---|---|---|---|"]
        for name, d in t.rows.items():
            ver = f" (at {d.version})" if d.version else ""
            out.append(f"| `{t.framework}.{name}` | `{d.setting}` | {_shown(d)}{ver} | `{d.source_file}` | "
                       f"{d.note} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":  # python -m validator.jobs.defaults > docs/defaults.md
    print(markdown(), end="")
