"""Signed evidence: Ed25519 signatures over a canonical form of a JSON result.

A provider hands a customer ``result.signed.json``; the customer verifies it with the
provider's public key and knows that no finding, no facts digest and no rule-pack digest
was changed after the run. What is signed:

* the whole result document except the ``signature`` block (so the findings, every
  ``subjects[].facts_digest``, ``rule_pack.digest``, the parameters, the summary and the
  timestamps), together with the signature block's own metadata (algorithm, key
  fingerprint, covered keys) — nothing in the file can change without breaking it;
* in canonical form: UTF-8 JSON with keys sorted, no whitespace (``separators=(",",
  ":")``), non-ASCII kept as is; prefixed with a domain tag so a signature over a result
  can never be replayed as a signature over anything else. Re-indenting the file does
  not break the signature; changing any value does.

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
CANONICALIZATION = "spec-check/canonical-json/1"  # sorted keys, compact, UTF-8
DOMAIN = b"spec-check/signed-result/1\n"
SIGNED_KEYS_NOTE = "the whole result except signature.value"


class KeyFileError(SpecCheckError):
    """A key file that is missing, unreadable or not the expected kind of key."""


def canonical(obj: JSONValue) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def payload(document: dict[str, JSONValue], meta: dict[str, JSONValue]) -> bytes:
    body = {k: v for k, v in document.items() if k != "signature"}
    return DOMAIN + canonical({"result": body, "signature": meta})


def fingerprint(raw_public: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw_public).hexdigest()


def keygen(prefix: str, *, force: bool = False) -> tuple[Path, Path]:
    """Write PREFIX.key (PKCS#8 PEM, mode 0600) and PREFIX.pub (SubjectPublicKeyInfo PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key_path, pub_path = Path(f"{prefix}.key"), Path(f"{prefix}.pub")
    for p in (key_path, pub_path):
        if p.exists() and not force:
            raise SpecCheckError(
                "already exists; refusing to overwrite a key (use --force)", file=str(p)
            )
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
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


def load_private_key(path: Path) -> Ed25519PrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _read_key_bytes(path)
    if b"PUBLIC KEY" in data:
        raise KeyFileError("is a public key; sign with the private PREFIX.key", file=str(path))
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise KeyFileError(f"not an unencrypted PEM private key ({exc})", file=str(path)) from None
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


def _raw_public(public_key: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    raw: bytes = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw


def sign_document(document: dict[str, JSONValue], key_path: Path) -> dict[str, JSONValue]:
    """The document with a ``signature`` block (an existing one is replaced)."""
    from validator.clock import now_utc

    key = load_private_key(key_path)
    body = {k: v for k, v in document.items() if k != "signature"}
    meta = {
        "algorithm": ALGORITHM,
        "key_fingerprint": fingerprint(_raw_public(key.public_key())),
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
    if block.get("canonicalization") != CANONICALIZATION:
        return f'canonicalization is "{block.get("canonicalization")}", not {CANONICALIZATION}'
    try:
        sig = base64.b64decode(str(block.get("value", "")), validate=True)
    except ValueError:
        return "the signature value is not base64"
    want = fingerprint(_raw_public(key))
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
