"""OSCAL: ``spec export --format oscal-catalog`` and ``--format oscal`` assessment results,
validated against NIST's published JSON schemas (usnistgov/OSCAL v1.0.6, pinned in
tests/fixtures/oscal/MANIFEST.tsv) and loaded by compliance-trestle's models."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest

from tests.reports.conftest import ROOT, spec_check

SCHEMAS = ROOT / "tests/fixtures/oscal"
FACTS = ROOT / "tests/fixtures/facts"
CORPUS = ROOT.parent / "shared/corpus"


def _validator(name: str):
    """NIST's schema with ECMAScript regular expressions (``\\p{L}`` in its token
    pattern), as JSON Schema specifies them: regress, not Python's re."""
    import jsonschema
    import regress
    from jsonschema import Draft7Validator, validators

    def pattern(validator, patrn, instance, schema):
        if validator.is_type(instance, "string") and regress.Regex(patrn, "u").find(instance) is None:
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    schema = json.loads((SCHEMAS / f"oscal_{name}_schema.json").read_text())
    return validators.extend(Draft7Validator, {"pattern": pattern})(
        schema, format_checker=Draft7Validator.FORMAT_CHECKER)


def _errors(name, doc):
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in _validator(name).iter_errors(doc)]


def test_schemas_are_the_pinned_nist_files():
    with (SCHEMAS / "MANIFEST.tsv").open() as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            assert hashlib.sha256((SCHEMAS / row["file"]).read_bytes()).hexdigest() == row["sha256"]


def test_the_validator_rejects_what_nist_rejects():
    assert _errors("catalog", {"catalog": {"uuid": "not-a-uuid", "metadata": {}}})
    assert _errors("assessment-results", {"assessment-results": {"uuid": "x"}})


def test_catalog(tmp_path):
    from trestle.oscal.catalog import Catalog

    out = tmp_path / "cat.json"
    proc = spec_check("spec", "export", "--format", "oscal-catalog", "-o", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert _errors("catalog", doc) == []
    cat = Catalog.model_validate(doc["catalog"])
    spec = json.loads(spec_check("spec", "show", "--format", "json").stdout)
    reqs = spec["requirements"] if isinstance(spec, dict) else spec
    assert [c.id for c in cat.controls] == [r["id"] for r in reqs]
    net01 = next(c for c in doc["catalog"]["controls"] if c["id"] == "NET-01")
    assert {"name": "level", "ns": net01["props"][0]["ns"], "value": "MUST"} in net01["props"]
    rate = next(p for p in net01["params"] if p["id"] == "NET-01_fabric_port_rate")
    assert rate["values"] == ["400 Gb/s"] or rate["values"][0].startswith("400")


def _oscal(*args):
    proc = spec_check(*args, "--format", "oscal")
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert _errors("assessment-results", doc) == []
    from trestle.oscal.assessment_results import AssessmentResults

    AssessmentResults.model_validate(doc["assessment-results"])
    return doc["assessment-results"]["results"][0], proc


def test_check_results():
    result, _ = _oscal("check", "--facts", FACTS / "dgx_h100_ecc_off.json")
    findings = {f["target"]["target-id"]: f for f in result["findings"]}
    assert findings["MEM-01"]["target"]["status"]["state"] == "not-satisfied"
    reviewed = [c["control-id"] for c in result["reviewed-controls"]["control-selections"][0]["include-controls"]]
    assert set(reviewed) == set(findings)
    assert "JOB" not in " ".join(reviewed) and "CKPT-01" not in reviewed  # a node check reviews node controls
    obs = {o["uuid"]: o for o in result["observations"]}
    for f in findings.values():
        assert all(r["observation-uuid"] in obs for r in f["related-observations"])
    ecc = [o for o in result["observations"] if any(p["value"] == "MEM-01.ecc-disabled" for p in o["props"])]
    assert ecc and "observed" in ecc[0]["relevant-evidence"][0]["description"]
    assert all(o["collected"] == "2026-11-22T00:00:00Z" or o["collected"].endswith("Z") for o in ecc)


def test_not_judged_is_never_satisfied():
    result, _ = _oscal("check", "--facts", FACTS / "dgx_h100.json")
    for f in result["findings"]:
        judged = next(p["value"] for p in f["props"] if p["name"] == "judged")
        if judged == "false":
            assert f["target"]["status"]["state"] == "not-satisfied"
            assert "not judged" in f["description"]


def test_lint_and_merged_and_waivers(tmp_path):
    job = next(iter(sorted((CORPUS / "hf_trainer_yaml").glob("*.yaml"))))
    result, _ = _oscal("lint", job)
    assert any(i["props"][0]["value"] == "job" for i in result["local-definitions"]["inventory-items"])
    node = tmp_path / "node.json"
    assert spec_check("check", "--facts", FACTS / "dgx_h100_ecc_off.json", "--format", "json", "-o", node).returncode == 1
    name = json.loads(node.read_text())["subjects"][0]["name"]
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(f"waivers:\n  - id: MEM-01.ecc-disabled\n    subject: {name}\n"
                       "    justification: ECC off for a bandwidth experiment (ticket OPS-1)\n"
                       "    approver: ops-lead@example.com\n    expires: 2099-01-31\n")
    result, _ = _oscal("report", node, "--waivers", waivers)
    risks = {next(p["value"] for p in r["props"] if p["name"] == "waiver-id"): r for r in result["risks"]}
    ecc = risks["MEM-01.ecc-disabled"]
    assert ecc["status"] == "deviation-approved"
    assert "justification: ECC off" in ecc["description"] and "expires: 2099-01-31" in ecc["description"]
    obs = {o["uuid"] for o in result["observations"]}
    assert all(r["observation-uuid"] in obs for r in ecc["related-observations"])


def test_same_result_same_document(tmp_path):
    node = tmp_path / "node.json"
    spec_check("check", "--facts", FACTS / "dgx_h100.json", "--format", "json", "-o", node)
    a = spec_check("report", node, "--format", "oscal").stdout
    b = spec_check("report", node, "--format", "oscal").stdout
    assert a == b and a


@pytest.mark.parametrize("kind", ["assessment-results", "catalog"])
def test_an_oscal_document_is_not_a_result(tmp_path, kind):
    doc = tmp_path / "x.json"
    doc.write_text(json.dumps({kind: {"uuid": "6be28494-ca7c-5f07-8938-de65cd01cbd4"}}))
    proc = spec_check("report", doc)
    assert proc.returncode == 2 and f"an OSCAL {kind} document" in proc.stderr and proc.stderr.count("\n") == 1
