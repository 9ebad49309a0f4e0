"""keygen / sign / verify: a roundtrip verifies; any change to covered content exits 1;
unusable input (bad key, unsigned file) exits 2."""

from __future__ import annotations

import json
import stat

import pytest

from tests.reports.conftest import ROOT, spec_check
from validator.report.signing import canonical


@pytest.fixture
def keys(tmp_path):
    proc = spec_check("keygen", tmp_path / "k")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "k.key", tmp_path / "k.pub"


@pytest.fixture
def signed(tmp_path, keys, result_file):
    out = tmp_path / "signed.json"
    proc = spec_check("sign", result_file, "--key", keys[0], "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def verify(path, pub):
    return spec_check("verify", path, "--key", pub)


def test_keygen_files(keys, tmp_path):
    key, pub = keys
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
    assert pub.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    again = spec_check("keygen", tmp_path / "k")
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr


def test_roundtrip(signed, keys, result_file):
    proc = verify(signed, keys[1])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(signed.read_text())
    sig = data.pop("signature")
    assert data == json.loads(result_file.read_text())  # the result itself is unchanged
    assert sig["algorithm"] == "ed25519" and sig["key_fingerprint"].startswith("sha256:")
    assert {"findings", "subjects", "rule_pack"} <= set(sig["covers"])
    # formatting is not content: re-indented, the file still verifies
    signed.write_text(json.dumps({**data, "signature": sig}, indent=None))
    assert verify(signed, keys[1]).returncode == 0


def tamper(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: d["findings"][1].__setitem__("status", "pass"), id="finding-status"),
        pytest.param(
            lambda d: d["subjects"][0].__setitem__("facts_digest", "sha256:" + "00" * 32),
            id="facts-digest",
        ),
        pytest.param(
            lambda d: d["rule_pack"].__setitem__("digest", "sha256:" + "cd" * 32),
            id="rule-pack-digest",
        ),
        pytest.param(lambda d: d["findings"][0].__setitem__("observed", "401 Gb/s"), id="observed"),
        pytest.param(lambda d: d["findings"].pop(), id="finding-removed"),
        pytest.param(lambda d: d.__setitem__("injected", 1), id="key-added"),
        pytest.param(lambda d: d["summary"].__setitem__("conformant", True), id="summary"),
        pytest.param(lambda d: d["signature"].__setitem__("covers", ["findings"]), id="covers"),
        pytest.param(
            lambda d: d["signature"].__setitem__("value", d["signature"]["value"][:-4] + "AAA="),
            id="signature-bytes",
        ),
    ],
)
def test_any_change_exits_1(signed, keys, change):
    tamper(signed, change)
    proc = verify(signed, keys[1])
    assert proc.returncode == 1, proc.stderr
    assert "NOT VERIFIED" in proc.stderr


def test_duplicate_key_exits_1(signed, keys):
    """A second "status" before the signed one: Python reads the last, other parsers the first."""
    text = signed.read_text()
    first = text.index('"status": ')
    signed.write_text(text[:first] + '"status": "pass", ' + text[first:])
    proc = verify(signed, keys[1])
    assert proc.returncode == 1 and "appears twice" in proc.stderr


def test_every_byte_is_covered(signed, keys):
    """Flip each character of the canonical content of one finding: never verifies."""
    from validator.report.signing import verify_document

    data = json.loads(signed.read_text())
    text = canonical(data["findings"][0]).decode()
    for i in range(0, len(text), max(1, len(text) // 25)):
        ch = text[i]
        if not ch.isalnum():
            continue
        mutated = text[:i] + ("x" if ch != "x" else "y") + text[i + 1 :]
        try:
            finding = json.loads(mutated)
        except json.JSONDecodeError:
            continue
        assert (
            verify_document({**data, "findings": [finding, *data["findings"][1:]]}, keys[1], "t")
            is not None
        )


def test_other_key_exits_1(signed, tmp_path):
    spec_check("keygen", tmp_path / "other")
    proc = verify(signed, tmp_path / "other.pub")
    assert proc.returncode == 1 and "another key" in proc.stderr


@pytest.mark.parametrize(
    "what", ["private-as-public", "garbage-key", "missing-key", "facts-not-result", "not-json"]
)
def test_unusable_input_exits_2(signed, keys, tmp_path, result_file, what):
    target, key = signed, keys[1]
    if what == "private-as-public":
        key = keys[0]
    elif what == "garbage-key":
        key = tmp_path / "garbage.pub"
        key.write_text("-----BEGIN PUBLIC KEY-----\nnot base64!\n-----END PUBLIC KEY-----\n")
    elif what == "missing-key":
        key = tmp_path / "nope.pub"
    elif what == "facts-not-result":
        target = ROOT / "tests/reports/fixtures/facts/small_node.json"
    else:
        target = tmp_path / "trunc.json"
        target.write_text(signed.read_text()[:200])
    proc = verify(target, key)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("spec-check: error: ") and proc.stderr.count("\n") == 1


def test_sign_rejects_bad_input(tmp_path, keys, result_file):
    proc = spec_check("sign", result_file, "--key", keys[1])  # a public key cannot sign
    assert proc.returncode == 2 and "public key" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "spec-check/facts/1"}')
    proc = spec_check("sign", bad, "--key", keys[0])
    assert proc.returncode == 2 and "not a spec-check result" in proc.stderr


def test_signing_imports_cryptography_lazily():
    proc = spec_check("--help")
    assert proc.returncode == 0
    import subprocess
    import sys

    code = (
        "import sys, validator.cli.signing, validator.report.signing; print('cryptography' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_signed_result_still_renders(signed):
    proc = spec_check("report", signed, "--format", "markdown")
    assert proc.returncode == 0 and proc.stdout.startswith("### spec-check cluster")


@pytest.mark.parametrize("change", ["removed", "algorithm", "canonicalization", "not-object"])
def test_stripped_or_altered_signature_block_is_not_intact(signed, keys, tmp_path, change):
    doc = json.loads(signed.read_text())
    if change == "removed":
        del doc["signature"]
    elif change == "not-object":
        doc["signature"] = "trust me"
    else:
        doc["signature"][change] = "none"
    target = tmp_path / "tampered.json"
    target.write_text(json.dumps(doc))
    proc = verify(target, keys[1])
    assert proc.returncode == 1, proc.stderr
    assert "NOT VERIFIED" in proc.stderr and "Traceback" not in proc.stderr


def test_verify_facts_digest(tmp_path, keys):
    facts = ROOT / "tests/reports/fixtures/facts/small_node.json"
    result = tmp_path / "r.json"
    assert spec_check("check", "--facts", facts, "--format", "json", "-o", result).returncode in (0, 1)
    out = tmp_path / "r.signed.json"
    assert spec_check("sign", result, "--key", keys[0], "-o", out).returncode == 0
    ok = spec_check("verify", out, "--key", keys[1], "--facts", facts)
    assert ok.returncode == 0 and "1 facts file(s) match" in ok.stderr
    doc = json.loads(facts.read_text())
    first = next(iter(doc["facts"]))
    doc["facts"][first] = {"value": "edited", "source": "a text editor"}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    bad = spec_check("verify", out, "--key", keys[1], "--facts", edited)
    assert bad.returncode == 1 and "facts were changed" in bad.stderr
    missing = spec_check("verify", out, "--key", keys[1], "--facts", tmp_path / "nope.json")
    assert missing.returncode == 2
