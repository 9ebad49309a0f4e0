"""``spec-check check`` without click (validator/cli/quick.py) against ``check`` through click.

The quick parser must give exactly the ``params`` click gives ``check``'s callback for every
argument list it reads, and leave to click every one it is not sure of; a whole run must
end the same on both paths (stdout, stderr, exit code, the file written). Argument lists
are generated from the options' real names, real values (the H200 recording, paths that
exist, do not, are files where directories are wanted) and malformed forms.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.startup_probe import RUN_VERB, run_probe
from validator.cli.node import check as click_check
from validator.cli.quick import parse_check

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT.parent / "shared" / "recordings" / "h200-node" / "facts.json"
if not H200.is_file():
    H200 = Path("/work/shared/recordings/h200-node/facts.json")
FACTS = ROOT / "tests" / "fixtures" / "h200" / "facts.json"


def click_params(args: list[str]) -> dict[str, Any] | None:
    """What click gives ``check``'s callback, or None where click refuses the arguments."""
    try:
        ctx = click_check.make_context("check", list(args))
    except (click.ClickException, click.exceptions.Exit):
        return None
    return dict(ctx.params)


def _paths(tmp: Path) -> list[str]:
    d = tmp / "dir"
    d.mkdir(exist_ok=True)
    f = tmp / "file.txt"
    f.write_text("x\n")
    return [str(FACTS), str(d), str(f), str(tmp / "missing"), str(tmp / "dir" / "out.json"), "/sys", "/proc", "/",
            "", "rel/path", "é.json"]


OPTIONS = ["--facts", "--sysfs", "--procfs", "--rootfs", "--kernel-log", "--since", "--dcgm-diag", "--scrape",
           "--scrape-interval", "--timeout", "--scrape-timeout", "--spec-version", "--profile", "--set", "--format",
           "-o", "--output", "--select", "--ignore", "--fail-on", "--waivers", "--rules", "--rules-version",
           "--show", "--baseline", "--nvml", "--no-nvml"]
ODD = ["--help", "-h", "--", "--version", "--bogus", "-x", "check", "extra", "--form", "-ofile", "-o=x", "--nvml=1",
       "--format=json", "--select=NET", "--output="]
VALUES = ["json", "terminal", "sarif", "bogus", "JSON", "fail", "warn", "passes", "1", "4", "5", "01", "0", "0.05",
          "0.5", "12", "1e3", " 3", "1.", ".5", "3_0", "²", "NET,PLAT-01", "x=1", "gpu_count=8", "1.0", "1.1",
          "http://127.0.0.1:9400/metrics", "-x", "--facts"]


