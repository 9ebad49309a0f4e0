"""Job-config readers: files of one training job in, one ``job`` facts document out.

``read_job(paths)`` reads every file of ONE job (a directory given here is read whole, as
``lint --job DIR`` does; ``grouping.split_folder`` splits a directory into its jobs, one
per entry point, as ``lint DIR`` does; files a config names are followed), detects each
file's format from its content (or takes ``kind``), runs that format's reader into one
``JobModel`` and returns the facts document(s). A file that cannot be read or parsed
does not stop the others: it is recorded under the document's ``"errors"`` (file, line,
message), which the CLI reports as ``error`` findings. One module per format family keeps each reader small:

========================  =================================================
``registry``              one descriptor per format: detection, dispatch,
                          ``--kind``, defaults and metrics derive from it
``format_detection``      which format a file is (syntax, markers, key scores)
``evidence``              decisive evidence, judged against every other format
``hydra``                 Hydra's composition (defaults lists, packages, experiments)
``composition``           whether a Hydra root is claimed: the framework it composes
``entrypoint``            a launch script's Python entry point: its own arguments
``deepspeed``             DeepSpeed JSON (also inside HF / heredocs)
``lightning``             Lightning Trainer / LightningCLI / Hydra, NeMo 1.x
``hf``                    HF TrainingArguments, Accelerate config
``torchtitan``            torchtitan TOML, both schemas
``shell`` + ``launch``    Slurm, Megatron-LM, torchrun, accelerate/deepspeed launch, env files
``branches``              which ``case``/``if`` branch of a launch script runs
``grouping``              the jobs of a folder (entry points and the files they name)
``defaults``              how a framework default is labelled in every output
``k8s``                   Kubeflow PyTorchJob
``maxtext`` / ``tfmg``    MaxText YAML, TF Model Garden experiment YAML
========================  =================================================
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from validator.facts.document import Document

if TYPE_CHECKING:  # types only: the readers load on first use
    from validator.jobs.base import Ctx
    from validator.jobs.model import JobModel
    from validator.report.model import JSONValue

MAX_FILES = 2000
MAX_FOLLOW = 16
DIR_EXT = {
    ".json", ".yaml", ".yml", ".yaml-template", ".yml-template", ".toml",
    ".sh", ".bash", ".slurm", ".sbatch", ".sub", ".env"}


def read_job(
    paths: Iterable[str | Path],
    kind: str | None = None,
    *,
    gpu_count: int | None = None,
    step_time_s: float | None = None,
    name: str | None = None,
    strict: bool = True,
    named: Iterable[str | Path] = (),
    named_real: frozenset[str] | None = None,
    origins: dict[str, str] | None = None,
) -> list[Document]:
    """One job of ``paths`` (files and/or directories) as a facts document (a list of one).

    A file a config names is followed only inside the job's tree or when it is one of
    ``paths`` or ``named`` (every path on the command line, or every file of the folder
    being split into jobs; ``named_real``: their real paths, worked out once by a caller
    that reads many jobs of the same files, as ``real_paths`` does). ``origins``: where
    ``gpu_count`` / ``step_time`` came from
    (``--set`` by default, or ``profile:FILE``), which decides whether they win over the
    files (see ``JobModel``)."""
    from validator.jobs.model import JobModel

    given = [Path(p) for p in paths]
    model = JobModel(name or ", ".join(str(p) for p in given))
    model.texts = {}  # file -> text of the configs read into the job (source lines)
    scope = _Scope(given, real_paths(named) if named_real is None else named_real)
    queue: list[tuple[Path, str | None, bool]] = []
    for p in given:
        if p.is_dir():
            for f in walk_files(p, model):
                queue.append((f, kind, False))
        else:
            queue.append((p, kind, strict))
    # the job's own files, for what one file says about another read before it (the
    # container image a launcher runs, pins.images)
    model.job_paths = [str(f) for f, _, _ in queue]
    seen: set[str] = set()
    followed = 0

    def follow(naming: Path, ref: str, k: str | None, line: int | None = None) -> None:
        nonlocal followed
        # ``../trainer/default.yaml`` (a Hydra group named from a sibling folder) as Hydra
        # names it: one path per file, whichever config names it
        for cand in (Path(os.path.normpath(naming.parent / ref)) if ".." in Path(ref).parts
                     else naming.parent / ref, Path(ref)):
            if not cand.is_file():
                continue
            why = scope.refuse(cand, model.hydra_roots)
            if why is not None:  # never opened: its bytes must not reach any output
                model.error(str(naming), line, f"names {ref!r} ({why}); not read: name it on the "
                            "command line to lint it with this job")
            elif followed < MAX_FOLLOW:
                followed += 1
                queue.append((cand, k, False))
            return

    from validator.jobs import hydra

    placing = hydra.PLACED.set({})  # this job's Hydra packages (group@pkg), for this job only
    try:
        while queue:
            path, k, explicit = queue.pop(0)
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            model.layer = model.layers.get(key, (0.0, 1.0))[0]  # Hydra composition order (hydra.py)
            _read_one(path, k, explicit, model, follow)
            model.layer = 0.0
    finally:
        hydra.PLACED.reset(placing)
    model.finish(gpu_count=gpu_count, step_time_s=step_time_s, origins=origins)
    # the derivations that read the whole model, after it (they import the model's module,
    # never the other way round: tests/test_import_layers.py)
    from validator.jobs import failure_detection, metrics

    if model.formats:
        failure_detection.derive(model, model.collective)
    metrics.derive(model)
    return [document(model)]


def document(model: JobModel) -> Document:
    from validator import build_info
    from validator.clock import now_utc
    from validator.facts.document import new_document, value
    from validator.jobs.recovery_log import NOT_GIVEN

    facts = model.facts()
    # from logs, not configs: `lint --recovery-log` replaces it; null says which option
    facts["job.recovery.measured"] = value(None, source=NOT_GIVEN)
    facts["job.metrics.measured"] = value(None, source="no run given (lint --run DIR)")  # validator/runs
    doc = new_document(
        "job",
        model.name,
        facts,
        tool_version=build_info.tool_version(),
        collected_at=now_utc(),
    )
    texts = getattr(model, "texts", {})
    for fact in facts.values():
        _attach_text(fact, texts)
    doc["errors"] = [_with_text(dict(e), texts) for e in model.errors]
    # each NCCL/torch variable the job exports with its own file and line (the list fact
    # keeps the first one's only): lint --nodes cites the line of each (validator.jobnodes)
    # for the fixes of its findings (validator/jobs/fixes.py), never evaluated or written out:
    # each file's format, and the text the run read (an edit is made on that text)
    doc["file_kinds"] = dict(getattr(model, "kinds", {}))
    doc["texts"] = dict(texts)
    doc["env"] = [_with_text({"value": v, "file": f, "line": ln}, texts)
                  for v, f, ln, _src in getattr(model, "lists", {}).get("job.comm.env", [])]
    composed = getattr(model, "hydra_composed", None)
    if composed:
        # configs composed under an experiment that also run on their own (its primary
        # config): grouping.split_folder keeps them entry points of their own jobs
        doc["runs_alone"] = sorted(composed)
    return doc


MAX_SOURCE_LINE = 200  # characters of a config line carried inside the result
MAX_KEPT_TEXT = 32 * 1024 * 1024  # configs' text kept for source lines, per job


def _line_text(texts: dict[str, str], file: object, line: object) -> str | None:
    """Line ``line`` of a config read into this job, captured now (never re-read later:
    a result replayed elsewhere shows what this run read, and opens nothing)."""
    text = texts.get(file) if isinstance(file, str) else None
    if text is None or not isinstance(line, int) or line < 1:
        return None
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    end = text.find("\n", start)
    out = text[start:] if end < 0 else text[start:end]
    return out.rstrip("\r")[:MAX_SOURCE_LINE]


def _with_text(loc: dict[str, JSONValue], texts: dict[str, str]) -> dict[str, JSONValue]:
    t = _line_text(texts, loc.get("file"), loc.get("line"))
    if t is not None:
        loc["text"] = t
    return loc


def _attach_text(node: JSONValue, texts: dict[str, str]) -> None:
    if isinstance(node, dict):
        loc = node.get("location")
        if isinstance(loc, dict):
            node["location"] = _with_text(dict(loc), texts)
        for k, v in node.items():
            if k != "location" and isinstance(v, (dict, list)):
                _attach_text(v, texts)
    elif isinstance(node, list):
        for v in node:
            _attach_text(v, texts)


def real_paths(paths: Iterable[str | Path]) -> frozenset[str]:
    """The real paths of the files among ``paths`` (directories left out): a job may read a
    file one of them names. Worked out once per run, not once per job: a lint of 1,000
    files is 1,000 jobs, and resolving every name again for each was a million
    ``realpath`` calls (most of the run's time)."""
    return frozenset(os.path.realpath(p) for p in paths if not os.path.isdir(p))


class _Scope:
    """What a job may read besides its named files: configs inside its tree.

    The tree is each directory given, and the folder of each file given. A file a config
    names is read only when its real path (symlinks resolved) is a named file or lies in
    the tree, and its name is that of a config format: an absolute path in a pull
    request's config must not make a CI runner print a file of its own."""

    def __init__(self, given: list[Path], named: frozenset[str]):
        self.named = named | {os.path.realpath(p) for p in given if not p.is_dir()}
        self.roots = [os.path.realpath(p if p.is_dir() else (p.parent if str(p.parent) else Path("."))) for p in given]

    def refuse(self, cand: Path, hydra_roots: set[str] | frozenset[str] = frozenset()) -> str | None:
        """Why ``cand`` may not be read, or None. ``hydra_roots``: Hydra config roots a
        config of the job composes from (its YAML files are the job's, as Hydra reads them)."""
        real = os.path.realpath(cand)
        if real in self.named:
            return None
        if cand.suffix.lower() in (".yaml", ".yml") and any(
                real.startswith(r.rstrip(os.sep) + os.sep) for r in hydra_roots):
            return None
        if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
            return "outside the job's folder"
        if not (cand.suffix.lower() in DIR_EXT or cand.name.startswith(".env")):
            return "not a config file name"
        return None


def walk_files(root: Path, model: JobModel) -> list[Path]:
    """Config files under ``root``: no symlink loops, hidden dirs skipped, capped."""
    out: list[Path] = []
    inside = _Scope([root], frozenset())
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            if p.suffix.lower() in DIR_EXT or fn.startswith(".env"):
                if p.is_symlink() and inside.refuse(p) is not None:
                    model.error(str(p), None, "a symbolic link to a file outside the job's folder; "
                                "not read (name the target on the command line to lint it)")
                    continue
                out.append(p)
                if len(out) >= MAX_FILES:
                    model.error(
                        str(root),
                        None,
                        f"more than {MAX_FILES} config files; the rest were skipped",
                    )
                    return out
    return out


def _read_one(path: Path, kind: str | None, explicit: bool, model: JobModel, follow: Callable[..., None]) -> None:
    from validator.io.source import ReadError, parse_json, parse_toml, parse_yaml, read_text
    from validator.jobs import format_detection as detect
    from validator.jobs import registry
    from validator.jobs.base import Ctx

    file = str(path)
    try:
        text = read_text(path)
        if not text.strip():
            raise ReadError("empty file")
        syntax: str | None = registry.BY_NAME[kind].syntax if kind in registry.BY_NAME else None
        if syntax == "json" and path.suffix.lower() == ".yaml":
            syntax = None  # a JSON format written as YAML (ds_config.yaml): read as the file is
        if syntax is None:
            syntax = detect.syntax_of(path, text)
            if kind and syntax in ("shell", "env", None):
                syntax = "yaml"
        if syntax is None:  # a shell script that neither launches nor configures a job
            if explicit:
                raise ReadError("a shell script with no #SBATCH, launcher line or NCCL_/TORCH_ "
                                "exports: not a training job (use --kind to name its format)")
            return
        ctx = Ctx(path, file, text, model, follow)
        if syntax in ("shell", "env"):
            model.files.append(file)
            model.kinds.setdefault(file, syntax)
            _keep(model, file, text)
            from validator.jobs import shell

            # a shell format named with --kind: its reader; else the syntax decides
            (registry.reader(kind) if kind else shell.read if syntax == "shell" else shell.read_env)(ctx)
            return
        parser = {"json": parse_json, "toml": parse_toml, "yaml": parse_yaml}[syntax]
        ctx.tree = parser(text, file)
        if len(ctx.tree.docs) > 1:
            # a multi-document manifest: the training resource, wherever it stands
            # (a Service or ConfigMap often comes first)
            for i, doc in enumerate(ctx.tree.docs):
                found = detect.kind_of_tree(syntax, doc, path)
                if found is not None and registry.BY_NAME[found].manifest:
                    ctx.tree.use_document(i)
                    break
        k = kind or detect.kind_of_tree(syntax, ctx.tree.data, path)
        if k is None and not explicit and os.path.realpath(path) in model.layers:
            from validator.jobs import hydra

            if hydra.is_root(ctx.tree.data, path):
                # a group file a Hydra defaults list picked, with a defaults list of its own
                # (data/unlearn.yaml naming datasets@forget): a node of the composition
                # being read, whatever framework is composed
                k = "hydra"
        if k is None:
            if explicit and detect.k8s_kind(ctx.tree.data):
                kinds = [str(detect.k8s_kind(d)) for d in ctx.tree.docs if detect.k8s_kind(d)]
                what = (
                    f"a Kubernetes {kinds[0]}, not a training resource"
                    if len(kinds) < 2
                    else f"Kubernetes {', '.join(dict.fromkeys(kinds))}: no training resource"
                )
                raise ReadError(
                    f"{what} (one of {', '.join(sorted(detect.K8S_TRAINING_KINDS))}, "
                    "or a Volcano Job)"
                )
            if explicit:
                raise ReadError(
                    "not a recognized training config: "
                    f"{detect.why_refused(syntax, ctx.tree.data, path)}; use --kind to name "
                    "its format: " + ", ".join(detect.KINDS)
                )
            return
        if not isinstance(ctx.tree.data, dict):
            raise ReadError(f"expected a mapping at the top level for --kind {k}")
        if k == "kubernetes" and not detect.k8s_kind(ctx.tree.data):
            raise ReadError("no apiVersion and kind: not a Kubernetes manifest (--kind kubernetes)")
        model.files.append(file)
        model.kinds.setdefault(file, k)
        _keep(model, file, text)
        _dispatch(k, ctx)
    except ReadError as exc:
        model.error(file, exc.line, exc.message)
    except RecursionError:
        model.error(file, None, "nested too deeply")
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # a value of the wrong type in an otherwise valid file (``trainer: 5``)
        model.error(file, None, f"unexpected value type ({type(exc).__name__}: {exc})")


def _keep(model: JobModel, file: str, text: str) -> None:
    texts = model.texts
    if sum(map(len, texts.values())) + len(text) <= MAX_KEPT_TEXT:
        texts[file] = text


def _dispatch(k: str, ctx: Ctx) -> None:
    """Run format ``k``'s reader (its descriptor in ``registry.FORMATS`` names it)."""
    from validator.jobs import hydra, registry

    registry.reader(k)(ctx)
    if registry.BY_NAME[k].hydra_bases and ctx.path.suffix.lower() in (".yaml", ".yml") \
            and isinstance(ctx.tree.data, dict) and isinstance(ctx.tree.data.get("defaults"), list):  # type: ignore[union-attr]  # _read_one parses the tree before it dispatches
        hydra.follow(ctx)  # a Hydra config of a known format (trainer/ddp.yaml): its bases too
