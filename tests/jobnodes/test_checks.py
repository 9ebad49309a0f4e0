"""A job judged against its nodes: real public jobs, the project's DGX fixture, the
recorded H200 node; a consistent job gains no failure, each mismatch exactly one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.jobnodes.util import (
    CORPUS,
    DATA,
    DGX,
    H200,
    SHARED_CORPUS,
    dgx,
    failing,
    gpus,
    job,
    judge,
    nodes_of,
    script,
    write,
)
from validator.errors import SpecCheckError

TORCHTUNE = CORPUS / "tune_run/pytorch__torchtune__recipes__full_finetune_multinode.slurm"  # 2 nodes x 8
MEGATRON = CORPUS / "megatron_launch/microsoft__Megatron-DeepSpeed__examples_deepspeed__pretrain_llama2_distributed.sh"
BLOOM_1B3 = CORPUS / "slurm_sbatch/bigscience-workshop__bigscience__train__tr11-176B-ml__smaller_models__tr11b-1B3-ml.slurm"
FLAGAI = DATA / "jobs/FlagAI-Open__FlagAI__examples__gpt2_title_generation__run_multi.sh"
AWS_FSDP = SHARED_CORPUS / "k8s_pytorchjob/aws-samples__awsome-distributed-training__3.test_cases__pytorch__FSDP__kubernetes__llama3_1_8b-fsdp.yaml"


def two_dgx(tmp_path: Path) -> list[Any]:
    return nodes_of(*write(tmp_path, dgx("dgx-h100-01"), dgx("dgx-h100-02")))


def test_consistent_real_job_gains_no_failure(tmp_path: Path) -> None:
    found = judge(job(TORCHTUNE), two_dgx(tmp_path))
    assert failing(found) == []
    assert found["PLAT-01.job-gpus-per-node-exceed-node"].status.value == "pass"
    assert found["PLAT-02.job-nodes-exceed-fleet"].status.value == "pass"
    f = found["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.location.line == 44 and "--nproc_per_node 8" in f.location.text  # the job's side
    assert "gpu.count (NVML (nvidia-smi's library): nvmlDeviceGetCount)" in f.source  # the node's side
    assert "dgx-h100-[01-02]" in f.message


def test_recorded_h200_breaks_an_8_gpu_job_naming_only_that_host(tmp_path: Path) -> None:
    nodes = nodes_of(*write(tmp_path, dgx("dgx-h100-01")), H200)
    found = judge(job(TORCHTUNE), nodes)
    assert failing(found) == ["PLAT-01.job-gpus-per-node-exceed-node"]
    f = found["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.status.value == "fail" and f.value == ["vm"]
    assert "vm: 1 GPU" in f.message and "dgx-h100-01 fit" in f.message
    assert str(H200) in f.source


def test_heterogeneous_fleet_named_as_a_host_list(tmp_path: Path) -> None:
    docs = [dgx("node01"), dgx("node02", gpus(4)), dgx("node03", gpus(4)), dgx("node04")]
    found = judge(job(TORCHTUNE), nodes_of(*write(tmp_path, *docs)))
    f = found["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.status.value == "fail"
    assert f.value == ["node02", "node03"]
    assert "on node[02-03]" in f.message and "node[01,04] fit" in f.message
    assert failing(found) == ["PLAT-01.job-gpus-per-node-exceed-node"]


def test_more_nodes_asked_than_given(tmp_path: Path) -> None:
    found = judge(job(TORCHTUNE), nodes_of(*write(tmp_path, dgx("dgx-h100-01"))))
    assert failing(found) == ["PLAT-02.job-nodes-exceed-fleet"]
    f = found["PLAT-02.job-nodes-exceed-fleet"]
    assert f.location.line == 11 and "1 (dgx-h100-01)" in f.message


def test_real_launcher_hca_and_ifname_against_dgx(tmp_path: Path) -> None:
    """FlagAI's run_multi.sh names mlx5_2 (not an ACTIVE IB port of the DGX fixture, whose
    IB HCAs are mlx5_0,3-6,9-11) and eth0 (the DGX has eno3 and ibp*): one failure each."""
    found = judge(job(FLAGAI), nodes_of(*write(tmp_path, dgx())))
    assert failing(found) == ["NET-02.job-ib-hca-not-on-nodes", "NET-02.job-socket-ifname-not-on-nodes"]
    hca = found["NET-02.job-ib-hca-not-on-nodes"]
    assert hca.location.line == 5 and "mlx5_2 matches no ACTIVE port (uses mlx5_5:1)" in hca.message
    assert "rdma.ports (/sys/class/infiniband)" in hca.source
    ifn = found["NET-02.job-socket-ifname-not-on-nodes"]
    assert ifn.location.line == 1 and "up: eno3" in ifn.message
    # IB_DISABLE=0 on ACTIVE ports passes; GID index 0 on InfiniBand ports is ignored by NCCL
    assert found["NET-02.job-expects-ib-no-active-port"].status.value == "pass"
    gid = found["NET-02.job-ib-gid-index-unusable"]
    assert gid.status.value == "pass" and "InfiniBand ports only" in gid.message


def test_same_launcher_on_nodes_that_have_what_it_names(tmp_path: Path) -> None:
    def fit(f: dict[str, Any]) -> None:
        for m in f["rdma.ports"]["items"]:
            if m["id"] == "mlx5_3:1":
                m["id"] = "mlx5_2:1"
                m["fields"]["device"]["value"] = "mlx5_2"
        for m in f["net.interfaces"]["items"]:
            if m["id"] == "eno3":
                m["id"] = "eth0"
    found = judge(job(FLAGAI), nodes_of(*write(tmp_path, dgx("a", fit), dgx("b", fit))))
    assert failing(found) == []
    assert found["NET-02.job-ib-hca-not-on-nodes"].status.value == "pass"
    assert found["NET-02.job-socket-ifname-not-on-nodes"].status.value == "pass"


def test_real_k8s_job_socket_exclude_form(tmp_path: Path) -> None:
    """aws-samples' PyTorchJob sets NCCL_SOCKET_IFNAME=^lo: every up interface but lo."""
    if not AWS_FSDP.exists():
        pytest.skip("shared corpus not here")
    found = judge(job(AWS_FSDP), nodes_of(*write(tmp_path, dgx()), H200))
    f = found["NET-02.job-socket-ifname-not-on-nodes"]
    assert f.status.value == "pass" and "vm: uses eth0" in f.message


