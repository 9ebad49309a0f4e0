"""Formats known by evidence: key catalogues generated from the frameworks' source,
detection by scoring (and refusal), PREC-02's catalogue-driven ignored keys, and the
readers of the formats users hand spec-check next, on real public files
(tests/jobs/formats/MANIFEST.tsv: repository, pinned commit, path)."""

from __future__ import annotations

import csv
import importlib.util
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.jobs.util import CORPUS, facts, line, spec_check, value
from validator.jobs import format_detection as detect
from validator.jobs import read_job
from validator.jobs.keys import catalogue, names

HERE = Path(__file__).resolve().parent / "formats"
ROOT = Path(__file__).resolve().parents[2]


def _manifest() -> list[dict[str, str]]:
    with (HERE / "MANIFEST.tsv").open() as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


ROWS = _manifest()
# format (manifest) -> the name the job model records
FORMAT_NAMES = {"kubernetes": None, "pytorchjob": "pytorchjob", "lightning": "lightning", "hf": "hf_trainer"}


# -- catalogues ---------------------------------------------------------------------------


def test_every_catalogue_says_where_it_came_from() -> None:
    assert len(names()) >= 13
    for name in names():
        raw = json.loads((ROOT / "validator/jobs/keys" / f"{name}.json").read_text())
        assert raw["framework"] == name
        assert raw["version"] and raw["package"]
        assert raw["generated_by"] == "scripts/gen_key_catalogues.py"
        # a published package pinned by version, or a repository file pinned by commit
        assert raw["sources"] and all(
            s.startswith((f"{raw['package']}==", *(f"{a}:" for a in raw["also"]), f"{raw['package']}@"))
            for s in raw["sources"]
        ), raw["sources"]
        assert raw["sections"][""], name


def test_catalogues_hold_the_frameworks_real_keys() -> None:
    ds = catalogue("deepspeed")
    assert ds is not None
    assert {"loss_scale", "loss_scale_window", "hysteresis", "min_loss_scale"} <= ds.sections["fp16"]
    assert "loss_scale" not in ds.sections["bf16"] and "enabled" in ds.sections["bf16"]
    assert {"train_batch_size", "zero_optimization", "steps_per_print"} <= ds.top()
    hf = catalogue("hf")
    assert hf is not None and {"per_device_train_batch_size", "save_steps", "ddp_timeout"} <= hf.top()
    tt = catalogue("torchtitan")
    assert tt is not None and {"local_batch_size", "steps"} <= tt.sections["training"]
    lt = catalogue("lightning")
    assert lt is not None and {"precision", "devices", "num_nodes"} <= lt.sections["trainer"]
    ax = catalogue("axolotl")
    assert ax is not None and {"micro_batch_size", "bf16", "saves_per_epoch"} <= ax.top()
    lv = catalogue("levanter")
    assert lv is not None and {"mp", "train_batch_size"} <= lv.sections["trainer"]


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_key_catalogues", ROOT / "scripts/gen_key_catalogues.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generator_reads_classes_and_recipes_without_importing(tmp_path: Path) -> None:
    """The script reads a wheel's source with ast: dataclass fields through bases in other
    files, fields typed as classes become sections, a recipe's cfg reads are keys."""
    whl = tmp_path / "fw-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("fw/base.py", "class Base:\n    seed: int = 0\n    _private: int = 1\n")
        z.writestr(
            "fw/config.py",
            "import missing_heavy_dependency\n"
            "from fw.base import Base\n"
            "class Training:\n    steps: int = 10\n    dtype: str = 'bf16'\n"
            "class Job(Base):\n    training: Training = None\n    name: str = 'x'\n"
            "    KIND: 'ClassVar[str]' = 'job'\n",
        )
        z.writestr("recipes/run.py", "def f(cfg):\n    a = cfg.get('log_every_n_steps', 1)\n    b = cfg.dtype\n")
    gen = _generator()
    pkg = gen.Package("fw", "1.0", whl)
    fields = gen.class_fields(pkg, "Job", ["fw/config.py"])
    assert set(fields) == {"seed", "training", "name"}
    sections = gen.sectioned(pkg, fields, ["fw/config.py"])
    assert sections[""] == ["name", "seed", "training"]
    assert sections["training"] == ["dtype", "steps"]
    assert gen.reads_of(pkg, ["recipes/run.py"], "cfg") == {"log_every_n_steps", "dtype"}
    assert "fw/base.py" in pkg.used


# -- detection ----------------------------------------------------------------------------


