"""``spec-check check`` and ``spec-check probe``: one node, live or recorded."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import click

from validator import __version__
from validator.cli.common import (
    build,
    common_options,
    evaluate_documents,
    finish,
    note_older,
    now_utc,
    run_options,
    unique_subjects,
    write_atomic,
)


def _root_options(func: Any) -> Any:
    for option in reversed([
        click.option("--sysfs", type=click.Path(path_type=Path, file_okay=False, exists=True), default=Path("/sys"),
                     show_default=True, help="Where the host's /sys is mounted (as node_exporter's --path.sysfs)."),
        click.option("--procfs", type=click.Path(path_type=Path, file_okay=False, exists=True), default=Path("/proc"),
                     show_default=True, help="Where the host's /proc is mounted."),
        click.option("--rootfs", type=click.Path(path_type=Path, file_okay=False, exists=True), default=Path("/"),
                     show_default=True, help="Where the host's root filesystem is mounted (for /dev/shm)."),
        click.option("--nvml/--no-nvml", "nvml", default=None,
                     help="Query this machine's GPU driver (NVML, or amdsmi on AMD nodes). Default: only when "
                          "--sysfs is /sys; pass --nvml when --sysfs is this host's /sys mounted elsewhere "
                          "(a container), since the driver always answers for the machine spec-check runs on."),
    ]):
        func = option(func)
    return func


def probe_document(sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None = None) -> dict[str, Any]:
    """Probe this node into a facts document; failures become error values inside it."""
    from validator.facts.document import new_document
    from validator.facts.node import probe_node

    facts = probe_node(sysfs=sysfs, procfs=procfs, rootfs=rootfs, query_drivers=nvml)
    host = facts.get("host.hostname", {}).get("value") or socket.gethostname()
    return new_document("node", str(host), facts, tool_version=__version__, collected_at=now_utc())


@click.command()
@click.option("--facts", "facts_files", multiple=True, type=click.Path(path_type=Path),
              help="Evaluate recorded facts instead of probing (repeatable: one file per node).")
@_root_options
@common_options
def check(facts_files: tuple[Path, ...], sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
          **kwargs: Any) -> None:
    """Check this node against every node requirement of the spec.

    With --facts, evaluate recordings made by `spec-check probe -o FILE` instead
    (anywhere; several files for several nodes).
    """
    opts = run_options(kwargs)
    built = build(opts, ("node",))  # bad spec, rules, profile or --set fail here, before probing
    if facts_files:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        seen: set[str] = set()
        for p in facts_files:
            real = os.path.realpath(p)
            if real in seen:
                raise FactsFileError("given twice with --facts", file=str(p))
            seen.add(real)
        docs = [load(p) for p in facts_files]
        for p, d in zip(facts_files, docs, strict=True):
            if d["subject"]["kind"] != "node":
                raise FactsFileError(f'check evaluates node facts; this document is a {d["subject"]["kind"]} '
                                     f"(use `spec-check {'lint' if d['subject']['kind'] == 'job' else 'cluster'}`)",
                                     file=str(p))
        sources = [str(p) for p in facts_files]
    else:
        docs = [probe_document(sysfs, procfs, rootfs, nvml)]
        sources = ["probe"]
    older = list(zip(facts_files, docs, strict=True)) if facts_files else []
    docs = unique_subjects(docs, sources)
    report = evaluate_documents("check", built, opts, docs, sources)
    note_older("facts", older)  # after every input was accepted: an exit-2 error stays one line
    finish(report, opts)


@click.command()
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write the facts to FILE (atomically) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json", show_default=True,
              help="Facts are JSON (schema spec/facts.schema.json).")
@_root_options
def probe(output: Path | None, fmt: str, sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None) -> None:
    """Record this node's facts (to evaluate later or elsewhere with `check --facts`)."""
    from validator.numbers import dumps

    doc = probe_document(sysfs, procfs, rootfs, nvml)
    text = dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)