def test_ib_pinned_on_a_node_without_rdma(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\n#SBATCH --nodes=1\nexport NCCL_NET=IB\ntorchrun --nproc-per-node 1 train.py\n")
    found = judge(doc, nodes_of(H200))
    assert failing(found) == ["NET-02.job-expects-ib-no-active-port"]
    f = found["NET-02.job-expects-ib-no-active-port"]
    assert f.location.line == 3 and "no RDMA port" in f.message and "fails at init" in f.message
    assert judge(doc, nodes_of(*write(tmp_path, dgx())))["NET-02.job-expects-ib-no-active-port"].status.value == "pass"


def test_ib_expected_with_ports_down(tmp_path: Path) -> None:
    down = Path(DGX.parent / "dgx_h100_port_init.json")
    doc = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_DISABLE=0\ntorchrun --nproc-per-node 8 train.py\n")
    def all_down(f: dict[str, Any]) -> None:
        for m in f["rdma.ports"]["items"]:
            m["fields"]["state"]["value"] = "DOWN"
    found = judge(doc, nodes_of(*write(tmp_path, dgx("n1", all_down), dgx("n2"))))
    f = found["NET-02.job-expects-ib-no-active-port"]
    assert f.status.value == "fail" and f.value == ["n1"] and "falls back to TCP sockets" in f.message
    assert down.exists()


def test_gid_index_on_roce_is_unknown_never_pass(tmp_path: Path) -> None:
    def roce(f: dict[str, Any]) -> None:
        for m in f["rdma.ports"]["items"]:
            m["fields"]["link_layer"]["value"] = "Ethernet"
    doc = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_GID_INDEX=3\ntorchrun --nproc-per-node 8 train.py\n")
    f = judge(doc, nodes_of(*write(tmp_path, dgx("r1", roce))))["NET-02.job-ib-gid-index-unusable"]
    assert f.status.value == "error" and "GID tables are not in the node facts" in f.message
    bad = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_GID_INDEX=three\ntorchrun --nproc-per-node 8 train.py\n",
                 name="bad.sbatch")
    f = judge(bad, nodes_of(*write(tmp_path, dgx("r1", roce))))["NET-02.job-ib-gid-index-unusable"]
    assert f.status.value == "fail" and "not an integer" in f.message


