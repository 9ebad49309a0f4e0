"""The real probe on this machine: real values, real sources, whatever the machine has.

Each test asks the machine what it has (NVML, /sys/class/infiniband) and checks the probe
against that, so the suite passes on a laptop, a CI runner and a GPU/RDMA node alike; the
``gpu``-marked test runs only where NVML answers."""

from __future__ import annotations

import os
import socket
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


def test_memlock_is_what_the_named_launcher_gets(facts):
    """The limit of what launches training here, checked against that launcher: a running
    slurmd or container runtime (``prlimit`` of its pid), its systemd unit (the line named),
    or, as the labelled last resort, this process (``getrlimit``)."""
    import re
    import resource

    fact = facts["memory.memlock_limit"]
    source = fact["source"]

    def as_value(soft: int) -> int | str:
        return "unlimited" if soft == resource.RLIM_INFINITY else soft

    pid = re.match(r"^locked-memory limit \(ulimit -l\) of \w+ \(pid (\d+)\): ", source)
    unit = re.search(r"LimitMEMLOCK \(\w+ not running\): (.+):(\d+)$", source)
    if pid:
        try:
            soft, _ = resource.prlimit(int(pid.group(1)), resource.RLIMIT_MEMLOCK)
        except (PermissionError, ProcessLookupError) as exc:
            pytest.skip(f"cannot read that process's limits here: {exc}")
        assert fact["value"] == as_value(soft)
    elif unit:
        from validator.facts.node.limits import parse_systemd_limit

        line = Path(unit.group(1)).read_text().splitlines()[int(unit.group(2)) - 1]
        assert line.strip().startswith("LimitMEMLOCK=")
        assert fact["value"] == parse_systemd_limit(line.split("=", 1)[1])
    else:
        assert source.startswith("spec-check's own limit (last resort")
        assert fact["value"] == as_value(resource.getrlimit(resource.RLIMIT_MEMLOCK)[0])


def _nvml_count() -> int | None:
    """GPUs NVML reports here, or None where NVML does not start (no driver)."""
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        return int(pynvml.nvmlDeviceGetCount())
    finally:
        pynvml.nvmlShutdown()


def _nvidia_on_bus() -> bool:
    root = Path("/sys/bus/pci/devices")
    try:
        return any((d / "vendor").read_text().strip() == "0x10de" and
                   (d / "class").read_text().strip().startswith(("0x0300", "0x0302"))
                   for d in root.iterdir())
    except OSError:
        return False


def test_gpu_facts_match_what_this_machine_has(facts):
    count = _nvml_count()
    if count is not None:
        assert facts["gpu.vendor"]["value"] == "nvidia"
        assert facts["gpu.count"]["value"] == count
        assert len(facts["gpu.devices"]["items"]) == count
        assert facts["gpu.driver_status"]["value"] == "ok"
    elif not _nvidia_on_bus() and facts["accel.pci_count"].get("value") == 0:
        # no GPU here: a fact, not an error
        assert facts["gpu.vendor"]["value"] == "none"
        assert facts["gpu.count"]["value"] == 0
        assert facts["gpu.devices"]["items"] == []
        assert "LibraryNotFound" in facts["gpu.driver_version"]["error"]
    else:  # GPUs on the bus but NVML does not start: the driver is broken, with the reason
        assert facts["gpu.vendor"]["value"] in ("nvidia", "amd")
        status = facts["gpu.driver_status"]
        # never "ok" without a working driver: a verdict with the NVML reason, or an error
        assert status.get("value") != "ok", status
        told = status.get("value") or status.get("error") or ""
        assert "PCI" in told, status  # says what the bus showed, so the verdict has its evidence


@pytest.mark.gpu
def test_live_nvidia_gpus_are_read_through_nvml(facts):
    """On a GPU node: every GPU's identity and health fields come from NVML, not errors."""
    count = _nvml_count()
    if not count:
        pytest.skip("no NVML here (no NVIDIA driver or no GPU)")
    import pynvml

    pynvml.nvmlInit()
    try:
        uuids = {pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)}
        driver = pynvml.nvmlSystemGetDriverVersion()
    finally:
        pynvml.nvmlShutdown()
    assert facts["gpu.driver_version"]["value"] == (driver.decode() if isinstance(driver, bytes) else driver)
    members = [m["fields"] for m in facts["gpu.devices"]["items"]]
    assert {m["uuid"]["value"] for m in members} == {u.decode() if isinstance(u, bytes) else u for u in uuids}
    for m in members:
        for name in ("name", "pci_bus_id", "memory_total", "ecc_enabled", "pcie_gen_max", "pcie_width_max"):
            assert "value" in m[name], (name, m[name])
        assert m["pci_bus_id"]["value"] == m["pci_bus_id"]["value"].lower()  # sysfs form
    assert facts["gpu.memory_total"]["value"] == sum(m["memory_total"]["value"] for m in members)


def test_rdma_facts_match_sys_class_infiniband(facts):
    ib = Path("/sys/class/infiniband")
    ports = sorted(ib.glob("*/ports/*")) if ib.is_dir() else []
    assert facts["rdma.port_count"].get("value") == len(ports)
    ids = {m["id"] for m in facts["rdma.ports"]["items"]}
    assert ids == {f"{p.parent.parent.name}:{p.name}" for p in ports}
    gdr = any(Path("/sys", rel).is_file() for rel in (
        "module/nvidia_peermem/version", "kernel/mm/memory_peers/nv_mem/version",
        "kernel/mm/memory_peers/nv_mem_nc/version"))
    assert facts["rdma.gdr_module"]["value"] is gdr


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


def test_probe_is_silent(capsys):
    probe_node()
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
