"""How a ``spec-check check`` run ends, whatever its arguments: the contract's exit codes,
a one-line error for a run that could not be done, never a traceback; interrupts and
failures inside the verb end the same way (click parses ``check``, as every verb)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from tests.startup_probe import RUN_VERB, run_probe

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT.parent / "shared" / "recordings" / "h200-node" / "facts.json"
if not H200.is_file():
    H200 = Path("/work/shared/recordings/h200-node/facts.json")
FACTS = ROOT / "tests" / "fixtures" / "h200" / "facts.json"


def _run(args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1800000000", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "validator", "check", *args], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120, check=False)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize(("args", "code", "error"), [
    (["--facts", str(FACTS), "--format", "json"], 1, None),
    (["--facts", str(H200), "--format", "sarif", "--select", "NET,PLAT", "--fail-on", "warn"], 1, None),
    (["--facts", "missing.json"], 2, "missing.json: no such file or directory (--facts)"),  # as cluster and lint --nodes say it
    (["--facts", str(FACTS), "--set", "nonsense"], 2, '--set expects KEY=VALUE, got "nonsense"'),
    (["--facts", str(FACTS), "--profile", "bad.yaml"], 2, "bad.yaml:2: invalid YAML"),
    (["--facts", str(FACTS), "--scrape", "http://127.0.0.1:9/metrics"], 2, "check: --scrape samples live endpoints"),
    (["--facts", str(FACTS), "-o", "out/none/r.json"], 2, "out/none/r.json"),
    (["--facts", str(FACTS), "--spec-version", "9.9"], 2, 'no spec version "9.9" (known: 1.0)'),
    (["--facts", str(FACTS), "--rules-version", "0.1"], 2, 'no rule pack "0.1" (bundled: 1.0, 1.1, 1.2)'),
    (["--facts", str(FACTS), "--dcgm-diag", "1" * 4301], 2, "check: Invalid value for '--dcgm-diag'"),
    (["--format", "bogus"], 2, "check: Invalid value for '--format': 'bogus' is not one of"),
    (["--sysfs", "/nonexistent"], 2, "check: Invalid value for '--sysfs': Directory '/nonexistent' does not exist."),
    (["--bogus"], 2, "check: No such option '--bogus'. (see `spec-check check --help`)"),
    (["--facts"], 2, "Option '--facts' requires an argument."),
], ids=lambda a: " ".join(Path(x).name if "/" in x else x[:12] for x in a) if isinstance(a, list) else None)
def test_a_run_ends_as_the_contract_says(tmp_path: Path, args: list[str], code: int, error: str | None) -> None:
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    got, out, err = _run(args, tmp_path)
    assert got == code, err
    assert "Traceback" not in err
    if error is None:
        assert out and "spec-check: error" not in err
    else:
        assert out == ""
        last = err.splitlines()[-1]
        assert last.startswith("spec-check: error: ") and error in last, err
        assert [line for line in err.splitlines() if not line.startswith("spec-check: note: ")] == [last]


def test_the_report_file_is_written_and_said(tmp_path: Path) -> None:
    code, out, err = _run(["--facts", str(H200), "--format", "json", "-o", "r.json"], tmp_path)
    assert (code, out) == (1, "") and "wrote json report to r.json" in err
    assert (tmp_path / "r.json").read_text().startswith("{")


# ---- how a run ends, in-process ---------------------------------------------------------------


@pytest.mark.parametrize(("raised", "code", "err"), [
    (KeyboardInterrupt(), 2, "\nspec-check: error: interrupted\n"),
    (EOFError(), 2, "\nspec-check: error: interrupted\n"),
    (BrokenPipeError(errno.EPIPE, "Broken pipe"), 1, ""),
    (OSError(errno.ENOSPC, "No space left on device"),
     2, "spec-check: error: cannot write to standard output: No space left on device\n"),
    (RuntimeError("a bug"),
     2, "spec-check: error: internal error: RuntimeError: a bug (set SPEC_CHECK_DEBUG=1 for a traceback)\n"),
    (click.UsageError("--scrape samples live endpoints"),
     2, "spec-check: error: check: --scrape samples live endpoints (see `spec-check check --help`)\n"),
], ids=lambda e: type(e).__name__ if isinstance(e, BaseException) else None)
def test_an_interrupted_or_failed_run_ends_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], raised: BaseException,
                                                       code: int, err: str) -> None:
    import validator.cli.node as node
    from validator.cli import main

    def boom(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setenv("SPEC_CHECK_DEBUG", "")
    monkeypatch.setattr(node, "check_node", boom)
    stdout, stderr = sys.stdout, sys.stderr
    try:
        with pytest.raises(SystemExit) as exc:
            main(["check", "--facts", str(FACTS)])
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    assert (exc.value.code, capsys.readouterr().err) == (code, err)


def test_an_interrupt_while_the_arguments_are_read_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    """A Slurm SIGTERM while a path is looked at (a hung NFS mount): click's blank line,
    then the one-line error."""
    from validator.cli import main

    hang = tmp_path / "hang"
    hang.mkdir()
    real_stat = os.stat

    def stat(path: Any, *a: Any, **k: Any) -> os.stat_result:
        if os.fspath(path) == str(hang):
            raise KeyboardInterrupt
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    with pytest.raises(SystemExit) as exc:
        main(["check", "--facts", str(FACTS), "--rules", str(hang)])
    assert (exc.value.code, *capsys.readouterr()) == (2, "", "\nspec-check: error: interrupted\n")


def test_an_in_process_caller_s_paths_are_read(capsys: pytest.CaptureFixture[str]) -> None:
    """``validator.cli.main`` called with a Path (its type says str): click takes it."""
    from validator.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["check", "--facts", FACTS, "--format", "json"])  # type: ignore[list-item]
    assert exc.value.code == 1 and '"command": "check"' in capsys.readouterr().out


# ---- what a live check loads ------------------------------------------------------------------

_PROBE = "import contextlib, io, json, sys\n" + RUN_VERB + """
print(json.dumps({"code": code, "loaded": sorted(m for m in ("psutil", "socket", "ctypes") if m in sys.modules)}))
"""


@pytest.mark.parametrize("args", [["check"], ["check", "--format", "json"]])
def test_a_live_check_on_linux_loads_no_psutil_socket_or_ctypes(tmp_path: Path, args: list[str]) -> None:
    """validator/facts/node/host.py and nvidia.py read the values psutil, socket and ctypes
    gave with the calls they make on Linux."""
    seen = run_probe(tmp_path, _PROBE, *args)
    expected = [] if sys.platform.startswith("linux") else seen["loaded"]
    assert seen["loaded"] == expected
