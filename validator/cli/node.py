"""``spec-check check`` and ``spec-check probe``: one node, live or recorded."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import click

from validator import __version__
from validator.netfetch import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S
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


def _event_options(func: Any) -> Any:
    """--kernel-log and --dcgm-diag: where GPU error events come from, and DCGM on request."""
    for option in reversed([
        click.option("--kernel-log", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
                     help="Judge the Xid / amdgpu RAS events of a saved `dmesg` or `journalctl -k` output "
                          "instead of this host's kernel log (/dev/kmsg, else journalctl -k)."),
        click.option("--since", "since", type=click.Path(path_type=Path, dir_okay=False), default=None,
                     metavar="FACTS", help="An earlier `spec-check probe -o` of this node: name the GPU error "
                                           "counters (ECC, PCIe replays, NVLink) that rose since."),
        click.option("--dcgm-diag", "dcgm_diag", type=click.IntRange(1, 4), default=None, metavar="LEVEL",
                     help="Also run `dcgmi diag -r LEVEL -j` (1: seconds, 2: minutes, 3-4: long) and judge each "
                          "test; without dcgmi it is a skip that says so."),
    ]):
        func = option(func)
    return func


def _scrape_options(func: Any) -> Any:
    for option in reversed([
        click.option("--scrape", "scrape", multiple=True, metavar="URL",
                     help="A Prometheus endpoint of this node's exporters to sample for MON-03 (repeatable), "
                          "e.g. http://127.0.0.1:9400/metrics (dcgm-exporter), :9100 (node_exporter)."),
        click.option("--scrape-interval", type=click.FloatRange(min=0), default=SCRAPE_INTERVAL_S, show_default=True,
                     metavar="SECONDS",
                     help="Seconds between the two scrapes of each endpoint; above the exporter's collect "
                          "interval (dcgm-exporter: 30 s by default)."),
        click.option("--timeout", "--scrape-timeout", "scrape_timeout", type=click.FloatRange(min=0.1),
                     default=DEFAULT_DEADLINE_S, show_default=True, metavar="SECONDS",
                     help="Seconds each scrape's whole answer may take before it is reported as an error "
                          "(an exporter that hangs, drips or streams without end); --scrape-timeout is the "
                          "same option."),
    ]):
        func = option(func)
    return func


def _check_urls(urls: tuple[str, ...]) -> None:
    from validator.netfetch import check_url

    for url in urls:
        bad = check_url(url)
        if bad:
            raise click.UsageError(f"--scrape: {bad}")


def probe_document(sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None = None,
                   kernel_log: Path | None = None, dcgm_diag: int | None = None,
                   since: Path | None = None, scrape: tuple[str, ...] = (), scrape_interval: float = SCRAPE_INTERVAL_S,
                   scrape_timeout: float = DEFAULT_DEADLINE_S) -> dict[str, Any]:
    """Probe this node into a facts document; failures become error values inside it.
    ``since``: an earlier facts document of this node (read and checked before probing)."""
    from validator.facts.document import new_document
    from validator.facts.node import probe_node

    earlier = None
    if since is not None:
        from validator.errors import FactsFileError
        from validator.facts.document import load

        earlier = load(since)
        if earlier["subject"]["kind"] != "node":
            raise FactsFileError(f'--since needs node facts; this document is a {earlier["subject"]["kind"]}',
                                 file=str(since))
    facts = probe_node(sysfs=sysfs, procfs=procfs, rootfs=rootfs, query_drivers=nvml,
                       kernel_log=kernel_log, dcgm_level=dcgm_diag, since=earlier,
                       scrape_endpoints=scrape, scrape_interval=scrape_interval, scrape_timeout=scrape_timeout)
    host = facts.get("host.hostname", {}).get("value") or socket.gethostname()
    return new_document("node", str(host), facts, tool_version=__version__, collected_at=now_utc())


@click.command()
@click.option("--facts", "facts_files", multiple=True, type=click.Path(path_type=Path),
              help="Evaluate recorded facts instead of probing (repeatable: one file per node).")
@_root_options
@_event_options
@_scrape_options
@common_options
def check(facts_files: tuple[Path, ...], sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
          kernel_log: Path | None, dcgm_diag: int | None, since: Path | None,
          scrape: tuple[str, ...], scrape_interval: float, scrape_timeout: float, **kwargs: Any) -> None:
    """Check this node against every node requirement of the spec.

    With --facts, evaluate recordings made by `spec-check probe -o FILE` instead
    (anywhere; several files for several nodes).
    """
    opts = run_options(kwargs)
    built = build(opts, ("node",))  # bad spec, rules, profile or --set fail here, before probing
    if facts_files and (kernel_log or dcgm_diag or since):
        raise click.UsageError("--kernel-log, --dcgm-diag and --since gather facts: give them to `spec-check probe` "
                         "(or to check without --facts), not with --facts")
    _check_urls(scrape)
    if facts_files and scrape:
        raise click.UsageError("--scrape samples live endpoints; with --facts the recorded scrapes are judged")
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
        built = with_endpoints(built, _recorded_endpoints(docs), "facts")
    else:
        built = with_endpoints(built, scrape, "--scrape")
        endpoints = tuple(built.ctx.params["scrape_endpoints"].value or ())
        _check_urls(endpoints)
        docs = [probe_document(sysfs, procfs, rootfs, nvml, kernel_log, dcgm_diag, since,
                               endpoints, scrape_interval, scrape_timeout)]
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
@_event_options
@_scrape_options
def probe(output: Path | None, fmt: str, sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
          kernel_log: Path | None, dcgm_diag: int | None, since: Path | None,
          scrape: tuple[str, ...], scrape_interval: float, scrape_timeout: float) -> None:
    """Record this node's facts (to evaluate later or elsewhere with `check --facts`)."""
    from validator.numbers import dumps

    _check_urls(scrape)
    doc = probe_document(sysfs, procfs, rootfs, nvml, kernel_log, dcgm_diag, since, scrape, scrape_interval,
                         scrape_timeout)
    text = dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)  # said on stderr, as every other verb's -o is
        click.echo(f"spec-check: wrote facts to {output} ({len(text.encode()):,} bytes)", err=True)


def _recorded_endpoints(docs: list[dict[str, Any]]) -> tuple[str, ...]:
    """The endpoints a recording scraped (``probe --scrape``): judged as they were named."""
    out: list[str] = []
    for d in docs:
        fact = d.get("facts", {}).get("telemetry.scrapes")
        for member in (fact or {}).get("items", []) if isinstance(fact, dict) else []:
            if isinstance(member, dict) and isinstance(member.get("id"), str):
                out.append(member["id"])
    return tuple(dict.fromkeys(out))


def with_endpoints(built: Any, urls: tuple[str, ...], origin: str) -> Any:
    """``built`` with ``urls`` added to the ``scrape_endpoints`` parameter (MON-03's scrapes)."""
    import dataclasses

    from validator.cli.common import Built

    params = dict(built.ctx.params)
    current = params.get("scrape_endpoints")
    if current is None or not urls:
        return built
    merged = list(dict.fromkeys([*(current.value or []), *urls]))
    params["scrape_endpoints"] = dataclasses.replace(
        current, value=merged, text=", ".join(merged),
        origin=origin if not current.value else f"{current.origin} + {origin}")
    return Built(dataclasses.replace(built.ctx, params=params), built.pack)