def test_tensor_parallel_vs_nvlink_domain(tmp_path: Path) -> None:
    # Megatron-DeepSpeed llama2: TP 2, 8 GPUs on 1 node
    assert judge(job(MEGATRON), nodes_of(*write(tmp_path, dgx())))[
        "TOPO-03.job-tensor-parallel-exceeds-node-nvlink"].status.value == "pass"
    inactive = nodes_of(DGX.parent / "dgx_h100_nvlink_inactive.json")
    found = judge(job(MEGATRON), inactive)
    f = found["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    assert f.status.value == "warn"  # TOPO-03 is a SHOULD
    assert "inactive NVLinks" in f.message
    assert failing(found) == ["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]


def test_tensor_parallel_of_16_spans_two_domains(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
                 "srun python pretrain_gpt.py --tensor-model-parallel-size 16 --pipeline-model-parallel-size 1\n")
    found = judge(doc, nodes_of(*write(tmp_path, dgx("a"), dgx("b"))))
    assert failing(found) == ["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    f = found["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    assert f.location.line == 4 and "NVLink domain of 8 GPUs" in f.message


def test_bloom_4_gpus_per_node_tp2_on_4_gpu_boards(tmp_path: Path) -> None:
    """BigScience's tr11b-1B3 (16 nodes x 4 GPUs, TP 2) on 4-GPU nodes: consistent but
    for the node count (two given)."""
    found = judge(job(BLOOM_1B3), nodes_of(*write(tmp_path, dgx("j1", gpus(4)), dgx("j2", gpus(4)))))
    assert failing(found) == ["PLAT-02.job-nodes-exceed-fleet"]
    assert found["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"].status.value == "pass"


# -- bad input ---------------------------------------------------------------------------

def test_facts_of_another_schema_version(tmp_path: Path) -> None:
    doc = dgx()
    doc["schema"] = "spec-check/facts/99"
    with pytest.raises(SpecCheckError, match="newer spec-check"):
        nodes_of(*write(tmp_path, doc))


def test_not_a_facts_document(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    with pytest.raises(SpecCheckError, match="not a spec-check facts document"):
        nodes_of(p)
    with pytest.raises(SpecCheckError, match="no such file"):
        nodes_of(tmp_path / "missing.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecCheckError, match=r"no \*.json"):
        nodes_of(tmp_path / "empty")


def test_documents_sharing_a_host_name_are_named_by_file_as_cluster_facts_names_them(tmp_path: Path) -> None:
    """A folder `cluster --facts` accepts, `lint --nodes` accepts too (issue 34): copies of one
    recording are hosts x and y; two files of one name for one host are refused."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x.json").write_text(json.dumps(dgx("h")))
    (a / "y.json").write_text(json.dumps(dgx("h")))
    assert [n.host for n in nodes_of(a)] == ["x", "y"]
    assert [n.host for n in nodes_of(a / "x.json", a / "x.json")] == ["h"]  # one file given twice is one
    (b / "x.json").write_text(json.dumps(dgx("h")))
    with pytest.raises(SpecCheckError, match='two node facts documents for host "x" .*rename one of the files'):
        nodes_of(a, b)


def test_partial_fleet_an_unreadable_fact_is_an_error_not_a_pass(tmp_path: Path) -> None:
    def lost(f: dict[str, Any]) -> None:
        f["gpu.count"] = {"error": "NVML Shared Library Not Found", "source": "nvml:nvmlInit"}
    found = judge(job(TORCHTUNE), nodes_of(*write(tmp_path, dgx("a"), dgx("b", lost))))
    f = found["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.status.value == "error" and f.value == ["b"] and "NVML Shared Library Not Found" in f.message


def test_mixed_set_a_bad_host_and_an_unknown_one(tmp_path: Path) -> None:
    def lost(f: dict[str, Any]) -> None:
        del f["gpu.count"]
    found = judge(job(TORCHTUNE), nodes_of(*write(tmp_path, dgx("a", gpus(4)), dgx("b", lost))))
    f = found["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.status.value == "fail" and f.value == ["a"] and "not compared on b" in f.message


def test_older_recording_is_read_and_judged(tmp_path: Path) -> None:
    """spec-check 0.1.0's facts (spec-check/facts/1) are still readable: the recorded VM
    has eth0 up and no RDMA port, so FlagAI's eth0 fits and its mlx5_2,mlx5_5 do not."""
    old = DGX.parent / "recorded_vm_0.1.0.json"
    found = judge(job(FLAGAI), nodes_of(old))
    assert found["NET-02.job-socket-ifname-not-on-nodes"].status.value == "pass"
    # one mismatch (no fabric), one failure: the HCA list defers to the IB expectation
    assert failing(found) == ["NET-02.job-expects-ib-no-active-port"]
    hca = found["NET-02.job-ib-hca-not-on-nodes"]
    assert hca.status.value == "skip" and "no ACTIVE RDMA port at all" in hca.message


def test_hca_alone_on_a_node_without_rdma_fails_once(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_HCA=mlx5_0\ntorchrun --nproc-per-node 1 train.py\n")
    found = judge(doc, nodes_of(H200))
    assert failing(found) == ["NET-02.job-ib-hca-not-on-nodes"]
    assert "has no RDMA port" in found["NET-02.job-ib-hca-not-on-nodes"].message


def test_saved_facts_folder_with_its_cluster_document(tmp_path: Path) -> None:
    write(tmp_path, dgx("a"), dgx("b"))
    (tmp_path / "cluster.json").write_text(json.dumps({**dgx("cluster"), "subject": {"kind": "cluster", "name": "cluster"}}))
    assert [n.host for n in nodes_of(tmp_path)] == ["a", "b"]


def test_hca_matches_only_active_ports(tmp_path: Path) -> None:
    """dgx_h100_port_init: mlx5_9 is in INIT. NCCL skips it before matching NCCL_IB_HCA."""
    doc = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_HCA=mlx5_9,mlx5_0\ntorchrun --nproc-per-node 8 train.py\n")
    found = judge(doc, nodes_of(DGX.parent / "dgx_h100_port_init.json"))
    f = found["NET-02.job-ib-hca-not-on-nodes"]
    assert f.status.value == "fail" and "mlx5_9 matches no ACTIVE port (uses mlx5_0:1)" in f.message
    assert failing(found) == ["NET-02.job-ib-hca-not-on-nodes"]


def test_tensor_parallel_that_does_not_divide_the_domain(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=6\n"
                 "srun python pretrain_gpt.py --tensor-model-parallel-size 3\n")
    f = judge(doc, nodes_of(*write(tmp_path, dgx())))["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    assert f.status.value == "warn" and "groups of 3 straddle two domains" in f.message


def test_a_declared_nvl72_domain_needs_the_switch_fabric_in_the_facts(tmp_path: Path) -> None:
    from tests.jobnodes.util import LEVELS
    from validator.jobnodes import checks

    doc = script(tmp_path, "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
                 "srun python pretrain_gpt.py --tensor-model-parallel-size 18\n")
    nodes = nodes_of(*write(tmp_path, dgx("a"), dgx("b")))
    out = {f.rule: f for f in checks.judge_job(doc, nodes, LEVELS, (72, "--set"))}
    f = out["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    assert f.status.value == "pass" and "--set nvlink_domain_size=72" in f.message
    def no_fabric(x: dict[str, Any]) -> None:
        for g in x["gpu.devices"]["items"]:
            g["fields"]["fabric_state"]["value"] = "not_started"
    nodes = nodes_of(*write(tmp_path, dgx("a", no_fabric), dgx("b", no_fabric)))
    out = {f.rule: f for f in checks.judge_job(doc, nodes, LEVELS, (72, "--set"))}
    f = out["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]
    assert f.status.value == "warn" and "is not taken" in f.message


def test_a_value_the_shell_computes_is_not_judged(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\nexport NCCL_IB_HCA=$(ls /sys/class/infiniband | paste -sd,)\n"
                 "torchrun --nproc-per-node 8 train.py\n")
    f = judge(doc, nodes_of(H200))["NET-02.job-ib-hca-not-on-nodes"]
    assert f.status.value == "skip" and "computed when the job runs" in f.message and f.location.line == 2


def test_a_replica_larger_than_the_fleet(tmp_path: Path) -> None:
    """NeMo's llama2 70B (TP 4 x PP 4 = 16 GPUs per replica) on one 8-GPU node: one
    warning for the layout, and one failure for the 128 nodes it asks for."""
    nemo = CORPUS / "nemo_yaml/NVIDIA__NeMo-Framework-Launcher__launcher_scripts__conf__training__llama__llama2_70b.yaml"
    doc = job(nemo)
    assert doc["facts"]["job.parallel.model_size"]["value"] == 16
    found = judge(doc, nodes_of(*write(tmp_path, dgx())))
    assert failing(found) == ["PLAT-02.job-nodes-exceed-fleet", "TOPO-03.job-model-parallel-exceeds-fleet"]
    f = found["TOPO-03.job-model-parallel-exceeds-fleet"]
    assert f.status.value == "warn" and "needs 16 GPUs; the nodes given have 8" in f.message
    found = judge(doc, nodes_of(*write(tmp_path, dgx("a"), dgx("b"))))
    assert found["TOPO-03.job-model-parallel-exceeds-fleet"].status.value == "pass"


def test_a_replica_judged_on_nodes_whose_gpu_count_is_unknown_is_an_error_in_words(tmp_path: Path) -> None:
    def lost(f: dict[str, Any]) -> None:
        del f["gpu.count"]
    nemo = CORPUS / "nemo_yaml/NVIDIA__NeMo-Framework-Launcher__launcher_scripts__conf__training__llama__llama2_70b.yaml"
    found = judge(job(nemo), nodes_of(*write(tmp_path, dgx("a", lost))))
    f = found["TOPO-03.job-model-parallel-exceeds-fleet"]
    assert f.status.value == "error"
    assert "no node's GPU count could be read; not compared on a" in f.message and "have 0" not in f.message


def test_gpus_and_processes_per_node_that_disagree_are_an_error(tmp_path: Path) -> None:
    doc = script(tmp_path, "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\n"
                 "srun torchrun --nnodes 1 --nproc-per-node 4 t.py\n")
    f = judge(doc, nodes_of(*write(tmp_path, dgx())))["PLAT-01.job-gpus-per-node-exceed-node"]
    assert f.status.value == "error" and "the job's files disagree" in f.message and f.location.line == 4