@pytest.mark.parametrize("row", ROWS, ids=[r["local_file"].rsplit("/", 1)[-1][:60] for r in ROWS])
def test_public_files_are_read_as_their_own_format(row: dict[str, str]) -> None:
    """Each file is read as its own format; a file of a format spec-check does not read
    (nanotron's config, CI workflows) is refused with exit 2, never misread."""
    if row["format"] == "refused":
        r = spec_check("lint", str(HERE / row["local_file"]))
        assert r.returncode == 2, r.stdout[-500:]
        assert "no format explains its keys well (closest: " in r.stderr and "--kind" in r.stderr
        assert r.stderr.count("\n") == 1  # one line, no traceback
        # in a directory (not named on the command line) it is passed over, not an error
        (doc,) = read_job([HERE / row["local_file"]], strict=False)
        assert doc["errors"] == [] and value(doc, "job.files") == []
        return
    doc = facts(HERE / row["local_file"])
    # a launch line naming a config this job cannot read (SkyPilot's `tune run --config
    # /configs/${MODEL_SIZE}-lora.yaml`, a mount) says so; nothing else may be an error
    assert [e for e in doc["errors"] if not e["message"].endswith("the config is not read")] == []
    fmt = value(doc, "job.formats")
    want = FORMAT_NAMES.get(row["format"], row["format"])
    if want is None:  # a Kubernetes kind: recorded by its kind's name
        assert {"mpijob", "tfjob", "jobset", "rayjob", "volcano-job"} & set(fmt), fmt
    else:
        assert want in fmt, fmt
    # HF TrainingArguments is claimed by HF files only (a recipe's output_dir no longer
    # makes a torchtune or axolotl file an HF one)
    assert ("hf_trainer" in fmt) == (row["format"] == "hf"), fmt


@pytest.mark.parametrize(
    "fmt, name, mode, line_no",
    [
        ("torchtune", "llama3_1__70B_full", "bf16", 92),
        ("axolotl", "fft-8b", "bf16", 29),
        ("levanter", "gpt2_small", "bf16", 16),
        ("levanter", "llama2_7b", "bf16", 73),
        ("litgpt", "tinyllama", "bf16", 14),
        ("llmfoundry", "mpt-125m", "bf16", 88),
        ("olmo", "OLMo-1B", "bf16", 73),
    ],
)
def test_each_recipe_format_gets_its_own_precision(fmt: str, name: str, mode: str, line_no: int) -> None:
    """Read as HF TrainingArguments or Lightning these were "fp32" (another framework's
    default); their own readers find bf16 at the line that says so."""
    (path,) = [p for p in (HERE / fmt).iterdir() if name in p.name]
    doc = facts(path)
    assert value(doc, "job.precision.mode") == mode
    assert line(doc, "job.precision.mode") == line_no


def test_torchtune_axolotl_levanter_pass_prec01_end_to_end() -> None:
    paths = [next((HERE / f).iterdir()) for f in ("torchtune", "axolotl", "levanter")]
    for p in paths:
        r = spec_check("lint", "--format", "json", str(p))
        assert r.returncode in (0, 1), r.stderr
        res = json.loads(r.stdout)
        prec = [f for f in res["findings"] if f["rule"] == "PREC-01.full-precision-training"]
        assert [f["status"] for f in prec] == ["pass"], p


def test_a_file_no_format_explains_is_refused_naming_the_closest(tmp_path: Path) -> None:
    p = tmp_path / "compose.yaml"
    p.write_text("version: '3'\nservices:\n  web:\n    image: nginx\nvolumes:\n  data: {}\n")
    r = spec_check("lint", str(p))
    assert r.returncode == 2
    assert "no format explains its keys well" in r.stderr and "--kind" in r.stderr
    assert "Traceback" not in r.stderr
    # half-explained: a few HF keys among many foreign ones names HF as the closest
    q = tmp_path / "mixed.yaml"
    q.write_text("learning_rate: 1e-4\nfoo_a: 1\nfoo_b: 2\nfoo_c: 3\nfoo_d: 4\n")
    r = spec_check("lint", str(q))
    assert r.returncode == 2 and "closest: " in r.stderr and "keys known" in r.stderr


def test_hf_recipe_stays_hf_and_markers_still_win() -> None:
    data = {"per_device_train_batch_size": 4, "output_dir": "x", "bf16": True, "logging_steps": 10}
    assert detect.kind_of_tree("yaml", data) == "hf"
    assert detect.kind_of_tree("yaml", {"distributed_type": "MULTI_GPU", "num_processes": 8}) == "accelerate"
    # an axolotl file with HF-looking keys is axolotl by evidence
    ax = {"base_model": "m", "micro_batch_size": 1, "output_dir": "o", "bf16": "auto", "datasets": []}
    assert detect.kind_of_tree("yaml", ax) == "axolotl"


def test_hydra_trainer_group_file_is_read_as_the_trainer() -> None:
    doc = facts(HERE / "hydra/trainer/ddp.yaml")
    assert value(doc, "job.formats") == ["lightning"]
    assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (4, 7)
    assert (value(doc, "job.resources.nodes"), line(doc, "job.resources.nodes")) == (1, 8)


# -- Kubernetes ---------------------------------------------------------------------------

TEMPLATE = HERE / "kubernetes/aws-samples__awsome-distributed-training__3.test_cases__pytorch__FSDP__kubernetes__fsdp.yaml-template"


def test_yaml_template_manifest_is_read_as_a_manifest() -> None:
    doc = facts(TEMPLATE)
    assert "pytorchjob" in value(doc, "job.formats")
    assert (value(doc, "job.recovery.max_restarts"), line(doc, "job.recovery.max_restarts")) == (100, 10)
    assert any("NCCL_DEBUG=INFO" in d for d in value(doc, "job.comm.nccl_discouraged"))
    assert "NCCL_DEBUG=INFO" in value(doc, "job.comm.env")


