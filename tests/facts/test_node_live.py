"""The real probe on this machine (no GPU, no driver, no RDMA): real values, real sources."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import psutil
import pytest

from tests.facts.catalogue import check_facts
from validator.facts.node import probe_node


@pytest.fixture(scope="module")
def facts():
    return probe_node()


def test_every_fact_present_and_well_formed(facts):
    check_facts(facts)


def test_host_facts_are_this_machines(facts):
    assert facts["host.hostname"]["value"] == socket.gethostname()
    assert facts["host.kernel"]["value"] == os.uname().release
    assert facts["cpu.logical_count"]["value"] == psutil.cpu_count(logical=True)
    assert facts["memory.total"] == {"value": psutil.virtual_memory().total, "unit": "B",
                                     "source": "/proc/meminfo"}
    st = os.statvfs("/dev/shm")
    assert facts["memory.shm_size"]["value"] == st.f_frsize * st.f_blocks


def test_memlock_matches_getrlimit(facts):
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    expected = "unlimited" if soft == resource.RLIM_INFINITY else soft
    assert facts["memory.memlock_limit"]["value"] == expected


def test_no_gpu_here_is_a_fact_not_an_error(facts):
    assert facts["gpu.vendor"]["value"] == "none"
    assert facts["gpu.count"]["value"] == 0
    assert facts["gpu.devices"]["items"] == []
    assert "LibraryNotFound" in facts["gpu.driver_version"]["error"]
    assert facts["accel.pci_count"]["value"] == 0


def test_rdma_absent(facts):
    assert not Path("/sys/class/infiniband").exists()  # the premise of this test
    assert facts["rdma.port_count"]["value"] == 0
    assert facts["rdma.gdr_module"]["value"] is False


def test_interfaces_match_psutil(facts):
    stats = psutil.net_if_stats()
    members = {m["id"]: m["fields"] for m in facts["net.interfaces"]["items"]}
    assert set(members) == {name for name in stats if name != "lo"}
    for name, f in members.items():
        assert f["mtu"]["value"] == stats[name].mtu
        if stats[name].speed > 0:
            assert f["speed"]["value"] == stats[name].speed
        else:  # psutil's 0 means unknown: ours must be an error, never 0
            assert "error" in f["speed"]


def test_probe_is_quick_and_silent(capsys):
    start = time.perf_counter()
    probe_node()
    assert time.perf_counter() - start < 10  # generous; a hang would be a bug
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
