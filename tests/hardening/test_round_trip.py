"""Round trips: whatever spec-check writes, it reads back. A real ``cluster --facts``
replay's result goes through ``report`` (every format), ``diff``, ``sign`` and ``verify``;
and the read cap (``results.MAX_RESULT_BYTES``) is held to the size the writer reaches
at 25,000 nodes, projected from two real replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.util import ROOT, spec_check
from validator.report.results import MAX_RESULT_BYTES

DGX = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
FLEET = 25_000


def _replay(tmp_path: Path, n: int, tag: str, *extra: str) -> Path:
    facts = tmp_path / f"fleet-{tag}"
    facts.mkdir()
    text = DGX.read_text()
    name = json.dumps(json.loads(text)["subject"]["name"])
    for i in range(n):
        (facts / f"node{i:05d}.json").write_text(text.replace(name, json.dumps(f"node{i:05d}")))
    out = tmp_path / f"result-{tag}.json"
    r = spec_check("cluster", "--facts", str(facts), "--format", "json", "-o", str(out), *extra, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    return out


def test_a_cluster_result_reads_back_through_every_verb(tmp_path: Path) -> None:
    result = _replay(tmp_path, 40, "a")
    for fmt in ("terminal", "json", "junit", "sarif", "markdown", "html", "github"):
        r = spec_check("report", "--format", fmt, "-o", str(tmp_path / f"out.{fmt}"), str(result), timeout=300)
        assert r.returncode == 0, (fmt, r.stderr)
    again = tmp_path / "out.json"  # report's JSON reads back too
    r = spec_check("diff", str(result), str(again), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    key = tmp_path / "k"
    assert spec_check("keygen", str(key)).returncode == 0
    signed = tmp_path / "signed.json"
    assert spec_check("sign", "--key", f"{key}.key", "-o", str(signed), str(result), timeout=300).returncode == 0
    r = spec_check("verify", "--key", f"{key}.pub", str(signed), timeout=300)
    assert r.returncode == 0, r.stderr


def test_the_read_cap_holds_a_25000_node_result(tmp_path: Path) -> None:
    # as a 25,000-node fleet is replayed (--passes auto folds above 100 hosts)
    small, large = _replay(tmp_path, 10, "s", "--passes", "fold"), _replay(tmp_path, 50, "l", "--passes", "fold")
    per_node = (large.stat().st_size - small.stat().st_size) / 40
    projected = small.stat().st_size + per_node * (FLEET - 10)
    if projected > MAX_RESULT_BYTES:
        # every node's passing findings written out: ~115 KB a DGX node, 2.9 GB at 25,000,
        # more than a reader can hold in memory; issue 13 folds passes (< 200 MiB at 25,000)
        pytest.xfail(f"the writer makes {per_node / 1024:.0f} KiB a node ({projected / 2**30:.1f} GiB at "
                     f"{FLEET:,}): waits for issue 13's folded passes")
    assert projected <= MAX_RESULT_BYTES
