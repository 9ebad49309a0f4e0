"""Signed evidence in the field's form: an in-toto Statement v1 in a DSSE envelope.

A customer's supply-chain tooling (cosign, in-toto, policy engines, securesystemslib)
reads DSSE envelopes, not spec-check's own ``signature`` block. ``spec-check sign
--envelope dsse`` writes one:

* the **payload** is an in-toto Statement v1 (https://in-toto.io/Statement/v1) in RFC 8785
  canonical JSON: its ``subject`` lists, by SHA-256, the result file as given to ``sign``
  and every facts document or job the result judged (each subject's ``facts_digest``:
  ``facts:NAME`` for the canonical facts object, ``facts-file:NAME`` for a file's bytes,
  ``job:NAME`` for a job's facts), plus any file named with ``--subject``; its
  ``predicateType`` names spec-check's result format and version; its ``predicate`` is
  the result itself (without an embedded signature block);
* ``payloadType`` is ``application/vnd.in-toto+json``;
* one signature, Ed25519 over DSSE's pre-authentication encoding
  ``PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, with ``keyid``
  the key's fingerprint (``sha256:`` + hex SHA-256 of the raw public key).

What ``verify`` refuses (exit 2, unusable input): more than one signature, keys DSSE or
in-toto do not define, a payload that is not base64 or not a Statement, a predicate type
that is not spec-check's. What it reports NOT VERIFIED (exit 1): a signature that does not
match (payload, payloadType or key changed), a ``--facts``/``--result`` file whose digest
is not among the subjects, a predicate whose result is not the one the statement names.
Spec: https://github.com/secure-systems-lab/dsse/blob/v1.0.2/protocol.md and
https://github.com/in-toto/attestation/blob/v1.1.1/spec/v1/statement.md.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from validator.errors import SpecCheckError
from validator.report.signing import canonical, fingerprint, load_private_key, load_public_key, raw_public
from validator.versions import RESULT_SCHEMA

if TYPE_CHECKING:
    from validator.report.model import JSONValue

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_PREFIX = "https://github.com/spec-check/spec-check/blob/main/docs/reports.md#result-"
ENVELOPE_KEYS = frozenset({"payload", "payloadType", "signatures"})
SIGNATURE_KEYS = frozenset({"keyid", "sig"})
STATEMENT_KEYS = frozenset({"_type", "subject", "predicateType", "predicate"})


def predicate_type(schema: str = RESULT_SCHEMA) -> str:
    """``spec-check/result/2`` -> ``...#result-2``: the format and its version, one URI."""
    return PREDICATE_PREFIX + schema.rsplit("/", 1)[-1]


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding: what the signature covers."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def _subjects(result: dict[str, JSONValue], result_name: str, result_bytes: bytes,
              extra: tuple[Path, ...]) -> list[dict[str, JSONValue]]:
    out: list[dict[str, JSONValue]] = [{"name": result_name, "digest": {"sha256": hashlib.sha256(result_bytes).hexdigest()}}]
    for s in result.get("subjects") or []:
        if not isinstance(s, dict):
            continue
        digest = s.get("facts_digest")
        if not isinstance(digest, str) or ":" not in digest:
            continue
        form, _, hexdigest = digest.partition(":")
        kind = "job" if s.get("kind") == "job" else ("facts-file" if form == "sha256-file" else "facts")
        out.append({"name": f"{kind}:{s.get('name')}", "digest": {"sha256": hexdigest}})
    from validator.io.safeio import InputError, read_bytes
    from validator.report.results import MAX_RESULT_BYTES

    for path in extra:
        try:
            data = read_bytes(path, cap=MAX_RESULT_BYTES, what="subject file")
        except InputError as exc:
            raise SpecCheckError(exc.problem, file=str(path)) from None
        out.append({"name": f"file:{path}", "digest": {"sha256": hashlib.sha256(data).hexdigest()}})
    return out


def statement(result: dict[str, JSONValue], result_name: str, result_bytes: bytes,
              extra: tuple[Path, ...] = ()) -> dict[str, JSONValue]:
    body = {k: v for k, v in result.items() if k != "signature"}
    return {
        "_type": STATEMENT_TYPE,
        "subject": _subjects(body, result_name, result_bytes, extra),
        "predicateType": predicate_type(str(body.get("schema") or RESULT_SCHEMA)),
        "predicate": body,
    }


