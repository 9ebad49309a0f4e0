"""Framework defaults are looked up, not assumed (issue 10, deliverable 4).

Every default a reader fills in for a setting the job leaves out is a row of
``validator/jobs/defaults.py`` (one table per framework, with the version and source file
it was read in), reached only through ``defaults.fill``. Three checks keep it so, driven
from the tables rather than from a list of rules:

* the readers' source holds no other way to fill a default (an AST scan: a new
  ``model.default(..., 500, ...)`` with a literal fails here), and every key they name is
  a row;
* every row is used: filled in by a reader for one of the minimal jobs below, or cited by
  the v1.1 mechanisms (failure_detection.py, metrics.py, registry.py), so a row no code reads does not linger;
* for each minimal job, which sets as little as its format allows, every default filled
  in shows in the fact's source with framework, version and source file, and every rule
  judged on such a value (or on one computed from it) says so in its finding.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import built
from validator.evaluate.engine import evaluate
from validator.jobs import defaults, read_job
from validator.jobs.model import JobModel
from validator.report.model import Status

JOBS = Path(defaults.__file__).parent

# minimal jobs, one or more per format: each leaves out the settings whose defaults it tests
CASES: dict[str, str] = {
    "hf.yaml": "output_dir: out\nfp16: true\n",
    "hf_fp32.yaml": "output_dir: out\nper_device_train_batch_size: 4\nmax_steps: 100000\n",
    "lightning.yaml": "trainer:\n  accelerator: gpu\n  devices: 8\n  precision: 16-mixed\n",
    "lightning_fp32.yaml": "trainer:\n  accelerator: gpu\n  devices: 8\n  max_steps: 100000\n",
    "nemo.yaml": "trainer:\n  devices: 8\n  num_nodes: 2\n  precision: bf16\n  max_steps: 1000\n"
                 "exp_manager:\n  explicit_log_dir: /results\nmodel:\n  micro_batch_size: 1\n"
                 "  global_batch_size: 64\n",
    # a NeMo 2 recipe: AutoResume's own default, not exp_manager's (issue 33, class 3)
    "nemo2.yaml": "trainer:\n  devices: 8\n  num_nodes: 2\n  precision: bf16-mixed\n  max_steps: 1000\n"
                  "exp_manager:\n  explicit_log_dir: /results\nresume:\n  resume_ignore_no_checkpoint: true\n"
                  "model:\n  micro_batch_size: 1\n",
    "train.toml": '[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\nflavor = "8B"\n\n'
                  "[training]\nsteps = 1000\nlocal_batch_size = 1\n",
    "train_ckpt.toml": '[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\nflavor = "8B"\n\n'
                       "[training]\nsteps = 1000\nlocal_batch_size = 1\n\n[checkpoint]\nenable = true\n",
    "run.sh": "#!/bin/bash\ntorchrun pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64\n",
    "ft.sh": "#!/bin/bash\n#SBATCH --nodes=1\nft_launcher --nproc-per-node 8 pretrain_gpt.py --micro-batch-size 1 "
             "--global-batch-size 64 --bf16\n",
    "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=24:00:00\n"
                  "srun python pretrain_gpt.py --micro-batch-size 1 --global-batch-size 64 --bf16\n",
    "ds.json": '{"train_batch_size": 64}\n',
    "ds.sh": "#!/bin/bash\ndeepspeed --num_gpus 8 train.py --deepspeed ds.json\n",
    "acc.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\n"
                "num_processes: 8\n",
    "acc.sh": "#!/bin/bash\naccelerate launch --num_processes 8 train.py\n",
    "foundry.yaml": "max_seq_len: 2048\nmodel:\n  name: mpt_causal_lm\n  d_model: 768\ntokenizer:\n"
                    "  name: EleutherAI/gpt-neox-20b\noptimizer:\n  name: decoupled_adamw\n  lr: 6.0e-4\n"
                    "max_duration: 4800ba\nglobal_train_batch_size: 256\ndevice_train_microbatch_size: 16\n"
                    "train_loader:\n  name: text\n",
    "foundry_save.yaml": "max_seq_len: 2048\nmodel:\n  name: mpt_causal_lm\ntokenizer:\n  name: gpt2\n"
                         "optimizer:\n  name: decoupled_adamw\n  lr: 6.0e-4\nmax_duration: 4800ba\n"
                         "global_train_batch_size: 256\nsave_folder: s3://bucket/ckpt\ntrain_loader:\n  name: text\n",
    # OLMo-1B's model block: d_model/n_heads are MPT's too, mlp_ratio/weight_tying OLMo's alone
    "olmo.yaml": "run_name: OLMo-1B\nmodel:\n  d_model: 2048\n  n_heads: 16\n  mlp_ratio: 8\n"
                 "  weight_tying: true\noptimizer:\n  name: adamw\n"
                 "  learning_rate: 4.0e-4\nglobal_train_batch_size: 2048\ndevice_train_microbatch_size: 8\n"
                 "max_duration: 739_328\ndata:\n  paths: []\ntokenizer:\n  identifier: tokenizers/t.json\n",
    "lev.yaml": "data:\n  id: dlwh/wikitext_103_detokenized\nmodel:\n  type: gpt2\n  hidden_dim: 768\n"
                "trainer:\n  tracker:\n    type: wandb\n  per_device_parallelism: 4\noptimizer:\n"
                "  learning_rate: 6e-4\n",
    "litgpt.yaml": "model_name: pythia-160m\nout_dir: out/pretrain\nprecision: 16-mixed\ndata: TinyStories\n"
                   "train:\n  micro_batch_size: 4\n  global_batch_size: 64\n  max_tokens: 3000000000\n",
    "tune.yaml": "output_dir: /tmp/out\ntokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n"
                 "  path: /tmp/tokenizer.model\nmodel:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                 "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\nbatch_size: 2\nepochs: 1\n",
    "axo.yaml": "base_model: NousResearch/Meta-Llama-3-8B\ndatasets:\n  - path: tatsu-lab/alpaca\n"
                "    type: alpaca\nsequence_len: 4096\nmicro_batch_size: 1\nnum_epochs: 1\n"
                "learning_rate: 2e-5\noptimizer: adamw_torch\n",
    "axo_fp16.yaml": "base_model: NousResearch/Meta-Llama-3-8B\ndatasets:\n  - path: tatsu-lab/alpaca\n"
                     "    type: alpaca\nmicro_batch_size: 1\nfp16: true\nbf16: false\n",
    "sky.yaml": "resources:\n  accelerators: H100:8\nsetup: pip install torch\n"
                "run: torchrun --nproc-per-node 8 train.py\n",
    "tf.yaml": "task:\n  model:\n    num_classes: 1000\n  train_data:\n    global_batch_size: 4096\n"
               "    input_path: gs://x\ntrainer:\n  train_steps: 1000\n  checkpoint_interval: 500\n"
               "runtime:\n  distribution_strategy: mirrored\n  num_gpus: 8\n",
    "mt.yml": 'base_config: "base.yml"\nrun_name: test\nmodel_name: llama2-7b\n',
}


def _nodes(path: Path) -> dict[str, Any]:
    """The node count fact ``lint`` reads from the job file at ``path``."""
    return read_job([path], None)[0]["facts"]["job.resources.nodes"]


def test_operator_pod_counts_left_out_are_the_operators_defaults(tmp_path: Path) -> None:
    """A Kubeflow PyTorchJob (or TFJob, ...) replica spec without replicas has 1 (the training
    operator's default), an MPIJob's Worker 0; a KubeRay worker group without replicas has 0 (the CRD's default), not 1; a
    JobSet replicated job without replicas has 1 (the CRD's default), and its Job template
    without parallelism 1 pod (Kubernetes' batch/v1 defaulting)."""
    p = tmp_path / "job.yaml"
    p.write_text("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: t\nspec:\n"
                 "  pytorchReplicaSpecs:\n    Master:\n      template:\n        spec:\n          containers:\n"
                 "          - name: pytorch\n            image: x\n    Worker:\n      replicas: 3\n"
                 "      template:\n        spec:\n          containers:\n          - name: pytorch\n"
                 "            image: x\n")
    nodes = _nodes(p)
    assert nodes["value"] == 4 and defaults.cite("kubeflow.replicas") in nodes["source"], nodes
    mpi = ("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: m\nspec:\n  mpiReplicaSpecs:\n"
           "    Launcher:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
           "          - name: l\n            image: x\n    Worker:\n      template:\n        spec:\n"
           "          containers:\n          - name: w\n            image: x\n")
    p.write_text(mpi)  # an MPIJob's workers left out are 0, not 1: no GPU pod at all
    nodes = _nodes(p)
    assert nodes["value"] is None, nodes
    p.write_text(mpi.replace("kind: MPIJob", "kind: TFJob").replace("mpiReplicaSpecs", "tfReplicaSpecs"))
    nodes = _nodes(p)
    assert nodes["value"] == 2 and defaults.cite("kubeflow.replicas") in nodes["source"], nodes
    p.write_text("apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: r\nspec:\n  entrypoint: python t.py\n"
                 "  rayClusterSpec:\n    headGroupSpec:\n      template:\n        spec:\n          containers:\n"
                 "          - name: head\n            image: x\n    workerGroupSpecs:\n    - groupName: gpu\n"
                 "      template:\n        spec:\n          containers:\n          - name: w\n            image: x\n")
    nodes = _nodes(p)
    assert nodes["value"] == 1 and defaults.cite("kuberay.worker_replicas") in nodes["source"], nodes
    p.write_text("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: j\nspec:\n"
                 "  replicatedJobs:\n  - name: w\n    template:\n      spec:\n        parallelism: 2\n"
                 "        template:\n          spec:\n            containers:\n            - name: t\n"
                 "              image: x\n")
    nodes = _nodes(p)
    assert nodes["value"] == 2 and defaults.cite("jobset.replicas") in nodes["source"], nodes
    assert "SetDefaults_Job" not in nodes["source"]  # parallelism was set
    p.write_text(p.read_text().replace("        parallelism: 2\n", ""))
    nodes = _nodes(p)
    assert nodes["value"] == 1 and defaults.cite("kubernetes.job_parallelism") in nodes["source"], nodes


VOLCANO = ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: v\nspec:\n  minAvailable: 1\n"
           "  schedulerName: volcano\n  tasks:\n  - name: master\n    replicas: 1\n    template:\n      spec:\n"
           "        containers:\n        - name: m\n          image: x\n  - name: worker\n    template:\n"
           "      spec:\n        containers:\n        - name: w\n          image: x\n")


def test_a_volcano_task_without_replicas_runs_no_pod(tmp_path: Path) -> None:
    """Volcano defaults no task's replicas (TaskSpec.Replicas is a plain int32: the CRD, the
    mutating webhook and the controller leave it 0, and the controller creates that many
    pods), so a worker task that leaves it out adds no pod: the job is its master alone, and
    the node count says which task was defaulted and where that was read. It used to count 1."""
    p = tmp_path / "vcjob.yaml"
    p.write_text(VOLCANO)
    nodes = _nodes(p)
    assert nodes["value"] == 1, nodes
    assert f"tasks[1]: {defaults.cite('volcano.task_replicas')}" in nodes["source"], nodes
    assert "tasks[0]" not in nodes["source"]  # the master set its replicas
    p.write_text(VOLCANO.replace("    replicas: 1\n", "    replicas: 3\n").replace(
        "  - name: worker\n", "  - name: worker\n    replicas: 4\n"))
    nodes = _nodes(p)
    assert nodes["value"] == 7 and "volcano" not in nodes["source"].lower().replace("volcano job", ""), nodes
    p.write_text(VOLCANO.replace("    replicas: 1\n", ""))  # no task sets replicas: no pod at all
    nodes = _nodes(p)
    assert nodes["value"] is None, nodes


# the formats the cases must be read as (a case read as another format tests nothing)
FORMATS = {"hf.yaml": "hf_trainer", "lightning.yaml": "lightning", "nemo.yaml": "nemo", "nemo2.yaml": "nemo", "train.toml": "torchtitan",
           "run.sh": "megatron", "job.sbatch": "slurm", "ds.json": "deepspeed", "ds.sh": "deepspeed_launcher",
           "acc.yaml": "accelerate", "foundry.yaml": "llmfoundry", "foundry_save.yaml": "llmfoundry", "olmo.yaml": "olmo", "lev.yaml": "levanter",
           "litgpt.yaml": "litgpt", "tune.yaml": "torchtune", "axo.yaml": "axolotl", "sky.yaml": "skypilot",
           "tf.yaml": "tf_model_garden", "mt.yml": "maxtext"}


# rows no reader fills and no rule relies on: read in the framework's source to say why a
# setting is not counted, so that docs/defaults.md shows the value the tool chose not to assume
DOCUMENTED = {
    "torch.enable_timing": "per-collective timing is off unless TORCH_NCCL_ENABLE_TIMING=1 (MON-01 text)",
    "torch.heartbeat_timeout_sec": "guards the NCCL watchdog thread, not a GPU: not a hang detector (REC-02)",
    "torchtitan.init_timeout": "the rendezvous timeout, not the training collective timeout (REC-02)",
    "tfmg.summary_interval": "a registered experiment may override it: the reader says 'inherited', not 1000",
}


def _read(tmp_path: Path, name: str) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The job document of one case, and the (fact, table key) of every default filled in."""
    filled: list[tuple[str, str]] = []
    original = JobModel.default

    def recording(self: JobModel, name: str, value: Any, file: str | None, source: str,
                  line: int | None = None, key: str | None = None) -> None:
        if name not in self.entries and value is not None and key is not None:
            filled.append((name, key))
        original(self, name, value, file, source, line=line, key=key)

    p = tmp_path / name
    p.write_text(CASES[name])
    JobModel.default = recording  # type: ignore[method-assign]
    try:
        doc = read_job([p], None, step_time_s=2.0)[0]
    finally:
        JobModel.default = original  # type: ignore[method-assign]
    return doc, filled


def _rows() -> set[str]:
    return {f"{t}.{r}" for t, table in defaults.TABLES.items() for r in table.rows}


def test_readers_fill_defaults_only_from_the_tables() -> None:
    """No reader module calls ``JobModel.default`` itself (a literal default would hide there);
    every key a module hands to ``fill``, ``value_of`` or ``cite`` is a row of a table."""
    rows, offenders = _rows(), []
    for path in sorted(JOBS.glob("*.py")):
        if path.name == "defaults.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            args = node.args
            if name == "default" and isinstance(func, ast.Attribute):
                first = args[0] if args else None
                # the model's own inference (no energy logging found) is no framework's default
                if not (path.name == "model.py" and isinstance(first, ast.Constant)
                        and first.value == "job.metrics.energy"):
                    offenders.append(f"{path.name}:{node.lineno}: JobModel.default() outside defaults.fill")
            key = (args[2] if name == "fill" and len(args) > 2 else
                   args[0] if name in ("value_of", "cite") and args else None)
            if isinstance(key, ast.Constant) and key.value not in rows:
                offenders.append(f"{path.name}:{node.lineno}: {key.value!r} is no row of defaults.TABLES")
    assert not offenders, "\n".join(offenders)


def test_every_table_row_is_read_by_a_reader_or_a_mechanism(tmp_path: Path) -> None:
    used: set[str] = set()
    for name in CASES:
        used |= {k for _, k in _read(tmp_path, name)[1]}
    from validator.jobs import failure_detection as detection
    from validator.jobs import registry

    rows = _rows()
    for path in JOBS.glob("*.py"):  # the keys the modules name (the v1.1 mechanisms cite theirs)
        if path.name != "defaults.py":
            used |= set(re.findall(r'["\']([\w-]+\.\w+)["\']', path.read_text())) & rows
    used |= {k for _, k in detection.collective_defaults()} | {
        f.metrics.by_default[1] for f in registry.FORMATS if f.metrics and f.metrics.by_default}
    # MaxText's base.yml keys the reader looks up without filling a fact (run_name, model_name)
    maxtext = (JOBS / "maxtext.py").read_text()
    axes = [f"{a}_{x}_parallelism" for a in ("ici", "dcn") for x in ("tensor", "pipeline", "context")]
    used |= {f"maxtext.{k}" for k in defaults.MAXTEXT_BASE
             if f'"{k}"' in maxtext or (k in axes and 'f"dcn_{axis}_parallelism"' in maxtext)}
    unused = sorted(rows - used - set(DOCUMENTED))
    assert not unused, f"rows no reader fills and no mechanism cites (add a case above or drop them): {unused}"
    assert set(DOCUMENTED) <= rows


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_job_that_sets_nothing_names_each_default_with_version_and_source(tmp_path: Path, name: str) -> None:
    doc, filled = _read(tmp_path, name)
    if name in FORMATS:
        assert FORMATS[name] in doc["facts"]["job.formats"]["value"], doc["facts"]["job.formats"]
    assert filled, f"{name}: no default filled in"
    facts = doc["facts"]
    for fact, key in filled:
        table, row = defaults.row(key)
        source = facts[fact]["source"]
        # framework, version and source file, as cite() writes them
        assert defaults.cite(key) in source, (fact, key, source)
        assert row.source_file in source and (row.version or table.version) in source
    # every rule judged on such a value, or on one computed from it, names the default
    doc = {k: v for k, v in doc.items() if k != "errors"}
    judged = 0
    for version in ("1.0", "1.1"):
        b = built(rules_version=version)
        rules = {r.id: r for r in b.pack.rules}
        for f in evaluate(b.ctx, b.pack, [doc]):
            fact = facts.get(rules[f.rule].fact) if f.rule in rules else None
            if f.status not in (Status.PASS, Status.FAIL, Status.WARN) or fact is None:
                continue
            if f.source != fact.get("source"):  # judged on another fact (a short run: CKPT-01's when)
                continue
            if "default of " in str(fact.get("source")) and "(read in " in str(fact.get("source")):
                judged += 1
                assert "default of " in f.message and "(read in " in f.message, (f.rule, f.message)
                assert (f.observed or "").count("default of ") == 1, (f.rule, f.observed)
    assert judged, f"{name}: no rule judged a default"


def test_deepspeed_infers_the_accumulation_from_both_batch_sizes(tmp_path: Path) -> None:
    """DeepSpeed sets gradient_accumulation_steps to 1 only when one batch size is given; with
    both it infers train // (micro x dp) (runtime/config.py), so no default is filled in."""
    p = tmp_path / "ds.json"
    p.write_text('{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}\n')
    facts = read_job([p], None)[0]["facts"]
    assert facts["job.batch.accumulation"]["value"] is None and facts["job.batch.rule"]["value"] == "divisible"
    p.write_text('{"train_micro_batch_size_per_gpu": 4}\n')
    acc = read_job([p], None)[0]["facts"]["job.batch.accumulation"]
    assert acc["value"] == 1 and defaults.cite("deepspeed.gradient_accumulation_steps") in acc["source"]
