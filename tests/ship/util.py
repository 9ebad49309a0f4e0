"""Helpers for the shipping tests: a snapshot of this checkout as a git repository with
the release tag, the way a user's pre-commit or CI sees the project."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check,
                          env={**os.environ, **GIT_ENV}, timeout=120)


def snapshot(dest: Path, tag: str) -> Path:
    """This working tree (tracked and untracked files git does not ignore) committed into a
    fresh repository at ``dest`` and tagged ``tag``: what the release tag will hold."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True, timeout=60).stdout.split(b"\0")
    for raw in filter(None, files):
        rel = raw.decode()
        src = ROOT / rel
        if src.is_file():  # a file deleted but not yet staged is listed and absent
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git("init", "-q", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "snapshot", cwd=dest)
    git("tag", tag, cwd=dest)
    return dest


def yaml_blocks(markdown: Path) -> list[str]:
    """The ```yaml blocks of a Markdown file, in order."""
    return re.findall(r"^```yaml\n(.*?)^```$", markdown.read_text(encoding="utf-8"), re.M | re.S)


def doc_block(markdown: Path, first_line: str) -> str:
    """The yaml block of ``markdown`` that starts with ``first_line`` (a ``# path`` comment)."""
    [block] = [b for b in yaml_blocks(markdown) if b.startswith(first_line)]
    yaml.safe_load(block)  # every block shown must at least parse
    return block


PINNED_COMMIT = re.compile(r"spec-check/spec-check@([0-9a-f]{40})\b")


def is_commit_of_this_repository(sha: str) -> bool:
    """Whether ``sha`` is a commit in this checkout's history: the docs pin a commit that
    exists (no release tag does yet), so the line works as written once main is pushed."""
    r = subprocess.run(["git", "merge-base", "--is-ancestor", sha, "HEAD"], cwd=ROOT, capture_output=True,
                       timeout=60)
    return r.returncode == 0
