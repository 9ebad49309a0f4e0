"""``report`` and ``diff`` verify a signed input before presenting it as signed: a tampered
result is refused with ``--key``, shown as "signature not verified" without it, never as a
signed result; a merged report records each input's digest, signer and verification."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.reports.conftest import ROOT, spec_check

FACTS = ROOT / "tests/fixtures/facts"


@pytest.fixture
def signed(tmp_path):
    assert spec_check("keygen", tmp_path / "p").returncode == 0
    result = tmp_path / "node.json"
    assert spec_check("check", "--facts", FACTS / "dgx_h100_ecc_off.json", "--format", "json", "-o", result).returncode == 1
    out = tmp_path / "node.signed.json"
    assert spec_check("sign", result, "--key", tmp_path / "p.key", "-o", out).returncode == 0
    return out


def _tamper(signed):
    """One ECC fail edited to pass: the signature no longer matches."""
    doc = json.loads(signed.read_text())
    ecc = next(f for f in doc["findings"] if f["status"] == "fail")
    ecc["status"] = "pass"
    doc["summary"]["conformant"] = True
    signed.write_text(json.dumps(doc, indent=2))


def test_verified_banner_only_after_verification(signed, tmp_path):
    page = tmp_path / "p.html"
    assert spec_check("report", signed, "--key", tmp_path / "p.pub", "--format", "html", "-o", page).returncode == 0
    assert "Signed result, signature verified" in page.read_text()
    assert spec_check("report", signed, "--format", "html", "-o", page).returncode == 0
    html = page.read_text()
    assert "Signature not verified" in html and "Signed result" not in html


def test_tampered_result_is_refused_or_marked(signed, tmp_path):
    _tamper(signed)
    page = tmp_path / "p.html"
    proc = spec_check("report", signed, "--key", tmp_path / "p.pub", "--format", "html", "-o", page)
    assert proc.returncode == 2 and "NOT VERIFIED" in proc.stderr and not page.exists()
    assert proc.stderr.count("\n") == 1
    assert spec_check("report", signed, "--format", "html", "-o", page).returncode == 0
    assert "Signed result" not in page.read_text() and "Signature not verified" in page.read_text()
    proc = spec_check("diff", signed, signed, "--key", tmp_path / "p.pub")
    assert proc.returncode == 2 and "NOT VERIFIED" in proc.stderr
    proc = spec_check("diff", signed, signed)
    assert proc.returncode == 0 and "signature not verified" in proc.stderr


def test_merge_records_each_input(signed, tmp_path):
    other = tmp_path / "other.json"
    assert spec_check("check", "--facts", FACTS / "dgx_h100.json", "--format", "json", "-o", other).returncode == 0
    proc = spec_check("report", signed, other, "--key", tmp_path / "p.pub", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    inputs = json.loads(proc.stdout)["extra"]["inputs"]
    assert [i["file"] for i in inputs] == ["node.signed.json", "other.json"]
    assert inputs[0]["sha256"] == hashlib.sha256(signed.read_bytes()).hexdigest()
    assert inputs[0]["signature"] == "verified" and inputs[0]["key_fingerprint"].startswith("sha256:")
    assert inputs[1]["signature"] == "none"
    _tamper(signed)
    proc = spec_check("report", signed, other, "--key", tmp_path / "p.pub", "--format", "json")
    assert proc.returncode == 2 and "NOT VERIFIED" in proc.stderr and proc.stdout == ""
    proc = spec_check("report", signed, other, "--format", "json")
    assert json.loads(proc.stdout)["extra"]["inputs"][0]["signature"] == "not verified"
