"""Real hosts: network namespaces on a bridge, each with its own sshd; real iperf3 and tc.

Every host answers over real OpenSSH with host keys checked (a known_hosts file made
here, StrictHostKeyChecking on), runs this checkout's real probe, and is measured with
real iperf3 and ping. Needs root and a kernel that allows network namespaces.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster.helpers import REAL_REMOTE, by_rule, fake_remote, probe_status, run_cluster

pytestmark = [pytest.mark.netns, pytest.mark.slow]

# a veth pair moves a few Gb/s even on a small VM; 100 Mbit/s tbf is far below the bar
SLOW_BAR = ["--set", "fabric_port_rate=1 Gb/s", "--set", "measured_efficiency=0.5"]


def ssh_args(fleet, *hosts: str) -> list[str]:
    return [
        "--transport",
        "ssh",
        "--ssh-config",
        str(fleet.ssh_config),
        "--hosts",
        ",".join(hosts or fleet.addresses),
    ]


def test_probe_over_ssh_and_a_killed_sshd_is_an_error(fleet_factory, tmp_path):
    fleet = fleet_factory(4)
    fleet.kill_sshd(2)
    dead = fleet.addresses[2]
    rc, result, err = run_cluster(
        tmp_path, *ssh_args(fleet), "--remote-command", REAL_REMOTE, "--connect-timeout", "3"
    )
    status = probe_status(result)
    assert status[dead][0] == "error" and "ssh:" in status[dead][1], status[dead]
    assert "refused" in status[dead][1].lower()
    for ip in set(fleet.addresses) - {dead}:
        assert status[ip][0] == "pass", (ip, status[ip], err)
    # the other hosts' node rules ran, each under the address it was reached at
    node_subjects = {f["subject"] for f in result["findings"] if f["rule"].startswith("MEM-")}
    assert node_subjects == set(fleet.addresses) - {dead}
    assert rc == 1


def test_unknown_host_key_is_refused_not_trusted(fleet_factory, tmp_path):
    fleet = fleet_factory(2)
    (fleet.tmp / "known_hosts").write_text(  # forget host 1's key
        (fleet.tmp / "known_hosts").read_text().splitlines()[0] + "\n"
    )
    _rc, result, _ = run_cluster(tmp_path, *ssh_args(fleet), "--remote-command", REAL_REMOTE)
    status = probe_status(result)
    assert status[fleet.addresses[0]][0] == "pass"
    assert status[fleet.addresses[1]][0] == "error"
    assert "host key" in status[fleet.addresses[1]][1].lower()


def test_hang_and_death_mid_probe_over_ssh(fleet_factory, tmp_path):
    fleet = fleet_factory(4)
    a = fleet.addresses
    modes = {"gateway": f"{fleet.subnet}.1", a[0]: "ok", a[1]: "hang", a[2]: "die", a[3]: "ok"}
    t0 = time.monotonic()
    _rc, result, err = run_cluster(
        tmp_path,
        *ssh_args(fleet),
        "--timeout",
        "5",
        "--remote-command",
        fake_remote(tmp_path, modes),
    )
    assert time.monotonic() - t0 < 60
    status = probe_status(result)
    assert status[a[0]][0] == status[a[3]][0] == "pass", err
    assert status[a[1]][0] == "error" and "timed out after 5 s" in status[a[1]][1]
    assert status[a[2]][0] == "error" and "connection closed" in status[a[2]][1]
    # the hung probe does not stay behind on its host: bounded there by `timeout`
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = subprocess.run(
            ["ip", "netns", "pids", fleet.hosts[1].ns], capture_output=True, text=True
        ).stdout.split()
        if len(pids) == 1:  # only the sshd listener
            break
        time.sleep(0.5)
    assert len(pids) == 1, pids


def test_throttled_host_is_singled_out_by_its_measured_number(fleet_factory, tmp_path):
    fleet = fleet_factory(4)
    fleet.throttle(2, "100mbit")
    slow = fleet.addresses[2]
    _rc, result, err = run_cluster(
        tmp_path,
        *ssh_args(fleet),
        "--remote-command",
        REAL_REMOTE,
        "--measure",
        "--measure-seconds",
        "2",
        *SLOW_BAR,
        "--set",
        "latency_max=10 ms",
        "--select",
        "NET-01.measured,NET-04,PLAT-02",
    )
    pairs = {f["item"]: f for f in by_rule(result, "NET-01.measured-throughput-low")}
    assert len(pairs) == 4, err  # the ring 0->1->2->3->0, in 2 rounds
    assert result["extra"]["fleet"]["pairs"]["rounds"] == 2
    failing = {item for item, f in pairs.items() if f["status"] == "fail"}
    assert failing == {item for item in pairs if slow in item.split("->")}, pairs
    for f in pairs.values():
        assert f["unit"] == "Gb/s" and "iperf3" in f["source"]
        if f["status"] == "fail":
            assert f["value"] < 0.15  # ~0.095 Gb/s through a 100 Mbit/s bucket
    lat = by_rule(result, "NET-04.latency-high")
    assert len(lat) == 4 and all(f["status"] == "pass" and f["unit"] == "us" for f in lat), lat


def test_all_pairs_with_a_dead_host(fleet_factory, tmp_path):
    fleet = fleet_factory(4)
    fleet.kill_sshd(3)
    _rc, result, err = run_cluster(
        tmp_path,
        *ssh_args(fleet),
        "--remote-command",
        REAL_REMOTE,
        "--measure",
        "--pairs",
        "all",
        "--measure-seconds",
        "1",
        *SLOW_BAR,
        "--connect-timeout",
        "3",
        "--select",
        "NET-01.measured,PLAT-02.host",
    )
    pairs = by_rule(result, "NET-01.measured-throughput-low")
    # the 3 live hosts: 3 pairs in 3 rounds; the dead one is an error, not a pair
    assert sorted(f["status"] for f in pairs) == ["pass"] * 3, (pairs, err)
    assert probe_status(result)[fleet.addresses[3]][0] == "error"


def _iperf_client_in(fleet, flags: tuple[bytes, ...] = (b"-c",)) -> bool:
    """Whether an ``iperf3 -c`` (or one with another of ``flags``) runs in a namespace of ``fleet``."""
    import subprocess

    for h in fleet.hosts:
        pids = subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"iperf3") and any(f in argv for f in flags):
                return True
    return False


def test_ctrl_c_during_measurement_keeps_the_probes(fleet_factory, tmp_path):
    import json
    import signal
    import subprocess
    import sys

    fleet = fleet_factory(2)
    out = tmp_path / "partial.json"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "validator",
            "cluster",
            *ssh_args(fleet),
            "--remote-command",
            REAL_REMOTE,
            "--measure",
            "--measure-seconds",
            "60",
            "--format",
            "json",
            "-o",
            str(out),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until iperf3 runs in one of this fleet's namespaces
        if _iperf_client_in(fleet):  # (not a machine-wide pgrep: another test's iperf3 is not this one)
            break
        time.sleep(0.2)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert time.monotonic() - t0 < 20  # not the 60 s test duration
    assert p.returncode == 2 and "partial" in err
    result = json.loads(out.read_text())
    assert {s for s, _ in probe_status(result).values()} == {"pass"}
    assert result["extra"]["fleet"]["interrupted"] is True
    time.sleep(1)
    # in this fleet's namespaces: another test's (or another run's) iperf3 on this machine is not ours
    assert not _iperf_client_in(fleet, (b"-c", b"-s")), "an iperf3 was left running"


def test_fabric_interface_measures_the_fabric_not_the_ssh_network(fleet_factory, tmp_path):
    """Each host has a throttled management link (where ssh reaches it) and a fast fab0
    interface: --fabric-interface fab0 measures the fabric, and says so."""
    fleet = fleet_factory(2)
    fabric = fleet.add_fabric()
    for i in range(2):
        fleet.throttle(i, "100mbit")
    args = [*ssh_args(fleet), "--remote-command", REAL_REMOTE, "--measure", "--measure-tools",
            "ping,iperf3", "--measure-seconds", "2", *SLOW_BAR, "--select", "NET-01.measured,NET-04"]
    _rc, mgmt, err = run_cluster(tmp_path, *args)
    [slow] = by_rule(mgmt, "NET-01.measured-throughput-low")
    assert slow["status"] == "fail" and slow["value"] < 0.15, (slow, err)
    (tmp_path / "fab").mkdir()
    _rc, fab, err = run_cluster(tmp_path / "fab", *args, "--fabric-interface", "fab0")
    [fast] = by_rule(fab, "NET-01.measured-throughput-low")
    assert fast["status"] == "pass" and fast["value"] > 1, (fast, err)
    assert f"iperf3 -c {fabric[1]} " in fast["source"]
    assert f"(interface fab0 on {fleet.addresses[1]} (ip -o -4 addr))" in fast["source"]
    [lat] = by_rule(fab, "NET-04.latency-high")
    assert f"ping -n -q -c 5 -i 0.2 -W 2 {fabric[1]}" in lat["source"]


def test_fleet_hosts_run_no_dotfile_of_this_machine(fleet_factory):
    """A test host logs in to /bin/sh in the fleet's own home: a slow ~/.bashrc on the
    machine running the tests (pyenv's rehash lock waits 60 s) must not time probes out."""
    fleet = fleet_factory(1)
    p = subprocess.run(
        ["ssh", "-F", str(fleet.ssh_config), fleet.addresses[0], "--", 'echo "$HOME" "$0"'],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(fleet.tmp / "home"), "sh"]
