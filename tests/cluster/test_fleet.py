"""A large fleet replayed: passes folded, failures itemized, hosts named by rule.

The folded result must say exactly what the itemized one says (same failures on the same
hosts and items, every pass and skip counted, each folded host list naming exactly the
hosts whose verdicts it holds), whatever order the files come in; and every verb reads it
back (report, diff, sign, verify --facts).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.helpers import run_cluster
from validator.cluster.hosts import compress, parse_hosts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
VARIANTS = ("ecc_off", "nvlink_inactive", "port_200g", "remap_pending", "hw_thermal", "no_peermem")


def _doc(kind: str = "") -> dict[str, Any]:
    name = f"dgx_h100_{kind}.json" if kind else "dgx_h100.json"
    return json.loads((FIXTURES / name).read_text())


def _fleet(tmp: Path, n: int = 14) -> Path:
    """n DGX H100 nodes: most the fixture as recorded, some of each faulty variant, one
    whose facts have values of the wrong type (1 where a boolean belongs, "8" where a
    count belongs: remembered verdicts must not be reused across types), one whose driver
    differs (PLAT-02 names it)."""
    d = tmp / "fleet"
    d.mkdir()
    for i in range(n):
        kind = VARIANTS[i % len(VARIANTS)] if i % 3 == 1 else ""
        doc = _doc(kind)
        if i == 5:
            gpu0 = doc["facts"]["gpu.devices"]["items"][0]["fields"]
            gpu0["ecc_enabled"] = {**gpu0["ecc_enabled"], "value": 1}
            doc["facts"]["gpu.count"] = {**doc["facts"]["gpu.count"], "value": "8"}
        if i == 9:
            doc["facts"]["gpu.driver_version"] = {**doc["facts"]["gpu.driver_version"], "value": "535.104.05"}
        doc["subject"]["name"] = f"dgx{i:03d}"
        (d / f"dgx{i:03d}.json").write_text(json.dumps(doc))
    return d


def _key(f: dict[str, Any]) -> tuple[Any, ...]:
    return (f["rule"], f["status"], f["subject"], f["item"], f["message"], f["observed"], f["expected"])


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    fleet = _fleet(tmp)
    out = {}
    for mode in ("itemize", "fold"):
        (tmp / mode).mkdir()
        rc, result, err = run_cluster(tmp / mode, "--facts", str(fleet), "--passes", mode)
        assert result is not None, err
        out[mode] = (rc, result)
    return fleet, out


def test_folded_says_what_itemized_says(both):
    _, out = both
    (rc_i, itemized), (rc_f, folded) = out["itemize"], out["fold"]
    assert rc_i == rc_f == 1
    assert itemized["summary"]["conformant"] is folded["summary"]["conformant"] is False
    kept = ("fail", "warn", "error")
    assert sorted(_key(f) for f in itemized["findings"] if f["status"] in kept) == sorted(
        _key(f) for f in folded["findings"] if f["status"] in kept
    )
    assert not any("folded" in f for f in itemized["findings"])
    nodes = [s for s in folded["subjects"] if s["kind"] == "node"]
    assert len(nodes) == 14 and all(s["facts_digest"].startswith("sha256-file:") for s in nodes)
    # every pass and skip is counted once, on the hosts that had it
    want: dict[tuple[str, str], Counter[str]] = {}
    for f in itemized["findings"]:
        if f["status"] in ("pass", "skip"):
            want.setdefault((f["rule"], f["status"]), Counter())[f["subject"]] += 1
    got: dict[tuple[str, str], Counter[str]] = {}
    for f in folded["findings"]:
        if f["status"] in ("pass", "skip") and "folded" in f:
            info = f["folded"]
            hosts = parse_hosts(info["names"])
            assert len(hosts) == info["subjects"] and f["subject"] == "cluster"
            c = got.setdefault((f["rule"], f["status"]), Counter())
            for h in hosts:
                c[h] += 0
            c["#"] += info["verdicts"]
    unfolded = [f for f in folded["findings"] if f["status"] in ("pass", "skip") and "folded" not in f]
    assert all(f["subject"] == "cluster" for f in unfolded)  # the cluster's own verdicts
    for f in unfolded:
        want.pop((f["rule"], f["status"]), None) if f["rule"] != "PLAT-02.host-not-probed" else None
    for key, hosts in want.items():
        assert key in got, key
        assert set(got[key]) - {"#"} == set(hosts) - {"cluster"}, key
        assert got[key]["#"] == sum(n for h, n in hosts.items() if h != "cluster"), key


def test_folded_pass_carries_the_value_range(both):
    _, out = both
    energy = [f for f in out["fold"][1]["findings"]
              if f["rule"] == "ENER-01.gpu-energy-unreadable" and f["status"] == "pass"]
    assert len(energy) == 1
    lo, hi = energy[0]["folded"]["range"]
    item_values = [f["value"] for f in out["itemize"][1]["findings"]
                   if f["rule"] == "ENER-01.gpu-energy-unreadable" and f["status"] == "pass"]
    assert (lo, hi) == (min(item_values), max(item_values)) and lo < hi
    hosts = {f["subject"] for f in out["itemize"][1]["findings"]
             if f["rule"] == "ENER-01.gpu-energy-unreadable" and f["status"] == "pass"}
    assert energy[0]["unit"] == "J" and energy[0]["observed"].endswith(f" J on {len(hosts)} hosts")
    assert " .. " in energy[0]["observed"]


def test_wrong_types_are_not_judged_as_remembered(both):
    _, out = both
    bad = [f for f in out["fold"][1]["findings"] if f["subject"] == "dgx005" and f["status"] == "error"]
    assert {f["rule"] for f in bad} >= {"MEM-01.ecc-disabled"}, bad


def test_differing_host_is_named(both):
    _, out = both
    mixed = [f for f in out["fold"][1]["findings"] if f["rule"] == "PLAT-02.driver-version-mixed"]
    assert [f["status"] for f in mixed] == ["fail"]
    assert "dgx009 differs (535.104.05)" in mixed[0]["message"]


def test_result_validates_against_the_schema(both):
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / "spec" / "result.schema.json").read_text())
    jsonschema.validate(both[1]["fold"][1], schema)


def test_order_of_files_does_not_change_the_result(tmp_path, both):
    fleet, out = both
    files = sorted(fleet.glob("*.json"))
    args = [a for f in reversed(files) for a in ("--facts", str(f))]
    _, result, err = run_cluster(tmp_path, *args, "--passes", "fold")
    assert result is not None, err
    strip = lambda r: sorted(json.dumps({**f}, sort_keys=True) for f in r["findings"])  # noqa: E731
    assert strip(result) == strip(out["fold"][1])


def test_shared_hostnames_are_named_by_file_whatever_the_order(tmp_path):
    """Two raw probe outputs of cloned hosts report one hostname: each is named by its file,
    never the first by the hostname and the second by its file (argument order)."""
    a, b = tmp_path / "rack1-07.json", tmp_path / "rack2-07.json"
    doc = _doc()
    a.write_text(json.dumps(doc))
    doc = _doc("ecc_off")
    b.write_text(json.dumps(doc))
    seen = []
    for order in ((a, b), (b, a)):
        for mode in ("itemize", "fold"):
            out = tmp_path / f"{order[0].stem}-{mode}"
            out.mkdir()
            rc, result, err = run_cluster(
                out, "--facts", str(order[0]), "--facts", str(order[1]), "--passes", mode
            )
            assert rc == 1 and result is not None, err
            fails = {(f["subject"], f["rule"]) for f in result["findings"] if f["status"] == "fail"}
            seen.append(fails)
            assert ("rack2-07", "MEM-01.ecc-disabled") in fails, fails
            assert {s["name"] for s in result["subjects"]} >= {"rack1-07", "rack2-07"}
    assert all(s == seen[0] for s in seen[::2]) and all(s == seen[1] for s in seen[1::2])


def test_same_file_name_twice_is_refused(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    for d in ("x", "y"):
        (tmp_path / d / "n1.json").write_text(json.dumps(_doc()))
    rc, result, err = run_cluster(tmp_path, "--facts", str(tmp_path / "x"), "--facts", str(tmp_path / "y"))
    assert rc == 2 and result is None
    assert 'two node facts documents for host "n1"' in err and "Traceback" not in err


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_auto_folds_above_100_hosts(tmp_path):
    d = tmp_path / "fleet"
    d.mkdir()
    text = (FIXTURES / "dgx_h100.json").read_text()
    for i in range(101):
        (d / f"n{i:03d}.json").write_text(text.replace("dgx-h100-01", f"n{i:03d}"))
    _, result, err = run_cluster(tmp_path, "--facts", str(d), "--select", "MEM-02")
    assert result is not None, err
    assert [f.get("folded", {}).get("subjects") for f in result["findings"]] == [None] * 101 * 2
    (d / "n101.json").write_text(text.replace("dgx-h100-01", "n101"))
    _, result, err = run_cluster(tmp_path, "--facts", str(d), "--select", "MEM-02")
    assert result is not None, err
    assert [f["folded"]["names"] for f in result["findings"]] == ["n[000-101]"] * 2


def test_every_verb_reads_the_folded_result_back(tmp_path, both):
    fleet, out = both
    result = tmp_path / "folded.json"
    result.write_text(json.dumps(out["fold"][1], indent=2))
    for fmt in ("terminal", "markdown", "html", "junit", "sarif", "github", "json"):
        p = _cli("report", result, "--format", fmt)
        assert p.returncode in (0, 1) and p.stdout and "Traceback" not in p.stderr, (fmt, p.stderr)
    again = _cli("report", result, "--format", "json")
    assert json.loads(again.stdout)["findings"] == out["fold"][1]["findings"]
    p = _cli("diff", result, result)
    assert p.returncode == 0, p.stdout + p.stderr
    assert _cli("keygen", tmp_path / "k").returncode == 0
    signed = tmp_path / "signed.json"
    p = _cli("sign", result, "--key", tmp_path / "k.key", "-o", signed)
    assert p.returncode == 0, p.stderr
    node = sorted(fleet.glob("*.json"))[3]
    p = _cli("verify", signed, "--key", tmp_path / "k.pub", "--facts", node)
    assert p.returncode == 0, p.stdout + p.stderr
    changed = tmp_path / node.name
    changed.write_text(node.read_text().replace('"LinkUp"', '"Polling"', 1))
    p = _cli("verify", signed, "--key", tmp_path / "k.pub", "--facts", changed)
    assert p.returncode == 1, p.stdout + p.stderr


_PIDS: list[Any] = []  # (the real worker function, the file its processes are written to)


def _counted_chunk(start: int) -> Any:
    """A worker's chunk, its process id written down (module level: workers unpickle it)."""
    import os

    work, pids = _PIDS
    with open(pids, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    return work(start)


def test_parallel_workers_give_the_serial_result(tmp_path, both, monkeypatch):
    """Forked workers (a fleet of PARALLEL_ABOVE files or more) in chunks: the same result.
    A worker is replaced after CHUNKS_PER_WORKER chunks (its memory does not grow with the
    fleet): one chunk each here, so every chunk is read by a process of its own."""
    import threading

    from click.testing import CliRunner

    from validator.cli.cluster import cluster
    from validator.cluster import replay

    if threading.active_count() > 1:
        pytest.skip("threads running in this process: the replay does not fork here")
    fleet, out = both
    monkeypatch.setattr(replay, "PARALLEL_ABOVE", 2)
    monkeypatch.setattr(replay, "CHUNK", 3)
    monkeypatch.setattr(replay, "CHUNKS_PER_WORKER", 1)
    pids = tmp_path / "pids"
    monkeypatch.setattr(sys.modules[__name__], "_PIDS", [replay._worker_chunk, pids])
    monkeypatch.setattr(replay, "_worker_chunk", _counted_chunk)
    res = tmp_path / "par.json"
    r = CliRunner().invoke(cluster, ["--facts", str(fleet), "--passes", "fold", "--format", "json",
                                     "-o", str(res)])
    assert r.exit_code == 1, r.output
    got = json.loads(res.read_text())
    strip = lambda r: sorted(json.dumps(f, sort_keys=True) for f in r["findings"])  # noqa: E731
    assert strip(got) == strip(out["fold"][1])
    chunks = pids.read_text().split()
    assert len(chunks) == 5 and len(set(chunks)) == 5, chunks  # 14 files in chunks of 3


@pytest.mark.parametrize(
    "names",
    [
        ["node01", "node02", "node03", "node07", "gpu1", "x", "node10"],
        [f"n{i:05d}" for i in range(2500)] + ["n100000", "n7"],
        ["a9", "a10", "a08", "a09", "10.0.0.1", "10.0.0.2", "admin@h1"],
    ],
)
def test_host_list_round_trip(names):
    text = compress(names)
    assert sorted(parse_hosts(text)) == sorted(set(names))
    assert len(text) < 40 or len(names) < 10


def test_folding_keeps_memory_of_a_document_per_rule_not_per_node():
    """Twenty copies of one node: the engine evaluates each rule once (then remembers)."""
    from validator.cli.common import RunOptions, build
    from validator.cluster.fleet import FleetEvaluator

    built = build(RunOptions(), ("node", "cluster"))
    ev = FleetEvaluator(built.ctx, built.pack)
    base = _doc()
    for i in range(20):
        assert ev.node(i, f"n{i}", copy.deepcopy(base)["facts"]) == []
    assert ev.evaluated == len(ev.rules)
    bad = _doc("ecc_off")
    found = ev.node(20, "n20", bad["facts"])
    assert [f.subject for f in found] and {f.subject for f in found} == {"n20"}


def test_a_live_run_folds_too(tmp_path):
    """--passes fold on a live run (local transport, three stand-in hosts): the same
    folding as a replay, each host's probe verdict folded with the rest."""
    from tests.cluster.helpers import fake_remote

    _rc, result, err = run_cluster(
        tmp_path, "--transport", "local", "--hosts", "h1,h2,h3", "--passes", "fold",
        "--remote-command", fake_remote(tmp_path, {"*": "ok", "h2": "fail"}),
    )
    assert result is not None, err
    probe = [f for f in result["findings"] if f["rule"] == "PLAT-02.host-not-probed"]
    folded = [f for f in probe if "folded" in f]
    assert [f["folded"]["names"] for f in folded] == ["h[1,3]"] and folded[0]["subject"] == "cluster"
    assert [(f["subject"], f["status"]) for f in probe if "folded" not in f] == [("h2", "error")]
    nodes = {s["name"] for s in result["subjects"] if s["kind"] == "node"}
    assert nodes == {"h1", "h2", "h3"}


def test_folded_replay_of_a_saved_run_with_its_cluster_document(tmp_path):
    """--save-facts DIR (cluster.json + one file per host) replayed folded: a host recorded
    in cluster.json without its node file is still that host's error."""
    from tests.cluster.helpers import fake_remote

    saved = tmp_path / "saved"
    _rc, live, err = run_cluster(
        tmp_path, "--transport", "local", "--hosts", "a,b,c", "--save-facts", str(saved),
        "--remote-command", fake_remote(tmp_path, {"*": "gpu"}),
    )
    assert live is not None, err
    (saved / "c.json").unlink()
    out = {}
    for mode in ("itemize", "fold"):
        (tmp_path / mode).mkdir()
        _rc, result, err = run_cluster(tmp_path / mode, "--facts", str(saved), "--passes", mode)
        assert result is not None, err
        out[mode] = result
    kept = ("fail", "warn", "error")
    assert sorted(_key(f) for f in out["itemize"]["findings"] if f["status"] in kept) == sorted(
        _key(f) for f in out["fold"]["findings"] if f["status"] in kept)
    probe = {f["subject"]: f["status"] for f in out["fold"]["findings"]
             if f["rule"] == "PLAT-02.host-not-probed" and "folded" not in f}
    assert probe == {"c": "error"}


def test_a_bad_file_in_a_folded_replay_is_one_line_exit_2(tmp_path, monkeypatch):
    """Serial and in forked workers alike: the file and the problem, no traceback."""
    import threading

    from click.testing import CliRunner

    from validator.cli.cluster import cluster
    from validator.cluster import replay

    d = tmp_path / "fleet"
    d.mkdir()
    text = (FIXTURES / "dgx_h100.json").read_text()
    for i in range(6):
        (d / f"n{i}.json").write_text(text.replace("dgx-h100-01", f"n{i}"))
    (d / "n3.json").write_text(text[: len(text) // 2])
    rc, result, err = run_cluster(tmp_path, "--facts", str(d), "--passes", "fold")
    assert rc == 2 and result is None and "n3.json" in err and "invalid JSON" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    if threading.active_count() > 1:
        return
    monkeypatch.setattr(replay, "PARALLEL_ABOVE", 2)
    monkeypatch.setattr(replay, "CHUNK", 2)
    r = CliRunner().invoke(cluster, ["--facts", str(d), "--passes", "fold", "--format", "json"])
    from validator.errors import SpecCheckError  # the CLI's main turns it into one line, exit 2

    assert isinstance(r.exception, SpecCheckError), r.exception
    assert "n3.json" in str(r.exception) and "invalid JSON" in str(r.exception)
