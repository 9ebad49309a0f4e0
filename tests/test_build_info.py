"""Which build wrote a document: ``tool_version`` carries the commit (validator/build_info.py).

A pip install from a git URL records the commit pip wrote in direct_url.json; a git checkout
(an editable install) records its HEAD, read from .git; a plain copy of the package records
none, and then the plain version. Pinned runs (SOURCE_DATE_EPOCH) record the plain version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validator import __version__, build_info

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git")


def git(repo: Path, *args: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()


def unpinned_env(pythonpath: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SOURCE_DATE_EPOCH", "PYTHONPATH")}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return {**env, "COLUMNS": "200"}


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def copy_package(dest: Path, *extra: str) -> Path:
    """The working tree's package (and ``extra`` top-level paths) copied to ``dest``, no .git."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("validator", *extra):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


def make_repo(path: Path) -> str:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "f").write_text("one\n")
    git(path, "add", "f")
    git(path, "commit", "-qm", "one")
    return git(path, "rev-parse", "HEAD")


# ---- the form --------------------------------------------------------------------------------


def test_the_version_is_pep_440_with_a_local_label_of_the_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    from packaging.version import Version

    sha = "1a2b3c4d5e6f" + "0" * 28
    monkeypatch.setattr(build_info, "commit", lambda: sha)
    build_info.build_version.cache_clear()
    try:
        built = build_info.build_version()
        assert built == f"{__version__}+g1a2b3c4d5e6f"
        assert Version(built).public == __version__ and Version(built).local == "g1a2b3c4d5e6f"
        monkeypatch.delenv("SOURCE_DATE_EPOCH")
        assert build_info.tool_version() == built
        monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")  # a pinned run: the plain version
        assert build_info.tool_version() == __version__
        monkeypatch.setattr(build_info, "commit", lambda: None)
        build_info.build_version.cache_clear()
        assert build_info.build_version() == __version__  # no commit known: never one invented
    finally:
        build_info.build_version.cache_clear()


def test_readers_take_a_tool_version_with_and_without_a_commit(tmp_path: Path) -> None:
    import jsonschema

    from validator.report.results import load_result

    pattern = json.loads((ROOT / "spec" / "result.schema.json").read_text())["properties"]["tool_version"]
    old = ROOT / "tests" / "fixtures" / "results" / "check_vm_0.1.0.json"
    for version in ("0.1.0", "0.3.0.dev0", f"{__version__}+g1a2b3c4d5e6f"):
        jsonschema.validate(version, pattern)
        path = tmp_path / f"{version}.json"
        path.write_text(json.dumps({**json.loads(old.read_text()), "tool_version": version}))
        assert load_result(path)[1].tool_version == version


# ---- where the commit comes from ------------------------------------------------------------------


def _dist_info(site: Path, direct_url: object, version: str = __version__) -> Path:
    d = site / f"training_spec_check-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "direct_url.json").write_text(direct_url if isinstance(direct_url, str) else json.dumps(direct_url))
    return d


@pytest.mark.parametrize(("direct_url", "version", "expected"), [
    ({"url": "https://x/y", "vcs_info": {"vcs": "git", "commit_id": "a" * 40}}, __version__, "a" * 40),
    ({"url": "https://x/y", "vcs_info": {"vcs": "git", "commit_id": "b" * 64}}, __version__, "b" * 64),
    ({"url": "file:///src", "dir_info": {}}, __version__, None),                       # pip install .
    ({"url": "file:///src", "dir_info": {"editable": True}}, __version__, None),       # pip install -e .
    ({"url": "https://x/y", "vcs_info": {"vcs": "hg", "commit_id": "a" * 40}}, __version__, None),
    ({"url": "https://x/y", "vcs_info": {"vcs": "git", "commit_id": "main"}}, __version__, None),
    ({"url": "https://x/y", "vcs_info": {"vcs": "git", "commit_id": "A" * 40}}, __version__, None),
    ("{not json", __version__, None),
    ([1, 2], __version__, None),
    ({"url": "https://x/y", "vcs_info": {"vcs": "git", "commit_id": "a" * 40}}, "0.0.1", None),  # another build's
], ids=["git", "git-sha256", "dir", "editable", "hg", "branch-name", "upper-case", "broken", "list", "other-version"])
def test_pips_direct_url_gives_the_commit_of_a_vcs_install_only(tmp_path: Path, direct_url: object, version: str,
                                                                 expected: str | None) -> None:
    _dist_info(tmp_path, direct_url, version)
    assert build_info.installed_commit(tmp_path) == expected


