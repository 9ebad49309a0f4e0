"""The node probe: every fact of spec/facts/node.yaml, gathered from this node or a tree.

``probe_node()`` runs each source in ``SOURCES`` order (later sources read what earlier ones
found: the GPU source needs the PCI scan and the RDMA ports). It never raises and never
prints: a source that fails turns every fact it owns into an error value with the reason,
and the other sources' facts are kept. ``sysfs``/``procfs``/``rootfs`` point the probe at
a recorded tree (as node_exporter's ``--path.sysfs`` does); ``nvml`` replaces the pynvml
module and ``amdsmi_loader`` the amdsmi import, so tests replay recorded hardware.

Heavy modules (pynvml, amdsmi, psutil) are imported inside the sources, on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from validator.facts.document import Document, Fact, error
from validator.facts.node import counter_rise, dcgm, gpu, gpu_events, host, links, net, pci, rdma, telemetry
from validator.facts.node.base import Context, FactSource, one_process_table
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S

SOURCES: dict[str, FactSource] = {
    "host": host,
    "pci": pci,
    "rdma": rdma,
    "net": net,
    "gpu": gpu,
    "links": links,
    "telemetry": telemetry,
    "events": gpu_events,  # after gpu: an event names its GPU by the driver's PCI addresses
    "dcgm": dcgm,
    "counter_rise": counter_rise,  # after gpu: compares its counters with --since
}

__all__ = ["SOURCES", "Context", "FactSource", "probe_node"]


def probe_node(
    *,
    sysfs: Path = Path("/sys"),
    procfs: Path = Path("/proc"),
    rootfs: Path = Path("/"),
    nvml: object | None = None,
    amdsmi_loader: Callable[[], Any] | None = None,  # Any: the amdsmi module (no type stubs)
    query_drivers: bool | None = None,
    kernel_log: Path | None = None,
    dcgm_level: int | None = None,
    since: Document | None = None,
    scrape_endpoints: tuple[str, ...] = (),
    scrape_interval: float = SCRAPE_INTERVAL_S,
    scrape_timeout: float = DEFAULT_DEADLINE_S,
) -> dict[str, Fact]:
    """Gather every node fact; each is a value, an error value, or a collection.

    NVML and amdsmi talk to the GPUs of the machine the probe runs on, whatever ``sysfs``
    says. ``query_drivers`` None means: query them only when ``sysfs`` is this host's /sys
    (or a test hands in a replay); a tree from another host never gets this host's GPUs.
    ``True`` is for a container that mounts the host's /sys elsewhere (``--nvml``)."""
    if query_drivers is None:
        query_drivers = (Path(sysfs).resolve() == Path("/sys").resolve() or nvml is not None
                         or amdsmi_loader is not None)
    ctx = Context(sysfs=Path(sysfs), procfs=Path(procfs), rootfs=Path(rootfs), nvml=nvml,
                  amdsmi_loader=amdsmi_loader, query_drivers=query_drivers,
                  kernel_log=None if kernel_log is None else Path(kernel_log), dcgm_level=dcgm_level,
                  since=since, scrape_endpoints=tuple(scrape_endpoints), scrape_interval=scrape_interval,
                  scrape_timeout=scrape_timeout)
    with one_process_table():  # limits and telemetry read each process's comm once
        for name, source in SOURCES.items():
            ctx.facts.update(run_source(name, source, ctx))
    return ctx.facts


def run_source(name: str, source: FactSource, ctx: Context) -> dict[str, Fact]:
    """One source's facts, exactly those it owns; a crash becomes error values."""
    try:
        got = source.collect(ctx)
    except Exception as exc:  # a bug or an odd machine: keep every other source's facts
        reason = f"{name} source failed: {type(exc).__name__}: {exc}"
        return {fact: error(reason, source=name) for fact in source.FACTS}
    out: dict[str, Fact] = {}
    for fact in source.FACTS:
        out[fact] = got.get(fact) or error(f"{name} source did not report it", source=name)
    return out
