"""The public runs corpus (issue 32, deliverable 2): real run folders from public
repositories at pinned commits, each linted as a user would (`lint --run DIR`) and held to
the verdicts written from its data before the tool was run on it.

``tests/fixtures/runs_corpus/MANIFEST.tsv`` names each file's repository, commit, path,
licence and sha256; ``expectations.yaml`` says what the data shows and why (MON-01's
families, MON-02's numbers, REC-02, how Lightning's version folders read)."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES

pytest.importorskip("tensorboard")

CORPUS = FIXTURES.parent / "runs_corpus"
EXPECT: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "expectations.yaml").read_text())


def _manifest() -> list[dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_manifest_pins_every_file_and_every_run_has_expectations() -> None:
    rows = _manifest()
    runs = {r["run"] for r in rows}
    assert runs == set(EXPECT) and len(runs) >= 15
    assert len({r["repo"] for r in rows}) >= 8
    on_disk = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*") if p.is_file()} - {
        "MANIFEST.tsv", "expectations.yaml", "README.md"}
    assert on_disk == {r["local_file"] for r in rows}
    for r in rows:
        data = (CORPUS / r["local_file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == r["sha256"] and len(data) == int(r["bytes"]), r["local_file"]
        assert len(r["commit"]) == 40 and r["licence"] and r["path"]
    assert sum(int(r["bytes"]) for r in rows) < 4 * 1024 * 1024  # a few MiB


def _lint(run: str) -> tuple[int, dict[str, Any]]:
    p = spec_check("lint", "--run", str(CORPUS / run), "--format", "json")
    assert "Traceback" not in p.stderr and p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize("run", sorted(EXPECT), ids=str)
def test_run_meets_its_expectations(run: str) -> None:
    want = EXPECT[run]
    rc, doc = _lint(run)
    fs = doc["findings"]
    # MON-01: each family as the data shows it
    mon01 = {f["rule"]: f for f in fs if f["rule"].startswith("MON-01.")}
    assert len(mon01) == 4, sorted(mon01)
    status = {"emitted": "pass", "not emitted": "fail", "error": "error"}
    for fam, seen in want["mon01"].items():
        rule = f"MON-01.{fam.replace('_', '-')}-not-emitted"
        assert mon01[rule]["status"] == status[seen], (rule, mon01[rule]["message"])
    assert rc == (1 if any(s != "emitted" for s in want["mon01"].values()) or "nonfinite" in str(want) else rc)
    # MON-02: the numbers read from the data
    from tests.runs.util import measure

    ev, facts = measure(CORPUS / run)
    items = {i["id"]: i["fields"] for i in facts["job.metrics.measured"]["items"]}
    for fam, nums in (want.get("mon02") or {}).items():
        got = items[fam]
        for k, v in nums.items():
            if k == "nonfinite":
                assert bool(got["nonfinite"]["value"]) is v, got["nonfinite"]
            elif isinstance(v, list):
                assert v[0] <= got[k]["value"] <= v[1], (fam, k, got[k])
            else:
                assert got[k]["value"] == v, (fam, k, got[k])
    if want.get("mon02") == {}:
        assert [i for i in items if not i.startswith(str(CORPUS))] == []
    for fam in want.get("no_item", []):
        assert fam not in items
    nonfinite = [f for f in fs if f["rule"] == "MON-02.nonfinite-values"]
    if any(n.get("nonfinite") for n in (want.get("mon02") or {}).values()):
        assert any(f["status"] == "fail" for f in nonfinite)
    else:
        assert not any(f["status"] == "fail" for f in nonfinite)
    # REC-02
    rec = [f for f in fs if f["rule"] == "REC-02.measured-recovery-too-slow"]
    if want["rec02"] == "skip":
        assert [f["status"] for f in rec] == ["skip"], rec
    else:
        assert [f["status"] for f in rec] == want["rec02"], rec
    # Lightning version folders
    read = {Path(d["folder"]).name if not d["folder"].endswith(".csv") else Path(d["folder"]).parent.name:
            d["read_as"] for d in ev.versions}
    for v, how in (want.get("versions") or {}).items():
        assert read[v].startswith("resumed" if how == "resumed" else "a separate fit"), (v, read[v])
    if not any(h == "resumed" for h in (want.get("versions") or {}).values()):
        assert not any(r.startswith("resumed") for r in read.values()), read
    for name, why in (want.get("passed") or {}).items():
        assert any(p["file"].endswith(name) and why in p["why"] for p in ev.passed), (name, ev.passed)
