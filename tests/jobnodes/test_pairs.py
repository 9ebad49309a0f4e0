"""The rules that compare two documents are pack rules (issue 31, deliverable 6): declared in
``rules/v1.1/job_pairs.yaml``, checked by the loader, listed and explained by ``rules``,
judged by the engine, waived by every verb and baselined like any rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import built
from tests.jobnodes.test_checks import TORCHTUNE
from tests.jobnodes.util import DGX, H200, RECORDINGS, dgx, gpus, job, nodes_of, write
from tests.jobs.util import spec_check
from validator.errors import RuleFileError
from validator.rules.operators import COMPARISONS

PAIR_IDS = {
    "PLAT-01.job-gpus-per-node-exceed-node", "PLAT-02.job-nodes-exceed-fleet", "NET-02.job-ib-hca-not-on-nodes",
    "NET-02.job-socket-ifname-not-on-nodes", "NET-02.job-ib-gid-index-unusable",
    "NET-02.job-expects-ib-no-active-port", "TOPO-03.job-tensor-parallel-exceeds-node-nvlink",
    "TOPO-03.job-model-parallel-exceeds-fleet", "PLAT-01.run-ranks-share-gpu", "NET-02.run-used-sockets",
    "NET-02.run-mixed-transports",
}


def test_the_comparisons_and_their_judges_are_one_set() -> None:
    from validator.jobnodes.pairs import JUDGES

    assert set(COMPARISONS) == set(JUDGES)
    pack = built().pack
    pairs = {r.id: r for r in pack.rules if r.against is not None}
    assert set(pairs) == PAIR_IDS
    for r in pairs.values():
        assert r.scope == "job" and COMPARISONS[r.check.op].against == r.against
    # each comparison is used by exactly one bundled rule (none is dead code)
    assert sorted(r.check.op for r in pairs.values()) == sorted(COMPARISONS)


def test_the_pack_v1_0_has_none_and_keeps_its_digest() -> None:
    from tests.test_packs import V10_DIGEST

    v10 = built(rules_version="1.0").pack
    assert not [r for r in v10.rules if r.against is not None]
    assert v10.digest == V10_DIGEST  # "against" at its default is left out of the digest


def test_rules_list_and_explain_show_them() -> None:
    r = spec_check("rules", "list", "--scope", "job")
    assert r.returncode == 0, r.stderr
    listed = {line.split()[0] for line in r.stdout.splitlines()[1:]}
    assert listed >= PAIR_IDS
    r = spec_check("rules", "explain", "NET-02.run-used-sockets")
    assert r.returncode == 0, r.stderr
    assert "NCCL used TCP sockets where the nodes have an RDMA fabric" in r.stdout
    assert "compares the job with what NCCL said in its run's logs, given by lint --run" in r.stdout
    r = spec_check("rules", "explain", "PLAT-01.job-gpus-per-node-exceed-node")
    assert "at most each node's GPU count" in r.stdout and "its nodes' facts, given by lint --nodes" in r.stdout
    r = spec_check("rules", "explain", "PLAT-01")  # the requirement lists its two-document rules too
    assert "PLAT-01.run-ranks-share-gpu" in r.stdout


def test_the_engine_judges_them_as_the_checks_do(tmp_path: Path) -> None:
    """engine.evaluate with the nodes beside the job gives the findings checks.judge_job
    gives (the same IDs, statuses, messages), and the pack's words."""
    from tests.jobnodes.util import LEVELS
    from validator.evaluate.engine import evaluate
    from validator.jobnodes import checks
    from validator.jobnodes.pairs import sides

    b = built()
    doc = job(TORCHTUNE)
    nodes = nodes_of(*write(tmp_path, dgx("node01"), dgx("node02", gpus(4))))
    want = {f.rule: f for f in checks.judge_job(doc, nodes, LEVELS)}
    got = {f.rule: f for f in evaluate(b.ctx, b.pack, [doc], against=sides(nodes))
           if f.rule in PAIR_IDS}
    assert set(got) == set(want) == PAIR_IDS - {r for r in PAIR_IDS if ".run-" in r}
    for rid, f in got.items():
        assert (f.status, f.message, f.expected, f.remediation) == (
            want[rid].status, want[rid].message, want[rid].expected, want[rid].remediation), rid
        assert f.remediation == b.pack.get(rid).remediation.strip()
    assert got["PLAT-01.job-gpus-per-node-exceed-node"].status.value == "fail"
    # without the second document, no finding of these rules (a lint without --nodes)
    assert not [f for f in evaluate(b.ctx, b.pack, [doc]) if f.rule in PAIR_IDS]


