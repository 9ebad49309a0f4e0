"""``sign --envelope dsse`` / ``verify`` of an envelope, checked against independent
implementations: securesystemslib's DSSE (both ways) and openssl on the documented
pre-authentication encoding; every kind of tampering refused, bad envelopes exit 2."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess

import pytest

from tests.reports.conftest import ROOT, spec_check

FACTS = ROOT / "tests/reports/fixtures/facts/small_node.json"


@pytest.fixture
def keys(tmp_path):
    assert spec_check("keygen", tmp_path / "k").returncode == 0
    return tmp_path / "k.key", tmp_path / "k.pub"


@pytest.fixture
def result(tmp_path):
    out = tmp_path / "result.json"
    assert spec_check("check", "--facts", FACTS, "--format", "json", "-o", out).returncode == 1
    return out


@pytest.fixture
def envelope(tmp_path, keys, result):
    out = tmp_path / "result.intoto.json"
    proc = spec_check("sign", result, "--key", keys[0], "--envelope", "dsse", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def verify(path, pub, *more):
    return spec_check("verify", path, "--key", pub, *more)


def _statement(env_path):
    env = json.loads(env_path.read_text())
    return env, json.loads(base64.b64decode(env["payload"]))


def test_statement_names_the_result_and_its_facts(envelope, result, keys):
    env, stmt = _statement(envelope)
    assert env["payloadType"] == "application/vnd.in-toto+json"
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    assert stmt["predicateType"].endswith("#result-" + stmt["predicate"]["schema"].rsplit("/", 1)[1])
    names = {s["name"]: s["digest"]["sha256"] for s in stmt["subject"]}
    assert names["result.json"] == hashlib.sha256(result.read_bytes()).hexdigest()
    node = json.loads(result.read_text())["subjects"][0]
    assert names[f"facts:{node['name']}"] == node["facts_digest"].split(":", 1)[1]
    assert stmt["predicate"] == json.loads(result.read_text())
    proc = verify(envelope, keys[1], "--result", result, "--facts", FACTS)
    assert proc.returncode == 0, proc.stderr
    assert "verified" in proc.stderr


def test_payload_is_rfc8785(envelope):
    import rfc8785

    raw = base64.b64decode(json.loads(envelope.read_text())["payload"])
    assert rfc8785.dumps(json.loads(raw)) == raw


def test_canonical_form_is_rfc8785():
    from validator.report.signing import canonical

    assert canonical({"b": 100.0, "a": 1e-07, "c": "\u00e9"}) == b'{"a":1e-7,"b":100,"c":"\xc3\xa9"}'


def _sslib_key(pub_path):
    from cryptography.hazmat.primitives import serialization
    from securesystemslib.signer import SSlibKey

    from validator.report.signing import fingerprint

    raw = serialization.load_pem_public_key(pub_path.read_bytes()).public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return SSlibKey(fingerprint(raw), "ed25519", "ed25519", {"public": raw.hex()})


def test_securesystemslib_verifies_spec_checks_envelope(envelope, keys):
    from securesystemslib.dsse import Envelope

    env = Envelope.from_dict(json.loads(envelope.read_text()))
    key = _sslib_key(keys[1])
    assert key.keyid in env.verify([key], 1)
    tmp = json.loads(envelope.read_text())  # a changed payload does not verify there either
    tmp["payload"] = base64.b64encode(base64.b64decode(tmp["payload"]).replace(b'"fail"', b'"pass"', 1)).decode()
    from securesystemslib.exceptions import VerificationError

    with pytest.raises(VerificationError):
        Envelope.from_dict(tmp).verify([key], 1)


def test_spec_check_verifies_securesystemslib_envelope(envelope, keys, tmp_path, result):
    from cryptography.hazmat.primitives import serialization
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    ours = json.loads(envelope.read_text())
    private = serialization.load_pem_private_key(keys[0].read_bytes(), password=None)
    signer = CryptoSigner(private, _sslib_key(keys[1]))
    env = Envelope(base64.b64decode(ours["payload"]), ours["payloadType"], {})
    env.sign(signer)
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps(env.to_dict()))
    proc = verify(theirs, keys[1], "--result", result)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_documented_openssl_verification(envelope, keys, tmp_path):
    """docs/reports.md's recipe, run as written: jq-free, base64 + printf + openssl."""
    script = (ROOT / "docs/reports.md").read_text().split("<!-- verify-dsse-openssl -->")[1].split("```sh")[1]
    script = script.split("```")[0]
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "ENVELOPE": str(envelope), "PUBKEY": str(keys[1])})
    assert proc.returncode == 0 and "Signature Verified Successfully" in proc.stdout, proc.stdout + proc.stderr
    tampered = json.loads(envelope.read_text())
    tampered["payloadType"] = "application/json"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "ENVELOPE": str(bad), "PUBKEY": str(keys[1])})
    assert proc.returncode != 0


def _rewrite(envelope, change):
    env = json.loads(envelope.read_text())
    change(env)
    envelope.write_text(json.dumps(env))


