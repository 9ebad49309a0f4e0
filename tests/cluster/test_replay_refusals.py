"""Issue 24: a replay (``cluster --facts``) refuses what a live run refuses, itemized and
folded alike: a saved cluster document whose name is a host's, an empty fleet, a host
listed twice, and recorded values of the wrong type or out of range (each an error naming
the file and the field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.helpers import fake_remote, run_cluster


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cluster --save-facts of a live (local transport) run over n01 and n02."""
    tmp = tmp_path_factory.mktemp("saved")
    out = tmp / "saved"
    rc, live, err = run_cluster(tmp, "--transport", "local", "--hosts", "n01,n02", "--select", "PLAT-02",
                                "--remote-command", fake_remote(tmp, {"n01": "gpu", "n02": "gpu"}),
                                "--save-facts", str(out))
    assert live is not None and rc == 0, err
    return out


def _edited(saved: Path, tmp: Path, edit: Any) -> Path:
    doc = json.loads((saved / "cluster.json").read_text())
    edit(doc)
    path = tmp / "cluster.json"
    path.write_text(json.dumps(doc))
    return path


def _replay(tmp: Path, *facts: Path, passes: str) -> tuple[int, Any, str]:
    out = tmp / f"replay-{passes}"
    out.mkdir(exist_ok=True)
    return run_cluster(out, *[a for f in facts for a in ("--facts", str(f))], "--passes", passes,
                       "--select", "PLAT-02,NET-01")


def _named(doc: dict) -> None:
    doc["subject"]["name"] = "n01"


def _empty(doc: dict) -> None:
    doc["facts"]["cluster.probes"]["items"] = []
    doc["facts"]["cluster.hosts"]["items"] = []


def _twice(doc: dict) -> None:
    doc["facts"]["cluster.probes"]["items"].append(doc["facts"]["cluster.probes"]["items"][0])


def _pairs(value: Any) -> Any:
    def edit(doc: dict) -> None:
        doc["facts"]["cluster.measured"] = {"value": True}
        doc["facts"]["cluster.pairs"] = {"items": [
            {"id": "n01->n02", "fields": {"throughput": {"value": value, "unit": "Gb/s"}}},
            {"id": "n02->n01", "fields": {"throughput": {"value": 390.5, "unit": "Gb/s"}}},
        ]}
    return edit


CASES = {
    "name-of-a-host": (_named, True, 'host "n01" has the cluster subject\'s name'),
    "empty-fleet": (_empty, False, "no hosts"),
    "host-twice": (_twice, True, 'facts["cluster.probes"].items[2].id: host "n01" listed twice'),
    "text-throughput": (_pairs("fast"), True,
                        'facts["cluster.pairs"].items[0].fields.throughput.value: expected a number, got "fast"'),
    "bool-throughput": (_pairs(True), True, "throughput.value: expected a number, got bool"),
    "negative-throughput": (_pairs(-5), True, "throughput.value: -5 is out of range"),
}


@pytest.mark.parametrize("passes", ["itemize", "fold"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_replay_refuses_what_a_live_run_refuses(saved: Path, tmp_path: Path, case: str, passes: str) -> None:
    edit, with_nodes, needle = CASES[case]
    cluster = _edited(saved, tmp_path, edit)
    nodes = (saved / "n01.json", saved / "n02.json") if with_nodes else ()
    rc, result, err = _replay(tmp_path, cluster, *nodes, passes=passes)
    lines = [ln for ln in err.splitlines() if ln.startswith("spec-check: error")]
    assert rc == 2 and result is None, (rc, err)
    assert len(lines) == 1 and str(cluster) in lines[0] and needle in lines[0], err
    assert "internal error" not in err


def test_a_throughput_of_1e400_is_refused_never_written_as_infinity(saved: Path, tmp_path: Path) -> None:
    cluster = _edited(saved, tmp_path, _pairs(1e300))
    cluster.write_text(cluster.read_text().replace("1e+300", "1e400"))
    rc, result, err = _replay(tmp_path, cluster, saved / "n01.json", saved / "n02.json", passes="itemize")
    assert rc == 2 and result is None, err
    assert "throughput.value: 1e400 is beyond any real value" in err and str(cluster) in err
