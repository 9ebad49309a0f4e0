#!/usr/bin/env python3
"""Regenerate ``validator/jobs/keys/<framework>.json`` from each framework's own source.

Every training framework defines the keys its config accepts somewhere in code: a
dataclass (HF ``TrainingArguments``, torchtitan's ``JobConfig``, litgpt's ``TrainArgs``),
a pydantic model (DeepSpeed's ``DeepSpeedBF16Config``, axolotl's ``AxolotlInputConfig``),
a function signature (Lightning's ``Trainer.__init__``), a JSON schema literal (SkyPilot)
or the attribute reads of a recipe (torchtune's ``cfg.get("dtype")``). This script
downloads the *published* package at a pinned version (``pip download --no-deps``),
reads those definitions with ``ast`` (the framework is never imported, so none of its
heavy dependencies are needed) and writes one JSON catalogue per framework:

    {"framework": ..., "package": ..., "version": ..., "sources": [file, ...],
     "sections": {"": [top-level keys], "bf16": [keys of the bf16 block], ...},
     "open": [sections whose keys are free-form (a model's own arguments)]}

Run ``python scripts/gen_key_catalogues.py`` (network to PyPI needed) to regenerate all,
or name frameworks to regenerate some. ``--from DIR`` reads already-downloaded archives
from DIR instead of downloading. Bumping a version below and re-running is the way to
follow a framework's new release; the diff of the JSON shows what changed.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parent.parent / "validator" / "jobs" / "keys"


class Package:
    """The Python (and YAML) files of one downloaded wheel or sdist, by relative path."""

    def __init__(self, name: str, version: str, archive: Path, *, prefixed: bool = True):
        self.name, self.version, self.archive = name, version, archive
        self.files: dict[str, str] = {}
        if archive.suffix == ".whl" or archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for n in z.namelist():
                    if n.endswith((".py", ".yaml", ".yml")):
                        self.files[n] = z.read(n).decode("utf-8", "replace")
        else:
            with tarfile.open(archive) as t:
                for m in t.getmembers():
                    if m.isfile() and m.name.endswith((".py", ".yaml", ".yml")):
                        f = t.extractfile(m)
                        if f is not None:
                            # sdists have a "name-version/" prefix: drop it
                            rel = m.name.split("/", 1)[1] if prefixed and "/" in m.name else m.name
                            self.files[rel] = f.read().decode("utf-8", "replace")
        self._trees: dict[str, ast.Module] = {}
        self.used: set[str] = set()

    def tree(self, path: str) -> ast.Module:
        if path not in self._trees:
            self._trees[path] = ast.parse(self.files[path], path)
        return self._trees[path]

    def glob(self, pattern: str) -> list[str]:
        return sorted(p for p in self.files if fnmatch.fnmatch(p, pattern))

    def find_class(self, name: str, prefer: Iterable[str] = ()) -> tuple[str, ast.ClassDef] | None:
        """The class ``name``: in the ``prefer`` files first, then anywhere in the package."""
        order = [*prefer, *sorted(p for p in self.files if p.endswith(".py"))]
        for path in order:
            if path not in self.files or not path.endswith(".py"):
                continue
            if f"class {name}" not in self.files[path]:
                continue
            for node in ast.walk(self.tree(path)):
                if isinstance(node, ast.ClassDef) and node.name == name:
                    return path, node
        return None


def _ann_names(ann: ast.AST | None) -> list[str]:
    """Class names mentioned in an annotation (``Optional[Foo]``, ``"Foo"``, ``a.Foo``)."""
    out: list[str] = []
    if ann is None:
        return out
    for node in ast.walk(ann):
        if isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.Attribute):
            out.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out += [w for w in node.value.replace("[", " ").replace("]", " ").split() if w]
    return out


def _aliases(value: ast.AST | None) -> list[str]:
    """``Field(alias="x")`` / ``field(metadata={"alias": ...})``: the other name a key has."""
    out: list[str] = []
    if isinstance(value, ast.Call):
        for kw in value.keywords:
            v = kw.value
            if kw.arg in ("alias", "validation_alias") and isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
    return out


def class_fields(
    pkg: Package, name: str, prefer: Iterable[str] = (), _seen: set[str] | None = None
) -> dict[str, list[str]]:
    """Field name -> class names its annotation mentions, for a dataclass / pydantic /
    attrs class and all its bases that live in the package (mixins included)."""
    seen = _seen if _seen is not None else set()
    if name in seen:
        return {}
    seen.add(name)
    found = pkg.find_class(name, prefer)
    if found is None:
        return {}
    path, cls = found
    pkg.used.add(path)
    out: dict[str, list[str]] = {}
    for base in cls.bases:
        bname = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if isinstance(base, ast.Subscript):
            v = base.value
            bname = v.id if isinstance(v, ast.Name) else getattr(v, "attr", None)
        if bname and bname not in ("BaseModel", "object", "Generic"):
            out.update(class_fields(pkg, bname, [path, *prefer], seen))
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            key = stmt.target.id
            if key.startswith("_") or key == "model_config":
                continue
            names = _ann_names(stmt.annotation)
            if "ClassVar" in names:
                continue
            out[key] = names
            for a in _aliases(stmt.value):
                out[a] = names
    return out


def func_params(pkg: Package, path: str, func: str, cls: str | None = None) -> dict[str, list[str]]:
    """Parameter name -> annotation class names of ``func`` (a method of ``cls``)."""
    pkg.used.add(path)
    scope: list[ast.stmt] = pkg.tree(path).body
    if cls is not None:
        c = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls)
        scope = c.body
    fn = next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == func)
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return {a.arg: _ann_names(a.annotation) for a in args if a.arg not in ("self", "cls")}


def sectioned(
    pkg: Package, fields: dict[str, list[str]], prefer: Iterable[str] = (), depth: int = 1
) -> dict[str, list[str]]:
    """Top-level keys plus, for each field typed as a class of the package, that class's
    fields as the section of the same name (``training: Training`` -> ``training``)."""
    sections: dict[str, list[str]] = {"": sorted(fields)}
    if depth <= 0:
        return sections
    for key, names in fields.items():
        for n in names:
            if n[:1].isupper() and n not in ("Optional", "Union", "List", "Dict", "Any", "Literal"):
                sub = class_fields(pkg, n, prefer)
                if sub:
                    inner = sectioned(pkg, sub, prefer, depth - 1)
                    for s, keys in inner.items():
                        name = key if not s else f"{key}.{s}"
                        sections[name] = sorted(set(sections.get(name, [])) | set(keys))
                    break
    return sections


def string_constants(pkg: Package, paths: Iterable[str]) -> dict[str, str]:
    """Module-level ``NAME = "value"`` string constants of ``paths``."""
    out: dict[str, str] = {}
    for p in paths:
        for node in pkg.tree(p).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                out[node.targets[0].id] = node.value.value
    return out


def reads_of(
    pkg: Package, paths: Iterable[str], var: str, consts: dict[str, str] | None = None
) -> set[str]:
    """Keys read from (or stored into) the mapping named ``var``: ``var["k"]``,
    ``var.get("k")``, ``"k" in var``, ``get_scalar_param(var, K, ...)`` and, for an
    OmegaConf object, ``var.k``. Constant names are resolved through ``consts``."""
    consts = consts or {}

    def key(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return consts.get(node.id)
        if isinstance(node, ast.Attribute):
            return consts.get(node.attr)
        return None

    def is_var(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == var

    out: set[str] = set()
    for p in paths:
        if var not in pkg.files[p]:
            continue
        before = len(out)
        for node in ast.walk(pkg.tree(p)):
            k = None
            if isinstance(node, ast.Subscript) and is_var(node.value):
                k = key(node.slice)
            elif isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and is_var(f.value) and f.attr in ("get", "pop"):
                    k = key(node.args[0]) if node.args else None
                elif node.args and is_var(node.args[0]) and isinstance(f, ast.Name) and f.id.startswith("get_"):
                    # get_scalar_param(d, KEY, KEY_DEFAULT) / get_x(d, prop=KEY)
                    for a in [*node.args[1:], *(kw.value for kw in node.keywords)]:
                        n = a.id if isinstance(a, ast.Name) else None
                        if n and not n.endswith("_DEFAULT") and consts.get(n, "").isidentifier():
                            out.add(consts[n])
            elif isinstance(node, ast.Compare) and len(node.ops) == 1:
                right = node.comparators[0]
                if isinstance(right, ast.Call) and isinstance(right.func, ast.Attribute):
                    right = right.func.value if right.func.attr == "keys" else right
                if isinstance(node.ops[0], (ast.In, ast.NotIn)) and is_var(right):
                    k = key(node.left)
            elif isinstance(node, ast.FunctionDef) and node.args.args and node.args.args[0].arg == var:
                # def get_x(param_dict, prop=KEY, default=KEY_DEFAULT)
                for d in node.args.defaults:
                    n = d.id if isinstance(d, ast.Name) else None
                    if n and not n.endswith("_DEFAULT") and consts.get(n, "").isidentifier():
                        out.add(consts[n])
            elif (
                isinstance(node, ast.Attribute)
                and is_var(node.value)
                and node.attr not in ("get", "pop", "keys", "items", "values", "copy")
            ):
                k = node.attr
            if k and k.isidentifier():
                out.add(k)
        if len(out) > before:
            pkg.used.add(p)
    return out


def yaml_top_keys(pkg: Package, paths: Iterable[str]) -> set[str]:
    """Top-level keys of the YAML files the package itself ships (its recipes)."""
    out: set[str] = set()
    for p in paths:
        try:
            data = yaml.safe_load(pkg.files[p])
        except yaml.YAMLError:
            continue
        if isinstance(data, dict):
            pkg.used.add(p)
            out |= {k for k in data if isinstance(k, str)}
    return out


def schema_properties(pkg: Package, path: str, func: str) -> dict[str, list[str]]:
    """``properties`` of the JSON-schema dict literal a function returns (SkyPilot)."""
    pkg.used.add(path)
    fn = next(
        n for n in pkg.tree(path).body if isinstance(n, ast.FunctionDef) and n.name == func
    )
    ret = next(n for n in ast.walk(fn) if isinstance(n, ast.Return))
    value = ret.value
    schema = ast.literal_eval(value) if value is not None and _literal(value) else _dict_of(value)
    props = schema.get("properties", {})
    out: dict[str, list[str]] = {k: [] for k in props}
    if schema.get("additionalProperties") is False:
        out["__closed__"] = []
    return out


def _literal(node: ast.AST | None) -> bool:
    try:
        ast.literal_eval(node)  # type: ignore[arg-type]
        return True
    except ValueError:
        return False


def _dict_of(node: ast.AST | None) -> dict[str, Any]:
    """A dict literal with some non-literal values: its string keys (nested dicts kept)."""
    out: dict[str, Any] = {}
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                if isinstance(v, ast.Dict):
                    out[k.value] = _dict_of(v)
                else:
                    out[k.value] = v.value if isinstance(v, ast.Constant) else None
    return out


# -- one recipe per framework ----------------------------------------------------------


def deepspeed(pkg: Package) -> dict[str, Any]:
    rt = "deepspeed/runtime/"
    consts = string_constants(pkg, [p for p in pkg.glob("deepspeed/*constants*.py")])
    for p in pkg.glob("deepspeed/**/constants.py") + pkg.glob("deepspeed/**/config.py"):
        consts.update(string_constants(pkg, [p]))
    top = reads_of(pkg, pkg.glob("deepspeed/**.py"), "param_dict", consts)
    sections: dict[str, list[str]] = {}
    for key, cls in (
        ("fp16", "DeepSpeedFP16Config"),
        ("bf16", "DeepSpeedBF16Config"),
        ("zero_optimization", "DeepSpeedZeroConfig"),
        ("flops_profiler", "DeepSpeedFlopsProfilerConfig"),
        ("comms_logger", "CommsLoggerConfig"),
        ("tensorboard", "TensorBoardConfig"),
        ("wandb", "WandbConfig"),
        ("csv_monitor", "CSVConfig"),
    ):
        f = class_fields(pkg, cls, [rt + "precision_config.py", rt + "zero/config.py"])
        if f:
            sections[key] = sorted(f)
            top.add(key)
    # before the pydantic precision models (0.14 and older) the fp16 and bf16 blocks are
    # plain dicts read by runtime/config.py's get_* functions: their keys are the reads
    old = {k: v for k, v in _dict_blocks(pkg, rt + "config.py", consts).items() if k not in sections}
    for key, keys in old.items():
        sections[key] = sorted(keys)
        top.add(key)
    # "bfloat16" is the legacy name of the bf16 block (precision_config.BFLOAT16_OLD)
    if "bf16" in sections:
        sections["bfloat16"] = sections["bf16"]
    sections[""] = sorted(top)
    # top-level blocks this version no longer supports, with DeepSpeed's own words
    removed: dict[str, str] = {}
    for node in pkg.tree(rt + "config.py").body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "_REMOVED_TOP_LEVEL_CONFIG_KEYS"
            and isinstance(node.value, ast.Dict)
        ):
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(k, ast.Constant):
                    text = v.value if isinstance(v, ast.Constant) else (
                        "".join(
                            x.value for x in getattr(v, "values", [])
                            if isinstance(x, ast.Constant) and isinstance(x.value, str)
                        )
                    )
                    removed[str(k.value)] = re.sub(r"\s*See \.?$", "", str(text).strip())
    return {
        "removed": removed,
        "sections": sections,
        "open": ["optimizer.params", "scheduler.params", "amp"],
        "strict_sections": {
            s: "its config model forbids other keys: a ValidationError at start-up"
            for s in ("fp16", "bf16", "bfloat16", "zero_optimization") if s in sections and s not in old
            and not (s == "bfloat16" and "bf16" in old)
        },
    }


def _dict_blocks(pkg: Package, path: str, consts: dict[str, str]) -> dict[str, set[str]]:
    """The fp16 / bf16 keys DeepSpeed 0.14 and older read from plain dicts:
    ``get_scalar_param(param_dict[FP16], FP16_LOSS_SCALE, ...)``, the ``fp16_dict`` of
    ``get_dynamic_loss_scale_args``, and ``param_dict[key]`` in the bfloat16 getters
    (``for key in [BFLOAT16, BFLOAT16_OLD]``). No model checks them: not strict."""
    out: dict[str, set[str]] = {}
    for fn in ast.walk(pkg.tree(path)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "get_scalar_param" and len(node.args) >= 2):
                continue
            d, k = node.args[0], node.args[1]
            key = consts.get(k.id) if isinstance(k, ast.Name) else None
            block = None
            if isinstance(d, ast.Subscript) and isinstance(d.value, ast.Name) and d.value.id == "param_dict":
                s = d.slice
                if isinstance(s, ast.Name) and s.id == "FP16":
                    block = "fp16"
                elif isinstance(s, ast.Name) and s.id == "key" and "bfloat16" in fn.name:
                    block = "bf16"
            elif isinstance(d, ast.Name) and d.id == "fp16_dict":
                block = "fp16"
            if block and key:
                out.setdefault(block, set()).add(key)
                pkg.used.add(path)
    return out


def transformers(pkg: Package, extra: list[Package]) -> dict[str, Any]:
    f = class_fields(pkg, "TrainingArguments", ["transformers/training_args.py"])
    f.update(class_fields(pkg, "Seq2SeqTrainingArguments", ["transformers/training_args_seq2seq.py"]))
    keys = set(f)
    for trl in extra:  # TRL's configs extend TrainingArguments (SFTConfig, DPOConfig, ...)
        for p in trl.glob("trl/trainer/*_config.py"):
            for node in ast.walk(trl.tree(p)):
                if isinstance(node, ast.ClassDef) and node.name.endswith("Config"):
                    keys |= set(class_fields(trl, node.name, [p]))
        keys |= set(class_fields(trl, "ModelConfig", trl.glob("trl/trainer/model_config.py")))
        keys |= set(class_fields(trl, "ScriptArguments", trl.glob("trl/scripts/utils.py")))
    return {"sections": {"": sorted(keys)}, "open": []}


def accelerate(pkg: Package) -> dict[str, Any]:
    path = "accelerate/commands/config/config_args.py"
    f = class_fields(pkg, "ClusterConfig", [path])
    f.update(class_fields(pkg, "SageMakerConfig", [path]))
    # legacy keys process_config() converts before the check (fp16, dynamo_backend)
    f.update({k: [] for k in reads_of(pkg, [path], "config_dict")})
    strict = {}
    if "extra_keys" in pkg.files[path] and "raise ValueError" in pkg.files[path]:
        # from_yaml_file: "The config file at ... had unknown keys"
        strict[""] = "accelerate launch refuses a config file with unknown keys"
    cluster = "accelerate/commands/config/cluster.py"
    sections = {"": sorted(f)}
    for sec in ("deepspeed_config", "fsdp_config", "megatron_lm_config", "fp8_config",
                "parallelism_config", "dynamo_config", "ipex_config", "mpirun_config"):
        keys = reads_of(pkg, [cluster], sec)
        if keys:
            sections[sec] = sorted(keys)
    return {"sections": sections, "open": [], "strict_sections": strict}


def lightning(pkg: Package) -> dict[str, Any]:
    # lightning 2.x ships lightning/pytorch/; pytorch-lightning 1.x pytorch_lightning/
    path = next(p for p in ("lightning/pytorch/trainer/trainer.py", "pytorch_lightning/trainer/trainer.py")
                if p in pkg.files)
    trainer = func_params(pkg, path, "__init__", "Trainer")
    fn = next(
        n for c in pkg.tree(path).body if isinstance(c, ast.ClassDef) and c.name == "Trainer"
        for n in c.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"
    )
    # no **kwargs: an argument Trainer does not take is a TypeError (LightningCLI and
    # Hydra's instantiate both pass the trainer block as keyword arguments)
    strict = {} if fn.args.kwarg else {"trainer": "Trainer() takes no such argument: a TypeError at start-up"}
    # LightningCLI's top level: subcommand arguments plus the linked objects
    top = {"trainer", "model", "data", "seed_everything", "ckpt_path", "optimizer",
           "lr_scheduler", "config", "verbose", "return_predictions", "weights_only"}
    pkg.used.add(path.replace("trainer/trainer.py", "cli.py"))
    return {"sections": {"": sorted(top), "trainer": sorted(trainer)},
            "open": ["model", "data", "optimizer", "lr_scheduler"], "strict_sections": strict}


def torchtitan(pkg: Package) -> dict[str, Any]:
    path = "torchtitan/config/job_config.py"
    f = class_fields(pkg, "JobConfig", [path])
    return {"sections": sectioned(pkg, f, [path]), "open": ["experimental"]}


def torchtune(pkg: Package) -> dict[str, Any]:
    recipes = pkg.glob("recipes/*.py")
    keys = reads_of(pkg, recipes, "cfg")
    keys |= yaml_top_keys(pkg, pkg.glob("recipes/configs/*.yaml") + pkg.glob("recipes/configs/**/*.yaml"))
    return {"sections": {"": sorted(keys)},
            "open": ["model", "tokenizer", "dataset", "optimizer", "loss", "checkpointer",
                     "metric_logger", "profiler", "lr_scheduler"],
            "builtin": torchtune_registry(pkg)}


def torchtune_registry(pkg: Package) -> dict[str, Any]:
    """``tune run``'s built-in recipes and configs (``torchtune/_recipe_registry.py``):
    ``tune run NAME --config CONFIG`` runs the packaged recipe file, and a ``--config``
    that equals a registered config name is the packaged YAML, not a file of the job."""
    path = "torchtune/_recipe_registry.py"
    pkg.used.add(path)
    recipes: dict[str, Any] = {}

    def kw(call: ast.Call) -> dict[str, Any]:
        return {k.arg: k.value for k in call.keywords if k.arg}

    for node in ast.walk(pkg.tree(path)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Recipe":
            args = kw(node)
            configs = args["configs"].elts if isinstance(args.get("configs"), ast.List) else []
            recipes[ast.literal_eval(args["name"])] = {
                "file": "recipes/" + ast.literal_eval(args["file_path"]),
                "distributed": bool(ast.literal_eval(args["supports_distributed"])),
                "configs": {ast.literal_eval(kw(c)["name"]): "recipes/configs/" + ast.literal_eval(kw(c)["file_path"])
                            for c in configs if isinstance(c, ast.Call)},
            }
    return {"recipes": dict(sorted(recipes.items()))}


def axolotl(pkg: Package) -> dict[str, Any]:
    path = "axolotl/utils/schemas/config.py"
    f = class_fields(pkg, "AxolotlInputConfig", [path])
    return {"sections": {"": sorted(f)}, "open": []}


def litgpt(pkg: Package) -> dict[str, Any]:
    top: dict[str, list[str]] = {}
    for p in ["litgpt/pretrain.py", *pkg.glob("litgpt/finetune/*.py")]:
        if p in pkg.files and "def setup(" in pkg.files[p]:
            top.update(func_params(pkg, p, "setup"))
    sections = sectioned(pkg, top, ["litgpt/args.py"])
    sections.pop("model_config", None)  # a model's own Config: free-form here
    return {"sections": sections, "open": ["model_config", "data", "optimizer", "logger_name"]}


def levanter(pkg: Package) -> dict[str, Any]:
    path = "levanter/main/train_lm.py"
    f = class_fields(pkg, "TrainLmConfig", [path])
    sections = sectioned(pkg, f, [path, "levanter/trainer.py"], depth=2)
    # optimizer: a registry of subclasses picked by `type:` (adam, lion, ...), each with its keys
    return {"sections": sections, "open": ["model", "data", "optimizer"]}


def llm_foundry(pkg: Package) -> dict[str, Any]:
    path = "llmfoundry/utils/config_utils.py"
    f = class_fields(pkg, "TrainConfig", [path])
    return {"sections": {"": sorted(f)},
            "open": ["model", "tokenizer", "optimizer", "scheduler", "train_loader",
                     "eval_loader", "fsdp_config", "callbacks", "loggers", "algorithms"]}


def olmo(pkg: Package) -> dict[str, Any]:
    path = "olmo/config.py"
    f = class_fields(pkg, "TrainConfig", [path])
    return {"sections": sectioned(pkg, f, [path]), "open": []}


def skypilot(pkg: Package) -> dict[str, Any]:
    props = schema_properties(pkg, "sky/utils/schemas.py", "get_task_schema")
    closed = props.pop("__closed__", None) is not None
    strict = {"": "its task schema allows no other keys: sky launch refuses the file"} if closed else {}
    return {"sections": {"": sorted(props)}, "open": ["envs", "secrets", "file_mounts"],
            "strict_sections": strict}


def nemo(pkg: Package) -> dict[str, Any]:
    path = "nemo/utils/exp_manager.py"
    f = class_fields(pkg, "ExpManagerConfig", [path])
    sections = sectioned(pkg, f, [path])
    return {"sections": {"": ["name", "trainer", "exp_manager", "model", "do_training",
                              "restore_from_path", "hydra", "run"],
                         **{f"exp_manager{'.' + k if k else ''}": v for k, v in sections.items()}},
            "open": ["model"]}


def maxtext_from_yaml(text: str) -> dict[str, Any]:
    """MaxText is not published as a package: its keys are those of ``configs/base.yml``
    (pyconfig loads every other config on top of it)."""
    data = yaml.safe_load(text)
    return {"sections": {"": sorted(k for k in data if isinstance(k, str))}, "open": []}


def tfmg(pkg: Package) -> dict[str, Any]:
    """TF Model Garden's ExperimentConfig: runtime and trainer are fixed dataclasses; a
    task is a registered subclass with its own keys (open)."""
    path = "official/core/config_definitions.py"
    f = class_fields(pkg, "ExperimentConfig", [path])
    sections = sectioned(pkg, f, [path])
    base = "official/modeling/hyperparams/base_config.py"
    strict = {}
    if base in pkg.files and "is_strict" in pkg.files[base]:
        pkg.used.add(base)
        # a YAML overlay is applied with override(..., is_strict=True): a key the config
        # class does not have is a KeyError
        strict = {s: "override(is_strict=True) raises KeyError on it" for s in ("runtime", "trainer")}
    return {"sections": sections, "open": ["task"], "strict_sections": strict}


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _list_of_str(node: ast.AST | None, scope: ast.AST) -> list[str]:
    """A literal list of strings, or the one a Name was last assigned in ``scope``."""
    if isinstance(node, ast.Name):
        name = node.id
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
                node = n.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _dataclass_flags(pkg: Package, cls: str, exclude: set[str], seen: set[str] | None = None) -> set[str]:
    """The flags Megatron's ArgumentGroupFactory makes of a config dataclass: ``--name``
    per field, ``--no-name``/``--disable-name`` for a bool that defaults to True, the
    field's ``argparse_meta`` arg_names where given; ``init=False`` fields have none."""
    seen = seen if seen is not None else set()
    found = pkg.find_class(cls)
    if found is None or cls in seen:
        return set()
    seen.add(cls)
    path, node = found
    pkg.used.add(path)
    out: set[str] = set()
    for base in node.bases:
        bname = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
        if bname:
            out |= _dataclass_flags(pkg, bname, exclude, seen)
    for st in node.body:
        if not (isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)):
            continue
        name = st.target.id
        if name.startswith("_") or name in exclude or "ClassVar" in _ann_names(st.annotation):
            continue
        default = st.value
        meta_names: list[str] = []
        if isinstance(default, ast.Call) and getattr(default.func, "id", getattr(default.func, "attr", "")) == "field":
            init = _kw(default, "init")
            if isinstance(init, ast.Constant) and init.value is False:
                continue
            meta = _kw(default, "metadata")
            if isinstance(meta, ast.Dict):
                for k, v in zip(meta.keys, meta.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == "argparse_meta" and isinstance(v, ast.Dict):
                        for k2, v2 in zip(v.keys, v.values, strict=True):
                            if isinstance(k2, ast.Constant) and k2.value == "arg_names":
                                meta_names = _list_of_str(v2, v2)
            default = _kw(default, "default")
        if meta_names:
            out |= {n.lstrip("-") for n in meta_names}
        elif _ann_names(st.annotation) == ["bool"] and isinstance(default, ast.Constant) and default.value is True:
            out |= {f"no-{name}".replace("_", "-"), f"disable-{name}".replace("_", "-")}
        else:
            out.add(name.replace("_", "-"))
    return out


def megatron(pkg: Package) -> dict[str, Any]:
    """Megatron-LM's command-line flags (``pretrain_gpt.py --micro-batch-size ...``): the
    literal ``add_argument("--x")`` calls of ``megatron/training/arguments.py`` and the
    flags ``ArgumentGroupFactory`` builds from config dataclasses. The parser has
    ``allow_abbrev=False`` and ``parse_args()`` refuses any other flag."""
    path = "megatron/training/arguments.py"
    tree = pkg.tree(path)
    pkg.used.add(path)
    flags: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for call in ast.walk(fn):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            if isinstance(f, ast.Attribute) and f.attr == "add_argument":
                flags |= {a.value[2:] for a in call.args
                          if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")}
            elif getattr(f, "id", None) == "ArgumentGroupFactory" and call.args:
                cls = call.args[0]
                cname = cls.id if isinstance(cls, ast.Name) else getattr(cls, "attr", None)
                if cname:
                    flags |= _dataclass_flags(pkg, cname, set(_list_of_str(_kw(call, "exclude"), fn)))
    strict = {}
    if "allow_abbrev=False" in pkg.files[path] and "parser.parse_args()" in pkg.files[path]:
        strict[""] = "its argument parser refuses any other flag (unrecognized arguments)"
    return {"sections": {"": sorted(flags)}, "open": [], "strict_sections": strict}


# frameworks read from their repository at a pinned commit (not published as packages
# that hold these files): name -> (repository, commit, path, recipe); a path ending in
# "/" is a source tree read with ``ast``, a file path is one file's text
FROM_GIT: dict[str, tuple[str, str, str, Callable[[Any], dict[str, Any]]]] = {
    "maxtext": (
        "AI-Hypercomputer/maxtext",
        "e591f30cbbf217ed67ef71263ec0538239f9c3b8",
        "src/maxtext/configs/base.yml",
        maxtext_from_yaml,
    ),
    # megatron-core (PyPI) does not ship megatron/training/: the repository does
    "megatron": (
        "NVIDIA/Megatron-LM",
        "d98e8a64ddf34856e74b24714e3bedb2f5a39553",
        "megatron/",
        megatron,
    ),
}


def generate_git(fw: str, local: Path | None) -> dict[str, Any]:
    """A FROM_GIT catalogue: the file is fetched from GitHub at the pinned commit, or
    read from ``local`` (``--file maxtext=PATH``) where GitHub cannot be reached."""
    repo, commit, path, recipe = FROM_GIT[fw]
    if path.endswith("/"):
        return _generate_tree(fw, local)
    if local is not None:
        text = local.read_text(encoding="utf-8")
    else:
        import urllib.request

        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
        with urllib.request.urlopen(url, timeout=60) as r:  # a fixed https URL
            text = r.read().decode("utf-8")
    return {
        "framework": fw,
        "package": repo,
        "version": commit[:12],
        "also": [],
        "generated_by": "scripts/gen_key_catalogues.py",
        "sources": [f"{repo}@{commit}:{path}"],
        **recipe(text),
    }


def _generate_tree(fw: str, local: Path | None) -> dict[str, Any]:
    """A FROM_GIT source tree: GitHub's tarball of the commit, or ``git archive`` of a
    local clone (``--file megatron=/path/to/Megatron-LM``)."""
    import urllib.request

    repo, commit, path, recipe = FROM_GIT[fw]
    with tempfile.TemporaryDirectory() as tmp:
        tar = Path(tmp) / "src.tar"
        if local is not None:
            with tar.open("wb") as fh:
                subprocess.run(["git", "-C", str(local), "archive", "--format=tar", commit, path],
                               check=True, stdout=fh)
            pkg = Package(repo, commit, tar, prefixed=False)
        else:
            url = f"https://codeload.github.com/{repo}/tar.gz/{commit}"
            with urllib.request.urlopen(url, timeout=300) as r:  # a fixed https URL
                tar.write_bytes(r.read())
            pkg = Package(repo, commit, tar)
        body = recipe(pkg)
    return {
        "framework": fw,
        "package": repo,
        "version": commit[:12],
        "also": [],
        "generated_by": "scripts/gen_key_catalogues.py",
        "sources": [f"{repo}@{commit}:{p}" for p in sorted(pkg.used)],
        **body,
    }


# name -> (package, version, recipe, extra packages)
FRAMEWORKS: dict[str, tuple[str, str, Callable[..., dict[str, Any]], list[tuple[str, str]]]] = {
    "deepspeed": ("deepspeed", "0.19.8", deepspeed, []),
    "hf": ("transformers", "5.23.0", transformers, [("trl", "1.16.0")]),
    "accelerate": ("accelerate", "1.15.0", accelerate, []),
    "lightning": ("lightning", "2.6.6", lightning, []),
    "torchtitan": ("torchtitan", "0.2.2", torchtitan, []),  # the last release read from TOML
    "torchtune": ("torchtune", "0.6.1", torchtune, []),
    "axolotl": ("axolotl", "0.19.0", axolotl, []),
    "litgpt": ("litgpt", "0.5.13", litgpt, []),
    "levanter": ("levanter", "1.2.dev1644", levanter, []),  # 1.1 (2023) predates trainer.tracker
    "llm-foundry": ("llm-foundry", "0.22.0", llm_foundry, []),
    "olmo": ("ai2-olmo", "0.6.0", olmo, []),
    "skypilot": ("skypilot", "0.14.1", skypilot, []),
    "nemo": ("nemo-toolkit", "2.5.0", nemo, []),
    "tfmg": ("tf-models-official", "2.20.0", tfmg, []),
}


# older releases still in use, each written to ``<framework>@<version>.json`` beside the
# newest: a job pinning one has its keys judged at that release (validator/jobs/pins.py).
# name -> [(package, version)] or [(package, version, [(extra package, version)])], read
# by the framework's recipe above; the extras are read with it as the newest's are (TRL's
# configs with TrainingArguments, at a TRL release of the same months)
RELEASES: dict[str, list[tuple[Any, ...]]] = {
    "lightning": [("pytorch-lightning", "1.9.5")],  # the last 1.x: gpus=, amp_backend= ...
    # the last release with evaluation_strategy alone (eval_strategy came in 4.41.0);
    # TRL 0.8.6 required transformers>=4.31 and was current beside it (May 2024)
    "hf": [("transformers", "4.40.2", [("trl", "0.8.6")])],
    # the last release on pydantic 1 before the 0.15 series (steps_per_print's default
    # still 10), as many repositories pinned it in 2024
    "deepspeed": [("deepspeed", "0.14.4")],
}


def _archive(name: str, version: str, cache: Path) -> Path:
    norm = name.replace("-", "_").lower()
    for p in sorted(cache.iterdir()):
        low = p.name.lower().replace("-", "_")
        if low.startswith(f"{norm}_{version}".lower()) and p.suffix in (".whl", ".gz", ".zip"):
            return p
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--disable-pip-version-check", f"{name}=={version}", "-d", str(cache)],
        check=True,
    )
    return _archive(name, version, cache) if any(cache.iterdir()) else cache


def generate(fw: str, cache: Path, release: tuple[Any, ...] | None = None) -> dict[str, Any]:
    name, version, recipe, extras = FRAMEWORKS[fw]
    if release is not None:
        name, version, extras = release[0], release[1], (list(release[2]) if len(release) > 2 else [])
    pkg = Package(name, version, _archive(name, version, cache))
    extra_pkgs = [Package(n, v, _archive(n, v, cache)) for n, v in extras]
    body = recipe(pkg, extra_pkgs) if FRAMEWORKS[fw][3] else recipe(pkg)
    sources = [f"{name}=={version}:{p}" for p in sorted(pkg.used)]
    for e in extra_pkgs:
        sources += [f"{e.name}=={e.version}:{p}" for p in sorted(e.used)]
    return {
        "framework": fw,
        "package": name,
        "version": version,
        "also": [f"{n}=={v}" for n, v in extras],
        "generated_by": "scripts/gen_key_catalogues.py",
        "sources": sources,
        **body,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("frameworks", nargs="*", help=f"default: all ({', '.join([*FRAMEWORKS, *FROM_GIT])})")
    ap.add_argument("--from", dest="cache", type=Path, help="folder of downloaded archives")
    ap.add_argument("--file", action="append", default=[], metavar="NAME=PATH",
                    help="read a FROM_GIT framework's file from PATH (at its pinned commit)")
    args = ap.parse_args(argv)
    files = {k: Path(v) for k, _, v in (f.partition("=") for f in args.file)}
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp)
        for fw in args.frameworks or [*FRAMEWORKS, *FROM_GIT]:
            cat = generate_git(fw, files.get(fw)) if fw in FROM_GIT else generate(fw, cache)
            buf = io.StringIO()
            json.dump(cat, buf, indent=1, sort_keys=False)
            (OUT / f"{fw}.json").write_text(buf.getvalue() + "\n", encoding="utf-8")
            n = sum(len(v) for v in cat["sections"].values())
            print(f"{fw}: {n} keys in {len(cat['sections'])} sections from {cat['package']}=={cat['version']}")
            for rel in RELEASES.get(fw, []):
                old = generate(fw, cache, rel)
                buf = io.StringIO()
                json.dump(old, buf, indent=1, sort_keys=False)
                (OUT / f"{fw}@{rel[1]}.json").write_text(buf.getvalue() + "\n", encoding="utf-8")
                print(f"{fw}@{rel[1]}: from {rel[0]}=={rel[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