def test_the_common_lists_are_read_here_and_as_click_reads_them(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    cases = [
        [], ["--format", "json"], ["--format=json", "-o", str(out)], ["--output", str(out), "--format", "sarif"],
        ["--facts", str(FACTS)], ["--facts", str(FACTS), "--facts", str(H200), "--format", "json"],
        ["--select", "NET", "--ignore", "PLAT-02", "--set", "gpu_count=8", "--fail-on", "warn", "--show", "passes"],
        ["--no-nvml", "--sysfs", "/sys", "--procfs", "/proc", "--rootfs", "/"], ["--nvml", "--no-nvml"],
        ["--spec-version", "1.0", "--rules-version", "1.0"], ["--scrape", "http://127.0.0.1:9400/metrics",
                                                              "--scrape-interval", "1", "--timeout", "0.5"],
        ["--dcgm-diag", "1"], ["--format", "json", "--format", "terminal"], ["--select", ""],
    ]
    for args in cases:
        quick = parse_check(args)
        assert quick is not None, args
        assert quick == click_params(args), args


@pytest.mark.parametrize("args", [
    ["--help"], ["-h"], ["extra"], ["--"], ["-ofile"], ["-o=x"], ["--nvml=1"], ["--format", "bogus"],
    ["--format", "JSON"], ["--select", "-x"], ["--facts"], ["--sysfs", "/nonexistent"],
    ["--kernel-log", "/"], ["--rules", "/etc/hostname"], ["--dcgm-diag", "5"], ["--dcgm-diag", "²"],
    ["--scrape-interval", "1e3"], ["--timeout", "0.05"], ["--check"], ["--version"],
])
def test_what_is_not_sure_is_left_to_click(args: list[str]) -> None:
    assert parse_check(args) is None


def test_shell_completion_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_SPEC_CHECK_COMPLETE", "bash_complete")
    assert parse_check([]) is None
    monkeypatch.delenv("_SPEC_CHECK_COMPLETE")
    assert parse_check([]) is not None


def test_every_option_with_every_value_reads_as_click_reads_it(tmp_path: Path) -> None:
    """Each option alone, with each value, in both forms: the single-option cases in full."""
    accepted = 0
    for option in OPTIONS:
        for value in VALUES + _paths(tmp_path):
            forms = [[option], [option, value]] + ([[f"{option}={value}"]] if option.startswith("--") else [])
            for args in forms:
                quick = parse_check(args)
                if quick is not None:
                    accepted += 1
                    assert quick == click_params(args), args
    assert accepted > 400  # most of them are read here: the comparison is not empty


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_argument_lists_read_as_click_reads_them(tmp_path: Path, data: st.DataObject) -> None:
    values = st.sampled_from(VALUES + _paths(tmp_path))
    pair = st.tuples(st.sampled_from(OPTIONS), values).map(list)
    joined = st.tuples(st.sampled_from([o for o in OPTIONS if o.startswith("--")]), values).map(lambda p: ["=".join(p)])
    odd = st.sampled_from(OPTIONS + ODD + VALUES).map(lambda t: [t])
    part = st.one_of(pair, pair, pair, joined, odd)
    args = data.draw(st.lists(part, max_size=5).map(lambda parts: [t for p in parts for t in p]))
    quick = parse_check(args)
    if quick is not None:
        assert quick == click_params(args), args


# ---- whole runs, both paths ------------------------------------------------------------------

_CLICK = "import sys\nfrom validator.cli.group import cli\nfrom validator.cli.run import run_cli\nrun_cli(cli, sys.argv[1:])"
_QUICK = "import sys\nfrom validator.entry import main\nmain(sys.argv[1:])"


def _run(code: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1800000000", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-c", code, "check", *args], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120, check=False)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("args", [
    [],
    ["--format", "json"],
    ["--facts", str(FACTS)],
    ["--facts", str(H200), "--format", "json", "--show", "passes"],
    ["--facts", str(FACTS), "--format", "sarif", "--select", "NET,PLAT", "--fail-on", "warn"],
    ["--facts", "missing.json"],
    ["--facts", str(FACTS), "--set", "nonsense"],
    ["--facts", str(FACTS), "--set", "no_such_parameter=3"],
    ["--facts", str(FACTS), "--profile", "bad.yaml"],
    ["--facts", str(FACTS), "--waivers", "missing.yaml"],
    ["--facts", str(FACTS), "--scrape", "http://127.0.0.1:9/metrics"],
    ["--facts", str(FACTS), "--dcgm-diag", "1"],
    ["--facts", str(FACTS), "-o", "out/none/r.json"],
    ["--facts", str(FACTS), "--spec-version", "9.9"],
    ["--facts", str(FACTS), "--rules-version", "0.1"],
    ["--facts", str(FACTS), "--dcgm-diag", "1" * 4301],  # int() refuses it: click's usage error, not a crash
    ["--facts", str(FACTS), "--dcgm-diag", "0000000001"],
], ids=lambda a: " ".join(Path(x).name if "/" in x else x[:12] for x in a) or "live")
def test_a_run_ends_the_same_on_both_paths(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "bad.yaml").write_text("a: [1,\n")
    quick = _run(_QUICK, args, tmp_path)
    assert quick == _run(_CLICK, args, tmp_path)
    assert quick[0] in (0, 1, 2) and "Traceback" not in quick[2]


def test_the_report_file_written_is_the_same(tmp_path: Path) -> None:
    for name, code in (("quick", _QUICK), ("click", _CLICK)):
        (tmp_path / name).mkdir()
        code_out = _run(code, ["--facts", str(H200), "--format", "json", "-o", "r.json"], tmp_path / name)
        assert code_out[0] == 1 and "wrote json report to r.json" in code_out[2]
    assert (tmp_path / "quick" / "r.json").read_bytes() == (tmp_path / "click" / "r.json").read_bytes()


# ---- how a run ends, in-process: both paths through the same handlers --------------------------


