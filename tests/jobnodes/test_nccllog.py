"""What NCCL really used: the recorded H200 runs and excerpts of public NCCL logs
(data/nccl/MANIFEST.tsv), read as NCCL prints them."""

from __future__ import annotations

from pathlib import Path

from tests.jobnodes.util import DATA, RECORDINGS, dgx, nodes_of, run_findings, write
from validator.jobnodes import nccllog

LOGS = DATA / "nccl"
DEFAULT = RECORDINGS / "nccl_info_default.log"
FORCED = RECORDINGS / "nccl_info_net_ib_forced.log"
BAD = RECORDINGS / "nccl_info_bad_hca_ifname.log"


def one(path: Path) -> nccllog.Evidence:
    return nccllog.read_run([path])


def test_recorded_default_run_fell_back_to_sockets() -> None:
    ev = one(DEFAULT)
    (p,) = ev.processes
    assert (p.host, p.pid, p.ranks, p.nranks) == ("vm", 468, {0}, 1)
    assert p.version.value == "2.28.9+cuda13.0"
    assert p.transport() == "socket" and p.network.line == 13
    assert p.ib_none is not None and p.socket.value == ["eth0"]
    assert (p.rings, p.trees, p.nvls_channels) == (64, 1, 0)


def test_recorded_socket_run_fails_net02_with_the_line(tmp_path: Path) -> None:
    found = run_findings(DEFAULT, nodes=nodes_of(*write(tmp_path, dgx())))
    f = found["NET-02.run-used-sockets"]
    assert f.status.value == "fail" and f.location.line == 13
    assert f.location.text == "vm:468:468 [0] NCCL INFO Using network Socket"
    assert "NET/IB : No device found." in f.message and "vm (rank 0)" in f.message
    assert "the nodes given have ACTIVE RDMA ports (dgx-h100-01)" in f.message
    assert found["NET-02.run-mixed-transports"].status.value == "skip"


def test_socket_run_on_the_recorded_node_itself() -> None:
    from tests.jobnodes.util import H200

    f = run_findings(DEFAULT, nodes=nodes_of(H200))["NET-02.run-used-sockets"]
    assert f.status.value == "fail" and "vm has no ACTIVE RDMA port either" in f.message


def test_recorded_failures_are_errors_naming_the_warning() -> None:
    f = run_findings(FORCED)["NET-02.run-used-sockets"]
    assert f.status.value == "error" and "Failed to initialize any NET plugin" in f.message
    assert f.location.file == str(FORCED)
    f = run_findings(BAD)["NET-02.run-used-sockets"]
    assert f.status.value == "error" and "no socket interface found" in f.message


def test_public_roce_run_passes() -> None:
    ev = one(LOGS / "nccl_tests_185_roce.log")
    assert [(p.host, p.transport()) for p in ev.processes] == [("dgxh100-3", "ib"), ("dgxh100-4", "ib")]
    assert ev.processes[0].ib.value == [("mlx5_10", 1, "RoCE"), ("mlx5_11", 1, "RoCE")]
    assert ev.bare_versions[0].value == "2.19.3+cuda12.3"
    found = run_findings(LOGS / "nccl_tests_185_roce.log")
    assert found["NET-02.run-used-sockets"].status.value == "pass"
    assert found["NET-02.run-mixed-transports"].status.value == "pass"


def test_public_socket_run_fails() -> None:
    f = run_findings(LOGS / "nccl_676_socket.log")["NET-02.run-used-sockets"]
    assert f.status.value == "fail" and f.location.line == 7 and "gpu01" in f.message


def test_rings_trees_and_ranks_of_one_process() -> None:
    (p,) = one(LOGS / "nccl_1412_rings.log").processes
    assert p.ranks == {3, 5, 6, 7} and p.nranks == 16 and p.rings == 8 and p.trees == 1
    assert p.name == "swat1-04 (rank 3,5,6,7)"


