"""``--transport slurm`` against a real Slurm (slurmctld + slurmd + munged) on localhost."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.cluster.helpers import REAL_REMOTE, fake_remote, probe_status, run_cluster

pytestmark = [pytest.mark.slow]


def test_inside_an_allocation_the_nodes_come_from_slurm(local_slurm, tmp_path):
    out = tmp_path / "result.json"
    p = subprocess.run(
        [
            "salloc",
            "-N1",
            "--time=5",
            sys.executable,
            "-m",
            "validator",
            "cluster",
            "--remote-command",
            REAL_REMOTE,
            "--format",
            "json",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=local_slurm.env,
        timeout=180,
    )
    assert p.returncode in (0, 1), p.stderr
    import json

    result = json.loads(out.read_text())
    assert probe_status(result) == {"localhost": ("pass", "probe status is ok")}
    sources = {s["name"]: s["source"] for s in result["subjects"]}
    assert sources["localhost"] == "slurm:localhost"  # --transport defaulted to slurm


def test_srun_per_host_and_an_unknown_node_is_an_error(local_slurm, tmp_path):
    _rc, result, err = run_cluster(
        tmp_path,
        "--transport",
        "slurm",
        "--hosts",
        "localhost,ghost01",
        "--remote-command",
        REAL_REMOTE,
        "--timeout",
        "60",
        env=local_slurm.env,
    )
    status = probe_status(result)
    assert status["localhost"][0] == "pass", err
    assert status["ghost01"][0] == "error" and status["ghost01"][1], status


def test_a_hanging_step_is_timed_out_and_cancelled(local_slurm, tmp_path):
    t0 = time.monotonic()
    _rc, result, _err = run_cluster(
        tmp_path,
        "--transport",
        "slurm",
        "--hosts",
        "localhost",
        "--remote-command",
        fake_remote(tmp_path, {"*": "hang"}),
        "--timeout",
        "8",
        env=local_slurm.env,
    )
    assert time.monotonic() - t0 < 90
    status = probe_status(result)
    assert status["localhost"][0] == "error" and "timed out after 8 s" in status["localhost"][1]
    deadline = time.monotonic() + 30  # killing srun cancels its job: nothing left queued
    while time.monotonic() < deadline:
        q = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=local_slurm.env)
        if not q.stdout.strip():
            break
        time.sleep(1)
    assert q.stdout.strip() == ""


def test_slurm_args_reach_every_probe_step(local_slurm, tmp_path):
    """--slurm-args go to srun: a valid time limit still probes, an unknown partition is
    srun's own error on the host."""
    _rc, result, err = run_cluster(
        tmp_path, "--transport", "slurm", "--hosts", "localhost", "--remote-command", REAL_REMOTE,
        "--slurm-args", "--time=5 --job-name=sc-args", "--timeout", "60", env=local_slurm.env,
    )
    assert probe_status(result)["localhost"][0] == "pass", err
    _rc, result, err = run_cluster(
        tmp_path, "--transport", "slurm", "--hosts", "localhost", "--remote-command", REAL_REMOTE,
        "--slurm-args", "--partition=nosuch", "--timeout", "60", env=local_slurm.env,
    )
    status, message = probe_status(result)["localhost"]
    assert status == "error" and "partition" in message.lower(), (message, err)
