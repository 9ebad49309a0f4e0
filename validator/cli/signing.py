"""``spec-check keygen``, ``sign`` and ``verify``: signed evidence for customers.

Verify's exit codes follow the contract: 0 intact, 1 changed (any covered byte, or
another key), 2 unusable input (a bad key file, a file that is not a signed result).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from validator.report.model import JSONValue

_PASS_ENV = click.option(
    "--passphrase-env", "passphrase_env", metavar="NAME", default=None,
    help="Read the private key's passphrase from environment variable NAME.")
_PASS_FILE = click.option(
    "--passphrase-file", "passphrase_file", type=click.Path(path_type=Path), default=None,
    help="Read the private key's passphrase from the first line of FILE.")


def _passphrase(env: str | None, file: Path | None) -> bytes | None:
    """The passphrase from ``--passphrase-env``/``--passphrase-file``; an empty or missing one
    is a usage error (a key must not be written unencrypted by accident)."""
    from validator.errors import SpecCheckError

    if env and file:
        raise SpecCheckError("give --passphrase-env or --passphrase-file, not both")
    if env:
        value = os.environ.get(env)
        if not value:
            raise SpecCheckError(f"--passphrase-env {env}: the variable is unset or empty")
        return value.encode("utf-8")
    if file:
        from validator.io.safeio import CAPS, InputError, read_bytes

        try:
            line = read_bytes(file, cap=CAPS["key"], what="passphrase file").splitlines()
        except InputError as exc:
            raise SpecCheckError(exc.problem, file=str(file)) from None
        if not line or not line[0]:
            raise SpecCheckError("the passphrase file's first line is empty", file=str(file))
        return line[0]
    return None


@click.command()
@click.argument("prefix")
@click.option("--force", is_flag=True, help="Overwrite an existing key pair.")
@_PASS_ENV
@_PASS_FILE
def keygen(prefix: str, force: bool, passphrase_env: str | None, passphrase_file: Path | None) -> None:
    """Write an Ed25519 key pair: PREFIX.key (private, mode 0600; encrypted with a
    passphrase when one is given) and PREFIX.pub."""
    from validator.report.signing import keygen as make

    key, pub = make(prefix, force=force, passphrase=_passphrase(passphrase_env, passphrase_file))
    click.echo(
        f"wrote {key} (private; keep it secret) and {pub} (public; give it to customers)", err=True
    )


@click.command()
@click.argument("result", type=click.Path(path_type=Path))
@click.option(
    "--key", "key", required=True, type=click.Path(path_type=Path), help="Private key (PREFIX.key)."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the signed result to FILE (atomically) instead of stdout.",
)
@click.option(
    "--envelope", type=click.Choice(["embedded", "dsse"]), default="embedded", show_default=True,
    help="embedded: the result plus a `signature` block; dsse: an in-toto Statement v1 in a DSSE "
    "envelope (subjects: the result and every facts document or job it judged, by sha256).",
)
@click.option(
    "--subject", "subjects", multiple=True, type=click.Path(path_type=Path),
    help="With --envelope dsse: another file the statement names by sha256 (repeatable), e.g. a job file.",
)
@_PASS_ENV
@_PASS_FILE
def sign(result: Path, key: Path, output: Path | None, envelope: str, subjects: tuple[Path, ...],
         passphrase_env: str | None, passphrase_file: Path | None) -> None:
    """Sign a JSON result: the findings, facts digests and rule-pack digest (the whole
    result) in RFC 8785 canonical form, with the provider's Ed25519 key.

    \b
    Examples:
      spec-check sign result.json --key provider.key -o result.signed.json
      spec-check sign result.json --key provider.key --envelope dsse -o result.intoto.json
    """
    from validator.cli.common import write_atomic
    from validator.errors import SpecCheckError
    from validator.report.results import load_result
    from validator.report.signing import load_private_key, sign_document

    if subjects and envelope != "dsse":
        raise SpecCheckError("--subject names a file in a DSSE statement: add --envelope dsse")
    passphrase = _passphrase(passphrase_env, passphrase_file)
    load_private_key(key, passphrase)  # a bad key fails before the result is read
    data, _ = load_result(result)
    if envelope == "dsse":
        from validator.io.safeio import read_bytes
        from validator.report.envelope import sign_envelope, statement
        from validator.report.results import MAX_RESULT_BYTES

        raw = read_bytes(result, cap=MAX_RESULT_BYTES, what="JSON result")
        signed = sign_envelope(statement(data, result.name, raw, subjects), key, passphrase)
    else:
        signed = sign_document(data, key, passphrase)
    text = json.dumps(signed, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)
        click.echo(f"spec-check: wrote signed result to {output} ({len(text.encode()):,} bytes)", err=True)
    from validator.cli.common import note_older

    note_older("result", [(result, data)])


@click.command()
@click.argument("signed", type=click.Path(path_type=Path))
@click.option(
    "--key", "key", required=True, type=click.Path(path_type=Path), help="Public key (PREFIX.pub)."
)
@click.option(
    "--facts",
    "facts",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A facts file the result should vouch for (repeatable): its digest must be one of "
    "the signed subjects' facts_digest.",
)
@click.option(
    "--result", "result_files", multiple=True, type=click.Path(path_type=Path),
    help="With a DSSE envelope: a result file the statement should name (its sha256 among the subjects).",
)
def verify(signed: Path, key: Path, facts: tuple[Path, ...], result_files: tuple[Path, ...]) -> None:
    """Verify a signed result or a DSSE envelope: exit 0 intact, 1 changed (or signature
    removed), 2 unusable input.

    \b
    Examples:
      spec-check verify result.signed.json --key provider.pub
      spec-check verify result.intoto.json --key provider.pub --result result.json --facts node01.json
    """
    from validator.errors import SpecCheckError
    from validator.report.envelope import is_envelope
    from validator.report.results import read_json
    from validator.report.signing import check_facts, load_public_key, verify_document

    load_public_key(key)
    duplicates: list[str] = []
    document = read_json(signed, duplicates=duplicates)
    if is_envelope(document):
        problem = _verify_envelope(document, signed, key, facts, result_files)
    else:
        if result_files:
            raise SpecCheckError("--result is for a DSSE envelope; a signed result is its own result",
                                 file=str(signed))
        problem = verify_document(document, key, str(signed))
    if problem is None and duplicates:
        problem = (
            f'key "{duplicates[0]}" appears twice in one object (parsers disagree on which counts)'
        )

    if problem is None and isinstance(document, dict) and not is_envelope(document):
        for path in facts:
            problem = check_facts(document, path)
            if problem is not None:
                break
    if problem is not None:
        from validator.renderers.escape import text

        click.echo(text(f"{signed}: NOT VERIFIED: {problem}"), err=True)
        sys.exit(1)
    also = f"; {len(facts)} facts file(s) match its subjects" if facts else ""
    click.echo(f"{signed}: verified (intact, signed by this key{also})", err=True)


def _verify_envelope(document: dict[str, JSONValue], signed: Path, key: Path, facts: tuple[Path, ...],
                     result_files: tuple[Path, ...]) -> str | None:
    """The envelope's signature, then each ``--facts``/``--result`` file among its subjects."""
    import hashlib

    from validator.facts.document import digest, read
    from validator.io.safeio import read_bytes
    from validator.report.envelope import subject_digests, verify_envelope
    from validator.report.results import MAX_RESULT_BYTES

    problem, stmt = verify_envelope(document, key, str(signed))
    if problem is not None:
        return problem
    named = subject_digests(stmt)
    for path in facts:
        doc, raw = read(path)
        if digest(doc).split(":", 1)[1] not in named and hashlib.sha256(raw).hexdigest() not in named:
            return f"{path}: facts digest matches no subject of the statement"
    for path in result_files:
        if hashlib.sha256(read_bytes(path, cap=MAX_RESULT_BYTES, what="JSON result")).hexdigest() not in named:
            return f"{path}: its sha256 is not among the statement's subjects (another or a changed result)"
    return None