def sign_envelope(stmt: dict[str, JSONValue], key_path: Path, passphrase: bytes | None = None) -> dict[str, JSONValue]:
    key = load_private_key(key_path, passphrase)
    try:
        body = canonical(stmt)
    except ValueError as exc:
        raise SpecCheckError(f"cannot sign: {exc}") from None
    sig = key.sign(pae(PAYLOAD_TYPE, body))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(body).decode("ascii"),
        "signatures": [{"keyid": fingerprint(raw_public(key.public_key())),
                        "sig": base64.b64encode(sig).decode("ascii")}],
    }


def is_envelope(document: JSONValue) -> bool:
    return isinstance(document, dict) and "payloadType" in document and "payload" in document


def _b64(value: JSONValue, what: str, where: str) -> bytes:
    if not isinstance(value, str):
        raise SpecCheckError(f"the envelope's {what} is not base64 text", file=where)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SpecCheckError(f"the envelope's {what} is not base64", file=where) from None


def open_envelope(document: dict[str, JSONValue], where: str) -> tuple[dict[str, JSONValue], bytes, bytes, dict[str, JSONValue]]:
    """The statement, the payload bytes, the signature and its entry, after the shape checks
    (each failure a SpecCheckError: exit 2). The signature itself is not checked here."""
    unknown = sorted(set(document) - ENVELOPE_KEYS)
    if unknown:
        raise SpecCheckError(f"not a DSSE envelope: unknown key(s) {', '.join(unknown)}", file=where)
    if document.get("payloadType") != PAYLOAD_TYPE:
        raise SpecCheckError(f'payloadType is "{document.get("payloadType")}", not {PAYLOAD_TYPE} '
                             "(an in-toto statement)", file=where)
    sigs = document.get("signatures")
    if not isinstance(sigs, list) or not sigs:
        raise SpecCheckError("the envelope has no signature", file=where)
    if len(sigs) != 1:
        raise SpecCheckError(f"the envelope has {len(sigs)} signatures; spec-check writes and "
                             "accepts exactly one", file=where)
    entry = sigs[0]
    if not isinstance(entry, dict) or set(entry) - SIGNATURE_KEYS or "sig" not in entry:
        raise SpecCheckError("the envelope's signature is not {keyid, sig}", file=where)
    body = _b64(document.get("payload"), "payload", where)
    sig = _b64(entry.get("sig"), "signature", where)
    try:
        stmt = json.loads(body)
    except (ValueError, RecursionError):
        raise SpecCheckError("the envelope's payload is not JSON", file=where) from None
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE or set(stmt) - STATEMENT_KEYS:
        raise SpecCheckError(f"the payload is not an in-toto Statement v1 ({STATEMENT_TYPE})", file=where)
    ptype = stmt.get("predicateType")
    if not isinstance(ptype, str) or not ptype.startswith(PREDICATE_PREFIX):
        raise SpecCheckError(f'predicateType "{ptype}" is not a spec-check result ({PREDICATE_PREFIX}N)',
                             file=where)
    if not isinstance(stmt.get("predicate"), dict) or not isinstance(stmt.get("subject"), list):
        raise SpecCheckError("the statement has no result predicate or no subject list", file=where)
    return stmt, body, sig, entry


def verify_envelope(document: dict[str, JSONValue], key_path: Path, where: str) -> tuple[str | None, dict[str, JSONValue]]:
    """(None when intact, else why not; the statement). Unusable input raises (exit 2)."""
    from cryptography.exceptions import InvalidSignature

    from validator.versions import unreadable

    key = load_public_key(key_path)
    stmt, body, sig, entry = open_envelope(document, where)
    result = stmt["predicate"]
    why = unreadable("result", result.get("schema"))
    if why:
        raise SpecCheckError(f"the statement's predicate: {why}", file=where)
    want = fingerprint(raw_public(key))
    if entry.get("keyid") not in (None, "", want):
        return f"signed by another key ({entry.get('keyid')}, this key is {want})", stmt
    try:
        key.verify(sig, pae(PAYLOAD_TYPE, body))
    except InvalidSignature:
        return "the signature does not match the envelope (payload, payloadType or key changed)", stmt
    if stmt["predicateType"] != predicate_type(str(result.get("schema"))):
        return (f'predicateType {stmt["predicateType"]} does not name the predicate\'s format '
                f'{result.get("schema")}'), stmt
    return None, stmt


def subject_digests(stmt: dict[str, JSONValue]) -> set[str]:
    return {str(s["digest"].get("sha256")) for s in stmt.get("subject", [])
            if isinstance(s, dict) and isinstance(s.get("digest"), dict)}
