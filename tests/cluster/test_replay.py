"""``spec-check cluster --facts``: a replay must judge the facts it is given, never pass a
host on facts it does not have (unknown is never pass)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.helpers import fake_remote, probe_status, run_cluster


def _saved(tmp_path: Path, modes: dict[str, str]) -> tuple[Path, dict]:
    """A live run over the local transport with --save-facts; (facts dir, live result)."""
    saved = tmp_path / "saved"
    rc, live, err = run_cluster(
        tmp_path, "--transport", "local", "--hosts", ",".join(modes), "--select", "PLAT-02",
        "--remote-command", fake_remote(tmp_path, modes), "--save-facts", str(saved),
    )
    assert live is not None and rc in (0, 1), err
    return saved, live


def _replay(tmp_path: Path, *facts: Path, args: tuple[str, ...] = ("--select", "PLAT-02")):
    out = tmp_path / "replay"
    out.mkdir(exist_ok=True)
    return run_cluster(out, *[a for f in facts for a in ("--facts", str(f))], *args)


def test_cluster_json_alone_does_not_pass_the_hosts(tmp_path):
    saved, live = _saved(tmp_path, {"a": "gpu", "b": "gpu"})
    assert live["summary"]["conformant"] is True
    rc, result, err = _replay(tmp_path, saved / "cluster.json")
    assert rc == 1, err
    status = probe_status(result)
    assert status["a"][0] == status["b"][0] == "error", status
    assert "no node facts for this host in --facts" in status["a"][1]
    assert result["summary"]["conformant"] is False
    assert set(result["extra"]["fleet"]["failed"]) == {"a", "b"}


def test_a_deleted_node_file_is_an_error_on_that_host(tmp_path):
    saved, live = _saved(tmp_path, {"a": "gpu", "b": "gpu", "c": "gpu"})
    assert live["summary"]["conformant"] is True
    (saved / "b.json").unlink()
    rc, result, err = _replay(tmp_path, saved)
    assert rc == 1, err
    status = probe_status(result)
    assert status["a"][0] == status["c"][0] == "pass", status
    assert status["b"][0] == "error" and "no node facts" in status["b"][1]
    failed = {s["name"] for s in result["subjects"] if "probe failed" in (s["source"] or "")}
    assert failed == {"b"}


def test_homogeneity_is_judged_on_the_node_files_given(tmp_path):
    """An edited (or re-probed) node file is compared as it is, not as cluster.json
    recorded it at probe time."""
    saved, live = _saved(tmp_path, {"a": "gpu", "b": "gpu", "c": "gpu"})
    assert live["summary"]["conformant"] is True
    path = saved / "c.json"
    doc = json.loads(path.read_text())
    doc["facts"]["gpu.driver_version"] = {"value": "535.104.05"}
    path.write_text(json.dumps(doc))
    rc, result, err = _replay(tmp_path, saved)
    [f] = [f for f in result["findings"] if f["rule"] == "PLAT-02.driver-version-mixed"]
    assert f["status"] == "fail" and "535.104.05" in json.dumps(f), err
    assert rc == 1


@pytest.mark.parametrize(
    "args, named",
    [
        (["--save-facts", "out"], "--save-facts"),
        (["--parallel", "4"], "--parallel"),
        (["--timeout", "30"], "--timeout"),
        (["--measure-seconds", "3"], "--measure-seconds"),
        (["--measure-tools", "ping"], "--measure-tools"),
        (["--pairs", "all", "--iperf-port", "6000"], "--pairs, --iperf-port"),
        (["--hosts", "a"], "--hosts"),
        (["--no-measure"], "--measure"),
        (["--slurm-args", "--time=5"], "--slurm-args"),
    ],
)
def test_live_only_options_with_facts_are_usage_errors(tmp_path, args, named):
    (tmp_path / "a.json").write_text("{}")  # never read: the options are refused first
    p = subprocess.run(
        [sys.executable, "-m", "validator", "cluster", "--facts", str(tmp_path / "a.json"), *args],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert p.returncode == 2, p.stderr
    error = [ln for ln in p.stderr.splitlines() if "Error" in ln or "error" in ln]
    assert len(error) == 1 and named in error[0] and "--facts" in error[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()
