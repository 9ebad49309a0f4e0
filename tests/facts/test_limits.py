"""MEM-02 judges the locked-memory limit of what launches training (slurmd, the container
runtime, their systemd unit), and says which it read; the probe's own limit is a labelled
last resort. Trees shaped like real nodes (tests/fixtures/nodes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures import nodes
from validator.facts.node.base import Context
from validator.facts.node.limits import memlock, parse_systemd_limit


def _host(tmp_path, own="8388608"):
    b = nodes.Builder(tmp_path)
    b.host(hostname="n1", kernel="6.1.0", os_pretty="Debian GNU/Linux 12 (bookworm)", cpus=4,
           model="x", mem_kib=1024, memlock=own)
    b.process(1, "systemd", ["/sbin/init"])
    return b, Context(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", rootfs=tmp_path)


def test_slurmd_limit_wins_over_the_probe_shell(tmp_path):
    b, ctx = _host(tmp_path)
    b.process(912, "containerd", ["/usr/bin/containerd"])
    b.limits(912, "65536")
    b.process(1650, "slurmd", ["/usr/sbin/slurmd"])
    b.limits(1650, "unlimited")
    f = memlock(ctx)
    assert f["value"] == "unlimited" and f["source"].startswith("locked-memory limit (ulimit -l) of slurmd (pid 1650): ")


def test_slurmd_with_a_small_limit_fails_even_when_the_shell_is_unlimited(tmp_path):
    b, ctx = _host(tmp_path, own="unlimited")
    b.process(1650, "slurmd", ["/usr/sbin/slurmd"])
    b.limits(1650, "65536")
    assert memlock(ctx)["value"] == 65536


def test_docker_default_ulimits(tmp_path):
    b, ctx = _host(tmp_path)
    b.process(700, "dockerd", ["/usr/bin/dockerd"])
    b.limits(700, "65536")
    b.process(600, "containerd", ["/usr/bin/containerd"])
    b.limits(600, "65536")
    b.write("etc/docker/daemon.json", json.dumps(
        {"default-ulimits": {"memlock": {"Name": "memlock", "Soft": -1, "Hard": -1}}}))
    f = memlock(ctx)
    assert f["value"] == "unlimited" and "dockerd default-ulimits" in f["source"]
    (tmp_path / "etc/docker/daemon.json").write_text("{}")
    f = memlock(ctx)  # no default: containers inherit containerd's
    assert f["value"] == 65536 and f["source"].startswith("locked-memory limit (ulimit -l) of containerd (pid 600)")


def test_unit_file_when_the_daemon_is_not_running(tmp_path):
    b, ctx = _host(tmp_path)
    b.write("usr/lib/systemd/system/slurmd.service", "[Service]\nExecStart=/usr/sbin/slurmd\n"
            "LimitMEMLOCK=64K\n")
    f = memlock(ctx)
    assert f["value"] == 65536 and "slurmd.service LimitMEMLOCK (slurmd not running)" in f["source"]
    assert f["source"].endswith("slurmd.service:3")
    b.write("etc/systemd/system/slurmd.service.d/limits.conf", "[Service]\nLimitMEMLOCK=infinity\n")
    f = memlock(ctx)
    assert f["value"] == "unlimited" and f["source"].endswith("limits.conf:2")


def test_unit_without_limit_is_an_error_naming_the_default(tmp_path):
    b, ctx = _host(tmp_path)
    b.write("lib/systemd/system/containerd.service", "[Service]\nExecStart=/usr/bin/containerd\n")
    f = memlock(ctx)
    assert "sets no LimitMEMLOCK" in f["error"] and "containerd.service" in f["source"]


def test_own_limit_is_the_labelled_last_resort(tmp_path):
    _, ctx = _host(tmp_path)
    f = memlock(ctx)
    assert f["value"] == 8388608
    assert f["source"].startswith("spec-check's own limit (last resort")


def test_unreadable_slurmd_limits_is_an_error_not_the_shell(tmp_path):
    b, ctx = _host(tmp_path, own="unlimited")
    b.process(1650, "slurmd", ["/usr/sbin/slurmd"])
    f = memlock(ctx)
    assert "slurmd (pid 1650)" in f["error"]


@pytest.mark.parametrize("text,want", [("infinity", "unlimited"), ("8M", 8 << 20), ("65536", 65536),
                                        ("64K:infinity", 65536), ("1G", 1 << 30)])
def test_systemd_sizes(text, want):
    assert parse_systemd_limit(text) == want


def test_systemd_size_rejects_junk():
    with pytest.raises(ValueError):
        parse_systemd_limit("lots")


def test_check_names_slurmd_in_the_mem02_finding(tmp_path):
    """End to end: the MEM-02 finding's source names the process whose limit it judged."""
    import subprocess
    import sys

    doc = json.loads((Path(__file__).resolve().parents[1] / "fixtures/facts/dgx_h100.json").read_text())
    facts = tmp_path / "n.json"
    facts.write_text(json.dumps(doc))
    p = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(facts), "--select",
                        "MEM-02.memlock", "--format", "json"], capture_output=True, text=True, check=False)
    found = json.loads(p.stdout)["findings"]
    assert [(f["status"], f["source"]) for f in found] == [("pass", "locked-memory limit (ulimit -l) of slurmd (pid 1650): /proc/1650/limits")]


def test_docker_default_ulimits_beyond_any_real_value_or_written_twice(tmp_path):
    """Issue 24: daemon.json is read by the JSON rules of every input: a 400-digit memlock or
    a repeated key is an error value naming the file, never a number that overflows later."""
    b, ctx = _host(tmp_path)
    b.process(700, "dockerd", ["/usr/bin/dockerd"])
    b.limits(700, "65536")
    b.write("etc/docker/daemon.json", '{"default-ulimits": {"memlock": {"Soft": ' + "9" * 400 + "}}}")
    f = memlock(ctx)
    assert "daemon.json: not JSON" in f["error"] and "400-digit integer is beyond any real value" in f["error"]
    b.write("etc/docker/daemon.json", '{"default-ulimits": {"memlock": {"Soft": -1, "Soft": 65536}}}')
    assert 'key "Soft" written twice' in memlock(ctx)["error"]