def test_transport_from_channel_lines_without_using_network() -> None:
    ev = one(LOGS / "nccl_tests_252_via.log")
    k2 = next(p for p in ev.processes if p.pid == 25146)
    assert k2.transport() == "ib" and "NET/IBext_v8/0/GDRDMA" in k2.via
    k1 = next(p for p in ev.processes if p.pid == 27223)
    assert k1.transport() is None  # P2P only: no network line, unknown


def test_launcher_prefixes_and_old_ring_lines() -> None:
    ev = one(LOGS / "aws_ofi_24_tagged.log")
    assert ev.lines == 3
    p = next(p for p in ev.processes if p.host == "ip-172-32-38-1")
    assert p.transport() == "AWS Libfabric"
    w = next(p for p in ev.processes if p.host == "ip-172-32-45-165")
    assert w.warns[0].value.startswith("NET/OFI Couldn't open AV")


def test_plugin_named_ib_counts_as_ib() -> None:
    ev = one(LOGS / "nccl_1357_ibext.log")
    assert {p.transport() for p in ev.processes if p.host == "qh100-gpu19"} == {"ib"}
    assert ev.processes[1].ib.value[0] == ("mlx5_0", 1, "IB")


def test_mixed_socket_and_ib_named_by_host_and_rank() -> None:
    """Two real logs read as one run (the recorded socket fallback and a public RoCE run):
    one failure, naming the socket rank and the hosts that used IB."""
    found = run_findings(DEFAULT, LOGS / "nccl_tests_185_roce.log")
    f = found["NET-02.run-used-sockets"]
    assert f.status.value == "fail" and f.value == ["vm (rank 0)"]
    assert "dgxh100-3, dgxh100-4 used ib" in f.message
    m = found["NET-02.run-mixed-transports"]
    assert m.status.value == "skip" and "NET-02.run-used-sockets names them" in m.message


def test_mixed_rdma_transports_fail_once() -> None:
    """A public IB run and a public EFA (Libfabric) run read as one: the transports differ."""
    found = run_findings(LOGS / "rccl_419_ib.log", LOGS / "nccl_1597_libfabric.log")
    m = found["NET-02.run-mixed-transports"]
    assert m.status.value == "fail"
    assert "Libfabric: 8h200-2" in m.message and "ib: e05r3n09" in m.message
    # 8h200-3's excerpt stops before its network line: unknown, never a pass
    assert found["NET-02.run-used-sockets"].status.value == "error"


def test_no_nccl_lines_is_a_skip_saying_so(tmp_path: Path) -> None:
    (tmp_path / "console.log").write_text("step 10 loss 2.3\n")
    found = run_findings(tmp_path)
    assert {f.status.value for f in found.values()} == {"skip"}
    assert "no NCCL_DEBUG=INFO lines" in found["NET-02.run-used-sockets"].message


def test_parse_is_pure_over_lines() -> None:
    ev = nccllog.parse([("a.log", ["h:1:1 [0] NCCL INFO Using network IB\n",
                                   "[rank1]:h:2:2 [1] NCCL INFO comm 0x1 rank 1 nRanks 2 nNodes 1\n",
                                   "h:2:2 [1] NCCL INFO Using network Socket\n"])])
    assert [(p.pid, p.transport(), sorted(p.ranks)) for p in ev.processes] == [(2, "socket", [1]), (1, "ib", [])]
    s = nccllog.summary(ev)
    assert s[0]["transport"] == "socket" and s[0]["at"] == "a.log:3"


def test_a_real_run_folder_is_read_by_content(tmp_path: Path) -> None:
    """A recorded training run (console log, TensorBoard event files, CSV) holds no NCCL
    line: the binary event files are passed over, and both rules skip saying so."""
    run = RECORDINGS.parent / "training-runs/pl_clean"
    ev = nccllog.read_run([run])
    assert ev.lines == 0 and ev.processes == []
    assert any("tfevents" in f for f in ev.files)
