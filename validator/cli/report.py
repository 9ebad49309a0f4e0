"""``spec-check report`` and ``spec-check diff``: work on results already written.

``report`` renders JSON results in any format (the same renderers ``check``, ``lint``
and ``cluster`` use), merging several into one (``validator.report.merge``), optionally applying
waivers after the fact; it exits 0 once the report is written (the verdict is in the
report, and was the original runs' exit code).
``diff`` exits 1 when NEW has failures that OLD did not.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import click

from validator.cli.common import LiveChoice, format_names, note_older, render, show_option, write_atomic

if TYPE_CHECKING:
    from validator.report.model import JSONValue, Report


def _as_of(report: Report, as_of: str | None) -> date:
    """The day waivers are judged on: the result's own (when it was generated), so a result
    rendered next month shows the waivers active that were active then; ``--as-of DATE``
    (or ``today``) asks for another day."""
    from validator.errors import SpecCheckError

    if as_of == "today":
        from validator.clock import today_utc

        return today_utc()
    text = as_of if as_of is not None else report.generated_at[:10]
    try:
        return date.fromisoformat(text)
    except ValueError:
        if as_of is None:
            raise SpecCheckError(f'the result\'s generated_at "{report.generated_at}" has no date: '
                                 "pass --as-of YYYY-MM-DD or --as-of today") from None
        raise SpecCheckError(f'--as-of "{as_of}" is not a date: write YYYY-MM-DD or today') from None


def _waived(report: Report, waivers: Path, as_of: str | None = None) -> Report:
    """Apply a waiver file, checking its IDs against the rules and requirements the result
    itself lists and names (or, for a result without rule docs, its spec version's pack):
    the result may come from another rule pack than the one installed here."""
    from validator.report.waivers import apply_waivers, load_waivers

    if report.rules:
        named = [SimpleNamespace(id=i) for f in report.findings for i in (f.rule, f.requirement)]
        # Any: stand-ins with .rules / .requirements (each with .id), as load_waivers reads them
        pack: Any = SimpleNamespace(rules=[*report.rules, *named])
        spec: Any = SimpleNamespace(requirements=report.requirements)
    else:
        from validator.cli.common import RunOptions, build

        built = build(RunOptions(spec_version=report.spec_version))
        pack, spec = built.pack, built.ctx.spec
    return apply_waivers(report, load_waivers(waivers, pack, spec), today=_as_of(report, as_of))


def _provenance(path: Path, data: dict[str, JSONValue], key: Path | None) -> dict[str, JSONValue]:
    """What a merged or rendered result records of one input: its file, the sha256 of its
    bytes, and for a signed one the key it names and whether the signature was verified
    (with ``--key``; a signature that does not verify is refused, never shown as signed)."""
    import hashlib

    from validator.errors import SpecCheckError
    from validator.io.safeio import read_bytes
    from validator.report.results import MAX_RESULT_BYTES

    entry: dict[str, JSONValue] = {
        "file": path.name,
        "sha256": hashlib.sha256(read_bytes(path, cap=MAX_RESULT_BYTES, what="JSON result")).hexdigest(),
    }
    sig = data.get("signature")
    if not isinstance(sig, dict):
        entry["signature"] = "none"
        return entry
    entry["key_fingerprint"] = sig.get("key_fingerprint")
    entry["signed_at"] = sig.get("signed_at")
    if key is None:
        entry["signature"] = "not verified"
        return entry
    from validator.report.signing import verify_document

    problem = verify_document(data, key, str(path))
    if problem is not None:
        raise SpecCheckError(f"NOT VERIFIED: {problem}; refusing to present it as signed "
                             "(without --key it is shown as 'signature not verified')", file=str(path))
    entry["signature"] = "verified"
    return entry


def _shows_signature(fmt: str) -> bool:
    from validator.renderers import BY_NAME

    return BY_NAME[fmt].shows_signature


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=LiveChoice(format_names()),
    default="terminal",
    show_default=True,
    help="Output format.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the report to FILE (atomically) instead of stdout.",
)
@click.option(
    "--waivers",
    type=click.Path(path_type=Path),
    default=None,
    help="YAML file of waivers to apply (replaces any waivers recorded in the result).",
)
@click.option(
    "--key", "key", type=click.Path(path_type=Path), default=None,
    help="The signer's public key (PREFIX.pub): each signed RESULT is verified before it is shown "
    "as signed, and one that does not verify is refused. Without it a signature is shown as not verified.",
)
@click.option(
    "--as-of", "as_of", default=None, metavar="DATE",
    help="With --waivers: judge each waiver's expiry on DATE (YYYY-MM-DD, or today) instead of "
    "the day the result was made, which the result records.",
)
@show_option()
def report(results: tuple[Path, ...], fmt: str, output: Path | None, waivers: Path | None,
           key: Path | None, as_of: str | None, show: tuple[str, ...]) -> None:
    """Render JSON results (from check, lint or cluster --format json) in another format.

    Several RESULTS (a fleet result and the lint results of the jobs that run on it) are
    merged into one report whose coverage spans them all; results made with different
    spec versions, rule packs or thresholds are refused. A merged report records each
    input's sha256, signer and whether its signature was verified.

    \b
    Examples:
      spec-check report fleet.json --format html -o fleet.html
      spec-check report fleet.signed.json --key provider.pub --format html -o fleet.html
      spec-check report fleet.json job.json --format markdown
    """
    from validator.clock import now_utc
    from validator.report.merge import merge_reports
    from validator.report.results import load_result

    if key is not None:
        from validator.report.signing import load_public_key

        load_public_key(key)  # a bad key is refused before any result is read
    loaded = []
    raw = []
    inputs: list[JSONValue] = []
    signature: dict[str, JSONValue] | None = None
    for path in results:
        data, rep = load_result(path)
        loaded.append((str(path), rep))
        raw.append((path, data))
        entry = _provenance(path, data, key)
        inputs.append(entry)
        sig = data.get("signature")
        # shown by the formats that show a signature (the HTML page): a JSON written from it
        # is not itself signed
        if len(results) == 1 and isinstance(sig, dict) and _shows_signature(fmt):
            signature = {k: sig.get(k) for k in ("algorithm", "key_fingerprint", "signed_at")}
            signature["file"] = path.name
            signature["verified"] = entry["signature"] == "verified"
    rep = merge_reports(loaded, generated_at=now_utc()) if len(loaded) > 1 else loaded[0][1]
    if len(loaded) > 1:
        rep = replace(rep, extra={**rep.extra, "inputs": inputs})
    if signature is not None:
        # shown by the HTML report beside the verdict (key, time, the verify command)
        rep = replace(rep, extra={**rep.extra, "signature": signature})
    if waivers is not None:
        if signature is not None:  # the page's verdict is no longer the one signed: said beside the banner
            signed = (raw[0][1].get("summary") or {}).get("conformant")
            signature["altered"] = (
                f"waivers from {waivers.name} were applied after signing (replacing the signed "
                "result's own): the verdicts below are not the signed ones")
            if isinstance(signed, bool):
                signature["signed_verdict"] = "CONFORMANT" if signed else "NOT CONFORMANT"
        rep = _waived(rep, waivers, as_of)
    elif as_of is not None:
        from validator.errors import SpecCheckError

        raise SpecCheckError("--as-of judges the waivers of --waivers FILE: add --waivers")
    render(rep, fmt, output, show_passes="passes" in show, show_folded="folded" in show)
    note_older("result", raw)


class _DiffFormat(click.Choice):
    """``terminal`` or ``json``; ``text`` (the name before 0.3) is still taken, unlisted, and
    read as ``terminal``, the name every other verb gives the format for people."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:  # Any: click's
        if value == "text":
            click.echo("spec-check: diff --format text is now --format terminal (text still works)", err=True)
            return "terminal"
        return super().convert(value, param, ctx)


@click.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=_DiffFormat(["terminal", "json"]), default="terminal", show_default=True
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the diff to FILE (atomically) instead of stdout.",
)
@click.option(
    "--allow-config-change",
    is_flag=True,
    help="Accept that NEW ran under other parameters, profile or selection, or without some "
    "of OLD's subjects (still reported; no longer exit 1 on its own).",
)
@click.option(
    "--allow-pack-change",
    is_flag=True,
    help="Compare results judged by different rule packs (e.g. v1.0 and v1.1, or two digests of "
    "one pack): a verdict that changed may be the rules', not the system's. Refused otherwise.",
)
@click.option(
    "--tolerance",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Relative change below which a measured value is not listed as changed.",
)
@click.option(
    "--key", "key", type=click.Path(path_type=Path), default=None,
    help="The signer's public key: a signed OLD or NEW is verified first, and refused if it does not verify.",
)
def diff(
    old: Path,
    new: Path,
    fmt: str,
    output: Path | None,
    allow_config_change: bool,
    allow_pack_change: bool,
    tolerance: float,
    key: Path | None,
) -> None:
    """Compare two results: new failures, fixed findings, configuration and measurement changes.

    Exit 1 when NEW has failures (a fail, or an error on a MUST) that OLD did not, or when
    NEW was run under changed parameters or profile, evaluated fewer rules, or lost
    subjects (unless --allow-config-change).
    """
    from validator.renderers import escape
    from validator.report.diffing import diff_reports, render_text
    from validator.report.results import load_result

    if key is not None:
        from validator.report.signing import load_public_key

        load_public_key(key)
    data_a, a = load_result(old)
    data_b, b = load_result(new)
    for path, data in ((old, data_a), (new, data_b)):
        entry = _provenance(path, data, key)  # a signature that does not verify: refused
        if entry["signature"] == "not verified":
            click.echo(f"spec-check: note: {path}: signature not verified (pass --key PREFIX.pub)", err=True)
    if not allow_pack_change:
        _same_pack(a, b, new)
    d = diff_reports(a, b, tolerance=tolerance, allow_config_change=allow_config_change)
    text = (
        json.dumps(d.to_dict(), indent=2, ensure_ascii=False) + "\n"
        if fmt == "json"
        else escape.text(render_text(d))  # control characters from a result shown, not obeyed
    )
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)
        click.echo(f"spec-check: wrote {fmt} diff to {output} ({len(text.encode()):,} bytes)", err=True)
    note_older("result", [(old, data_a), (new, data_b)])
    sys.exit(1 if d.regressed else 0)


def _same_pack(a: Report, b: Report, new: Path) -> None:
    """Results judged by different rule packs do not compare finding by finding: refuse
    (exit 2) unless --allow-pack-change says the reader knows."""
    pa, pb = dict(a.rule_pack), dict(b.rule_pack)
    if (pa.get("id"), pa.get("digest")) != (pb.get("id"), pb.get("digest")):
        from validator.errors import SpecCheckError

        def shown(p: dict[str, JSONValue]) -> str:
            return f"rule pack {p.get('id')} ({str(p.get('digest', ''))[:19]})"

        raise SpecCheckError(
            f"OLD was judged by {shown(pa)}, NEW by {shown(pb)}: their verdicts differ by the rules "
            "as well as the system (see `spec-check rules diff`); pass --allow-pack-change to compare anyway",
            file=str(new),
        )
