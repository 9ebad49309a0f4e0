"""Signals: SIGTERM ends every verb with exit 2 (the contract's code for a run that could
not be done), Ctrl-C during start-up is one line and no traceback, and a SIGKILLed
write leaves no temporary file once the next run writes to the same place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.jobs.util import ROOT
from validator.io.atomic import write_atomic

ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000"}


def _start(*args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "validator", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=stdin, env=ENV, cwd=ROOT)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_sigterm_during_a_long_run_exits_2(tmp_path: Path, sig: signal.Signals) -> None:
    """``lint`` reading stdin-like slow input is not possible (files only), so the long run
    is a lint of many configs; the signal lands mid-run."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    src = (ROOT / "tests" / "acceptance" / "jobs" / "negative" / "ds_batch_mismatch.json").read_text()
    for i in range(1500):
        (jobs / f"ds{i}.json").write_text(src)
    p = _start("lint", *[str(jobs / f"ds{i}.json") for i in range(1500)])
    time.sleep(1.5)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    if p.returncode in (0, 1):
        pytest.skip("the run finished before the signal came (a very fast machine)")
    assert p.returncode == 2, (p.returncode, err)
    said = "interrupted" if sig == signal.SIGINT else f"interrupted ({sig.name})"
    assert err.decode().strip().splitlines()[-1] == f"spec-check: error: {said}"
    assert b"Traceback" not in err


def test_sigterm_during_cluster_replay_exits_2(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    node = (ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json").read_text()
    # each node's sources its own (not a fact value): no file repeats another in a way
    # validator/cluster/shapes.py reads back, so every one is parsed and evaluated, and the
    # replay lasts long enough to be signalled (in forked workers: above PARALLEL_ABOVE)
    for i in range(2400):
        text = node.replace('"dgx-h100-01"', f'"n{i:04d}"').replace('"/proc/cpuinfo"', f'"/proc/cpuinfo#{i}"')
        (fleet / f"n{i:04d}.json").write_text(text)
    import psutil

    p = _start("cluster", "--facts", str(fleet), "--format", "json", "-o", str(tmp_path / "out.json"))
    deadline = time.monotonic() + 60
    # the replay has begun when its workers are forked (2,400 files to parse and evaluate:
    # a second or more of work left on any machine)
    while p.poll() is None and not psutil.Process(p.pid).children() and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    if p.returncode in (0, 1):
        pytest.skip("the replay finished before the signal came (a very fast machine)")
    assert p.returncode == 2, (p.returncode, err)  # was 143: killed by the default handler
    assert b"Traceback" not in err


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a SIGTERM handler: validator.entry installs one first thing
    (Python itself catches only SIGINT), so from then on the run is spec-check's code."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2, 0.3])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_start_up_is_one_line(delay: float, sig: signal.Signals) -> None:
    """From the moment spec-check's entry point runs (its handlers in place) through the
    imports of click, rich and the verb: a signal is one line. (Before that, the
    interpreter's own start-up is Python's: nothing of spec-check has run yet.)"""
    p = _start("rules", "list")
    deadline = time.monotonic() + 30
    while not _catches_sigterm(p.pid) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    if p.returncode < 0:
        # the default action: before the interpreter installs its handlers, or once
        # finalisation has reset them (the run was already ending); never a traceback
        pass
    elif p.returncode != 0:  # the signal landed before the run ended
        assert p.returncode == 2, (p.returncode, err)
        assert err.decode().strip().startswith("spec-check: error: interrupted"), err


def test_sigkill_leftovers_removed_by_the_next_write(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    # a writer killed mid-write: its temporary file, named for its host and (dead) pid
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    host = __import__("validator.io.atomic", fromlist=["_host"])._host()
    stray = tmp_path / f".report.json.{host}.{child.pid}.abcd1234.tmp"
    stray.write_text("half a report")
    child.kill()
    child.wait()
    alive = tmp_path / f".report.json.{host}.{os.getpid()}.live0000.tmp"  # a live writer's: kept
    alive.write_text("in progress")
    other = tmp_path / ".other.json.somehost.1.x.tmp"  # another target's, or another host's: kept
    other.write_text("x")
    write_atomic(out, "{}\n")
    assert out.read_text() == "{}\n"
    assert not stray.exists() and alive.exists() and other.exists()


def test_sigkill_mid_write_then_next_run_leaves_nothing(tmp_path: Path) -> None:
    """Through the CLI: kill -9 a run while it writes, run again, no .tmp file remains."""
    out = tmp_path / "r.json"
    code = ("import os, sys, validator.io.atomic as a\n"
            "real = os.fsync\n"
            "def stall(fd):\n"
            "    sys.stdout.write('writing\\n'); sys.stdout.flush(); import time; time.sleep(60)\n"
            "os.fsync = stall\n"
            f"a.write_atomic(__import__('pathlib').Path({str(out)!r}), 'x' * 1000)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=ROOT, env=ENV)
    assert p.stdout is not None and p.stdout.readline() == b"writing\n"
    p.kill()
    p.communicate()
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]  # the killed write's leftover
    r = subprocess.run([sys.executable, "-m", "validator", "lint", "--format", "json", "-o", str(out),
                        str(ROOT / "tests" / "acceptance" / "jobs" / "negative" / "ds_batch_mismatch.json")],
                       capture_output=True, cwd=ROOT, env=ENV)
    assert r.returncode == 1, r.stderr
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []
