"""The options of the verbs other than ``check``: ``health``, ``lint``, and a fleet run,
live (``cluster``) or replayed.

Why a module of their own: ``validator/api/options.py`` is on ``check``'s start-up path,
and ``check`` has no use for these classes. They are still importable from there
(``from validator.api.options import LintOptions``, or ``from validator.api import
LintOptions``): either loads this module on first use. It imports ``report_options.py``,
not ``options.py``, which loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from validator.api.report_options import DEFAULT_TOOLS, ReportOptions
from validator.io.scrape_defaults import SCRAPE_INTERVAL_S


@dataclass(frozen=True)
class HealthOptions:
    """``health``: this node judged for a health check (``node``: the node a verdict acts
    on, which ``facts``, when given, must be the recording of), probed otherwise."""

    node: str
    report: ReportOptions = field(default_factory=ReportOptions)
    facts: Path | None = None
    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    rootfs: Path = Path("/")
    nvml: bool | None = None


@dataclass(frozen=True)
class LintOptions:
    """``lint``: job config PATHs (a file is a job, a folder one job per entry point),
    ``whole`` folders read as one job each, and the job judged against its nodes and runs."""

    report: ReportOptions = field(default_factory=ReportOptions)
    paths: tuple[Path, ...] = ()
    kind: str | None = None  # force every file's format
    ignore_unknown: bool = False
    jobs_of_files: bool = False
    recovery_logs: tuple[Path, ...] = ()
    whole: tuple[Path, ...] = ()
    runs: tuple[Path, ...] = ()
    nodes: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ClusterOptions:
    """A live fleet run: probe ``hosts`` over ``transport``, optionally measure the fabric.
    ``fabric``: host -> (address on the training fabric, where that came from)."""

    report: ReportOptions = field(default_factory=ReportOptions)
    hosts: tuple[str, ...] = ()
    transport: str = "ssh"
    remote_command: str | None = None  # default: the transport's (spec-check, or this Python)
    ssh_config: Path | None = None
    connect_timeout: int = 10
    host_timeout: float = 120.0
    parallel: int = 32
    slurm_args: tuple[str, ...] = ()
    measure: bool = False
    pairs: str = "ring"
    tools: tuple[str, ...] = DEFAULT_TOOLS
    measure_seconds: int = 5
    iperf_port: int = 5201
    fabric: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    fabric_interface: str | None = None
    scrape_port: int | None = None
    scrape_interval: float = SCRAPE_INTERVAL_S
    cluster_name: str = "cluster"
    save_facts: Path | None = None
    passes: str = "auto"  # "itemize", "fold", or "auto" (fold above fleet.FOLD_ABOVE hosts)


@dataclass(frozen=True)
class ReplayOptions:
    """A fleet replayed from saved facts: a ``--save-facts`` directory, node facts files
    and/or a cluster facts file."""

    report: ReportOptions = field(default_factory=ReportOptions)
    facts: tuple[Path, ...] = ()
    cluster_name: str = "cluster"
    passes: str = "auto"
