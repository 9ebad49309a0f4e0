"""Signed evidence: Ed25519 signatures over a canonical form of a JSON result.

A provider hands a customer ``result.signed.json``; the customer verifies it with the
provider's public key and knows that no finding, no facts digest and no rule-pack digest
was changed after the run. What is signed:

* the whole result document except the ``signature`` block (so the findings, every
  ``subjects[].facts_digest``, ``rule_pack.digest``, the parameters, the summary and the
  timestamps), together with the signature block's own metadata (algorithm, key
  fingerprint, covered keys) — nothing in the file can change without breaking it;
* in canonical form: the JSON Canonicalization Scheme of RFC 8785 (``rfc8785``, a
  library other verifiers have in their own languages), prefixed with a domain tag so a
  signature over a result can never be replayed as a signature over anything else.
  Re-indenting the file does not break the signature; changing any value does. Results
  signed before 0.3.0 name ``spec-check/canonical-json/1`` (Python's sorted compact
  ``json.dumps``) and still verify under it.

The in-toto/DSSE form of the same evidence is ``validator/report/envelope.py``.
``cryptography`` is imported here only, and only when a key is used.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from validator.errors import SpecCheckError
from validator.io.atomic import write_atomic

if TYPE_CHECKING:  # cryptography is imported only where a key is read
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    from validator.report.model import JSONValue

ALGORITHM = "ed25519"
CANONICALIZATION = "RFC8785"  # the JSON Canonicalization Scheme (what new signatures use)
LEGACY_CANONICALIZATION = "spec-check/canonical-json/1"  # sorted keys, compact, UTF-8 (0.1.0-0.2.x)
DOMAIN = b"spec-check/signed-result/1\n"
SIGNED_KEYS_NOTE = "the whole result except signature.value"


class KeyFileError(SpecCheckError):
    """A key file that is missing, unreadable or not the expected kind of key."""


def canonical(obj: JSONValue, scheme: str = CANONICALIZATION) -> bytes:
    """The bytes a signature covers: RFC 8785 (JCS), or for a result signed before 0.3.0
    the sorted compact ``json.dumps`` it was signed over. NaN and infinities are refused
    (ValueError) by both."""
    if scheme == LEGACY_CANONICALIZATION:
        return json.dumps(
            obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")
    import rfc8785

    try:
        return rfc8785.dumps(obj)
    except rfc8785.CanonicalizationError as exc:  # NaN, infinities, integers past 2**53
        raise ValueError(str(exc)) from None


def payload(document: dict[str, JSONValue], meta: dict[str, JSONValue]) -> bytes:
    body = {k: v for k, v in document.items() if k != "signature"}
    scheme = meta.get("canonicalization")
    return DOMAIN + canonical({"result": body, "signature": meta},
                              LEGACY_CANONICALIZATION if scheme == LEGACY_CANONICALIZATION else CANONICALIZATION)


def fingerprint(raw_public: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw_public).hexdigest()


def keygen(prefix: str, *, force: bool = False, passphrase: bytes | None = None) -> tuple[Path, Path]:
    """Write PREFIX.key (PKCS#8 PEM, mode 0600; encrypted with ``passphrase`` when one is
    given, by the best scheme ``cryptography`` has) and PREFIX.pub (SubjectPublicKeyInfo PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key_path, pub_path = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
    for p in (key_path, pub_path):
        if p.exists() and not force:
            raise SpecCheckError(
                "already exists; refusing to overwrite a key (use --force)", file=str(p)
            )
    key = Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase) if passphrase else serialization.NoEncryption()
    )
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    write_atomic(key_path, private_pem, mode=0o600)
    write_atomic(pub_path, public_pem, mode=0o644)
    return key_path, pub_path


def _read_key_bytes(path: Path) -> bytes:
    from validator.io.safeio import CAPS, InputError, read_bytes

    try:
        return read_bytes(path, cap=CAPS["key"], what="key file")
    except InputError as exc:
        raise KeyFileError(exc.problem, file=str(path)) from None


def load_private_key(path: Path, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _read_key_bytes(path)
    if b"PUBLIC KEY" in data:
        raise KeyFileError("is a public key; sign with the private PREFIX.key", file=str(path))
    encrypted = b"ENCRYPTED PRIVATE KEY" in data
    if encrypted and not passphrase:
        raise KeyFileError("is encrypted; give its passphrase with --passphrase-env NAME or "
                           "--passphrase-file FILE", file=str(path))
    try:
        key = serialization.load_pem_private_key(data, password=passphrase if encrypted else None)
    except (ValueError, TypeError) as exc:
        if encrypted:
            raise KeyFileError("cannot be decrypted with this passphrase (or is damaged)", file=str(path)) from None
        raise KeyFileError(f"not a PEM private key ({exc})", file=str(path)) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"not an Ed25519 key ({type(key).__name__})", file=str(path))
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read_key_bytes(path)
    if b"PRIVATE KEY" in data:
        raise KeyFileError("is a private key; verify with the public PREFIX.pub", file=str(path))
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"not a PEM public key ({exc})", file=str(path)) from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"not an Ed25519 key ({type(key).__name__})", file=str(path))
    return key


