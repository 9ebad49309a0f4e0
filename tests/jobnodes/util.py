"""Helpers for the job-meets-nodes tests: node documents derived from the project's DGX
fixture and the recorded H200 node (never edited: each variant is a copy changed here, in
the test, and says what it changes), jobs read by the project's own job readers."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers import built
from validator.jobnodes import checks, levels_of, nccllog
from validator.jobnodes.nodes import Node, read_nodes

ROOT = Path(__file__).resolve().parents[2]
DGX = ROOT / "tests/fixtures/facts/dgx_h100.json"
H200 = Path("/work/shared/recordings/h200-node/facts.json")
if not H200.exists():  # the recordings live beside the checkout
    H200 = ROOT.parent / "shared/recordings/h200-node/facts.json"
RECORDINGS = H200.parent
DATA = Path(__file__).parent / "data"
CORPUS = ROOT / "tests/corpus"
SHARED_CORPUS = ROOT.parent / "shared/corpus" if (ROOT.parent / "shared/corpus").is_dir() else Path(
    "/work/shared/corpus")
LEVELS = levels_of(built().ctx.spec)


def dgx(name: str = "dgx-h100-01", change: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The DGX H100 fixture as host ``name``, changed by ``change`` (facts dict)."""
    doc = json.loads(DGX.read_text())
    doc = copy.deepcopy(doc)
    doc["subject"]["name"] = name
    if change:
        change(doc["facts"])
    return doc


def gpus(n: int) -> Callable[[dict[str, Any]], None]:
    """A node with ``n`` of the fixture's GPUs (a 4-GPU board)."""
    def change(f: dict[str, Any]) -> None:
        f["gpu.count"]["value"] = n
        f["gpu.devices"]["items"] = f["gpu.devices"]["items"][:n]
    return change


def write(tmp: Path, *docs: dict[str, Any]) -> list[Path]:
    out = []
    for d in docs:
        p = tmp / f"{d['subject']['name']}.json"
        p.write_text(json.dumps(d))
        out.append(p)
    return out


def nodes_of(*paths: Path) -> list[Node]:
    return read_nodes(list(paths), "1.0")


def job(path: Path | str) -> dict[str, Any]:
    from validator.jobs import read_job

    docs = read_job([Path(path)], None, name=str(path))
    assert len(docs) == 1 and docs[0]["facts"]["job.files"]["value"], docs[0].get("errors")
    return docs[0]


def script(tmp: Path, text: str, name: str = "job.sbatch") -> dict[str, Any]:
    p = tmp / name
    p.write_text(text)
    return job(p)


def judge(doc: dict[str, Any], nodes: list[Node]) -> dict[str, Any]:
    return {f.rule: f for f in checks.judge_job(doc, nodes, LEVELS)}


def failing(found: dict[str, Any]) -> list[str]:
    return sorted(r for r, f in found.items() if f.status.value in ("fail", "warn"))


def run_findings(*files: Path, nodes: list[Node] | tuple[()] = ()) -> dict[str, Any]:
    ev = nccllog.read_run(list(files))
    return {f.rule: f for f in nccllog.findings(ev, "job", LEVELS, nodes)}
