"""Jobs in a folder: which files belong together, so that one job's files never decide
another job's verdict.

A job is an entry point (a launcher script, a manifest, a top-level training config) plus
the files it names (``--deepspeed ds.json``, ``--config_file accelerate.yaml``, ``source
nccl.env``), followed as the readers follow them. In a folder:

* every file is first read alone, with the files it names; a file that another file of
  the folder names is part of that file's job, not an entry point of its own;
* every other recognized config is an entry point, one job each, named after it (twenty
  HF recipes in one folder are twenty jobs; a launcher and the DeepSpeed JSON it passes
  are one);
* files that name each other in a circle (no file outside names them) become one job,
  named after the first of them;
* an env file (``KEY=VALUE`` lines) that no file names is environment for whatever runs
  in its folder: it joins every job of the folder (directly in it), and is a job of its
  own only where the folder has no other;
* a file that cannot be read is an ``error`` of its own (named after it) unless a job that
  names it already reports it.

``lint --job PATH`` bypasses all this and reads a folder as one job, for a job whose
files are tied together by something no reader follows (a variable naming the config).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from validator.facts.document import Document

if TYPE_CHECKING:
    from typing import TypedDict

    class _JobKeywords(TypedDict):
        """What ``split_folder`` passes to every ``read_job`` alike."""

        gpu_count: int | None
        step_time_s: float | None
        strict: bool
        origins: dict[str, str] | None
        named_real: frozenset[str]


def _files(doc: Document) -> list[str]:
    return list(doc["facts"]["job.files"]["value"] or ())


def _env_only(doc: Document) -> bool:
    return doc["facts"]["job.formats"]["value"] == ["env"]


def split_folder(
    root: Path,
    kind: str | None = None,
    *,
    gpu_count: int | None = None,
    step_time_s: float | None = None,
    files: list[Path] | None = None,
    origins: dict[str, str] | None = None,
) -> list[Document]:
    """The jobs of ``root`` (its whole tree, or just ``files`` when given), each as a
    facts document named after its entry point, in walk order."""
    from validator.jobs import read_job, real_paths, walk_files
    from validator.jobs.model import JobModel

    walk_errors = JobModel(str(root))
    if files is None:
        files = walk_files(root, walk_errors)
    real = os.path.realpath
    kw: _JobKeywords = {
        "gpu_count": gpu_count, "step_time_s": step_time_s, "strict": False, "origins": origins,
        # the walked tree: a job may read any config of the folder it was found in
        "named_real": real_paths(files),
    }
    alone = {f: read_job([f], kind, name=str(f), **kw)[0] for f in files}
    named: set[str] = set()
    for f, doc in alone.items():
        # a Hydra experiment's primary config runs on its own too: not named by it
        own = set(doc.get("runs_alone") or ())
        named.update(real(g) for g in _files(doc) if real(g) != real(f) and real(g) not in own)
    recognized = [f for f in files if _files(alone[f])]
    envs = [f for f in recognized if _env_only(alone[f]) and real(f) not in named]
    entries: list[Path] = []
    covered: set[str] = set()
    for circle in (False, True):  # entry points first; then files that only name each other
        for f in recognized:
            if f in envs or real(f) in covered or (real(f) in named and not circle):
                continue
            entries.append(f)
            covered.update(real(g) for g in _files(alone[f]))
    folders = {real(e.parent) for e in entries}
    # an env file with no job beside it is a job of its own (linted alone, as before)
    entries += [v for v in envs if real(v.parent) not in folders]
    envs = [v for v in envs if real(v.parent) in folders]
    docs: list[Document] = []
    for e in entries:
        extra = [v for v in envs if real(v.parent) == real(e.parent) and real(v) not in covered]
        if e in extra:
            extra = []
        docs.append(read_job([e, *extra], kind, name=str(e), **kw)[0] if extra else alone[e])
    reported = {real(err["file"]) for d in docs for err in d["errors"] if err.get("file")}
    for f in files:
        doc = alone[f]
        if not _files(doc) and doc["errors"] and real(f) not in reported:
            docs.append(doc)
    if walk_errors.errors:
        if docs:
            docs[0]["errors"] = [*walk_errors.errors, *docs[0]["errors"]]
        else:
            from validator.jobs import document

            docs.append(document(walk_errors))
    return docs


def jobs_of_files(
    paths: tuple[Path, ...],
    kind: str | None = None,
    *,
    gpu_count: int | None = None,
    step_time_s: float | None = None,
    origins: dict[str, str] | None = None,
) -> list[Document]:
    """For pre-commit: the jobs that the named files belong to. Each file's folder (its
    config files directly in it, not its subfolders) is split into jobs as above, and the
    jobs holding a named file are linted, each once; a named directory stands for all
    the jobs of its tree."""
    from validator.errors import SpecCheckError
    from validator.jobs import DIR_EXT, MAX_FILES

    real = os.path.realpath
    by_folder: dict[str, list[Path]] = {}
    split: dict[str, tuple[int, list[Document]]] = {}  # folder -> (files listed, its jobs)
    chosen: list[Document] = []
    seen: set[str] = set()

    def take(doc: Document) -> None:
        if doc["subject"]["name"] not in seen:
            seen.add(doc["subject"]["name"])
            chosen.append(doc)

    for p in paths:
        if p.is_dir():
            for doc in split_folder(p, kind, gpu_count=gpu_count, step_time_s=step_time_s,
                                    origins=origins):
                take(doc)
            continue
        folder = p.parent
        key = os.path.normpath(str(folder))
        if key not in by_folder:
            try:
                names = sorted(os.listdir(folder))
            except OSError as exc:
                raise SpecCheckError(f"cannot list: {exc.strerror or exc}", file=str(folder)) from None
            by_folder[key] = [
                folder / n
                for n in names
                if (Path(n).suffix.lower() in DIR_EXT or n.startswith(".env"))
                and not (folder / n).is_dir()
            ][:MAX_FILES]
        listed = by_folder[key]
        if p not in listed and (p.exists() or p.is_symlink()):
            listed.append(p)  # a named file is part of its job, whatever its name
        if key not in split or split[key][0] != len(listed):
            split[key] = (
                len(listed),
                split_folder(folder, kind, gpu_count=gpu_count, step_time_s=step_time_s,
                             files=listed, origins=origins),
            )
        docs = split[key][1]
        mine = [
            d
            for d in docs
            if real(p) in {real(f) for f in _files(d)}
            or any(real(e.get("file") or "") == real(p) for e in d["errors"])
        ]
        for doc in mine:
            take(doc)
    return chosen
