"""``spec-check check`` and ``spec-check probe``: one node, live or recorded.

The options are declared and parsed here, by click; ``validator.api.check_node`` does the
check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from validator.api.node import check_node
from validator.api.node import probe_document as probe_document  # re-exported: health, npd, tests
from validator.api.options import CheckOptions
from validator.api.steps import with_endpoints as with_endpoints  # re-exported: tests
from validator.cli.common import F, call, common_options, finish_outcome, run_options, write_atomic
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S


def root_options(func: F) -> F:
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


def _event_options(func: F) -> F:
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


def _scrape_options(func: F) -> F:
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
    from validator.api.node import check_urls

    call(check_urls, urls)  # a bad URL is a usage error


@click.command()
@click.option("--facts", "facts_files", multiple=True, type=click.Path(path_type=Path),
              help="Evaluate recorded facts instead of probing (repeatable: one file per node).")
@root_options
@_event_options
@_scrape_options
@common_options
def check(facts_files: tuple[Path, ...], sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
          kernel_log: Path | None, since: Path | None, dcgm_diag: int | None, scrape: tuple[str, ...],
          scrape_interval: float, scrape_timeout: float, **common: Any) -> None:  # Any: the common options
    """Check this node against every node requirement of the spec.

    With --facts, evaluate recordings made by `spec-check probe -o FILE` instead
    (anywhere; several files for several nodes).
    """
    opts = run_options(common)
    check_opts = CheckOptions(
        report=opts.report, facts=tuple(facts_files), sysfs=sysfs, procfs=procfs, rootfs=rootfs, nvml=nvml,
        kernel_log=kernel_log, dcgm_diag=dcgm_diag, since=since, scrape=tuple(scrape),
        scrape_interval=scrape_interval, scrape_timeout=scrape_timeout,
    )
    finish_outcome(call(check_node, check_opts), opts)


@click.command()
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write the facts to FILE (atomically) instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["json"]), default="json", show_default=True,
              help="Facts are JSON (schema spec/facts.schema.json).")
@root_options
@_event_options
@_scrape_options
def probe(output: Path | None, fmt: str, sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
          kernel_log: Path | None, dcgm_diag: int | None, since: Path | None,
          scrape: tuple[str, ...], scrape_interval: float, scrape_timeout: float) -> None:
    """Record this node's facts (to evaluate later or elsewhere with `check --facts`)."""
    from validator.values.numbers import dumps

    _check_urls(scrape)
    doc = probe_document(sysfs, procfs, rootfs, nvml, kernel_log, dcgm_diag, since, scrape, scrape_interval,
                         scrape_timeout)
    text = dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)  # said on stderr, as every other verb's -o is
        click.echo(f"spec-check: wrote facts to {output} ({len(text.encode()):,} bytes)", err=True)