def test_multi_document_manifest_with_a_service_first(tmp_path: Path) -> None:
    p = tmp_path / "job.yaml"
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: etcd\nspec:\n  ports:\n    - port: 2379\n---\n"
    p.write_text(service + TEMPLATE.read_text())
    doc = facts(p)
    assert doc["errors"] == []
    assert "pytorchjob" in value(doc, "job.formats")
    # lines are the file's own: the PyTorchJob starts 8 lines down
    assert (value(doc, "job.recovery.max_restarts"), line(doc, "job.recovery.max_restarts")) == (100, 18)
    r = spec_check("lint", "--format", "json", str(p))
    assert r.returncode in (0, 1), r.stderr


def test_training_kinds_replicas_and_restarts() -> None:
    mpi = facts(next((HERE / "kubernetes").glob("kubeflow__mpi-operator*")))
    assert value(mpi, "job.resources.nodes") == 2  # workers; the launcher runs no rank
    vol = facts(next((HERE / "kubernetes").glob("volcano-sh*")))
    assert value(vol, "job.resources.nodes") == 3 and value(vol, "job.recovery.auto_restart") is True
    assert "shell" in value(vol, "job.formats")  # the sh -c script went through the shell reader
    js = facts(next((HERE / "kubernetes").glob("kubernetes-sigs__jobset*")))
    assert value(js, "job.resources.nodes") == 4 and "torchrun" in value(js, "job.formats")


def test_skypilot_task_envs_and_run_script(tmp_path: Path) -> None:
    p = tmp_path / "task.yaml"
    p.write_text(
        "num_nodes: 2\nresources:\n  accelerators: H100:8\nenvs:\n  NCCL_DEBUG: INFO\n"
        "run: |\n  torchrun --nnodes=2 --nproc_per_node=8 --max-restarts=3 train.py\n"
    )
    doc = facts(p)
    assert value(doc, "job.resources.nodes") == 2 and value(doc, "job.resources.gpus_per_node") == 8
    assert "NCCL_DEBUG=INFO" in value(doc, "job.comm.env")
    assert (value(doc, "job.recovery.max_restarts"), line(doc, "job.recovery.max_restarts")) == (3, 7)


# -- PREC-02 from the catalogues --------------------------------------------------------------


def test_deepspeed_bf16_block_with_fp16_loss_scale_keys(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(
        '{\n  "train_micro_batch_size_per_gpu": 4,\n  "bf16": {\n    "enabled": true,\n'
        '    "loss_scale": 0,\n    "loss_scale_window": 1000,\n    "hysteresis": 2,\n'
        '    "min_loss_scale": 1,\n    "initial_scale_power": 16\n  },\n'
        '  "zero_optimization": {"stage": 2, "overlap_com": true},\n  "steps_per_prnt": 10\n}\n'
    )
    doc = facts(p)
    keys = value(doc, "job.config.ignored_keys")
    for k, ln in (("loss_scale", 5), ("loss_scale_window", 6), ("hysteresis", 7),
                  ("min_loss_scale", 8), ("initial_scale_power", 9)):
        assert any(x.startswith(f"bf16.{k} at line {ln}: an fp16 loss-scaling key") for x in keys), k
    assert any("overlap_com at line 11" in x and "did you mean overlap_comm?" in x for x in keys)
    assert any("steps_per_prnt at line 12" in x and "did you mean steps_per_print?" in x for x in keys)
    assert line(doc, "job.config.ignored_keys") == 5
    r = spec_check("lint", "--format", "json", str(p))
    res = json.loads(r.stdout)
    (f,) = [f for f in res["findings"] if f["rule"] == "PREC-02.ignored-config-keys"]
    assert f["status"] == "fail" and f["location"]["line"] == 5


def test_clean_deepspeed_configs_have_no_catalogue_findings() -> None:
    """The shared corpus' DeepSpeed files (real, working configs) gain no false claims."""
    corpus = Path("/work/shared/corpus/deepspeed_json")
    if not corpus.is_dir():
        pytest.skip("shared corpus not present")
    for p in sorted(corpus.iterdir()):
        keys = value(facts(p), "job.config.ignored_keys")
        assert not [k for k in keys if "deepspeed 0." in k], (p.name, keys)


def test_strict_sections_of_lightning_accelerate_skypilot(tmp_path: Path) -> None:
    """Where the framework refuses unknown keys, any unknown key is reported; a typo names
    the key meant."""
    lt = tmp_path / "cli.yaml"
    # (gpus: is Lightning 1.x's: with no version pinned it is no failure, tests/jobs/test_pins.py)
    lt.write_text("trainer:\n  precison: bf16-mixed\n  max_steps: 10\n  gpu_count: 8\n  accelerator: gpu\nmodel:\n  lr: 1\n")
    keys = value(facts(lt), "job.config.ignored_keys")
    assert any(k.startswith("trainer.precison at line 2") and "did you mean precision?" in k for k in keys)
    assert any(k.startswith("trainer.gpu_count at line 4") and "TypeError" in k for k in keys)
    assert not any("model." in k or "max_steps" in k for k in keys)  # model: is free-form
    acc = tmp_path / "acc.yaml"
    acc.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n"
                   "mixed_precision: bf16\nnum_proceses: 8\n")
    keys = value(facts(acc), "job.config.ignored_keys")
    assert keys == [k for k in keys if "num_proceses at line 5" in k and "did you mean num_processes?" in k]
    # a deepspeed_config key written at the top level: misplaced, and refused there
    acc.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_processes: 8\n"
                   "zero_stage: 2\n")
    (k,) = value(facts(acc), "job.config.ignored_keys")
    assert k.startswith("zero_stage at line 4: not a key of the top level but of deepspeed_config")
    assert "accelerate launch refuses a config file with unknown keys" in k
    sky = tmp_path / "sky.yaml"
    sky.write_text("num_nodes: 2\nresources:\n  accelerators: H100:8\nrun: echo hi\nnodes: 4\n")
    keys = value(facts(sky), "job.config.ignored_keys")
    assert len(keys) == 1 and keys[0].startswith("nodes at line 5") and "sky launch refuses" in keys[0]


