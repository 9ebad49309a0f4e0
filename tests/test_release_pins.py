"""Every install line names the newest release (issue 34, deliverable 1).

The pins (the ``spec-check/spec-check@SHA`` of pip, the action and the docs' workflow, the
pre-commit ``rev:``, the ``git checkout SHA`` of the image build, the image tags of the
Kubernetes manifests, docs/deploy.md and docs/release.md) are found by `scripts/release.py`,
the script that moves them; each commit pin must be a commit of this history whose version
(the file `[tool.hatch.version]` of its pyproject.toml names, in that commit) is CHANGELOG.md's
newest release, and each image tag that version. `scripts/release.py`'s steps are then run on
a clone, as docs/release.md gives them, and the pins hold at every commit of the cut.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import release  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _shallow() -> bool:
    r = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True)
    return r.returncode != 0 or r.stdout.strip() != "false"


needs_history = pytest.mark.skipif(_shallow(), reason="a shallow clone or no git: the pinned commits are not here")


@needs_history
def test_every_pin_names_the_newest_release() -> None:
    assert release.lagging_pins() == []


def test_the_pins_are_where_users_install_from() -> None:
    pins = release.find_pins()
    where = {(p.path, p.kind) for p in pins}
    assert {("README.md", "commit"), ("docs/ci.md", "commit"), ("action.yml", "commit"),
            ("docs/release.md", "commit"), ("docs/deploy.md", "commit"), ("docs/deploy.md", "version"), ("docs/release.md", "version")} <= where
    manifests = {p.path for p in pins if p.path.startswith("deploy/kubernetes/")}
    assert manifests == {p.relative_to(ROOT).as_posix() for p in (ROOT / "deploy" / "kubernetes").glob("*.yaml")
                         if "registry.example.com/spec-check:" in p.read_text(encoding="utf-8")}
    ci = [p for p in pins if p.path == "docs/ci.md"]
    precommit = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8").splitlines()
    assert any(precommit[p.line - 1].strip().startswith("rev: ") for p in ci)  # the pre-commit example
    assert release.unrecognised_shas() == []


def test_the_lines_of_the_checkout_say_its_version() -> None:
    """The Dockerfile (built from this checkout) and the `--version` sentences follow
    `__version__`, which `version` sets, not the pins."""
    from validator import __version__

    for rel, pattern in release.CHECKOUT_VERSION:
        found = [m.group("value") for m in pattern.finditer((ROOT / rel).read_text(encoding="utf-8"))]
        assert found and set(found) == {__version__}, (rel, pattern.pattern, found)


def _repo(tmp_path: Path, version: str) -> Path:
    """A small repository shaped like this one: one commit at ``version``."""
    repo = tmp_path / "repo"
    (repo / "validator").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[tool.hatch.version]\npath = "validator/__init__.py"\n')
    (repo / "validator" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n\n- a change\n\n## [0.1.0] - 2026-01-01\n\n"
                                       "[Unreleased]: https://x/compare/v0.1.0...HEAD\n"
                                       "[0.1.0]: https://x/releases/tag/v0.1.0\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "0.1.0"]):
        subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True)
    return repo


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_pin_check_can_fail(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "0.1.0")
    sha = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text(f'pip install "x @ git+https://github.com/spec-check/spec-check@{sha}"\n')
    (repo / "validator" / "__init__.py").write_text('__version__ = "0.2.0.dev0"\n')
    assert release.lagging_pins(repo) == []
    # a newer release in CHANGELOG that the pins do not name
    text = (repo / "CHANGELOG.md").read_text().replace("## [0.1.0]", "## [0.2.0] - 2026-02-01\n\n## [0.1.0]")
    (repo / "CHANGELOG.md").write_text(text)
    assert release.lagging_pins(repo) == [f"README.md:1: commit {sha}: is version 0.1.0, not the newest release "
                                          "0.2.0 (CHANGELOG.md)"]
    # a commit that is not in the history, an image of another version, a SHA in no known form
    (repo / "CHANGELOG.md").write_text(text.replace("## [0.2.0] - 2026-02-01\n\n", ""))
    other = "0123456789abcdef0123456789abcdef01234567"
    (repo / "docs").mkdir()
    (repo / "docs" / "deploy.md").write_text(f"git checkout {other}\nimage: registry.example.com/spec-check:0.2.0\n"
                                             f"see {sha[:7]}{sha[7:]} for more\n")
    problems = release.lagging_pins(repo)
    assert any(p.startswith(f"docs/deploy.md:1: commit {other}: is version ? (commit {other} is not in this") for p in
               problems), problems
    assert "docs/deploy.md:2: version 0.2.0: is version 0.2.0, not the newest release 0.1.0 (CHANGELOG.md)" in problems
    assert any(p.startswith(f"docs/deploy.md:3: {sha}: a full SHA that no install pattern reads") for p in problems)


def test_a_cut_on_a_small_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, "0.2.0.dev0")
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text(f"uses: spec-check/spec-check@{first}\n")
    with pytest.raises(release.ReleaseError, match=r"is version 0\.2\.0\.dev0, not a release"):
        release.pin(first, repo)
    (repo / "Dockerfile").write_text('LABEL org.opencontainers.image.version="0.2.0.dev0"\n')
    monkeypatch.setattr(release, "CHECKOUT_VERSION", release.CHECKOUT_VERSION[:1])  # the Dockerfile's label
    assert release.set_version("0.2.0", "2026-12-01", repo, shapes=False) == [
        "CHANGELOG.md", "Dockerfile", "validator/__init__.py"]
    assert (repo / "Dockerfile").read_text() == 'LABEL org.opencontainers.image.version="0.2.0"\n'
    changelog = (repo / "CHANGELOG.md").read_text()
    assert "## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n\n- a change\n" in changelog
    assert "[Unreleased]: https://x/compare/v0.2.0...HEAD\n[0.2.0]: https://x/compare/v0.1.0...v0.2.0\n" in changelog
    _git(repo, "commit", "-qam", "release 0.2.0")
    cut = _git(repo, "rev-parse", "HEAD")
    with pytest.raises(release.ReleaseError, match="already has a"):
        release.set_version("0.2.0", "2026-12-01", repo, shapes=False)
    changelog = (repo / "CHANGELOG.md").read_text()
    (repo / "CHANGELOG.md").write_text(changelog.replace("## [0.2.0]", "## [0.3.0] - 2026-12-02\n\n## [0.2.0]"))
    with pytest.raises(release.ReleaseError, match=r"is version 0\.2\.0; CHANGELOG.md's newest release is 0\.3\.0"):
        release.pin("HEAD", repo)
    (repo / "CHANGELOG.md").write_text(changelog)
    assert release.pin("HEAD", repo) == ["README.md"]
    assert (repo / "README.md").read_text() == f"uses: spec-check/spec-check@{cut}\n"
    assert release.lagging_pins(repo) == []


@pytest.mark.slow
@needs_history
def test_the_cut_as_docs_release_md_gives_it(tmp_path: Path) -> None:
    """The procedure of docs/release.md, run on a clone of this commit: after each step the pins
    hold, the version says what it should, and the printed outputs are current."""
    from validator import __version__

    if shutil.which("git") is None or subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                                     cwd=ROOT, capture_output=True, text=True).stdout.strip():
        pytest.skip("uncommitted changes: the clone would not hold them")
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)\.dev\d+", __version__)
    if not m:
        pytest.skip(f"HEAD is the release {__version__} itself")
    version = f"{m.group(1)}.{m.group(2)}.{m.group(3)}"
    nxt = f"{m.group(1)}.{int(m.group(2)) + 1}.0.dev0"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(ROOT), str(clone)], check=True)
    _git(clone, "checkout", "-q", "-b", "cut", _git(ROOT, "rev-parse", "HEAD"))
    env = {**os.environ, **GIT_ENV, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(clone)}  # the clone's validator, whatever the venv installed
    for line in release_steps():
        line = line.replace("X.Y+1.0.dev0", nxt).replace("X.Y.Z", version)
        if line.startswith(SKIPPED):
            continue
        r = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr[-2000:])
        assert release.lagging_pins(clone) == [], line
    assert release.current_version(clone) == nxt and release.releases(clone)[0] == version
    pinned = {p.value for p in release.find_pins(clone) if p.kind == "commit"}
    assert pinned == {_git(clone, "rev-parse", f"v{version}^{{commit}}")}
    assert {p.value for p in release.find_pins(clone) if p.kind == "version"} == {version}
    # RELEASED_SHAPES holds the shapes the release writes: added by this release, or by an
    # earlier one whose shapes have not changed since (then this release adds none)
    from validator.versions import FACTS_SCHEMA, RESULT_SCHEMA

    text = (clone / "validator" / "versions.py").read_text()
    assert f'"{FACTS_SCHEMA}": ("' in text and f'"{RESULT_SCHEMA}": ("' in text
    r = subprocess.run([sys.executable, "scripts/doc_outputs.py", "--check"], cwd=clone, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
    # what carries the version was regenerated: the fixtures, the examples, the golden
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                        "tests/facts/test_fixture_docs.py", "tests/reports/test_examples.py", "tests/test_cli.py",
                        "-k", "current or example or golden"], cwd=clone, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:]


# lines of the procedure this test does not run: the network, and the whole suite
SKIPPED = ("git switch main", "git push", "python -m pytest -q")


def release_steps() -> list[str]:
    """The command lines of docs/release.md's one ```sh block of the cut."""
    text = (ROOT / "docs" / "release.md").read_text(encoding="utf-8")
    [block] = re.findall(r"^```sh\n(# the cut.*?)^```$", text, re.M | re.S)
    return [ln.split("  #", 1)[0].strip() for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
