"""The probe over sysfs/procfs trees shaped like real nodes (tests/fixtures/nodes.py)."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.facts.catalogue import check_facts, fields
from tests.fixtures import nodes
from tests.fixtures.fake_nvml import FakeNvml
from validator.facts.node import pci, probe_node, rdma
from validator.facts.node.base import Context

GPU_NIC = {  # GPU index -> (PCI address, nearest port, distance); PXB for GPUs 4-7
    0: ("0000:18:00.0", "mlx5_0:1", "PIX"),
    1: ("0000:2a:00.0", "mlx5_3:1", "PIX"),
    2: ("0000:3a:00.0", "mlx5_4:1", "PIX"),
    3: ("0000:5d:00.0", "mlx5_5:1", "PIX"),
    4: ("0000:9a:00.0", "mlx5_6:1", "PXB"),
    5: ("0000:ab:00.0", "mlx5_9:1", "PXB"),
    6: ("0000:ba:00.0", "mlx5_10:1", "PXB"),
    7: ("0000:db:00.0", "mlx5_11:1", "PXB"),
}


@pytest.fixture
def dgx(tmp_path):
    return nodes.dgx_h100(tmp_path)


def probe(tree, replay="dgx_h100"):
    return tree.probe(nvml=FakeNvml(replay))


def test_dgx_h100_is_complete_and_well_formed(dgx):
    check_facts(probe(dgx))


def test_dgx_h100_host(dgx):
    f = probe(dgx)
    assert f["host.hostname"]["value"] == "dgx-h100-01"
    assert f["host.kernel"]["value"] == "5.15.0-1042-nvidia"
    assert f["host.os"]["value"] == "Ubuntu 22.04.4 LTS"
    assert f["cpu.logical_count"]["value"] == 224
    assert f["cpu.model"]["value"] == "Intel(R) Xeon(R) Platinum 8480C"
    assert f["memory.total"]["value"] == 2113389596 * 1024
    # slurmd's limit, not the SSH shell's 8 MiB the probe itself runs with
    assert f["memory.memlock_limit"] == {"value": "unlimited", "unit": "B",
                                         "source": f"locked-memory limit (ulimit -l) of slurmd (pid 1650): {dgx.procfs / '1650/limits'}"}
    st = os.statvfs(dgx.rootfs / "dev/shm")
    assert f["memory.shm_size"]["value"] == st.f_frsize * st.f_blocks
    assert f["telemetry.exporters"]["value"] == ["dcgm-exporter", "node_exporter"]


def test_dgx_h100_accelerators_exclude_nvswitches(dgx):
    f = probe(dgx)
    assert f["accel.pci_count"]["value"] == 8  # 4 NVSwitch functions are NVIDIA but class 0x0680
    assert [m["id"] for m in f["accel.pci_devices"]["items"]] == [v[0] for v in GPU_NIC.values()]
    assert fields(f, "accel.pci_devices", "0000:9a:00.0") == {
        "vendor": "nvidia", "device_id": "0x2330", "numa_node": 1}


def test_dgx_h100_rdma_ports(dgx):
    f = probe(dgx)
    assert f["rdma.port_count"]["value"] == 8
    assert [m["id"] for m in f["rdma.ports"]["items"]] == [
        "mlx5_0:1", "mlx5_10:1", "mlx5_11:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1", "mlx5_6:1",
        "mlx5_9:1"]
    port = fields(f, "rdma.ports", "mlx5_0:1")
    assert port == {"device": "mlx5_0", "port": 1, "link_layer": "InfiniBand", "rate": 400,
                    "state": "ACTIVE", "phys_state": "LinkUp", "pci_bus_id": "0000:19:00.0",
                    "numa_node": 0, "netdev": "ibp25s0", "fw_ver": "28.39.1002"}
    rate = next(m for m in f["rdma.ports"]["items"] if m["id"] == "mlx5_0:1")["fields"]["rate"]
    assert rate["unit"] == "Gb/s"
    assert f["rdma.gdr_module"]["value"] is True


def test_dgx_h100_gpus_and_their_nearest_port(dgx):
    f = probe(dgx)
    assert f["gpu.vendor"]["value"] == "nvidia"
    assert f["gpu.count"]["value"] == 8
    assert f["gpu.memory_total"] == {"value": 8 * 85520809984, "unit": "B",
                                     "source": "sum of every GPU's total memory (gpu.devices)"}
    for i, (bdf, port, dist) in GPU_NIC.items():
        g = fields(f, "gpu.devices", f"GPU{i}")
        assert (g["pci_bus_id"], g["nearest_fabric_port"], g["nearest_fabric_distance"]) == (
            bdf, port, dist)
        assert g["nearest_fabric_rate"] == 400
        assert g["numa_node"] == (0 if i < 4 else 1)


def test_dgx_h100_network_interfaces(dgx):
    f = probe(dgx)
    names = [m["id"] for m in f["net.interfaces"]["items"]]
    assert "lo" not in names and "eno3" in names and "ibp25s0" in names
    ib = fields(f, "net.interfaces", "ibp25s0")
    assert (ib["speed"], ib["mtu"], ib["operstate"], ib["rdma"], ib["pci_bus_id"]) == (
        400000, 4092, "up", True, "0000:19:00.0")
    mgmt = fields(f, "net.interfaces", "eno3")
    assert (mgmt["speed"], mgmt["rdma"], mgmt["pci_bus_id"], mgmt["numa_node"]) == (
        10000, False, "0000:c1:00.0", 1)
    docker = fields(f, "net.interfaces", "docker0")
    assert "speed unknown (-1" in docker["speed"]["error"]  # -1 is unknown, never a speed
    assert "not a PCI device" in docker["pci_bus_id"]["error"]


def test_dgx_h100_pcie_links(dgx):
    f = probe(dgx)
    links = {m["id"]: m for m in f["pcie.links"]["items"]}
    assert len(links) == 16
    assert fields(f, "pcie.links", "0000:18:00.0") == {
        "role": "gpu", "name": "GPU0", "current_speed": 32, "max_speed": 32,
        "current_width": 16, "max_width": 16}
    assert fields(f, "pcie.links", "0000:2b:00.0")["name"] == "mlx5_3"
    assert "0000:c1:00.0" not in links  # the management NIC is not on the fabric path


@pytest.mark.parametrize(("variant", "item", "field", "expected"), [
    ("dgx_h100_port_200g", "mlx5_5:1", "rate", 200),
    ("dgx_h100_port_init", "mlx5_9:1", "state", "INIT"),
])
def test_failing_port_variants(tmp_path, variant, item, field, expected):
    f = probe(nodes.VARIANTS[variant](tmp_path))
    assert fields(f, "rdma.ports", item)[field] == expected
    others = [m for m in f["rdma.ports"]["items"] if m["id"] != item]
    assert all(m["fields"][field]["value"] in (400, "ACTIVE") for m in others)


def test_port_200g_is_the_nearest_rate_of_its_gpu(tmp_path):
    f = probe(nodes.dgx_h100_port_200g(tmp_path))
    assert fields(f, "gpu.devices", "GPU3")["nearest_fabric_rate"] == 200
    assert fields(f, "rdma.ports", "mlx5_5:1")["phys_state"] == "LinkUp"


def test_nic_trained_at_x8(tmp_path):
    f = probe(nodes.dgx_h100_nic_x8(tmp_path))
    link = fields(f, "pcie.links", "0000:2b:00.0")
    assert (link["name"], link["current_width"], link["max_width"]) == ("mlx5_3", 8, 16)


def test_missing_peermem(tmp_path):
    f = probe(nodes.dgx_h100_no_peermem(tmp_path))
    assert f["rdma.gdr_module"]["value"] is False


@pytest.mark.parametrize("legacy", ["nv_mem", "nv_mem_nc"])
def test_legacy_peer_memory_module_counts(tmp_path, legacy):
    tree = nodes.dgx_h100_no_peermem(tmp_path)
    nodes.Builder(tree.root).write(f"sys/kernel/mm/memory_peers/{legacy}/version", "1.3-0")
    assert probe(tree)["rdma.gdr_module"]["value"] is True


def test_plain_host_without_gpu_or_rdma(tmp_path):
    tree = nodes.plain_host(tmp_path)
    nv = FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []})
    f = tree.probe(nvml=nv)
    check_facts(f)
    assert f["gpu.vendor"]["value"] == "none"
    assert f["gpu.count"]["value"] == 0
    assert f["gpu.memory_total"]["value"] == 0
    assert f["accel.pci_count"]["value"] == 0
    assert f["rdma.port_count"]["value"] == 0 and f["rdma.ports"]["items"] == []
    assert f["memory.memlock_limit"]["value"] == 8388608
    assert f["memory.memlock_limit"]["source"].startswith("spec-check's own limit (last resort")
    assert f["pcie.links"]["items"] == []
    ens3 = fields(f, "net.interfaces", "ens3")
    assert "NUMA node unknown" in ens3["numa_node"]["error"]
    assert f["telemetry.exporters"]["value"] == []


# --- unreadable files become error values naming the path ---------------------------------

def test_directory_where_a_file_is_expected(dgx):
    rate = dgx.sysfs / "class/infiniband/mlx5_4/ports/1/rate"
    real = rate.resolve()
    real.unlink()
    real.mkdir()
    f = probe(dgx)
    err = fields(f, "rdma.ports", "mlx5_4:1")["rate"]["error"]
    assert err == f"cannot read {rate}: Is a directory"
    assert fields(f, "rdma.ports", "mlx5_0:1")["rate"] == 400  # the others are kept
    assert fields(f, "gpu.devices", "GPU2")["nearest_fabric_port"] == "mlx5_4:1"
    assert "Is a directory" in fields(f, "gpu.devices", "GPU2")["nearest_fabric_rate"]["error"]


def test_dangling_symlink(dgx):
    numa = dgx.sysfs / "bus/pci/devices/0000:18:00.0/numa_node"
    real = numa.resolve()
    real.unlink()
    os.symlink("/nonexistent/numa_node", real)
    f = probe(dgx)
    err = fields(f, "accel.pci_devices", "0000:18:00.0")["numa_node"]["error"]
    assert err == f"cannot read {numa}: No such file or directory"
    assert "No such file" in fields(f, "gpu.devices", "GPU0")["numa_node"]["error"]


def test_unreadable_pci_identity_fails_the_scan_loudly(dgx):
    vendor = (dgx.sysfs / "bus/pci/devices/0000:2a:00.0/vendor").resolve()
    vendor.unlink()
    vendor.mkdir()
    f = probe(dgx)
    assert "Is a directory" in f["accel.pci_count"]["error"]
    # without a PCI scan, a GPU whose driver is missing cannot be told from no GPU
    f2 = dgx.probe(nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    assert "PCI scan failed" in f2["gpu.count"]["error"]


def test_missing_sysfs_root_keeps_host_facts(tmp_path):
    tree = nodes.plain_host(tmp_path)
    shutil.rmtree(tree.sysfs)
    f = tree.probe(nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    check_facts(f)
    assert f["host.hostname"]["value"] == "build-01"
    assert "No such file or directory" in f["accel.pci_devices"]["error"]
    assert "No such file or directory" in f["net.interfaces"]["error"]
    # no sysfs at all is not evidence of "no RDMA": unknown, never a count of 0
    assert "not a sysfs tree" in f["rdma.port_count"]["error"]
    assert "cannot tell which modules are loaded" in f["rdma.gdr_module"]["error"]


def test_empty_procfs_is_unknown_not_no_exporters(tmp_path):
    tree = nodes.plain_host(tmp_path)
    shutil.rmtree(tree.procfs)
    tree.procfs.mkdir()
    f = tree.probe(nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    assert "not a procfs tree" in f["telemetry.exporters"]["error"]


def test_a_crashing_source_loses_only_its_own_facts(dgx, monkeypatch):
    def boom(ctx):
        raise RuntimeError("driver exploded")

    monkeypatch.setattr(rdma, "collect", boom)
    f = probe(dgx)
    check_facts(f)
    assert f["rdma.ports"]["error"] == "rdma source failed: RuntimeError: driver exploded"
    assert f["gpu.count"]["value"] == 8
    assert "RDMA ports unknown" in fields(f, "gpu.devices", "GPU0")["nearest_fabric_port"]["error"]


# --- parsers and the distance classifier ---------------------------------------------------

@pytest.mark.parametrize(("raw", "expected"), [
    ("32.0 GT/s PCIe", 32), ("32 GT/s", 32), ("2.5 GT/s PCIe", 2.5), ("16.0 GT/s PCIe", 16),
    ("64.0 GT/s PCIe", 64), ("8 GT/s", 8),
])
def test_parse_pcie_speed(raw, expected):
    assert pci.parse_speed(raw) == expected


@pytest.mark.parametrize("raw", ["Unknown", "", "fast"])
def test_unknown_pcie_speed_is_an_error(raw):
    with pytest.raises(ValueError, match="link speed not known"):
        pci.parse_speed(raw)


def test_unknown_pcie_speed_in_a_tree(tmp_path):
    tree = nodes.plain_host(tmp_path)
    facts = pci.link_facts(Context(sysfs=tree.sysfs), "0000:00:03.0")
    assert "link speed not known ('Unknown')" in facts["current_speed"]["error"]


@pytest.mark.parametrize(("raw", "expected"), [
    ("400 Gb/sec (4X NDR)", 400), ("200 Gb/sec (4X HDR)", 200), ("400 Gb/sec (8X HDR)", 400),
    ("56 Gb/sec (4X FDR)", 56), ("2.5 Gb/sec (1X SDR)", 2.5), ("800 Gb/sec (4X XDR)", 800),
])
def test_parse_rate_by_leading_number(raw, expected):
    assert rdma.parse_rate(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("4: ACTIVE", "ACTIVE"), ("2: INIT", "INIT"), ("5: LinkUp", "LinkUp"),
    ("7: Phy Test", "Phy Test"),
])
def test_parse_state(raw, expected):
    assert rdma.parse_state(raw) == expected


def _topology(tmp_path):
    b = nodes.Builder(tmp_path)
    sw = ["pci0000:15", "0000:15:01.0", "0000:16:00.0"]
    devs = {
        "gpu": [*sw, "0000:17:00.0", "0000:18:00.0"],
        "pix": [*sw, "0000:17:01.0", "0000:19:00.0"],
        "pxb": [*sw, "0000:17:02.0", "0000:1a:00.0", "0000:1b:00.0", "0000:1c:00.0"],
        "phb": ["pci0000:15", "0000:15:02.0", "0000:20:00.0"],
        "node": ["pci0000:30", "0000:30:01.0", "0000:31:00.0"],
        "sys": ["pci0000:90", "0000:90:01.0", "0000:91:00.0"],
    }
    for name, chain in devs.items():
        b.bridges(chain[:-1], nodes.PEX_BRIDGE, 1 if name == "sys" else 0)
        b.pci(chain, nodes.CX7, numa=1 if name == "sys" else 0)
    return Context(sysfs=tmp_path / "sys"), {k: v[-1] for k, v in devs.items()}


def test_distance_classes(tmp_path):
    ctx, bdf = _topology(tmp_path)
    got = {k: pci.distance(ctx, bdf["gpu"], bdf[k]) for k in ("pix", "pxb", "phb", "node", "sys")}
    assert got == {"pix": "PIX", "pxb": "PXB", "phb": "PHB", "node": "NODE", "sys": "SYS"}
    assert pci.distance(ctx, bdf["gpu"], "0000:ff:00.0") is None


def test_nearest_port_breaks_ties_by_rate_then_name(tmp_path):
    ctx, bdf = _topology(tmp_path)

    def port(pid, where, rate):
        return {"id": pid, "fields": {"pci_bus_id": {"value": bdf[where]},
                                      "rate": {"value": rate, "unit": "Gb/s"}}}

    ctx.facts["rdma.ports"] = {"items": [port("b:1", "pix", 200), port("c:1", "pix", 400),
                                         port("a:1", "pxb", 400)]}
    got = pci.nearest_port(ctx, bdf["gpu"])
    assert (got["nearest_fabric_port"]["value"], got["nearest_fabric_distance"]["value"],
            got["nearest_fabric_rate"]["value"]) == ("c:1", "PIX", 400)
    ctx.facts["rdma.ports"]["items"][1]["fields"]["rate"]["value"] = 200
    assert pci.nearest_port(ctx, bdf["gpu"])["nearest_fabric_port"]["value"] == "b:1"


def test_sysfs_bdf_from_nvml_bus_id():
    assert pci.sysfs_bdf("00000000:18:00.0") == "0000:18:00.0"
    assert pci.sysfs_bdf("00000001:AB:00.0") == "0001:ab:00.0"


def test_probe_node_accepts_path_strings(tmp_path):
    tree = nodes.plain_host(tmp_path)
    f = probe_node(sysfs=str(tree.sysfs), procfs=str(tree.procfs), rootfs=str(tree.rootfs),
                   nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    assert f["host.hostname"]["value"] == "build-01"


@pytest.mark.parametrize(("comm", "argv0", "expected"), [
    ("dcgm-exporter", "/usr/bin/dcgm-exporter", "dcgm-exporter"),
    ("prometheus-node", "/usr/bin/prometheus-node-exporter", "prometheus-node-exporter"),
    ("otelcol-contrib", "/otelcol-contrib", "otelcol"),
    ("nv-hostengine", "nv-hostengine", "nv-hostengine"),
    ("python3", "/usr/bin/python3", None),
    ("node", "/usr/bin/node", None),  # node.js is not node_exporter
])
def test_exporter_names(comm, argv0, expected):
    from validator.facts.node import telemetry

    assert telemetry.match(comm, argv0) == expected


def test_truncated_comm_is_matched_by_argv0(tmp_path):
    tree = nodes.plain_host(tmp_path)
    argv = ["/usr/bin/prometheus-node-exporter", "--web.listen-address=:9100"]
    nodes.Builder(tree.root).process(77, "prometheus-node-exporter", argv)
    assert (tree.procfs / "77/comm").read_text() == "prometheus-node\n"
    f = tree.probe(nvml=FakeNvml({"init_error": "LIBRARY_NOT_FOUND", "devices": []}))
    assert f["telemetry.exporters"]["value"] == ["prometheus-node-exporter"]


def test_importing_the_probe_loads_no_heavy_module():
    import subprocess
    import sys

    code = ("import sys, validator.facts.node; "
            "print(sorted(m for m in ('pynvml', 'psutil', 'amdsmi') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_live_means_the_real_proc_and_sys(tmp_path):
    assert Context().live
    assert not Context(sysfs=tmp_path / "sys").live
    assert not Context(procfs=tmp_path / "proc").live


@pytest.mark.parametrize(("name", "ok"), [
    ("0000:18:00.0", True), ("10000:e1:00.0", True), ("0000:18:00.7", True),
    ("eth0", False), ("0000:18:00", False), ("pci0000:17", False), ("0000:18:00.8", False),
])
def test_pci_address_shapes(name, ok):
    from validator.facts.node.base import PCI_ADDRESS

    assert bool(PCI_ADDRESS.match(name)) is ok


@pytest.mark.parametrize(("raw", "expected"), [("400000", 400000), ("10000", 10000),
                                               ("0", None), ("-1", None)])
def test_net_speed_zero_or_negative_is_unknown(raw, expected):
    from validator.facts.node import net

    if expected is None:
        with pytest.raises(ValueError, match="speed unknown"):
            net.parse_speed(raw)
    else:
        assert net.parse_speed(raw) == expected


def test_one_unreadable_rdma_device_keeps_the_other_ports(dgx):
    """A dangling class/infiniband/mlx5_0 is one error item; every other port keeps its
    values, and the rules name the device's own reason."""
    from tests.helpers import built
    from validator.evaluate.engine import evaluate
    from validator.facts.document import new_document
    from validator.report.model import Status

    link = dgx.sysfs / "class/infiniband/mlx5_0"
    link.unlink()
    os.symlink("/nonexistent/mlx5_0", link)
    f = probe(dgx)
    check_facts(f)
    ids = [m["id"] for m in f["rdma.ports"]["items"]]
    assert "mlx5_0" in ids and "mlx5_3:1" in ids and "mlx5_0:1" not in ids
    broken = fields(f, "rdma.ports", "mlx5_0")
    assert broken["rate"]["error"].startswith(f"cannot list {link / 'ports'}: No such file")
    assert fields(f, "rdma.ports", "mlx5_3:1")["rate"] == 400
    assert "cannot list" in f["rdma.port_count"]["error"]
    b = built()
    doc = new_document("node", "n1", f, tool_version="t", collected_at="2026-01-01T00:00:00Z")
    found = evaluate(b.ctx, b.pack, [doc], select=("NET-01.fabric-port-slow", "NET-02.port-not-active"))
    by = {(x.rule, x.item): x for x in found}
    for rule in ("NET-01.fabric-port-slow", "NET-02.port-not-active"):
        assert by[(rule, "mlx5_0")].status is Status.ERROR
        assert "cannot list" in by[(rule, "mlx5_0")].message
        assert by[(rule, "mlx5_3:1")].status is Status.PASS