def test_a_trainer_block_alone_is_not_lightning(tmp_path: Path) -> None:
    p = tmp_path / "exp.yaml"
    p.write_text("trainer:\n  epochs_total: 3\n  lr_policy: step\n  snapshot_every: 10\n")
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "closest:" in r.stderr


def test_kind_forces_a_new_format(tmp_path: Path) -> None:
    """--kind names any format, the new ones included: a torchtune recipe of a recipe's
    own keys only (too few to score) is read as torchtune when told."""
    p = tmp_path / "tiny.yaml"
    p.write_text("dtype: bf16\nbatch_size: 4\n")
    doc = facts(p, kind="torchtune")
    assert value(doc, "job.formats") == ["torchtune"]
    assert (value(doc, "job.precision.mode"), line(doc, "job.precision.mode")) == ("bf16", 1)


def test_a_broken_recipe_stays_an_error_under_ignore_unknown(tmp_path: Path) -> None:
    """--ignore-unknown passes over files of no known format that do not parse, but a
    torchtune recipe (``_component_``) with a YAML error is a job config: an error."""
    p = tmp_path / "recipe.yaml"
    p.write_text("dtype: bf16\nmodel:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: [2\n")
    r = spec_check("lint", "--ignore-unknown", "--format", "json", str(p))
    assert r.returncode == 1 and '"LINT-00.unreadable-config"' in r.stdout, (r.returncode, r.stderr)
    # the same broken text without a recipe's key names is no job config: passed over
    p.write_text("dtyp: bf16\nmodel:\n  foo: x\nbatch_size: [2\n")
    r = spec_check("lint", "--ignore-unknown", "--format", "json", str(p))
    assert r.returncode == 0 and "LINT-00" not in r.stdout


def test_nemo_exp_manager_typo(tmp_path: Path) -> None:
    p = tmp_path / "nemo.yaml"
    p.write_text("trainer:\n  devices: 8\nexp_manager:\n  create_checkpoint_callbak: true\nmodel:\n"
                 "  micro_batch_size: 1\n  tensor_model_parallel_size: 2\n")
    keys = value(facts(p), "job.config.ignored_keys")
    assert any(k.startswith("exp_manager.create_checkpoint_callbak at line 4")
               and "did you mean create_checkpoint_callback?" in k for k in keys), keys


def test_hf_trainer_state_json_is_not_a_deepspeed_config(tmp_path: Path) -> None:
    """HF's trainer_state.json has DeepSpeed's marker key train_batch_size among keys
    DeepSpeed never reads: refused, not linted as a DeepSpeed config."""
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({
        "best_metric": None, "best_model_checkpoint": None, "epoch": 3.0, "eval_steps": 500,
        "global_step": 1500, "is_hyper_param_search": False, "is_local_process_zero": True,
        "is_world_process_zero": True, "log_history": [], "logging_steps": 10, "max_steps": 1500,
        "num_train_epochs": 3, "save_steps": 500, "total_flos": 1.0, "train_batch_size": 8,
        "trial_name": None, "trial_params": None,
    }, indent=2))
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "closest: hf (" in r.stderr and "deepspeed (1 of 17 keys known)" in r.stderr


