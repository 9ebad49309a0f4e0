"""Telemetry exporters running on the node (MON-03), from the process table.

``comm`` is cut at 15 characters ("prometheus-node"), so names are matched on the basename
of argv[0] as well. Processes that vanish or deny access mid-scan are skipped, never fatal.
"""

from __future__ import annotations

import os

from validator.facts.document import Fact, error, value
from validator.facts.node.base import Context, ReadError, read

NAME = "telemetry"
FACTS = ("telemetry.exporters",)
EXPORTERS = ("dcgm-exporter", "nv-hostengine", "node_exporter", "prometheus-node-exporter",
             "amd-metrics-exporter", "telegraf", "otelcol")


def collect(ctx: Context) -> dict[str, Fact]:
    if ctx.live:
        found = _live()
        source = "psutil.process_iter"
    else:
        tree = _tree(ctx)
        source = str(ctx.procfs)
        if tree is None:  # no process directories: not a procfs, so no evidence of absence
            return {"telemetry.exporters": error(f"no process directories under {ctx.procfs}: "
                                                 "not a procfs tree", source=source)}
        found = tree
    return {"telemetry.exporters": value(sorted(found), source=source)}


def match(name: str, argv0: str) -> str | None:
    for candidate in (os.path.basename(argv0), name):
        for exporter in EXPORTERS:
            if candidate == exporter or candidate.startswith(exporter + "-"):  # otelcol-contrib
                return exporter
    return None


def _live() -> set[str]:
    import psutil

    found: set[str] = set()
    for proc in psutil.process_iter(["name", "cmdline"]):
        info = proc.info
        argv = info.get("cmdline") or [""]
        hit = match(info.get("name") or "", argv[0])
        if hit:
            found.add(hit)
    return found


def _tree(ctx: Context) -> set[str] | None:
    found: set[str] = set()
    try:
        pids = [p for p in ctx.procfs.iterdir() if p.name.isdigit()]
    except OSError:
        return None
    if not pids:
        return None
    for pid in pids:
        try:
            comm = read(pid / "comm")
            argv0 = read(pid / "cmdline").split("\0")[0]
        except ReadError:
            continue
        hit = match(comm, argv0)
        if hit:
            found.add(hit)
    return found