def test_a_foreign_root_never_gets_this_hosts_gpus(dgx):
    """--sysfs DIR other than /sys: NVML answers for the machine running spec-check, so it is
    not asked; the tree's PCI scan still names the vendor."""
    f = dgx.probe()  # no replay handed in: the real driver would be this machine's
    check_facts(f)
    for name in ("gpu.count", "gpu.devices", "gpu.driver_status", "gpu.driver_version"):
        assert f[name]["error"].startswith(f"NVML not queried: probing a foreign root (--sysfs {dgx.sysfs})"), name
    assert f["gpu.vendor"]["value"] == "nvidia"
    assert f["rdma.port_count"]["value"] == 8  # the tree's own facts are kept


def test_query_drivers_says_the_root_is_this_hosts(dgx):
    """--nvml: a container with the host's /sys mounted elsewhere asks the (local) driver."""
    import pynvml

    f = probe_node(sysfs=dgx.sysfs, procfs=dgx.procfs, rootfs=dgx.rootfs, query_drivers=True)
    assert "not queried" not in str(f["gpu.count"])
    if not _has_nvml(pynvml):  # asked, and this host has no driver
        assert f["gpu.driver_status"]["value"].startswith("LibraryNotFound")
    f = probe_node(sysfs=dgx.sysfs, procfs=dgx.procfs, rootfs=dgx.rootfs, query_drivers=False,
                   nvml=FakeNvml("dgx_h100"))
    assert "not queried" in f["gpu.count"]["error"]


def _has_nvml(pynvml) -> bool:
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return False
    pynvml.nvmlShutdown()
    return True