def _payload(change):
    def go(env):
        stmt = json.loads(base64.b64decode(env["payload"]))
        change(stmt)
        env["payload"] = base64.b64encode(json.dumps(stmt).encode()).decode()
    return go


@pytest.mark.parametrize("change", [
    pytest.param(_payload(lambda s: s["predicate"]["findings"][0].__setitem__("status", "pass")), id="finding"),
    pytest.param(_payload(lambda s: s["subject"][0]["digest"].__setitem__("sha256", "00" * 32)), id="subject"),
    pytest.param(lambda e: e["signatures"][0].__setitem__("sig", base64.b64encode(b"\0" * 64).decode()), id="sig"),
])
def test_tampering_exits_1(envelope, keys, change):
    _rewrite(envelope, change)
    proc = verify(envelope, keys[1])
    assert proc.returncode == 1 and "NOT VERIFIED" in proc.stderr, proc.stderr


def test_other_key_and_mismatched_subjects_exit_1(envelope, keys, tmp_path, result):
    spec_check("keygen", tmp_path / "other")
    proc = verify(envelope, tmp_path / "other.pub")
    assert proc.returncode == 1 and "another key" in proc.stderr
    changed = tmp_path / "changed.json"
    changed.write_text(result.read_text().replace('"fail"', '"pass"', 1))
    proc = verify(envelope, keys[1], "--result", changed)
    assert proc.returncode == 1 and "not among the statement's subjects" in proc.stderr
    proc = verify(envelope, keys[1], "--facts", ROOT / "tests/fixtures/facts/dgx_h100.json")
    assert proc.returncode == 1 and "matches no subject" in proc.stderr, proc.stderr


@pytest.mark.parametrize("bad", ["two-signatures", "unknown-key", "not-base64", "payload-type",
                                 "predicate-type", "not-statement"])
def test_bad_envelope_exits_2(envelope, keys, bad):
    from validator.report.envelope import sign_envelope

    env = json.loads(envelope.read_text())
    if bad == "two-signatures":
        env["signatures"].append(dict(env["signatures"][0]))
    elif bad == "unknown-key":
        env["note"] = "trust me"
    elif bad == "not-base64":
        env["payload"] = "%%% not base64 %%%"
    elif bad == "payload-type":
        env["payloadType"] = "application/json"
    elif bad == "predicate-type":  # validly signed, but not a spec-check result
        stmt = json.loads(base64.b64decode(env["payload"]))
        stmt["predicateType"] = "https://slsa.dev/provenance/v1"
        env = sign_envelope(stmt, keys[0])
    else:
        env["payload"] = base64.b64encode(b'{"hello": "world"}').decode()
    envelope.write_text(json.dumps(env))
    proc = verify(envelope, keys[1])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("spec-check: error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_legacy_canonicalization_still_verifies(tmp_path, keys, result):
    """A result signed before 0.3.0 (sorted compact json.dumps) still verifies."""
    import base64 as b64

    from cryptography.hazmat.primitives import serialization

    from validator.report.signing import DOMAIN, LEGACY_CANONICALIZATION, canonical, fingerprint

    doc = json.loads(result.read_text())
    private = serialization.load_pem_private_key(keys[0].read_bytes(), password=None)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    meta = {"algorithm": "ed25519", "key_fingerprint": fingerprint(raw),
            "canonicalization": LEGACY_CANONICALIZATION, "covers": sorted(doc)}
    sig = private.sign(DOMAIN + canonical({"result": doc, "signature": meta}, LEGACY_CANONICALIZATION))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**doc, "signature": {**meta, "value": b64.b64encode(sig).decode()}}))
    assert verify(old, keys[1]).returncode == 0
    doc["findings"][0]["status"] = "pass"
    old.write_text(json.dumps({**doc, "signature": {**meta, "value": b64.b64encode(sig).decode()}}))
    assert verify(old, keys[1]).returncode == 1


def test_passphrase_protected_key(tmp_path, result):
    env = {"SC_PASS": "correct horse"}
    assert spec_check("keygen", tmp_path / "p", "--passphrase-env", "SC_PASS", env=env).returncode == 0
    assert (tmp_path / "p.key").read_text().startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    out = tmp_path / "s.json"
    proc = spec_check("sign", result, "--key", tmp_path / "p.key", "-o", out)
    assert proc.returncode == 2 and "is encrypted" in proc.stderr and not out.exists()
    proc = spec_check("sign", result, "--key", tmp_path / "p.key", "--passphrase-env", "SC_PASS", "-o", out,
                      env={"SC_PASS": "wrong"})
    assert proc.returncode == 2 and "cannot be decrypted" in proc.stderr and not out.exists()
    pw = tmp_path / "pw"
    pw.write_text("correct horse\n")
    for how in (("--passphrase-env", "SC_PASS"), ("--passphrase-file", pw)):
        for form in ("embedded", "dsse"):
            proc = spec_check("sign", result, "--key", tmp_path / "p.key", *how, "--envelope", form, "-o", out, env=env)
            assert proc.returncode == 0, proc.stderr
            assert verify(out, tmp_path / "p.pub").returncode == 0
