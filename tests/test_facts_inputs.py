"""Facts in, the same way everywhere (issue 34, deliverable 4): `check --facts`, `cluster
--facts` and `lint --nodes` take several paths after one flag (a shell glob), a folder of one
file per host, and refuse the same inputs with the same words, each naming what to pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validator.cli.paths import spread

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts"
FLEET = ROOT / "tests" / "reports" / "fixtures" / "fleet"
JOB = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm"


def shell(command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``command`` as a user types it in bash (globs expanded by the shell)."""
    bindir = Path(os.environ.get("TMPDIR", "/tmp")) / f"spec-check-shim-{os.getpid()}"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "spec-check"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m validator "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def subjects(stdout: str) -> list[str]:
    return sorted(s["name"] for s in json.loads(stdout)["subjects"] if s["kind"] == "node")


def test_several_paths_after_one_flag() -> None:
    assert spread(["cluster", "--facts", "a", "b", "--format", "json", "c"]) == [
        "cluster", "--facts", "a", "--facts", "b", "--format", "json", "c"]
    assert spread(["lint", "job", "--nodes", "a", "b", "-o", "x"]) == ["lint", "job", "--nodes", "a", "--nodes", "b",
                                                                      "-o", "x"]
    assert spread(["check", "--facts", "a", "--", "b"]) == ["check", "--facts", "a", "--", "b"]
    assert spread(["report", "--facts", "a", "b"]) == ["report", "--facts", "a", "b"]  # no such option there


def test_a_shell_glob_after_facts_is_every_file() -> None:
    r = shell("spec-check cluster --facts tests/fixtures/facts/dgx_h100*.json --format json")
    assert r.returncode == 1 and "unexpected extra argument" not in r.stderr, r.stderr
    # the synthesized variants share one host name: each is named by its file, as in a folder
    assert subjects(r.stdout) == sorted(p.stem for p in FACTS.glob("dgx_h100*.json"))
    r = shell("spec-check check --facts tests/fixtures/facts/dgx_h100_port_*.json --format json")
    assert r.returncode == 1 and len(json.loads(r.stdout)["subjects"]) == 2, r.stderr


def test_a_folder_of_one_file_per_host_is_read_by_every_verb(tmp_path: Path) -> None:
    shutil.copytree(FLEET, tmp_path / "fleet")
    for cmd in ("spec-check check --facts fleet --format json", "spec-check cluster --facts fleet --format json"):
        r = shell(cmd, tmp_path)
        assert r.returncode == 1 and subjects(r.stdout) == ["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"], (cmd, r.stderr)
    folder = tmp_path / "variants"
    folder.mkdir()
    for p in FACTS.glob("dgx_h100*.json"):
        shutil.copy(p, folder)
    assert shell("spec-check cluster --facts variants --format json", tmp_path).returncode == 1
    r = shell(f"spec-check lint {JOB} --nodes variants --format json", tmp_path)
    assert r.returncode in (0, 1) and "error:" not in r.stderr, r.stderr  # it refused these before


@pytest.mark.parametrize(("given", "words"), [
    ("nope.json", "nope.json: no such file or directory (--{flag})"),
    ("empty", "empty: no *.json node facts in this directory (--{flag})"),
    ("bad.json", "bad.json:1: invalid JSON: Expecting value (truncated?) (column 1)"),
])
def test_every_verb_refuses_the_same_input_with_the_same_words(tmp_path: Path, given: str, words: str) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.json").write_text("x\n")
    for cmd, flag in ((f"spec-check check --facts {given}", "facts"), (f"spec-check cluster --facts {given}", "facts"),
                      (f"spec-check lint {JOB} --nodes {given}", "nodes")):
        r = shell(cmd, tmp_path)
        assert r.returncode == 2 and r.stderr == f"spec-check: error: {words.format(flag=flag)}\n", (cmd, r.stderr)


def test_a_result_given_for_facts_says_what_to_pass(tmp_path: Path) -> None:
    assert shell(f"spec-check cluster --facts {FLEET} --format json -o fleet.json", tmp_path).returncode == 1
    said = ("spec-check: error: fleet.json: a spec-check result holds verdicts, not facts: pass the node facts it "
            "was judged from (`spec-check probe -o FILE` files, or the folder `spec-check cluster --save-facts DIR` "
            "wrote)\n")
    for cmd in ("spec-check check --facts fleet.json", "spec-check cluster --facts fleet.json"):
        r = shell(cmd, tmp_path)
        assert r.returncode == 2 and r.stderr == said, (cmd, r.stderr)
    # lint --nodes reads what a result shows per host, and says what else to pass
    r = shell(f"spec-check lint {JOB} --nodes fleet.json --format json", tmp_path)
    assert r.returncode in (0, 1), r.stderr
