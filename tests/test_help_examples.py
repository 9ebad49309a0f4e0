"""Each verb's `--help` says what it does and ends with two or three real examples; shell
completion works as the docs say (issue 34, deliverable 6).

The examples (validator/cli/examples.py) are run in a folder holding the files they name;
those that need a fleet over SSH, Slurm or a container's mounts are parsed by the verb's own
click command instead, so a renamed option fails here either way.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from validator.cli.examples import EXAMPLES, NOT_RUN
from validator.cli.verbs import VERBS

ROOT = Path(__file__).resolve().parent.parent


def spec_check(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT), **(env or {})}, timeout=120)


def _command(verb: str) -> click.Command:
    from validator.cli.group import _load

    command = _load(verb)
    assert command is not None
    return command


@pytest.mark.parametrize("verb", list(VERBS))
def test_help_says_what_the_verb_does_and_shows_its_examples(verb: str) -> None:
    r = spec_check(verb, "--help")
    assert r.returncode == 0, r.stderr
    about = r.stdout.split("\n\n", 2)[1].strip()  # the paragraph after "Usage: ..."
    assert about and not about.startswith(("Options", "Usage")), r.stdout[:300]
    assert "Examples:" in r.stdout
    examples = EXAMPLES[verb]
    assert 2 <= len(examples) <= 3
    shown = r.stdout.split("Examples:", 1)[1]
    for command, what in examples:
        assert command.startswith(f"spec-check {verb}") and command in shown and what in shown


def test_every_verb_has_examples_and_no_stray_ones() -> None:
    assert set(EXAMPLES) == set(VERBS)
    listed = {c for examples in EXAMPLES.values() for c, _ in examples}
    assert set(NOT_RUN) <= listed


@pytest.mark.parametrize("example", sorted(NOT_RUN))
def test_examples_not_run_here_parse(example: str) -> None:
    words = shlex.split(example)
    try:
        _command(words[1]).make_context(words[1], words[2:])  # raises click's UsageError on a bad option
    except click.BadParameter as e:  # a path of the machine it is meant for (/host/sys): the options parsed
        assert "does not exist" in e.message, e.message


def test_the_parse_check_can_fail() -> None:
    with pytest.raises(click.UsageError):
        _command("cluster").make_context("cluster", ["--hosts", "a", "--measures"])


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The files the examples name: node01.json (a `probe -o`), facts/ (one file per host),
    job/ (a job folder), fleet.json, last-week.json and job.json (results); keygen's example
    makes provider.key for sign's."""
    shutil.copy(ROOT / "tests" / "fixtures" / "facts" / "dgx_h100_port_200g.json", tmp_path / "node01.json")
    shutil.copytree(ROOT / "tests" / "reports" / "fixtures" / "fleet", tmp_path / "facts")
    shutil.copytree(ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm", tmp_path / "job")
    for args in (["cluster", "--facts", "facts", "--format", "json", "-o", "fleet.json"],
                 ["lint", "job", "--format", "json", "-o", "job.json"]):
        assert spec_check(*args, cwd=tmp_path).returncode in (0, 1)
    shutil.copy(tmp_path / "fleet.json", tmp_path / "last-week.json")
    return tmp_path


@pytest.mark.slow
def test_examples_run_as_written(workdir: Path) -> None:
    bindir = workdir / ".bin"
    bindir.mkdir()
    (bindir / "spec-check").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m validator "$@"\n')
    (bindir / "spec-check").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    ran = []
    for verb in VERBS:
        for command, _ in EXAMPLES[verb]:
            if command in NOT_RUN:
                continue
            r = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True, text=True,
                               timeout=300)
            assert r.returncode in (0, 1) and "error:" not in r.stderr, (command, r.stderr[-2000:])
            ran.append(command)
    assert len(ran) >= 2 * len(VERBS) - len(NOT_RUN)
    assert (workdir / "fleet.html").is_file() and (workdir / "spec-check.sarif").is_file()
    assert (workdir / "profile.yaml").read_text().startswith("#")


def test_shell_completion_works_as_documented() -> None:
    source = spec_check(env={"_SPEC_CHECK_COMPLETE": "bash_source"})
    assert source.returncode == 0 and "_spec_check_completion()" in source.stdout
    assert "complete -o nosort -F _spec_check_completion spec-check" in source.stdout
    verbs = spec_check(env={"_SPEC_CHECK_COMPLETE": "bash_complete", "COMP_WORDS": "spec-check ch",
                            "COMP_CWORD": "1"})
    assert verbs.stdout.split() == ["plain,check"]
    formats = spec_check(env={"_SPEC_CHECK_COMPLETE": "bash_complete", "COMP_WORDS": "spec-check report x --format ",
                              "COMP_CWORD": "4"})
    assert {"plain,html", "plain,json", "plain,sarif"} <= set(formats.stdout.split())
    for shell in ("zsh", "fish"):
        r = spec_check(env={"_SPEC_CHECK_COMPLETE": f"{shell}_source"})
        assert r.returncode == 0 and "_SPEC_CHECK_COMPLETE" in r.stdout
    for doc in ("README.md", "docs/completion.md"):
        assert "_SPEC_CHECK_COMPLETE=bash_source spec-check" in (ROOT / doc).read_text(encoding="utf-8"), doc


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_documented_bash_line_completes_in_bash(tmp_path: Path) -> None:
    """docs/completion.md's bash line, sourced in a real bash, completes a verb."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "spec-check").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m validator "$@"\n')
    (bindir / "spec-check").chmod(0o755)
    text = (ROOT / "docs" / "completion.md").read_text(encoding="utf-8")
    [line] = [ln for ln in text.splitlines() if ln.startswith("eval ") and "bash_source" in ln]
    script = f'{line}\nCOMP_WORDS=(spec-check li); COMP_CWORD=1; _spec_check_completion spec-check; echo "${{COMPREPLY[@]}}"\n'
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    assert r.returncode == 0 and r.stdout.split() == ["lint"], r.stdout + r.stderr


def test_show_passes_help_says_what_it_does() -> None:
    r = spec_check("lint", "--help")
    words = " ".join(r.stdout.split())
    assert "counted in one line" not in words and "counts the passes in one line" not in words
    assert "--show passes lists every check that passed" in words.replace("`", "")


def test_probe_doc_names_what_a_user_can_look_at_not_a_python_call() -> None:
    """docs/probe.md's table of sources says what each fact is read from as a user would look
    (a file, a command's output), never the Python call spec-check makes."""
    text = (ROOT / "docs" / "probe.md").read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and ln.count("|") == 5][1:]
    assert len(rows) >= 7, rows
    python_call = __import__("re").compile(r"\b(?:os|psutil|socket|ctypes|platform|shutil)\.\w+|\bpsutil\b|\bsocket\b")
    assert [r for r in rows if python_call.search(r.rsplit("|", 2)[1])] == []
