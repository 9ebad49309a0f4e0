"""Which build of spec-check is running: the ``tool_version`` every result and facts document
records, the commit included.

The form is the package version with a PEP 440 local version label: ``g`` and the first 12
hex digits of the commit (the ``g`` of ``git describe``), e.g. ``0.4.0.dev0+g1a2b3c4d5e6f``
(``spec-check --version``: ``spec-check 0.4.0.dev0+g1a2b3c4d5e6f (training-spec-check)``).
``validator.__version__`` stays the plain version: hatch, the release script and the pins
read it. The commit comes from, in this order:

1. pip's ``direct_url.json`` (PEP 610) of the installed distribution beside the running
   package (``training_spec_check-VERSION.dist-info``): its ``vcs_info.commit_id``, which
   ``pip install "training-spec-check @ git+URL@COMMIT"`` (the README's install line) writes;
2. the git checkout the package runs from (the folder above ``validator/`` holds ``.git``,
   as in an editable install): ``HEAD`` read from ``.git`` itself (``HEAD``, the branch's ref
   file or ``packed-refs``; a worktree's ``gitdir:`` and ``commondir`` followed), else
   ``git rev-parse HEAD`` with a 2 s limit. Local changes are not marked: telling them
   reliably takes a ``git status`` of the whole tree, too slow for every run;
3. none (a wheel from the index, an sdist, a copy of the tree without ``.git``, a
   ``pip install .`` of a checkout): the plain version. A commit is never guessed.

A run whose clock is pinned (``SOURCE_DATE_EPOCH``, ``validator/clock.py``) records the plain
version: pinned runs are the reproducible outputs committed to this repository (the golden
files, ``reports/examples/``, the docs' printed blocks), which must be the same from every
commit with the same content. ``spec-check --version`` always shows the commit it has.

Computed on first use, once per process; nothing is read at import.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

from validator import __version__

PACKAGE_DIR = Path(__file__).resolve().parent
DIST_INFO = f"training_spec_check-{__version__}.dist-info"  # the wheel's name for DISTRIBUTION
SHORT = 12  # hex digits of the commit in the local version label
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256 object names


def tool_version() -> str:
    """What a document records as ``tool_version``: ``build_version()``, or the plain
    version where the run's clock is pinned."""
    from validator.clock import pinned

    return __version__ if pinned() else build_version()


@functools.cache
def build_version() -> str:
    """``VERSION+gCOMMIT`` where the commit is known, else the plain ``VERSION``."""
    sha = commit()
    return f"{__version__}+g{sha[:SHORT]}" if sha else __version__


@functools.cache
def commit() -> str | None:
    """The full commit of the running build, or None where it is not known."""
    return installed_commit(PACKAGE_DIR.parent) or checkout_commit(PACKAGE_DIR.parent)


def installed_commit(site: Path) -> str | None:
    """``vcs_info.commit_id`` of ``direct_url.json`` in this version's dist-info under
    ``site`` (the folder the running package sits in)."""
    try:
        data = json.loads((site / DIST_INFO / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    sha = vcs.get("commit_id") if isinstance(vcs, dict) and vcs.get("vcs") == "git" else None
    return sha if isinstance(sha, str) and _COMMIT.fullmatch(sha) else None


def checkout_commit(root: Path) -> str | None:
    """HEAD of the git checkout at ``root`` (None where ``root`` holds no ``.git``)."""
    dotgit = root / ".git"
    if not (dotgit.is_dir() or dotgit.is_file()):
        return None
    return _read_head(dotgit) or _rev_parse(root)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _read_head(dotgit: Path) -> str | None:
    """HEAD from the files git keeps, without running git; None where they say something this
    reader does not follow (a reftable, an unborn branch): then git is asked."""
    gitdir = dotgit
    if dotgit.is_file():  # a worktree or submodule: "gitdir: PATH"
        text = _read(dotgit) or ""
        if not text.startswith("gitdir:"):
            return None
        gitdir = (dotgit.parent / text.removeprefix("gitdir:").strip()).resolve()
    head = _read(gitdir / "HEAD") or ""
    if _COMMIT.fullmatch(head):  # detached
        return head
    ref = head.removeprefix("ref:").strip() if head.startswith("ref:") else ""
    if not ref.startswith("refs/") or ".." in ref.split("/"):
        return None
    common = gitdir
    if (gitdir / "commondir").is_file():  # a worktree: branches live in the main repository
        common = (gitdir / (_read(gitdir / "commondir") or ".")).resolve()
    for base in dict.fromkeys((gitdir, common)):
        sha = _read(base / ref)
        if sha is not None:
            return sha if _COMMIT.fullmatch(sha) else None
    for line in (_read(common / "packed-refs") or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _COMMIT.fullmatch(sha):
            return sha
    return None


def _rev_parse(root: Path) -> str | None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # this checkout, not another
    try:
        r = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=root, env=env,
                           capture_output=True, text=True, timeout=2)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = r.stdout.strip()
    return sha if r.returncode == 0 and _COMMIT.fullmatch(sha) else None