@needs_git
def test_a_checkout_gives_its_head_read_from_git_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch's ref file, packed refs, a detached HEAD and a worktree: the files git keeps,
    read without running git (made to fail here), agree with git rev-parse."""
    monkeypatch.setattr(build_info, "_rev_parse", lambda root: pytest.fail("git was run"))
    repo = tmp_path / "repo"
    first = make_repo(repo)
    assert build_info.checkout_commit(repo) == first  # refs/heads/main
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert build_info.checkout_commit(repo) == first  # packed-refs
    (repo / "f").write_text("two\n")
    git(repo, "commit", "-qam", "two")
    second = git(repo, "rev-parse", "HEAD")
    assert second != first and build_info.checkout_commit(repo) == second  # the loose ref beats packed-refs
    git(repo, "checkout", "-q", "--detach", first)
    assert build_info.checkout_commit(repo) == first  # detached
    git(repo, "checkout", "-q", "main")
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), first)
    assert (tmp_path / "wt" / ".git").is_file()
    assert build_info.checkout_commit(tmp_path / "wt") == first  # gitdir: and commondir followed
    assert build_info.checkout_commit(repo) == second


@needs_git
def test_what_the_reader_does_not_follow_is_asked_of_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    head = make_repo(repo)
    monkeypatch.setattr(build_info, "_read_head", lambda dotgit: None)  # e.g. a reftable repository
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # the checkout's own HEAD, whatever the caller's git says
    assert build_info.checkout_commit(repo) == head
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert build_info.checkout_commit(empty) is None  # no commit yet: git says so too
    assert build_info.checkout_commit(tmp_path / "none") is None


@needs_git
def test_a_head_that_is_not_a_plain_ref_is_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    (repo / ".git" / "HEAD").write_text("ref: refs/../../../etc/passwd\n")
    assert build_info._read_head(repo / ".git") is None


# ---- the three ways a user runs spec-check ---------------------------------------------------------


@pytest.mark.slow
@needs_git
def test_a_pip_install_from_a_git_url_records_that_commit(tmp_path: Path) -> None:
    """The README's install line, offline: pip clones a local repository at a commit, builds the
    wheel and writes direct_url.json; the installed package's results carry that commit."""
    repo = copy_package(tmp_path / "repo", "pyproject.toml", "README.md", "LICENSE", "spec", "rules")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the package")
    sha = git(repo, "rev-parse", "HEAD")
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(site), f"git+file://{repo}@{sha}"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, **GIT_ENV})
    assert r.returncode == 0, r.stderr[-2000:]
    shutil.rmtree(repo / ".git")  # nothing but pip's record tells the commit now
    recorded = json.loads((site / f"training_spec_check-{__version__}.dist-info" / "direct_url.json").read_text())
    assert recorded["vcs_info"]["commit_id"] == sha
    env = unpinned_env(site)
    where = run("-c", "import validator; print(validator.__file__)", cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(site)
    assert run("-m", "validator", "--version", cwd=tmp_path, env=env).stdout.strip() == (
        f"spec-check {__version__}+g{sha[:12]} (training-spec-check)")
    result = run("-m", "validator", "check", "--facts", str(FACTS), "--format", "json", cwd=tmp_path, env=env)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert json.loads(result.stdout)["tool_version"] == f"{__version__}+g{sha[:12]}"


@pytest.mark.skipif(not (ROOT / ".git").exists() or shutil.which("git") is None, reason="not a git checkout")
def test_a_checkout_records_its_head_in_results_and_facts(tmp_path: Path) -> None:
    """The editable install this suite runs from: results and facts carry HEAD, except in a
    pinned run; --version always says it."""
    head = git(ROOT, "rev-parse", "HEAD")
    assert build_info.commit() == head
    built = f"{__version__}+g{head[:12]}"
    env = unpinned_env(ROOT)
    assert run("-m", "validator", "--version", cwd=tmp_path, env=env).stdout.strip() == (
        f"spec-check {built} (training-spec-check)")
    result = run("-m", "validator", "check", "--facts", str(FACTS), "--format", "json", cwd=tmp_path, env=env)
    assert json.loads(result.stdout)["tool_version"] == built, result.stderr[-2000:]
    facts = tmp_path / "facts.json"
    r = run("-m", "validator", "probe", "-o", str(facts), cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(facts.read_text())["tool_version"] == built
    rejudged = run("-m", "validator", "check", "--facts", str(facts), "--format", "json", cwd=tmp_path, env=env)
    assert rejudged.returncode in (0, 1) and json.loads(rejudged.stdout)["tool_version"] == built  # read back
    pinned = run("-m", "validator", "check", "--facts", str(FACTS), "--format", "json", cwd=tmp_path,
                 env={**env, "SOURCE_DATE_EPOCH": "1795000000"})
    assert json.loads(pinned.stdout)["tool_version"] == __version__
    assert run("-m", "validator", "--version", cwd=tmp_path, env={**env, "SOURCE_DATE_EPOCH": "1795000000"}
               ).stdout.strip() == f"spec-check {built} (training-spec-check)"


@needs_git
def test_a_plain_copy_records_no_commit(tmp_path: Path) -> None:
    """A copy of the package with no .git beside it records the plain version, even inside
    another repository (the lookup never walks further up than the package's own folder)."""
    outer = tmp_path / "outer"
    make_repo(outer)
    copy = copy_package(outer / "vendor")
    env = unpinned_env(copy)
    where = run("-c", "import validator; print(validator.__file__)", cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(copy)
    assert run("-m", "validator", "--version", cwd=tmp_path, env=env).stdout.strip() == (
        f"spec-check {__version__} (training-spec-check)")
    result = run("-m", "validator", "check", "--facts", str(FACTS), "--format", "json", cwd=tmp_path, env=env)
    assert json.loads(result.stdout)["tool_version"] == __version__, result.stderr[-2000:]


def test_help_and_start_up_do_not_look_the_commit_up(tmp_path: Path) -> None:
    """--help never imports build_info; a check reads the commit once, at the end."""
    from tests.startup_probe import RUN_VERB, run_probe

    probe = ("import contextlib, io, json, sys\n" + RUN_VERB
             + "bi = sys.modules.get('validator.build_info')\n"
             + "print(json.dumps({'code': code, 'loaded': bi is not None,"
             + " 'computed': bi.commit.cache_info().misses if bi else 0}))\n")
    assert run_probe(tmp_path, probe, "--help")["loaded"] is False
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    data = run_probe(tmp_path, probe, "check", "--facts", str(FACTS), "--format", "json", env=env)
    assert data["loaded"] is True and data["computed"] == 1


def test_results_of_two_builds_merge_into_one_that_reads_back(tmp_path: Path) -> None:
    """The merged result names the build that merged them (a list of versions would not be a
    tool version) and keeps each input's in merged_from."""
    result = run("-m", "validator", "check", "--facts", str(FACTS), "--format", "json", cwd=tmp_path,
                 env={**os.environ, "PYTHONPATH": str(ROOT)})
    paths = []
    for label in ("a" * 12, "b" * 12):
        doc = {**json.loads(result.stdout), "tool_version": f"{__version__}+g{label}"}
        paths.append(tmp_path / f"{label[0]}.json")
        paths[-1].write_text(json.dumps(doc))
    merged = tmp_path / "merged.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # pinned: the merging build records the plain version
    r = run("-m", "validator", "report", *map(str, paths), "--format", "json", "-o", str(merged), cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    data = json.loads(merged.read_text())
    assert data["tool_version"] == __version__
    assert [m["tool_version"] for m in data["extra"]["merged_from"]] == [f"{__version__}+g{'a' * 12}",
                                                                          f"{__version__}+g{'b' * 12}"]
    again = run("-m", "validator", "report", str(merged), "--format", "markdown", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
