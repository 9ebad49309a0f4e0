"""Every finding of a JSON result has an ID stable across runs (rule, subject, item): the
same in next month's result whatever its status or value, unique within a result, and the
one SARIF's partialFingerprints and diff carry."""

from __future__ import annotations

import json

from tests.reports.conftest import ROOT, spec_check
from validator.report.model import finding_id

FACTS = ROOT / "tests/fixtures/facts"


def _ids(tmp_path, facts, name):
    out = tmp_path / name
    spec_check("check", "--facts", FACTS / facts, "--format", "json", "-o", out)
    doc = json.loads(out.read_text())
    return {(f["rule"], f["subject"], f["item"]): (f["id"], f["status"]) for f in doc["findings"]}, doc


def test_ids_are_stable_and_unique(tmp_path):
    ok, doc = _ids(tmp_path, "dgx_h100.json", "a.json")
    again, _ = _ids(tmp_path, "dgx_h100.json", "b.json")
    assert {k: v[0] for k, v in ok.items()} == {k: v[0] for k, v in again.items()}
    ids = [f["id"] for f in doc["findings"]]
    assert len(ids) == len(set(ids))
    for (rule, subject, item), (fid, _) in ok.items():
        assert fid == finding_id(rule, subject, item)


def test_an_id_survives_a_change_of_status(tmp_path):
    ok, _ = _ids(tmp_path, "dgx_h100.json", "a.json")
    off, _ = _ids(tmp_path, "dgx_h100_ecc_off.json", "b.json")
    same = [k for k in ok if k in off and ok[k][1] != off[k][1]]
    assert same, "ECC off changes some verdicts"
    assert all(ok[k][0] == off[k][0] for k in same)


def test_sarif_fingerprints_are_the_ids(tmp_path):
    _, doc = _ids(tmp_path, "dgx_h100_ecc_off.json", "a.json")
    proc = spec_check("report", tmp_path / "a.json", "--format", "sarif")
    sarif = json.loads(proc.stdout)
    fps = {r["partialFingerprints"]["specCheckFinding/v1"] for r in sarif["runs"][0]["results"]}
    assert fps and fps <= {f["id"] for f in doc["findings"]}


def test_repeated_rule_subject_item_get_distinct_ids():
    from validator.report.model import Finding, Level, Status, finding_ids

    f = Finding("PREC-02.unknown-key", "PREC-02", Level.MUST, Status.FAIL, "job", "", "m", "")
    a, b = finding_ids([f, f])
    assert a == finding_id(f.rule, f.subject, None) and b == finding_id(f.rule, f.subject, "#2") and a != b