def raw_public(public_key: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    raw: bytes = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def sign_document(document: dict[str, JSONValue], key_path: Path,
                  passphrase: bytes | None = None) -> dict[str, JSONValue]:
    """The document with a ``signature`` block (an existing one is replaced)."""
    from validator.clock import now_utc

    key = load_private_key(key_path, passphrase)
    body = {k: v for k, v in document.items() if k != "signature"}
    meta = {
        "algorithm": ALGORITHM,
        "key_fingerprint": fingerprint(raw_public(key.public_key())),
        "canonicalization": CANONICALIZATION,
        "covers": sorted(body),
        "signed_at": now_utc(),  # shown by the HTML report beside the key fingerprint
        "note": f"signed: {SIGNED_KEYS_NOTE}; includes findings, subjects[].facts_digest, rule_pack.digest",
    }
    try:
        sig = key.sign(payload(body, meta))
    except ValueError as exc:  # NaN or Infinity in the document: not canonical JSON
        raise SpecCheckError(f"cannot sign: {exc}") from None
    return {**body, "signature": {**meta, "value": base64.b64encode(sig).decode("ascii")}}


def verify_document(document: JSONValue, key_path: Path, where: str) -> str | None:
    """None when intact; otherwise why not. Unusable input raises SpecCheckError (exit 2)."""
    from cryptography.exceptions import InvalidSignature

    from validator.versions import unreadable

    key = load_public_key(key_path)  # a bad key is an exit-2 error before anything else
    if not isinstance(document, dict):
        raise SpecCheckError("not a spec-check result (no result schema)", file=where)
    why = unreadable("result", document.get("schema"))  # a result signed by an older version verifies
    if why:
        raise SpecCheckError(why, file=where)
    if "signature" not in document:
        # a result handed over as signed whose signature is gone: not intact (exit 1), the
        # same as any other change; stripping the block must not look like a usage error
        return "no signature block (removed, or the result was never signed)"
    block = document["signature"]
    if not isinstance(block, dict):
        return "the signature block is not an object"
    if block.get("algorithm") != ALGORITHM:
        return f'signature algorithm is "{block.get("algorithm")}", not {ALGORITHM}'
    if block.get("canonicalization") not in (CANONICALIZATION, LEGACY_CANONICALIZATION):
        return (f'canonicalization is "{block.get("canonicalization")}", not {CANONICALIZATION} '
                f"(or {LEGACY_CANONICALIZATION})")
    try:
        sig = base64.b64decode(str(block.get("value", "")), validate=True)
    except ValueError:
        return "the signature value is not base64"
    want = fingerprint(raw_public(key))
    if block.get("key_fingerprint") != want:
        return f"signed by another key ({block.get('key_fingerprint')}, this key is {want})"
    body = {k: v for k, v in document.items() if k != "signature"}
    meta = {k: v for k, v in block.items() if k != "value"}
    if sorted(body) != block.get("covers"):
        return "the result's top-level keys differ from those signed"
    try:
        key.verify(sig, payload(body, meta))
    except InvalidSignature:
        return "the signature does not match the content (the result was changed after signing)"
    except ValueError as exc:
        return f"the content is not canonical JSON ({exc})"
    return None


def check_facts(document: dict[str, JSONValue], facts_path: Path) -> str | None:
    """None when the facts file's digest is one of the result's subjects' ``facts_digest``;
    otherwise why not. The digest is ``sha256:`` + the hex SHA-256 of the document's
    ``facts`` object as JSON with keys sorted, separators ``,`` and ``:``, ASCII escapes
    (``validator.facts.document.digest``): so a customer can check that the facts they
    were given are the ones the signed verdict was reached on."""
    import hashlib

    from validator.facts.document import digest, read

    doc, raw = read(facts_path)  # an unreadable or invalid facts file: exit 2
    got = digest(doc)
    # a streamed fleet replay (cluster --facts, passes folded) records the file's own bytes
    as_file = "sha256-file:" + hashlib.sha256(raw).hexdigest()
    subjects = [s for s in document.get("subjects", []) if isinstance(s, dict)]
    if any(s.get("facts_digest") in (got, as_file) for s in subjects):
        return None
    name = (doc.get("subject") or {}).get("name")
    same = [s for s in subjects if s.get("name") == name]
    if same:
        return (
            f"{facts_path}: facts digest {got} differs from subject {name}'s "
            f"{same[0].get('facts_digest')} (the facts were changed)"
        )
    return f"{facts_path}: facts digest {got} matches no subject of the result"