def _end(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raised: BaseException,
         path: str) -> tuple[object, str, str]:
    import validator.cli.checking as checking
    from validator.cli import main
    from validator.cli.group import cli
    from validator.cli.run import run_cli

    def boom(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setattr(checking, "check_node", boom)
    args = ["check", "--facts", str(FACTS)]
    assert parse_check(args[1:]) is not None
    with pytest.raises(SystemExit) as exc:
        if path == "quick":
            main(args)
        else:
            run_cli(cli, args)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.mark.parametrize("raised", [
    KeyboardInterrupt(), EOFError(), BrokenPipeError(errno.EPIPE, "Broken pipe"),
    OSError(errno.ENOSPC, "No space left on device"), RuntimeError("a bug"),
    click.UsageError("--scrape samples live endpoints"),
], ids=lambda e: type(e).__name__)
def test_an_interrupted_or_failed_run_ends_the_same(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], raised: BaseException) -> None:
    stdout, stderr = sys.stdout, sys.stderr
    try:
        quick = _end(monkeypatch, capsys, raised, "quick")
        sys.stdout, sys.stderr = stdout, stderr
        slow = _end(monkeypatch, capsys, raised, "click")
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    assert quick == slow
    assert quick[0] in (1, 2)


def test_an_options_error_is_said_as_the_verbs(tmp_path: Path) -> None:
    args = ["--facts", str(FACTS), "--scrape", "http://127.0.0.1:9400/metrics"]
    code, out, err = _run(_QUICK, args, tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith("spec-check: error: check: --scrape samples live endpoints") and "spec-check check --help" in err


# ---- what the quick path loads ----------------------------------------------------------------

_PROBE = "import contextlib, io, json, sys\n" + RUN_VERB + """
print(json.dumps({"code": code, "loaded": sorted(m for m in ("click", "psutil", "socket", "ctypes", "rich")
                                                 if m in sys.modules)}))
"""


@pytest.mark.parametrize("args", [["check"], ["check", "--format", "json"], ["check", "--facts", "FRESH"]])
def test_a_quick_check_loads_no_click(tmp_path: Path, args: list[str]) -> None:
    """Nor psutil, socket or ctypes on Linux (validator/facts/node/host.py, nvidia.py):
    the values they gave are read with the calls they make. (A run with a note to say,
    such as an older facts file's, loads click to say it.)"""
    if "FRESH" in args:  # facts of this version: no note
        fresh = tmp_path / "facts.json"
        subprocess.run([sys.executable, "-m", "validator", "probe", "-o", str(fresh)], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
        args = [str(fresh) if a == "FRESH" else a for a in args]
    seen = run_probe(tmp_path, _PROBE, *args)
    expected = [] if sys.platform.startswith("linux") else seen["loaded"]
    assert seen["loaded"] == expected


def test_an_interrupt_while_the_arguments_are_read_ends_the_same(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """A Slurm SIGTERM while a path is looked at (a hung NFS mount): click's blank line,
    then the one-line error, on both paths."""
    from validator.cli import main
    from validator.cli.group import cli
    from validator.cli.run import run_cli

    hang = tmp_path / "hang"
    hang.mkdir()
    real_stat = os.stat

    def stat(path: Any, *a: Any, **k: Any) -> os.stat_result:
        if os.fspath(path) == str(hang):
            raise KeyboardInterrupt
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    ended = []
    for run in (lambda: main(["check", "--facts", str(FACTS), "--rules", str(hang)]),
                lambda: run_cli(cli, ["check", "--facts", str(FACTS), "--rules", str(hang)])):
        with pytest.raises(SystemExit) as exc:
            run()
        ended.append((exc.value.code, *capsys.readouterr()))
    assert ended[0] == ended[1] == (2, "", "\nspec-check: error: interrupted\n")


def test_an_in_process_caller_s_paths_are_left_to_click(capsys: pytest.CaptureFixture[str]) -> None:
    """``validator.cli.main`` called with a Path (its type says str): click takes it, as before."""
    from validator.cli import main

    assert parse_check(["--facts", FACTS]) is None  # type: ignore[list-item]
    with pytest.raises(SystemExit) as exc:
        main(["check", "--facts", FACTS, "--format", "json"])  # type: ignore[list-item]
    assert exc.value.code == 1 and '"command": "check"' in capsys.readouterr().out
