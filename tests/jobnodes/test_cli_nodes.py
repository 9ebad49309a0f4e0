"""``spec-check lint JOB --nodes FACTS --run DIR`` end to end: exit codes, the JSON
result, a cluster result as the node input, bad input as one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.jobnodes.test_checks import FLAGAI, MEGATRON, TORCHTUNE
from tests.jobnodes.util import DGX, H200, RECORDINGS, dgx, gpus, write
from tests.jobs.util import spec_check

MINE = ("PLAT-01.job-", "PLAT-01.run-", "PLAT-02.job-", "NET-02.job-", "NET-02.run-", "TOPO-03.job-")


def result(tmp: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / "r.json"
    p = spec_check("lint", *args, "--format", "json", "-o", str(out))
    return p.returncode, (json.loads(out.read_text()) if out.exists() else {}), p.stderr


def mine(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule"]: f for f in doc["findings"] if f["rule"].startswith(MINE)}


def test_lint_nodes_and_run_in_the_json_result(tmp_path: Path) -> None:
    rc, doc, _ = result(tmp_path, str(TORCHTUNE), "--nodes", str(DGX), "--nodes", str(H200),
                        "--run", str(RECORDINGS / "nccl_info_default.log"))
    assert rc == 1
    f = mine(doc)
    assert f["PLAT-01.job-gpus-per-node-exceed-node"]["status"] == "fail"
    assert f["PLAT-01.job-gpus-per-node-exceed-node"]["location"]["line"] == 44
    assert f["NET-02.run-used-sockets"]["status"] == "fail"
    assert doc["extra"]["nodes"] == {"hosts": "dgx-h100-01,vm", "count": 2,
                                     "files": sorted([str(H200), str(DGX)])}
    assert doc["extra"]["nccl"][0]["network"] == "Socket"
    rules = {r["id"]: r for r in doc["rules"]}
    assert rules["NET-02.run-used-sockets"]["requirement"] == "NET-02"
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "spec/result.schema.json").read_text())
    jsonschema.validate(doc, schema)  # the published result schema holds


def test_consistent_job_is_conformant_as_without_nodes(tmp_path: Path) -> None:
    """The same job, with and without --nodes of two matching DGX nodes: no new failure."""
    paths = write(tmp_path, dgx("dgx-h100-01"), dgx("dgx-h100-02"))
    rc0, base, _ = result(tmp_path, str(TORCHTUNE))
    rc1, withn, _ = result(tmp_path, str(TORCHTUNE), *[a for p in paths for a in ("--nodes", str(p))])
    assert rc0 == rc1
    assert base["summary"]["fail"] == withn["summary"]["fail"]
    assert base["summary"]["error"] == withn["summary"]["error"]
    assert {f["status"] for f in mine(withn).values()} <= {"pass", "skip"}


def test_a_folder_and_a_cluster_result_as_nodes(tmp_path: Path) -> None:
    d = tmp_path / "fleet"
    d.mkdir()
    write(d, dgx("node01"), dgx("node02", gpus(4)))
    _rc, doc, _ = result(tmp_path, str(TORCHTUNE), "--nodes", str(d))
    assert mine(doc)["PLAT-01.job-gpus-per-node-exceed-node"]["value"] == ["node02"]
    cres = tmp_path / "cluster.json"
    p = spec_check("cluster", "--facts", str(d / "node01.json"), "--facts", str(d / "node02.json"),
                   "--format", "json", "-o", str(cres))
    assert p.returncode in (0, 1), p.stderr
    _rc, doc, _err = result(tmp_path, str(FLAGAI), "--nodes", str(cres))
    f = mine(doc)
    # a cluster result carries the ports (NET-02 findings) but no interfaces: said, not passed
    assert f["NET-02.job-ib-hca-not-on-nodes"]["status"] == "fail"
    assert f["NET-02.job-socket-ifname-not-on-nodes"]["status"] == "error"
    assert "a cluster result holds verdicts, not facts" in f["NET-02.job-socket-ifname-not-on-nodes"]["message"]
    _rc, doc, _err = result(tmp_path, str(TORCHTUNE), "--nodes", str(cres))
    assert mine(doc)["PLAT-01.job-gpus-per-node-exceed-node"]["value"] == ["node02"]
    _rc, doc, _err = result(tmp_path, str(MEGATRON), "--nodes", str(cres))  # TP 2: NVLink from NET-03
    assert mine(doc)["TOPO-03.job-tensor-parallel-exceeds-node-nvlink"]["status"] == "pass"


def test_a_cluster_result_kept_with_its_facts_is_read_as_those_facts(tmp_path: Path) -> None:
    """`cluster -o RESULT --keep-facts` keeps the facts it judged beside the result (issue 34):
    `lint --nodes RESULT` then reads them, and judges what a result alone leaves unknown."""
    d = tmp_path / "fleet"
    d.mkdir()
    write(d, dgx("node01"), dgx("node02", gpus(4)))
    kept = tmp_path / "kept.json"
    p = spec_check("cluster", "--facts", str(d), "--format", "json", "-o", str(kept), "--keep-facts")
    assert p.returncode in (0, 1), p.stderr
    assert sorted(q.name for q in (tmp_path / "kept.facts").iterdir()) == sorted(q.name for q in d.iterdir())
    _rc, doc, _err = result(tmp_path, str(FLAGAI), "--nodes", str(kept))
    f = mine(doc)
    assert f["NET-02.job-socket-ifname-not-on-nodes"]["status"] != "error"  # the interfaces are known now
    assert "holds verdicts" not in f["NET-02.job-socket-ifname-not-on-nodes"]["message"]
    assert mine(result(tmp_path, str(TORCHTUNE), "--nodes", str(kept))[1])[
        "PLAT-01.job-gpus-per-node-exceed-node"]["value"] == ["node02"]
    for args, said in ((["--keep-facts"], "give -o FILE"),
                       (["--keep-facts", "-o", str(tmp_path / "x.json"), "--save-facts", str(tmp_path / "s")],
                        "give one")):
        r = spec_check("cluster", "--facts", str(d), *args)
        assert r.returncode == 2 and said in r.stderr, r.stderr


def test_bad_node_inputs_exit_2_with_one_line(tmp_path: Path) -> None:
    other = dgx()
    other["schema"] = "spec-check/facts/99"
    (bad,) = write(tmp_path, other)
    cres = json.loads((Path(__file__).parents[1] / "fixtures/results/check_vm_0.1.0.json").read_text())
    cres.update(command="cluster", spec_version="0.9")
    old_spec = tmp_path / "old_spec.json"
    old_spec.write_text(json.dumps(cres))
    check = tmp_path / "check.json"
    check.write_text(json.dumps({**cres, "command": "check", "spec_version": "1.0"}))
    for arg, words in ((bad, "newer spec-check"), (old_spec, "a cluster result of spec '0.9'"),
                       (check, 'a "check" result'), (tmp_path / "nope.json", "no such file")):
        rc, _doc, err = result(tmp_path, str(TORCHTUNE), "--nodes", str(arg))
        assert rc == 2 and words in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1
    p = spec_check("lint", str(TORCHTUNE), "--run", str(tmp_path / "missing"))
    assert p.returncode == 2 and "no such file or directory (--run)" in p.stderr


def test_select_and_ignore_take_these_rules(tmp_path: Path) -> None:
    """docs/job-nodes.md: --select/--ignore name these rules by their IDs or requirement."""
    _rc, doc, err = result(tmp_path, str(TORCHTUNE), "--nodes", str(H200), "--select", "NET-02")
    rules = set(mine(doc))
    assert "NET-02.job-ib-hca-not-on-nodes" in rules and "PLAT-01.job-gpus-per-node-exceed-node" not in rules, err
    _rc, doc, err = result(tmp_path, str(TORCHTUNE), "--nodes", str(H200), "--select", "PLAT-01.job-gpus")
    assert set(mine(doc)) == {"PLAT-01.job-gpus-per-node-exceed-node"}, err
    _rc, doc, err = result(tmp_path, str(TORCHTUNE), "--nodes", str(H200), "--ignore", "PLAT-01.job")
    assert "PLAT-01.job-gpus-per-node-exceed-node" not in mine(doc) and mine(doc), err
    p = spec_check("lint", str(TORCHTUNE), "--select", "PLAT-01.job-gpus")  # without --nodes: no such rule
    assert p.returncode == 2 and "PLAT-01.job-gpus" in p.stderr


def _waivers(tmp: Path, *entries: tuple[str, str]) -> Path:
    w = tmp / "waivers.yaml"
    w.write_text("waivers:\n" + "".join(
        f'  - id: {i}\n    subject: "{s}"\n    justification: the test node has no fabric (T-1)\n'
        f"    approver: lead@example.com\n    expires: 2099-12-31\n" for i, s in entries))
    return w


def test_waivers_apply_to_these_findings_as_to_the_packs(tmp_path: Path) -> None:
    """docs/job-nodes.md: a waiver names these rules exactly (or their requirement) and
    matches by the job, as a pack rule's does; a typo is refused at file:line."""
    from tests.jobnodes.test_h200_recordings import FACTS, TWO

    job = tmp_path / "record.sh"
    job.write_text("#!/bin/bash\ntorchrun --standalone --nproc-per-node 2 allreduce.py\n")
    args = (str(job), "--nodes", str(FACTS), "--run", str(TWO))
    _rc, base, _ = result(tmp_path, *args)
    assert not any(f["waiver"] for f in base["findings"])
    # by the job; by the requirement and the config file's name (matches the finding located
    # in record.sh, as for a pack finding); by the log file a --run finding cites
    w = _waivers(tmp_path, ("NET-02.run-used-sockets", str(job)), ("PLAT-01", "record.sh"),
                 ("PLAT-01.run-ranks-share-gpu", "nccl_info_two_ranks_one_gpu.log"),
                 ("MON-01.collective-latency-not-emitted", str(job)))
    rc, doc, err = result(tmp_path, *args, "--waivers", str(w))
    assert rc == 1 and "matches no finding" not in err, err
    waived = {f["rule"] for f in doc["findings"] if f["waiver"] and f["waiver"]["active"]}
    assert waived == {"NET-02.run-used-sockets", "PLAT-01.run-ranks-share-gpu",
                      "PLAT-01.job-gpus-per-node-exceed-node", "MON-01.collective-latency-not-emitted"}
    assert mine(doc)["PLAT-01.job-gpus-per-node-exceed-node"]["waiver"]["id"] == "PLAT-01"
    assert mine(doc)["PLAT-01.run-ranks-share-gpu"]["waiver"]["id"] == "PLAT-01.run-ranks-share-gpu"
    # a waiver changes no status: the same failures, four of them now waived
    assert {f["rule"]: f["status"] for f in doc["findings"]} == {f["rule"]: f["status"] for f in base["findings"]}
    assert {f["rule"] for f in doc["findings"] if f["rule"] in waived and f["status"] == "fail"} == waived
    # a waiver for another job's file matches nothing here: said on stderr, nothing waived
    _rc, doc, err = result(tmp_path, *args, "--waivers", str(_waivers(tmp_path, ("NET-02.run-used-sockets", "x.sh"))))
    assert "matches no finding" in err and not any(f["waiver"] for f in doc["findings"])
    # an ID that is no rule: exit 2, one line, the closest IDs named
    rc, _doc, err = result(tmp_path, *args, "--waivers", str(_waivers(tmp_path, ("NET-02.run-used-socket", "*"))))
    assert rc == 2 and "waivers.yaml:2" in err and "NET-02.run-used-sockets" in err
    assert len(err.strip().splitlines()) == 1
