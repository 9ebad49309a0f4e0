"""The lead's NCCL 2.28.9 recordings on an H200 node (one GPU, no RDMA fabric), made by
``scripts/device/record_nccl_job_nodes.sh`` and kept unchanged in ``data/h200_nccl``
(MANIFEST.tsv: sha256, how made, date, device): what the parser reads from each, and the
exact verdicts of ``--run`` (with the node's own facts as ``--nodes``) and of the job the
script ran, judged against that node."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

from tests.jobnodes.util import DATA, ROOT, judge, nodes_of, run_findings, script
from tests.jobs.util import spec_check
from validator.jobnodes import nccllog

REC = DATA / "h200_nccl"
FACTS = REC / "facts.json"
ALL = REC / "nccl_info_all_gpus.log"
TWO = REC / "nccl_info_two_ranks_one_gpu.log"
IFNAME = REC / "nccl_info_ifname_prefix.log"
NO_RDMA = "vm has no ACTIVE RDMA port either"


def verdicts(found: dict) -> dict[str, str]:
    return {r: f.status.value for r, f in found.items()}


def test_manifest_names_every_file_unchanged() -> None:
    rows = list(csv.DictReader((REC / "MANIFEST.tsv").read_text().splitlines(), delimiter="\t"))
    assert sorted(r["file"] for r in rows) == sorted(p.name for p in REC.iterdir() if p.name != "MANIFEST.tsv")
    for r in rows:
        assert hashlib.sha256((REC / r["file"]).read_bytes()).hexdigest() == r["sha256"], r["file"]
        assert r["how made"].startswith("scripts/device/record_nccl_job_nodes.sh@4a271d3")
        assert (ROOT / "scripts/device/record_nccl_job_nodes.sh").is_file()
        assert r["date"] == "2026-11-27" and "H200" in r["device"]
    assert "nccl (2, 28, 9)" in (REC / "versions.txt").read_text()
    doc = json.loads(FACTS.read_text())
    assert doc["subject"]["name"] == "vm" and doc["facts"]["gpu.count"]["value"] == 1
    assert doc["facts"]["rdma.ports"]["items"] == []


def test_using_ro_after_no_device_is_not_ib() -> None:
    """``NET/IB : Using [RO]; OOB eth0:...`` follows ``NET/IB : No device found.`` in every
    recording: ``[RO]`` is the relaxed-ordering flag, no device; the run used sockets."""
    for log, none_at in ((ALL, [7]), (IFNAME, [10]), (TWO, [16, 25])):
        ev = nccllog.read_run([log])
        assert sorted(p.ib_none.line for p in ev.processes) == none_at
        for p in ev.processes:
            assert p.ib is None and p.transport() == "socket" and p.socket.value == ["eth0"]
        for s in nccllog.summary(ev):
            assert s["ib_devices"] == [] and s["ib_no_device"] is True and s["transport"] == "socket"
    # the line alone says nothing about the transport
    (p,) = nccllog.parse([("x.log", ["vm:1:1 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:192.0.2.2<0>\n"])]).processes
    assert p.ib is None and p.transport() is None


def test_all_gpus_run_channels_and_verdicts() -> None:
    (p,) = nccllog.read_run([ALL]).processes
    assert (p.host, p.pid, p.ranks, p.nranks, p.version.value) == ("vm", 912, {0}, 1, "2.28.9+cuda13.0")
    assert (p.rings, p.trees, p.nvls_channels, p.via, p.warns) == (64, 1, 0, {}, [])
    found = run_findings(ALL, nodes=nodes_of(FACTS))
    assert verdicts(found) == {"NET-02.run-used-sockets": "fail", "NET-02.run-mixed-transports": "skip"}
    f = found["NET-02.run-used-sockets"]
    assert (f.location.file, f.location.line) == (str(ALL), 13)
    assert f.location.text == "vm:912:912 [0] NCCL INFO Using network Socket"
    assert f'after "NET/IB : No device found." ({ALL}:7)' in f.message and NO_RDMA in f.message
    assert f.value == ["vm (rank 0)"] and f.observed == "Socket"
    # without --nodes: the same failure, no claim about the fabric
    bare = run_findings(ALL)["NET-02.run-used-sockets"]
    assert bare.status.value == "fail" and "RDMA port" not in bare.message


def test_ifname_prefix_run_and_the_job_that_made_it(tmp_path: Path) -> None:
    (p,) = nccllog.read_run([IFNAME]).processes
    assert (p.pid, p.ranks, p.rings, p.trees, p.nvls_channels) == (1007, {0}, 64, 1, 0)
    found = run_findings(IFNAME, nodes=nodes_of(FACTS))
    assert verdicts(found) == {"NET-02.run-used-sockets": "fail", "NET-02.run-mixed-transports": "skip"}
    f = found["NET-02.run-used-sockets"]
    assert f.location.line == 17 and f'({IFNAME}:10)' in f.message and NO_RDMA in f.message
    # the script's command (NG=1 on this node), judged against the node it ran on: the
    # '^lo,docker' exclude form keeps eth0 (NCCL used it); '=mlx5_0:1' names a port the
    # node does not have (NCCL found no IB device)
    job = script(tmp_path, "#!/bin/bash\nNCCL_SOCKET_IFNAME='^lo,docker' NCCL_IB_HCA='=mlx5_0:1' "
                           "torchrun --standalone --nproc-per-node 1 allreduce.py\n", "record.sh")
    got = judge(job, nodes_of(FACTS))
    assert {r: f.status.value for r, f in got.items() if f.status.value != "skip"} == {
        "PLAT-01.job-gpus-per-node-exceed-node": "pass", "PLAT-02.job-nodes-exceed-fleet": "pass",
        "NET-02.job-ib-hca-not-on-nodes": "fail", "NET-02.job-socket-ifname-not-on-nodes": "pass"}
    assert "uses eth0" in got["NET-02.job-socket-ifname-not-on-nodes"].message
    assert "has no RDMA port" in got["NET-02.job-ib-hca-not-on-nodes"].message


def test_two_ranks_on_one_gpu_fail_plat01_citing_nccls_warning(tmp_path: Path) -> None:
    ev = nccllog.read_run([TWO])
    assert [(p.pid, p.ranks, p.nranks) for p in ev.processes] == [(964, {0}, 2), (965, {1}, 2)]
    assert [p.warns[0].line for p in ev.processes] == [38, 40]
    found = run_findings(TWO, nodes=nodes_of(FACTS))
    assert verdicts(found) == {"PLAT-01.run-ranks-share-gpu": "fail", "NET-02.run-used-sockets": "fail",
                               "NET-02.run-mixed-transports": "pass"}
    f = found["PLAT-01.run-ranks-share-gpu"]
    assert f.requirement == "PLAT-01" and (f.location.file, f.location.line) == (str(TWO), 38)
    assert f.location.text.endswith("init.cc:904 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both "
                                    "on CUDA device 60")
    assert "vm: ranks 0, 1 on one GPU (CUDA device 60)" in f.message
    assert f"vm has 1 GPU(s) (gpu.count, {FACTS})" in f.message
    assert f.value == ["vm:60"] and f.expected == "one rank per GPU"
    assert found["NET-02.run-used-sockets"].location.line == 31
    # the job the script ran (--nproc-per-node NG+1 = 2) fails PLAT-01 against the node's facts
    job = script(tmp_path, "#!/bin/bash\ntorchrun --standalone --nproc-per-node 2 allreduce.py\n", "record.sh")
    g = judge(job, nodes_of(FACTS))["PLAT-01.job-gpus-per-node-exceed-node"]
    assert g.status.value == "fail" and g.location.line == 2 and "(vm: 1 GPU)" in g.message


def test_no_duplicate_warning_adds_no_plat01_finding() -> None:
    for log in (ALL, IFNAME):
        assert "PLAT-01.run-ranks-share-gpu" not in run_findings(log)


def test_lint_run_two_ranks_end_to_end(tmp_path: Path) -> None:
    job = tmp_path / "record.sh"
    job.write_text("#!/bin/bash\ntorchrun --standalone --nproc-per-node 2 allreduce.py\n")
    out = tmp_path / "r.json"
    p = spec_check("lint", str(job), "--nodes", str(FACTS), "--run", str(TWO), "--format", "json", "-o", str(out))
    assert p.returncode == 1, p.stderr
    doc = json.loads(out.read_text())
    f = {x["rule"]: x for x in doc["findings"]}
    assert f["PLAT-01.run-ranks-share-gpu"]["status"] == "fail"
    assert f["PLAT-01.run-ranks-share-gpu"]["location"]["line"] == 38
    assert f["PLAT-01.job-gpus-per-node-exceed-node"]["status"] == "fail"
    assert "PLAT-01.run-ranks-share-gpu" in {r["id"] for r in doc["rules"]}
    assert [w for s in doc["extra"]["nccl"] for w in s["warnings"]] == [
        "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60",
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60"]
