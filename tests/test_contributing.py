"""CONTRIBUTING.md's walk-throughs name the files a change touches, and those files exist
(issue 21, deliverable 6): a recipe whose list drifted from the tree sends a newcomer to a
file that moved.

Each of the four recipes the issue names has one line that starts ``Files touched:``
followed by the files in backticks. ``<name>`` (or any ``<...>``) stands for the new thing's
name and matches any one path part; every other path must exist as written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
RECIPES = ("add a rule", "add a fact source", "add a job-config format", "add an output format")


def _section(title: str) -> str:
    m = re.search(rf"^## Recipe: {re.escape(title)}\n(.*?)(?=^## |\Z)", TEXT, re.M | re.S)
    assert m, f"CONTRIBUTING.md has no '## Recipe: {title}' section"
    return m.group(1)


def _files(title: str) -> list[str]:
    lines = [ln for ln in _section(title).splitlines() if ln.startswith("Files touched:")]
    assert len(lines) == 1, f"'{title}': one 'Files touched:' line, found {len(lines)}"
    files = re.findall(r"`([^`]+)`", lines[0])
    assert all("/" in f or "." in f for f in files), f"'{title}': only file paths in backticks: {files}"
    assert files, f"'{title}': the 'Files touched:' line names no file"
    return files


def _exists(pattern: str) -> bool:
    if "<" not in pattern:
        return (ROOT / pattern).exists()
    glob = re.sub(r"<[^>]+>", "*", pattern)
    parent = ROOT / glob.split("*", 1)[0].rsplit("/", 1)[0]
    return parent.is_dir() and any(ROOT.glob(glob))


@pytest.mark.parametrize("title", RECIPES)
def test_each_walk_through_names_files_that_exist(title: str) -> None:
    missing = [f for f in _files(title) if not _exists(f)]
    assert not missing, f"'{title}' names files not in the tree: {missing}"
