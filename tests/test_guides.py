"""The guides in docs/ run as written: each ```sh block in order, from the root of a clone
(the corpus file it copies is there), with ``spec-check`` on PATH. A command line that ends
in ``# exit N`` must exit N, and every line of the ```text block after a ```sh block must
be in that block's output (stdout and stderr)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ["docs/first-conformant-job.md"]
BLOCK = re.compile(r"^```(sh|text)\n(.*?)^```$", re.M | re.S)


def blocks(doc: Path) -> list[tuple[str, str]]:
    """(sh command block, text block shown after it or "")."""
    out: list[tuple[str, str]] = []
    for kind, body in BLOCK.findall(doc.read_text(encoding="utf-8")):
        if kind == "sh":
            out.append((body, ""))
        elif out and not out[-1][1]:
            out[-1] = (out[-1][0], body)
    return out


def commands(block: str) -> list[str]:
    """A block's commands: heredocs kept whole with the line that starts them."""
    lines = block.splitlines()
    cmds, i = [], 0
    while i < len(lines):
        cmd = lines[i]
        m = re.search(r"<<'(\w+)'", cmd)
        while cmd.endswith("\\"):
            i += 1
            cmd += "\n" + lines[i]
        if m:
            while lines[i] != m.group(1):
                i += 1
                cmd += "\n" + lines[i]
        cmds.append(cmd)
        i += 1
    return cmds


@pytest.mark.parametrize("guide", GUIDES)
def test_guide_runs_as_written(guide: str, tmp_path: Path) -> None:
    doc = ROOT / guide
    shown_files = set(re.findall(r"\b(tests/corpus/\S+\.ya?ml)\b", doc.read_text(encoding="utf-8")))
    assert shown_files
    for rel in shown_files:  # a clone's files the guide reads
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "spec-check"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m validator "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    ran = 0
    for block, shown in blocks(doc):
        out = ""
        for cmd in commands(block):
            r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300)
            m = re.search(r"#\s*exit (\d+)\s*$", cmd)
            assert r.returncode == (int(m.group(1)) if m else 0), (cmd, r.stdout[-3000:], r.stderr[-2000:])
            out += r.stdout + r.stderr
            ran += 1
        for line in shown.splitlines():
            assert line.strip() in out, (line, out[-4000:])
    assert ran >= 8
