"""``spec-check keygen``, ``sign`` and ``verify``: signed evidence for customers.

Verify's exit codes follow the contract: 0 intact, 1 changed (any covered byte, or
another key), 2 unusable input (a bad key file, a file that is not a signed result).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command()
@click.argument("prefix")
@click.option("--force", is_flag=True, help="Overwrite an existing key pair.")
def keygen(prefix: str, force: bool) -> None:
    """Write an Ed25519 key pair: PREFIX.key (private, mode 0600) and PREFIX.pub."""
    from validator.report.signing import keygen as make

    key, pub = make(prefix, force=force)
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
def sign(result: Path, key: Path, output: Path | None) -> None:
    """Sign a JSON result: the findings, facts digests and rule-pack digest (the whole
    result) in canonical form; writes the result plus a `signature` block."""
    from validator.cli.common import write_atomic
    from validator.report.results import load_result
    from validator.report.signing import load_private_key, sign_document

    load_private_key(key)  # a bad key fails before the result is read
    data, _ = load_result(result)
    text = json.dumps(sign_document(data, key), indent=2, ensure_ascii=False) + "\n"
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
def verify(signed: Path, key: Path, facts: tuple[Path, ...]) -> None:
    """Verify a signed result: exit 0 intact, 1 changed (or signature removed), 2 unusable input."""
    from validator.report.results import read_json
    from validator.report.signing import check_facts, load_public_key, verify_document

    load_public_key(key)
    duplicates: list[str] = []
    document = read_json(signed, duplicates=duplicates)
    problem = verify_document(document, key, str(signed))
    if problem is None and duplicates:
        problem = (
            f'key "{duplicates[0]}" appears twice in one object (parsers disagree on which counts)'
        )

    if problem is None and isinstance(document, dict):
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