def test_a_level_in_the_pack_is_the_findings_level(tmp_path: Path) -> None:
    """The rule's level is pack data: an override to SHOULD makes the failure a warn."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: mine\nspec_version: "1.0"\nextends: v1.1\n')
    (pack / "more.yaml").write_text("overrides:\n  - id: PLAT-01.job-gpus-per-node-exceed-node\n    level: SHOULD\n"
                                    "  - id: NET-02.run-used-sockets\n    level: SHOULD\n")
    out = tmp_path / "r.json"
    p = spec_check("lint", str(TORCHTUNE), "--nodes", str(H200), "--run", str(RECORDINGS / "nccl_info_default.log"),
                   "--rules", str(pack), "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    found = {f["rule"]: f for f in json.loads(out.read_text())["findings"]}
    for rid in ("PLAT-01.job-gpus-per-node-exceed-node", "NET-02.run-used-sockets"):
        assert (found[rid]["status"], found[rid]["level"]) == ("warn", "SHOULD"), rid
    assert found["NET-02.run-mixed-transports"]["level"] == "MUST"  # not overridden


@pytest.mark.parametrize(("entry", "problem"), [
    ("    against: nodes\n    check: {op: gte, value: 1}\n", "names a comparison as its operator"),
    ("    against: run\n    check: {op: gpus_per_node_fit}\n", 'write "against: nodes"'),
    ("    check: {op: gpus_per_node_fit}\n", 'write "against: nodes"'),
    ("    against: nodes\n    check: {op: gpus_per_node_fit, value: 3}\n", "takes no value"),
    ("    against: nodes\n    check: {op: gpus_per_node_fit}\n    when: [{fact: job.parallel.tp, op: exists}]\n",
     '"when" has no place'),
    ("    check: {op: gte, value: 1}\n", '"fact" is required'),
])
def test_the_loader_refuses_a_malformed_two_document_rule(tmp_path: Path, entry: str, problem: str) -> None:
    from validator.rules.loader import load_pack

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: mine\nspec_version: "1.0"\n')
    (pack / "job.yaml").write_text(
        "rules:\n  - id: PLAT-01.mine\n    requirement: PLAT-01\n    scope: job\n"
        "    summary: s\n    why: w\n    remediation: r\n" + entry)
    b = built()
    with pytest.raises(RuleFileError) as exc:
        load_pack(b.ctx.spec, dict(b.ctx.catalogue), pack_path=pack)
    assert problem in str(exc.value)
    assert exc.value.file and exc.value.file.endswith("job.yaml")


def _waivers(tmp: Path, rule: str, subject: str = "*") -> Path:
    w = tmp / "waivers.yaml"
    w.write_text(f'waivers:\n  - id: {rule}\n    subject: "{subject}"\n    justification: T-1\n'
                 "    approver: lead@example.com\n    expires: 2099-12-31\n")
    return w


def test_every_verb_accepts_a_waiver_naming_one(tmp_path: Path) -> None:
    """Refused before (exit 2: no such rule) by check and cluster, which do not judge them:
    now accepted (it matches nothing there, said on stderr), and applied by lint."""
    w = _waivers(tmp_path, "NET-02.run-used-sockets")
    for args in (("check", "--facts", str(DGX)), ("cluster", "--facts", str(DGX))):
        p = spec_check(*args, "--waivers", str(w))
        assert p.returncode in (0, 1), (args, p.stderr)
        assert "matches no finding" in p.stderr and "no such rule" not in p.stderr, (args, p.stderr)
    out = tmp_path / "r.json"
    p = spec_check("lint", str(TORCHTUNE), "--run", str(RECORDINGS / "nccl_info_default.log"),
                   "--waivers", str(w), "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1) and "matches no finding" not in p.stderr, p.stderr
    f = {f["rule"]: f for f in json.loads(out.read_text())["findings"]}["NET-02.run-used-sockets"]
    assert f["status"] == "fail" and f["waiver"]["active"] and f["waiver"]["id"] == "NET-02.run-used-sockets"
    # and `report` applies it to a saved lint result (with no waiver in it)
    plain = tmp_path / "plain.json"
    p = spec_check("lint", str(TORCHTUNE), "--run", str(RECORDINGS / "nccl_info_default.log"),
                   "--format", "json", "-o", str(plain))
    again = tmp_path / "again.json"
    p = spec_check("report", str(plain), "--waivers", str(w), "--format", "json", "-o", str(again))
    assert p.returncode == 0, p.stderr
    f = {f["rule"]: f for f in json.loads(again.read_text())["findings"]}["NET-02.run-used-sockets"]
    assert f["waiver"]["id"] == "NET-02.run-used-sockets"


def _lint(tmp: Path, name: str, *more: str) -> tuple[int, dict[str, Any]]:
    out = tmp / name
    p = spec_check("lint", str(TORCHTUNE), "--nodes", str(H200), "--run", str(RECORDINGS / "nccl_info_default.log"),
                   *more, "--format", "json", "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(out.read_text())


def test_a_baseline_knows_their_failures_as_any_rules(tmp_path: Path) -> None:
    _rc, first = _lint(tmp_path, "first.json")
    failing = {f["rule"] for f in first["findings"] if f["status"] in ("fail", "warn")}
    assert {"PLAT-01.job-gpus-per-node-exceed-node", "NET-02.run-used-sockets"} <= failing
    _rc, again = _lint(tmp_path, "again.json", "--baseline", str(tmp_path / "first.json"))
    known = {f["rule"] for f in again["findings"] if f["waiver"] and f["status"] in ("fail", "warn")}
    assert {"PLAT-01.job-gpus-per-node-exceed-node", "NET-02.run-used-sockets"} <= known
    # a baseline knows errors too (same rule, subject, item and reason): issue 30
    assert again["extra"]["baseline"]["known"] == len([f for f in first["findings"]
                                                       if f["status"] in ("fail", "warn", "error")])


def test_lint_run_reads_the_run_folder_once_through_safeio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's NCCL lines come from the run's one read (validator.runs.measure), each file
    read once through validator.io.safeio; nccllog's own folder reader is not called."""
    import shutil

    from validator import api
    from validator.io import safeio
    from validator.jobnodes import nccllog

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(RECORDINGS / "nccl_info_default.log", run / "console.log")
    (run / "metrics.csv").write_text("step,loss\n1,2.0\n2,1.5\n")
    reads: list[str] = []
    real = safeio.read_bytes

    def counted(path: Any, **kw: Any) -> bytes:
        reads.append(str(path))
        return real(path, **kw)

    def refused(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("lint --run read the folder a second time (nccllog.read_run)")

    monkeypatch.setattr(safeio, "read_bytes", counted)
    monkeypatch.setattr(nccllog, "read_run", refused)
    outcome = api.lint_jobs(api.LintOptions(paths=(TORCHTUNE,), runs=(run,)))
    found = {f.rule: f for f in outcome.report.findings}
    assert found["NET-02.run-used-sockets"].status.value == "fail"
    assert found["NET-02.run-used-sockets"].location.file == str(run / "console.log")
    assert reads.count(str(run / "console.log")) == 1, reads
    assert outcome.report.extra["nccl"][0]["network"] == "Socket"
    assert {r["file"] for r in outcome.report.extra["run"]["read"]} == {str(run / "console.log"),
                                                                         str(run / "metrics.csv")}


def test_a_pack_without_them_says_nothing_was_compared(tmp_path: Path) -> None:
    """Pack v1.0 came before these rules: lint --nodes --rules-version 1.0 judges none of
    them, and says so on stderr (no finding is no pass)."""
    out = tmp_path / "r.json"
    p = spec_check("lint", str(TORCHTUNE), "--nodes", str(H200), "--rules-version", "1.0", "--format", "json",
                   "-o", str(out))
    assert p.returncode in (0, 1), p.stderr
    assert "rule pack v1.0 has no rule that compares a job with its nodes (--nodes)" in p.stderr
    assert not [f for f in json.loads(out.read_text())["findings"] if f["rule"] in PAIR_IDS]
    p = spec_check("lint", str(TORCHTUNE), "--nodes", str(H200), "--format", "json", "-o", str(out))
    assert "compares a job with" not in p.stderr
