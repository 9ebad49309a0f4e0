"""The pre-commit hook works from a pinned rev, as docs/ci.md shows it.

A snapshot of this checkout is tagged with the release tag (``v`` + the version: the tag
the release creates) and used as the hook repository of a throwaway git repository that
holds a good and a bad training job under configs/. ``pre-commit try-repo`` runs the hook
on each; then docs/ci.md's own ``.pre-commit-config.yaml`` (its repo URL pointed at the
snapshot, its ``rev`` kept) is installed as the git hook, and the bad job's commit is
blocked with the finding at file:line while the good job's goes through. pre-commit
builds the hook's environment with pip from the package index, as it does for a user
(about 20 s, once per test module).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.ship.util import GIT_ENV, ROOT, doc_block, git, snapshot
from validator import __version__

pytest.importorskip("pre_commit", reason="pre-commit is a test extra: pip install -e '.[test]'")
pytestmark = pytest.mark.slow

JOB = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm"
BAD_LINE = 6  # `precision: 32-true` in the bad copy of JOB's config.yaml


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("precommit")
    src = snapshot(base / "spec-check", f"v{__version__}")
    target = base / "training-repo"
    target.mkdir()
    git("init", "-q", cwd=target)
    for name in ("good", "bad"):
        shutil.copytree(JOB, target / "configs" / name)
    cfg = target / "configs" / "bad" / "config.yaml"
    text = cfg.read_text()
    assert text.splitlines()[BAD_LINE - 1].strip() == "precision: bf16-mixed"
    cfg.write_text(text.replace("precision: bf16-mixed", "precision: 32-true"))
    return {"src": src, "target": target, "home": base / "pre-commit-home"}


def pre_commit(setup: dict[str, Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(setup["home"]), "NO_COLOR": "1",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=setup["target"], env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_hook_passes_a_good_job_and_fails_a_bad_one_at_file_and_line(setup: dict[str, Path]) -> None:
    rev = f"v{__version__}"
    good = pre_commit(setup, "try-repo", str(setup["src"]), "spec-check-lint", "--ref", rev,
                      "--files", "configs/good/config.yaml", "configs/good/submit.sbatch")
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr[-2000:]
    assert "spec-check lint (training job configs)" in good.stdout and "Passed" in good.stdout
    bad = pre_commit(setup, "try-repo", str(setup["src"]), "spec-check-lint", "--ref", rev,
                     "--files", "configs/bad/config.yaml")
    assert bad.returncode == 1, bad.stdout[-3000:] + bad.stderr[-2000:]
    assert "Failed" in bad.stdout
    assert f"FAIL PREC-01.full-precision-training configs/bad/config.yaml:{BAD_LINE}:" in bad.stdout


def test_the_docs_config_blocks_a_bad_commit(setup: dict[str, Path]) -> None:
    block = doc_block(ROOT / "docs" / "ci.md", "# .pre-commit-config.yaml")
    config = yaml.safe_load(block)
    [repo] = config["repos"]
    from tests.ship.util import is_commit_of_this_repository

    assert is_commit_of_this_repository(repo["rev"]), "docs/ci.md pins a rev that is not a commit of main"
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in repo["hooks"]} <= hooks
    target = setup["target"]
    # the snapshot stands for the repository at that commit: its tag is the rev here
    (target / ".pre-commit-config.yaml").write_text(
        block.replace(repo["repo"], str(setup["src"])).replace(repo["rev"], f"v{__version__}"))
    installed = pre_commit(setup, "install")
    assert installed.returncode == 0, installed.stderr
    git("add", ".pre-commit-config.yaml", "configs/bad", cwd=target)
    blocked = git("commit", "-m", "bad job", cwd=target, check=False)
    assert blocked.returncode != 0, blocked.stdout
    out = blocked.stdout + blocked.stderr
    # read with wrapped lines joined: the terminal report wraps at its width, and where it
    # wraps moves with the length of the temporary folder's path (longer under xdist)
    flat = " ".join(out.split())
    assert f"configs/bad/config.yaml:{BAD_LINE}: The job trains in full fp32 precision" in flat
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    shown = docs.split("A job with a problem blocks the commit:\n\n```\n", 1)[1].split("```", 1)[0]
    for line in shown.splitlines():  # the docs show what a user sees
        if line != "...":
            assert " ".join(line.rstrip(".").split()) in flat, line
    assert git("rev-parse", "--verify", "-q", "HEAD", cwd=target, check=False).returncode != 0  # no commit
    git("rm", "-q", "-r", "--cached", "configs/bad", cwd=target)
    git("add", "configs/good", cwd=target)
    done = git("commit", "-m", "good job", cwd=target, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "spec-check lint (training job configs)" in done.stdout + done.stderr