def test_a_manifest_without_a_training_resource_says_so(tmp_path: Path) -> None:
    p = tmp_path / "svc.yaml"
    p.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: etcd\n---\n"
                 "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "Kubernetes Service, Deployment: no training resource (one of JAXJob" in r.stderr
    p.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: etcd\n")
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "a Kubernetes Service, not a training resource (one of JAXJob" in r.stderr


def test_litgpt_save_interval_default_and_null(tmp_path: Path) -> None:
    """TrainArgs.save_interval is 1000 unless set; null saves only the final weights."""
    p = tmp_path / "pretrain.yaml"
    p.write_text("precision: bf16-mixed\ntrain:\n  micro_batch_size: 4\n  global_batch_size: 512\n")
    doc = facts(p, kind="litgpt")
    assert value(doc, "job.checkpoint.interval_steps") == 1000
    assert "litgpt" in doc["facts"]["job.checkpoint.interval_steps"]["source"]
    assert doc["facts"]["job.checkpoint.interval_steps"]["source"].startswith(("default: ", "default of "))
    p.write_text("precision: bf16-mixed\ntrain:\n  micro_batch_size: 4\n  save_interval: null\n")
    doc = facts(p, kind="litgpt")
    assert (value(doc, "job.checkpoint.enabled"), line(doc, "job.checkpoint.enabled")) == (False, 4)


def test_axolotl_accumulation_from_batch_size(tmp_path: Path) -> None:
    p = tmp_path / "ax.yaml"
    p.write_text("base_model: m\ndatasets: []\nmicro_batch_size: 2\nbatch_size: 16\n")
    doc = facts(p, kind="axolotl")
    assert (value(doc, "job.batch.accumulation"), line(doc, "job.batch.accumulation")) == (8, 4)
    assert value(doc, "job.precision.mode") == "bf16"  # bf16: auto, axolotl's schema default


# file (a fragment of its name) -> {fact: (value, line)}; line None: a framework default
FACTS: dict[str, dict[str, tuple[Any, int | None]]] = {
    "llama3_1__70B_full": {
        "job.batch.micro": (2, 63), "job.batch.accumulation": (1, 76),
        "job.checkpoint.enabled": (True, 51), "job.checkpoint.resume": (False, 60),
        "job.logging.interval_steps": (1, 98), "job.logging.sinks": (["disk"], 95),
        "job.recovery.detection_timeout": (600, None),
    },
    "fft-8b": {
        "job.batch.micro": (1, 23), "job.batch.accumulation": (8, 22),
        "job.checkpoint.enabled": (True, 41), "job.logging.interval_steps": (1, 36),
        "job.recovery.detection_timeout": (1800, None),
    },
    "llama2_7b": {
        "job.batch.global": (1024, 109), "job.batch.micro": (2, 77),
        "job.checkpoint.interval_time": (600.0, 60), "job.checkpoint.resume": (True, None),
        "job.train_steps": (10000, 74), "job.logging.sinks": (["wandb"], 93),
    },
    "gpt2_small": {"job.checkpoint.interval_time": (900, None), "job.batch.global": (512, 20)},
    "tinyllama": {
        "job.batch.global": (512, 38), "job.batch.micro": (4, 41), "job.batch.rule": ("divisible", 38),
        "job.checkpoint.interval_steps": (1000, 32), "job.checkpoint.resume": (False, 24),
        "job.logging.sinks": (["tensorboard"], 111), "job.resources.nodes": (1, 104),
        "job.recovery.detection_timeout": (1800, None),
    },
    "mpt-125m": {
        "job.batch.global": (256, 81), "job.batch.micro": (16, 86),
        "job.checkpoint.enabled": (False, None), "job.train_steps": (4800, 77),
        "job.logging.interval_steps": (1, 102), "job.recovery.detection_timeout": (600.0, None),
    },
    "OLMo-1B": {
        "job.batch.global": (2048, 70), "job.batch.micro": (8, 71),
        "job.checkpoint.interval_steps": (1000, 61), "job.train_steps": (739328, 69),
        "job.logging.sinks": (["wandb"], 5),
    },
    "skypilot__llm": {"job.resources.gpus_per_node": (8, 20), "job.resources.nodes": (1, None)},
    "mpi-operator": {"job.resources.nodes": (2, 5)},
    "volcano": {"job.resources.nodes": (3, 5), "job.recovery.auto_restart": (True, 33)},
    "multi_worker_tfjob": {"job.resources.nodes": (2, 5), "job.resources.gpus_per_node": (1, 22),
                           "job.recovery.auto_restart": (False, 11)},
    "resnet-cifar10": {"job.resources.nodes": (4, 7)},
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_new_formats_fill_the_job_model(name: str) -> None:
    """Batch, checkpoint, logging, restart and timeout settings of each new format, at
    the line that sets them (or marked a framework default)."""
    (path,) = [p for p in HERE.rglob("*") if name in p.name]
    doc = facts(path)
    for fact, (want, ln) in FACTS[name].items():
        assert (value(doc, fact), line(doc, fact)) == (want, ln), fact
        if ln is None:
            assert doc["facts"][fact]["source"].startswith(("default: ", "default of ")), fact


def test_committed_catalogues_match_the_generators_pins() -> None:
    """Every catalogue was generated at the version the script pins (bumping a pin
    without regenerating, or the reverse, fails here)."""
    gen = _generator()
    want = {fw: (pkg, ver) for fw, (pkg, ver, _r, _e) in gen.FRAMEWORKS.items()}
    want |= {fw: (repo, commit[:12]) for fw, (repo, commit, _p, _r) in gen.FROM_GIT.items()}
    assert set(want) == set(names())
    for fw, (pkg, ver) in want.items():
        cat = catalogue(fw)
        assert cat is not None and (cat.package, cat.version) == (pkg, ver), fw


def test_tf_model_garden_trainer_keys_are_strict(tmp_path: Path) -> None:
    """Model Garden applies a YAML overlay with override(is_strict=True): a trainer or
    runtime key its dataclass lacks is a KeyError at start-up."""
    p = tmp_path / "exp.yaml"
    p.write_text("runtime:\n  mixed_precision_dtype: bfloat16\ntask:\n  model:\n    foo: 1\n"
                 "trainer:\n  train_steps: 1000\n  checkpoint_intervals: 100\n  summary_interval: 10\n")
    keys = value(facts(p), "job.config.ignored_keys")
    assert len(keys) == 1 and keys[0].startswith("trainer.checkpoint_intervals at line 8")
    assert "did you mean checkpoint_interval?" in keys[0] and "KeyError" in keys[0]


def test_a_toml_with_a_training_table_of_foreign_keys_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "train.toml"
    p.write_text('[tool.poetry]\nname = "x"\n\n[training]\nbatch = 3\nepochs = 4\n')
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "closest: torchtitan (1 of 4 keys known)" in r.stderr, r.stderr


@pytest.mark.parametrize("name", ["job.yaml-template", "job.yaml.template", "job.yml.tmpl"])
def test_manifest_templates_are_yaml_not_shell(tmp_path: Path, name: str) -> None:
    """A manifest template's container command has a torchrun line, which made it look
    like a launch script; its extension says YAML."""
    p = tmp_path / name
    p.write_text(TEMPLATE.read_text())
    doc = facts(p)
    assert "pytorchjob" in value(doc, "job.formats") and value(doc, "job.recovery.max_restarts") == 100


def test_hydra_root_config_composes_its_groups() -> None:
    """``lint configs/train.yaml`` reads the option each group picks (trainer: default,
    callbacks: default and the callbacks it lists); ``logger: null`` picks nothing."""
    doc = facts(HERE / "hydra/train.yaml")
    assert value(doc, "job.formats") == ["hydra", "lightning"]
    files = [Path(f).relative_to(HERE / "hydra").as_posix() for f in value(doc, "job.files")]
    assert files[0] == "train.yaml"
    assert {"trainer/default.yaml", "callbacks/default.yaml", "callbacks/model_checkpoint.yaml"} <= set(files)
    assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (1, 9)
    assert value(doc, "job.checkpoint.enabled") is True
    # a trainer option's "- default" is the base it overrides: read beneath it, in Hydra's
    # composition order (devices 4 over the base's 1, not a conflict; tests/jobs/test_hydra_order.py)
    ddp = facts(HERE / "hydra/trainer/ddp.yaml")
    assert value(ddp, "job.files") == [str(HERE / "hydra/trainer/ddp.yaml"), str(HERE / "hydra/trainer/default.yaml")]
    assert value(ddp, "job.config.conflicts") == []
    assert (value(ddp, "job.resources.gpus_per_node"), line(ddp, "job.resources.gpus_per_node")) == (4, 7)


def test_a_multi_document_manifest_without_training_names_its_kinds(tmp_path: Path) -> None:
    p = tmp_path / "stack.yaml"
    p.write_text("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: a\n---\n"
                 "apiVersion: v1\nkind: Service\nmetadata:\n  name: b\n---\n"
                 "apiVersion: v1\nkind: Service\nmetadata:\n  name: c\n")
    r = spec_check("lint", str(p))
    assert r.returncode == 2 and "Kubernetes ServiceAccount, Service: no training resource" in r.stderr


def test_a_real_typo_in_a_public_axolotl_example() -> None:
    """axolotl's own falcon-h1 example misspells context_parallel_size: axolotl never
    reads it, so the run is not context-parallel. PREC-02 names it at its line."""
    (path,) = (HERE / "axolotl").glob("*falcon-h1-1b-qlora-cp*")
    doc = facts(path)
    (k,) = value(doc, "job.config.ignored_keys")
    assert k.startswith("context_parapllel_size at line 42: ") and "did you mean context_parallel_size?" in k
    assert line(doc, "job.config.ignored_keys") == 42
    r = spec_check("lint", "--format", "json", str(path))
    (f,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "PREC-02.ignored-config-keys"]
    assert f["status"] == "fail" and f["location"]["line"] == 42


@pytest.mark.parametrize("acc, per", [("H100:8", 8), ("{H100: 8}", 8), ("[A100:8, H100:8]", 8),
                                      ("[A100:8, H100:4]", None), ("A100", 1)])
def test_skypilot_accelerators_forms(tmp_path: Path, acc: str, per: int | None) -> None:
    p = tmp_path / "task.yaml"
    p.write_text(f"resources:\n  accelerators: {acc}\nnum_nodes: 2\nrun: python train.py\n")
    assert value(facts(p, kind="skypilot"), "job.resources.gpus_per_node") == per


def test_olmo_ephemeral_checkpoints_are_the_interval(tmp_path: Path) -> None:
    p = tmp_path / "olmo.yaml"
    p.write_text("run_name: x\nprecision: amp_bf16\nglobal_train_batch_size: 1024\n"
                 "device_train_microbatch_size: 2\nsave_interval: 1000\nsave_interval_ephemeral: 250\n"
                 "try_load_latest_save: true\nmax_duration: 1000\n")
    doc = facts(p, kind="olmo")
    assert (value(doc, "job.checkpoint.interval_steps"), line(doc, "job.checkpoint.interval_steps")) == (250, 6)
    assert (value(doc, "job.checkpoint.resume"), line(doc, "job.checkpoint.resume")) == (True, 7)


def test_megatron_flag_typos_from_its_catalogue(tmp_path: Path) -> None:
    """Megatron-LM's flags come from its arguments.py (literal add_argument calls and the
    dataclass-built groups); a misspelled flag is reported at its line, a script's own
    extra flag (not a near-miss of a real one) is left alone."""
    p = tmp_path / "pretrain.sh"
    p.write_text(
        "#!/bin/bash\n"
        "torchrun --nproc-per-node 8 pretrain_gpt.py \\\n"
        "    --micro-batch-size 1 --global-batch-size 256 \\\n"
        "    --tensor-model-paralel-size 2 \\\n"
        "    --bf16 --my-own-flag 3 \\\n"
        "    --use-distributed-optimiser\n"
    )
    keys = value(facts(p), "job.config.ignored_keys")
    assert keys[0].startswith("--tensor-model-paralel-size at line 4: not a megatron flag "
                              "(did you mean --tensor-model-parallel-size?)")
    assert "refuses it" in keys[0]
    assert keys[1].startswith("--use-distributed-optimiser at line 6")
    assert len(keys) == 2


def test_no_megatron_flag_claims_on_real_scripts() -> None:
    """Megatron-LM's own examples (a multimodal one with flags of its own) and the shared
    corpus' scripts: no flag is claimed to be a typo."""
    scripts = sorted((HERE / "megatron").iterdir())
    if CORPUS.is_dir():
        scripts += sorted(CORPUS.rglob("*.sh"))
    assert len(scripts) >= 3
    for p in scripts:
        assert not [k for k in value(facts(p), "job.config.ignored_keys") if "flag" in k], p


def test_close_match_is_conservative() -> None:
    from validator.jobs.keys import close_match

    known = frozenset({"overlap_comm", "sft-tokenizer-prompt-format", "hysteresis", "global-batch-size"})
    assert close_match("overlap_com", known) == "overlap_comm"
    assert close_match("hysterisis", known) == "hysteresis"
    assert close_match("gloabl-batch-size", known) == "global-batch-size"  # a transposition
    assert close_match("tokenizer-prompt-format", known) is None  # words added: another flag
    assert close_match("batch", known) is None


def test_kind_kubernetes_on_a_file_that_is_no_manifest(tmp_path: Path) -> None:
    p = tmp_path / "x.yaml"
    p.write_text("a: 1\n")
    r = spec_check("lint", "--kind", "kubernetes", str(p))
    assert r.returncode == 2 and "not a Kubernetes manifest" in r.stderr


@pytest.mark.parametrize("text", [
    "apiVersion: x/v1\nkind: JobSet\nspec:\n  replicatedJobs: 5\n",
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  tasks: [{template: {spec: {containers: 5}}}]\n",
    "apiVersion: x/v1\nkind: RayJob\nspec:\n  rayClusterSpec: {workerGroupSpecs: {a: 1}}\n  entrypoint: 5\n",
    "apiVersion: x/v1\nkind: MPIJob\nspec:\n  mpiReplicaSpecs:\n    Worker: {replicas: $N, template: {spec: {containers: [{env: 5, args: 5}]}}}\n",
])
def test_odd_manifests_are_read_without_type_errors(tmp_path: Path, text: str) -> None:
    """A field of the wrong type is simply no source of settings: no traceback, and no
    'unexpected value type' error for a manifest the API server would refuse anyway."""
    p = tmp_path / "m.yaml"
    p.write_text(text)
    doc = facts(p)
    assert doc["errors"] == [] and value(doc, "job.formats")


def test_a_block_of_thousands_of_unknown_keys_is_reported_in_bounded_time(tmp_path: Path) -> None:
    """Each unknown key is matched against the catalogue only up to a cap: a file of
    thousands of keys gets 50 entries and a count, not thousands of fuzzy matches."""
    from validator.jobs.keycheck import MAX_REPORTED

    p = tmp_path / "ds.json"
    p.write_text(json.dumps({"train_batch_size": 8,
                             "fp16": {"enabled": True, **{f"scale_{i}": 1 for i in range(3000)}}}))
    keys = value(facts(p), "job.config.ignored_keys")
    assert len(keys) == MAX_REPORTED + 1
    assert keys[-1] == f"and {3000 - MAX_REPORTED} more keys deepspeed 0.19.8 does not have (not checked one by one)"


def test_generator_builds_megatron_flags_like_argument_group_factory(tmp_path: Path) -> None:
    """Literal add_argument flags, and ArgumentGroupFactory's flags of a config dataclass:
    --name per field, --no-name/--disable-name for a bool defaulting to True, the
    argparse_meta arg_names where given, none for init=False or excluded fields."""
    import io
    import tarfile

    files = {
        "megatron/training/arguments.py": (
            "import argparse\n"
            "def parse_args():\n"
            "    parser = argparse.ArgumentParser(allow_abbrev=False)\n"
            "    args = parser.parse_args()\n"
            "def _add_x(parser):\n"
            "    g = parser.add_argument_group('x')\n"
            "    g.add_argument('--micro-batch-size', type=int)\n"
            "    exclude = ['skipped']\n"
            "    ArgumentGroupFactory(TrainCfg, exclude=exclude).build_group(parser)\n"
        ),
        "megatron/training/config.py": (
            "from dataclasses import dataclass, field\n"
            "@dataclass\nclass Base:\n    seed: int = 1\n"
            "@dataclass\nclass TrainCfg(Base):\n"
            "    train_iters: int = 0\n    use_flash: bool = True\n    verbose: bool = False\n"
            "    skipped: int = 0\n    derived: int = field(init=False, default=0)\n"
            "    lr: float = field(default=1.0, metadata={'argparse_meta': {'arg_names': ['--lr', '--learning-rate']}})\n"
        ),
    }
    tar = tmp_path / "src.tar"
    with tarfile.open(tar, "w") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    gen = _generator()
    cat = gen.megatron(gen.Package("Megatron-LM", "x", tar, prefixed=False))
    assert cat["sections"][""] == sorted({"micro-batch-size", "seed", "train-iters", "no-use-flash",
                                          "disable-use-flash", "verbose", "lr", "learning-rate"})
    assert "unrecognized arguments" in cat["strict_sections"][""]


def test_maxtext_typo_from_base_yml(tmp_path: Path) -> None:
    """MaxText's keys are those of configs/base.yml at the pinned commit."""
    p = tmp_path / "run.yml"
    p.write_text("base_config: base.yml\nper_device_batch_size: 4\ncheckpoint_perid: 500\n")
    keys = value(facts(p), "job.config.ignored_keys")
    assert len(keys) == 1 and keys[0].startswith("checkpoint_perid at line 3: not a key of the top level "
                                                 "(did you mean checkpoint_period?)")


def test_job_level_retries_restart_a_jobset_whatever_its_pods_say(tmp_path: Path) -> None:
    """JobSet failurePolicy.maxRestarts recreates the JobSet (pods say Never, the norm);
    an MPIJob launcher's ``mpirun -x NCCL_DEBUG=INFO`` exports it to every rank."""
    p = tmp_path / "js.yaml"
    p.write_text("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\nspec:\n"
                 "  failurePolicy:\n    maxRestarts: 2\n  replicatedJobs:\n  - name: w\n    replicas: 1\n"
                 "    template:\n      spec:\n        parallelism: 2\n        template:\n          spec:\n"
                 "            restartPolicy: Never\n            containers:\n            - name: c\n"
                 "              command: [mpirun, -x, NCCL_DEBUG=INFO, python, train.py]\n")
    doc = facts(p)
    assert (value(doc, "job.recovery.auto_restart"), line(doc, "job.recovery.auto_restart")) == (True, 7)
    assert "NCCL_DEBUG=INFO" in value(doc, "job.comm.env")


def test_levanter_fp8_quantization_is_fp8(tmp_path: Path) -> None:
    p = tmp_path / "lev.yaml"
    p.write_text("data: {id: x}\nmodel: {type: gpt2}\ntrainer:\n  mp: f32\n  quantization:\n    fp8: true\n"
                 "  num_train_steps: 100\n")
    doc = facts(p, kind="levanter")
    assert (value(doc, "job.precision.mode"), line(doc, "job.precision.mode")) == ("fp8", 6)


def test_megatron_deepspeed_flags_are_not_checked_against_upstream(tmp_path: Path) -> None:
    p = tmp_path / "ds_pretrain.sh"
    p.write_text("#!/bin/bash\ndeepspeed pretrain_gpt.py --micro-batch-size 1 --num-layers 2 \\\n"
                 "  --moe-loss-coef 0.01 --deepspeed --deepspeed_config ds.json\n")
    assert not [k for k in value(facts(p), "job.config.ignored_keys") if "flag" in k]


def test_no_public_corpus_file_waits_for_a_reader() -> None:
    """The README says no expectation is pending: every format the public corpus holds
    that spec-check reads has its reader (and each expectation is checked for real)."""
    exp = HERE.parents[1] / "corpus" / "expectations"
    if not exp.is_dir():
        pytest.skip("no public corpus in this checkout")
    assert not [p for p in exp.rglob("*.yaml") if "\npending:" in "\n" + p.read_text()]


def test_trainer_arguments_alone_outside_a_trainer_folder(tmp_path: Path) -> None:
    p = tmp_path / "ddp.yaml"
    p.write_text((HERE / "hydra/trainer/ddp.yaml").read_text())
    doc = facts(p)
    assert value(doc, "job.formats") == ["lightning"]
    assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (4, 7)


def test_hf_trainingarguments_typo(tmp_path: Path) -> None:
    p = tmp_path / "args.yaml"
    p.write_text("output_dir: out\nbf16: true\nper_device_train_batch_sise: 4\nlearning_rate: 1e-5\n"
                 "logging_steps: 10\nmy_script_flag: 3\n")
    (k,) = value(facts(p), "job.config.ignored_keys")  # my_script_flag: a script's own, left alone
    assert k.startswith("per_device_train_batch_sise at line 3") and "per_device_train_batch_size?" in k


def test_accelerate_fp8_config_dropped_under_bf16(tmp_path: Path) -> None:
    """A key the framework drops under the chosen precision: Accelerate reads fp8_config
    only with mixed_precision: fp8."""
    p = tmp_path / "acc.yaml"
    p.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n"
                 "mixed_precision: bf16\nfp8_config:\n  backend: te\n")
    (k,) = value(facts(p), "job.config.ignored_keys")
    assert k == "fp8_config at line 5: read only with mixed_precision: fp8 (this config: bf16)"
    p.write_text(p.read_text().replace("mixed_precision: bf16", "mixed_precision: fp8"))
    assert value(facts(p), "job.config.ignored_keys") == []
