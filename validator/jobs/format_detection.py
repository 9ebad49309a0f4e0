"""Which reader a file needs, decided from its content (``--kind`` forces it).

File names lie (``config.yaml`` can be any of six formats), so detection looks at the
keys: ``apiVersion``+``kind: PyTorchJob``; ``base_config``/``per_device_batch_size``
(MaxText); ``runtime``/``task``/``trainer.steps_per_loop`` (Model Garden);
``exp_manager`` or a Megatron ``model:`` batch (NeMo); ``distributed_type`` (Accelerate);
``trainer:``/``class_path``/``_target_`` (Lightning); TrainingArguments field names (HF);
DeepSpeed's batch/precision/ZeRO keys in JSON. Env files are recognized by ``KEY=VALUE``
lines only.

A shell script is a training job only when it says so: ``#SBATCH`` lines, a launcher at
a command position (srun, torchrun, ``python -m torch.distributed``, ``accelerate
launch``, deepspeed, mpirun, torchtune's ``tune run``) or ``NCCL_*``/``TORCH_*`` exports. Any other script (a
``build.sh`` that runs ``make``) is ``None``, no config at all: linting it against the
job rules would fail MON-01 on every repository that has a shell script.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from validator.jobs import registry

if TYPE_CHECKING:
    from validator.report.model import JSONValue
from validator.lazy import Pattern

# the formats spec-check reads (``--kind``), from the registry: read on each use, so a
# format registered later is offered too
KINDS = registry.Kinds()
STRUCTURED_EXT = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    # envsubst templates of manifests (kubeflow examples ship ``*.yaml-template``)
    ".yaml-template": "yaml",
    ".yml-template": "yaml",
    ".toml": "toml",
}
SHELL_EXT = {".sh", ".bash", ".slurm", ".sbatch", ".sub"}

# key names of DeepSpeed, HF TrainingArguments, Accelerate and MaxText that make a file that
# does not parse recognizably a job config (``_CONFIG_WORDS``)
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


# a launcher at a command position: line start, after ; & | ( $( or an opening quote/=
# (``CMD="torchrun ..."``), behind optional ``exec``/``nohup``/``env``/``VAR=x`` prefixes
_LAUNCHER = Pattern(
    r"""(?:^|[;&|(=`"'])[ \t]*(?:(?:exec|nohup|time|env|\$\(|[A-Za-z_]\w*=\S{0,256})[ \t]+){0,32}"""
    r"(?:\S{0,256}/)?(?:srun|torchrun|ft_launcher|mpirun|mpiexec|deepspeed|accelerate\s+launch|tune[ \t]+run"
    r"|python[\d.]*\s+(?:-\w+\s+)*-m\s+torch\.distributed(?:\.run|\.launch)?)(?![\w.-])",
    re.M,
)
# [ \t]*, not \s*: with re.M, \s* from every line start ran over all the blank lines after
# it (quadratic on a file of newlines)
_JOB_SHELL = Pattern(r"^[ \t]*#SBATCH|^[ \t]*(?:export[ \t]+)?(?:NCCL|TORCH)_\w*=", re.M)


def is_job_shell(text: str) -> bool:
    """Whether a shell script launches or configures a training job (see the module doc)."""
    if _JOB_SHELL.search(text):
        return True
    # the launcher pattern only on lines that name a launcher: on a long line of ``x=x=...``
    # it would try every ``=`` as a start (bounded runs above keep each try short)
    return any(_LAUNCHER.search(line) for line in _launcher_lines(text))


_LAUNCHER_WORD = Pattern(r"srun|torchrun|ft_launcher|mpirun|mpiexec|deepspeed|accelerate|torch\.distributed|tune")


def _launcher_lines(text: str) -> list[str]:
    out: list[str] = []
    for m in _LAUNCHER_WORD.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start:] if end < 0 else text[start:end]
        if not out or out[-1] is not line:
            out.append(line)
        if len(out) > 1000:
            break
    return out


def syntax_of(path: Path, text: str) -> str | None:
    """json | yaml | toml | shell | env, or None for a shell script that is no job."""
    if re.search(r"\.ya?ml\.(?:template|tmpl|tpl|in)$", path.name.lower()):
        return "yaml"  # an envsubst template of a manifest (train.yaml.template)
    ext = path.suffix.lower()
    head = text.lstrip()[:1]
    if ext in STRUCTURED_EXT:
        return STRUCTURED_EXT[ext]
    if ext in SHELL_EXT or text.startswith("#!") or re.search(r"^[ \t]*#SBATCH", text, re.M):
        return "shell" if is_job_shell(text) else None
    if ext == ".env" or path.name.startswith(".env"):
        return "env"
    if ext == ".txt" and re.match(r"(?:requirements|constraints)", path.name.lower()):
        return "yaml"  # pip's list (read by pins.py): `deepspeed==0.14.4` is no launcher line
    if head in "{[" and head:
        return "json" if head == "{" else "toml"
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    if lines and all(re.match(r"^(export\s+)?[A-Za-z_]\w*=", ln) for ln in lines):
        return "env"
    if is_job_shell(text):
        return "shell"
    return "yaml"


# key names that make a file recognizably a job config even when it does not parse
_CONFIG_WORDS = Pattern(
    r"""(?:^|[\s{,"'])("""
    + "|".join(
        sorted(
            DS_KEYS | HF_KEYS | ACC_KEYS | MAXTEXT_KEYS
            | {"class_path", "_target_", "exp_manager", "pytorchReplicaSpecs", "PyTorchJob",
               "tensor_model_parallel_size", "micro_batch_size",
               # torchtune, axolotl, llm-foundry/OLMo, levanter, Kubernetes training kinds
               "_component_", "base_model", "global_train_batch_size",
               "device_train_microbatch_size", "num_train_steps", "mpiReplicaSpecs",
               "replicatedJobs", "rayClusterSpec"}
        )
    )
    # [ \t]*, not \s*, after ^ (re.M): \s* ran over every blank line after each line start
    + r""")["']?\s*[:=]|^[ \t]*\[[ \t]*(?:training|parallelism|checkpoint|job|metrics)[ \t]*\]""",
    re.M,
)


def looks_like_config(path: Path, text: str) -> bool:
    """Whether a file that failed to parse is still recognizably a training config.

    Under ``--ignore-unknown`` a parse error in a file of no known format (a Helm
    template, a CI workflow with ``{{ }}``) is passed over, but a DeepSpeed JSON with a
    trailing comma must still be an error: its settings are unknown, never a pass.
    """
    if path.suffix.lower() in SHELL_EXT:
        return is_job_shell(text)
    return bool(_CONFIG_WORDS.search(text))


def kind_of_tree(syntax: str, data: JSONValue, path: Path | None = None) -> str | None:
    """The format of a parsed structured file, or None when it is no known job config.

    The candidate the markers and key counts pick (``_candidate``) is kept only when its
    decisive evidence holds against every other format's (``evidence.judge``): a
    ``trainer:`` block of verl's or a ``task:`` of fairseq's is no Lightning or Model
    Garden config, whatever the section is called.
    """
    return _judged(syntax, data, path)[0]


def _judged(syntax: str, data: JSONValue, path: Path | None, compose: bool = True) -> tuple[str | None, str]:
    """(the format, or None; what was seen, in words, when the candidate is refused)."""
    kind = _candidate(syntax, data, path, compose)
    if kind is None or syntax != "yaml" or not isinstance(data, dict):
        return kind, ""
    from validator.jobs import evidence

    if registry.BY_NAME[kind].composes and path is not None:
        from validator.jobs import composition

        j = composition.judge(kind, data, path, _group(path), claimed_kind)
    else:
        j = evidence.judge(kind, data, _group(path))
    return j.kind, j.why


def claimed_kind(data: JSONValue, path: Path) -> str | None:
    """The format of a YAML config a Hydra root composes, judged alone (not as a root
    itself): a format spec-check reads, or None."""
    kind = _judged("yaml", data, path, compose=False)[0]
    fmt = registry.BY_NAME.get(kind) if kind else None
    return kind if fmt is not None and fmt.claimed and fmt.reader and not fmt.composes else None


def why_refused(syntax: str, data: JSONValue, path: Path | None = None) -> str:
    """What was seen in a file no format claims: the evidence each format left."""
    why = _judged(syntax, data, path)[1]
    if why:
        return why
    return f"no format explains its keys well (closest: {closest(data, path, syntax)})"


def _group(path: Path | None) -> str | None:
    """The Hydra package a file's keys compose under (``hydra.package``): its folder's
    group unless a ``# @package`` header says otherwise (``_global_``: the root)."""
    if path is None:
        return None
    from validator.jobs import hydra

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        head = ""
    return hydra.package(path, head)


def _candidate(syntax: str, data: JSONValue, path: Path | None = None, compose: bool = True) -> str | None:
    """The format of a parsed structured file, or None when it is no known job config.

    Formats with a marker no other format has (a Kubernetes ``apiVersion``/``kind``, an
    Accelerate ``distributed_type``, MaxText's ``base_config``, a TF Model Garden
    ``task``, NeMo's ``exp_manager``) are taken by it. The others are decided by
    evidence (``rank``): the file's keys are counted against every framework's key
    catalogue, and the format that explains it best wins, provided it explains it
    well; a file that no format explains well is None (refused when named).
    """
    if not isinstance(data, dict):
        return None
    if syntax == "yaml" and isinstance(data.get("apiVersion"), str) and isinstance(data.get("kind"), str):
        kind = data["kind"]
        if kind == "PyTorchJob":
            return "pytorchjob"
        if kind == "Job" and not data["apiVersion"].startswith("batch.volcano.sh"):
            return None  # a plain batch/v1 Job: no training kind
        return "kubernetes" if kind in K8S_TRAINING_KINDS else None
    legacy = _marker_kind(syntax, data)
    # a marker of a format whose keys detection scores (Lightning's ``trainer:``, HF's
    # TrainingArguments names) is weighed against every scored format's evidence
    if syntax == "yaml" and (legacy is None or legacy in registry.catalogued("yaml")):
        found = by_evidence(data, legacy, path)
        if found is None and path is not None and "defaults" in data and compose:
            from validator.jobs import hydra

            return "hydra" if hydra.is_root(data, path) else None
        return found
    if syntax == "toml" and legacy in registry.catalogued("toml"):
        # torchtitan's marker is a section name ([training], [job]): the keys in them
        # must be mostly torchtitan's too
        (mine,) = rank(data, kinds=(legacy,))
        return legacy if mine.ratio >= ACCEPT_RATIO else None
    if syntax == "json" and legacy in registry.catalogued("json"):
        # DeepSpeed's marker is one of its key names: an HF trainer_state.json has
        # train_batch_size too, among keys DeepSpeed never reads
        ev = next((e for e in rank(data, kinds=_scored_in("json")) if e.kind == legacy), None)
        return legacy if ev is None or ev.top_ratio >= ACCEPT_RATIO else None
    return legacy


def _scored_in(syntax: str) -> tuple[str, ...]:
    """The formats whose files detection scores in ``syntax`` (their key catalogues)."""
    return tuple(registry.catalogued(syntax))


def k8s_kind(data: JSONValue) -> str | None:
    """The ``kind`` of a Kubernetes resource, or None for anything else."""
    if isinstance(data, dict) and isinstance(data.get("apiVersion"), str):
        kind = data.get("kind")
        return kind if isinstance(kind, str) else None
    return None


# Kubernetes kinds that run training (Kubeflow training operator, MPI operator, JobSet,
# KubeRay, Volcano); a Service, ConfigMap or Deployment is none
K8S_TRAINING_KINDS = {
    "PyTorchJob", "MPIJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "TrainJob",
    "JobSet", "RayJob", "Job",
}

ACCEPT_RATIO = 0.5  # at least half of a file's top-level keys known to its format


@dataclass
class Evidence:
    """How well one format explains a file's keys."""

    kind: str
    known: list[str]
    unknown: list[str]
    weight: float  # known keys weighted by how few formats share them, plus sections

    @property
    def ratio(self) -> float:
        total = len(self.known) + len(self.unknown)
        return len(self.known) / total if total else 0.0

    @property
    def top_ratio(self) -> float:
        """The share of top-level keys known (a section's own keys left out)."""
        top_known = sum(1 for k in self.known if "." not in k)
        total = top_known + sum(1 for k in self.unknown if "." not in k)
        return top_known / total if total else 0.0

    @property
    def net(self) -> float:
        return self.weight - 0.25 * len(self.unknown)

    def explains(self) -> bool:
        return self.ratio >= ACCEPT_RATIO and len(self.known) >= 2 and self.weight >= 1.5

    def describe(self) -> str:
        return f"{self.kind} ({len(self.known)} of {len(self.known) + len(self.unknown)} keys known)"


def rank(
    data: dict[str, JSONValue], group: str | None = None, kinds: tuple[str, ...] | None = None
) -> list[Evidence]:
    """Every catalogued format's evidence for ``data``, best first.

    A key known to one format only counts 1, one that three formats share counts 1/3;
    a key the format does not accept counts against it. A known section (``trainer:``)
    whose own keys the format also knows adds up to one more: levanter's ``trainer``
    holds ``mp`` and ``train_batch_size``, Lightning's ``precision`` and ``devices``.
    ``group``: the folder a Hydra config-group file sits in (``trainer/ddp.yaml``), whose
    keys are counted against that section.
    """
    from validator.jobs.keys import catalogue

    scored = registry.catalogued()
    table = scored if kinds is None else {k: scored.get(k, k) for k in kinds}
    cats = {k: catalogue(n) for k, n in table.items()}
    # Hydra's defaults list is Hydra's, not the framework's: it counts for no format
    keys = [k for k in data if isinstance(k, str) and not (k == "defaults" and isinstance(data[k], list))]
    df: dict[str, int] = {}
    for cat in cats.values():
        if cat is None:
            continue
        for k in keys:
            if k in cat.top():
                df[k] = df.get(k, 0) + 1
    out = []
    groups = registry.hydra_groups()
    for kind, cat in cats.items():
        if cat is None:
            continue
        top = cat.top()
        if group is not None and group in groups.get(kind, ()) and group not in keys:
            top = cat.sections[group]
        elif kind in groups and not set(keys) & top:
            # no key of its own top level: perhaps a group file copied out of its folder
            # (a file of Trainer arguments alone), judged against the group's keys
            for g in groups[kind]:
                if sum(k in cat.sections[g] for k in keys) > sum(k in top for k in keys):
                    top = cat.sections[g]
        known = [k for k in keys if k in top]
        unknown = [k for k in keys if k not in top]
        weight = sum(1.0 / df.get(k, 1) for k in known)
        for k in list(known):
            sub = data.get(k)
            sect = cat.known(k)
            if isinstance(sub, dict) and sect and sub:
                # a listed section's own keys count too: a ``trainer:`` block of keys
                # Lightning's Trainer does not take is no evidence of Lightning
                hit = [s for s in sub if s in sect]
                weight += len(hit) / len(sub)
                known += [f"{k}.{s}" for s in hit]
                unknown += [f"{k}.{s}" for s in sub if s not in sect]
        out.append(Evidence(kind, known, unknown, weight))
    out.sort(key=lambda e: (-e.net, -e.ratio, e.kind))
    return out


def by_evidence(data: dict[str, JSONValue], legacy: str | None, path: Path | None = None) -> str | None:
    """The best-explaining format, or the marker-based guess when it is as good."""
    group = _group(path)
    ranked = rank(data, group)
    if not ranked:
        return legacy
    best = ranked[0]
    mine = next((e for e in ranked if e.kind == legacy), None)
    if legacy is not None and mine is not None:
        if best.kind != legacy and best.explains() and best.net > mine.net:
            return best.kind
        if legacy == "hf" and mine.ratio < ACCEPT_RATIO:
            # HF's marker is any one TrainingArguments name (``learning_rate``): with
            # most of the file foreign to HF, it is no TrainingArguments file
            return None
        if legacy == "lightning" and mine.ratio < ACCEPT_RATIO and not _lightning_marker(data):
            # nor is any file with a ``trainer:`` block a Lightning config
            return None
        return legacy
    if legacy is not None:
        return legacy
    return best.kind if best.explains() else None


def _lightning_marker(data: dict[str, JSONValue]) -> bool:
    """LightningCLI's ``class_path`` or Hydra's ``_target_``: Lightning's own syntax."""
    return (
        "class_path" in str(data)[:5000]
        or "_target_" in data
        or any(isinstance(v, dict) and "_target_" in v for v in data.values())
    )


def closest(data: JSONValue, path: Path | None = None, syntax: str = "yaml") -> str:
    """For a refusal: the formats that came closest, with how much of the file each knew."""
    if not isinstance(data, dict) or not data:
        return "none"
    kinds = _scored_in(syntax) if syntax in ("json", "toml") else None
    ranked = [e for e in rank(data, path.parent.name if path else None, kinds) if e.known][:3]
    return ", ".join(e.describe() for e in ranked) or "none"


def _marker_kind(syntax: str, data: dict[str, JSONValue]) -> str | None:
    """The format whose marker holds first (``registry.Marker``; the rules before evidence
    scoring). A syntax other than JSON or TOML is tried against YAML's markers."""
    keys = set(data)
    for kind, clauses in _markers(syntax if syntax in ("json", "toml") else "yaml"):
        for clause in clauses:  # loops, not any(all(...)): this runs on every file linted
            for atom in clause:
                if not atom(keys, data):
                    break
            else:
                return kind
    return None


# a marker's atom made a test of (a file's top-level keys, the file's parsed mapping)
Atom: TypeAlias = "Callable[[set[str], dict[str, JSONValue]], bool]"
_COMPILED: dict[str, tuple[object, tuple[tuple[str, tuple[tuple[Atom, ...], ...]], ...]]] = {}


def _markers(syntax: str) -> tuple[tuple[str, tuple[tuple[Atom, ...], ...]], ...]:
    """The registry's markers of ``syntax``, each clause's atoms made tests once (again
    after a format is registered: the registry's table is then another object)."""
    table = registry.markers(syntax)
    hit = _COMPILED.get(syntax)
    if hit is None or hit[0] is not table:
        hit = _COMPILED[syntax] = (table, tuple(
            (kind, tuple(tuple(_atom(a) for a in clause.split()) for clause in m.clauses)) for kind, m in table))
    return hit[1]


def _atom(text: str) -> Atom:
    """One atom of a marker clause as a test of (the file's top-level keys, the file)."""
    negate = text.startswith("!")
    body = text[1:] if negate else text
    test: Atom
    if not body:
        raise ValueError(f'marker atom "{text}": no key (registry.Marker says what an atom is)')
    if "~" in body:
        key, _, rest = body.partition("~")
        needle, _, limit = rest.rpartition(":")
        if not (needle and limit.isdigit()):
            raise ValueError(f'marker atom "{text}": write KEY~TEXT:N (or ~TEXT:N for the whole file)')
        n = int(limit)
        if key:
            test = lambda keys, data: needle in str(data.get(key))[:n]  # noqa: E731
        else:
            test = lambda keys, data: needle in str(data)[:n]  # noqa: E731
    elif "=" in body:
        key, _, value = body.partition("=")
        test = lambda keys, data: data.get(key) == value  # noqa: E731
    elif body.endswith("{}"):
        key = body[:-2]
        if negate:  # the common atoms negated in one call, not two
            return lambda keys, data: not isinstance(data.get(key), dict)
        test = lambda keys, data: isinstance(data.get(key), dict)  # noqa: E731
    elif "." in body:
        key, _, names = body.partition(".")
        inner = frozenset(names.split("|"))
        if key == "*":
            test = lambda keys, data: any(isinstance(v, dict) and not inner.isdisjoint(v)  # noqa: E731
                                          for v in data.values())
        else:
            test = lambda keys, data: isinstance(data.get(key), dict) and not inner.isdisjoint(data[key])  # noqa: E731
    else:
        names_ = frozenset(body.split("|"))
        if negate:
            return lambda keys, data: names_.isdisjoint(keys)
        test = lambda keys, data: not names_.isdisjoint(keys)  # noqa: E731
    if negate:
        return lambda keys, data: not test(keys, data)
    return test
