"""The options of each run, as frozen dataclasses: what the CLI parses into and what an
outside Python caller builds by hand.

Why: the options of a run were keyword lists (``cluster/live.py`` passed the same twelve
twice) and a ``dict`` of extras. Here each verb's options are one typed value, and the
options every report shares (spec, parameters, rule pack, selection, waivers, baseline,
``--fail-on``) are one ``ReportOptions`` held by each. Rendering (format, output file,
``--show``) is not here: it is the caller's business (``validator/cli`` renders).

Nothing heavy is imported here: this module is on the ``check``/``lint`` start-up path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from validator.errors import SpecCheckError
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S
from validator.values.records import record

DEFAULT_SPEC_VERSION = "1.0"
# the measurements a live fleet run knows, and those it runs when none are named
KNOWN_TOOLS = ("ping", "iperf3", "ib_write_bw", "ib_write_lat", "nccl")
DEFAULT_TOOLS = KNOWN_TOOLS


class OptionsError(SpecCheckError):
    """Options that cannot go together (``--facts`` with ``--kernel-log``): the CLI shows
    it as a usage error of the verb; an outside caller catches it as a SpecCheckError."""


@record(frozen=True)
class ReportOptions:
    """What every report shares: the spec and its parameters, the rule pack, which rules
    run, waivers, a baseline and the ``fail_on`` level of the exit code."""

    spec_version: str = DEFAULT_SPEC_VERSION
    profile: Path | None = None  # YAML file overriding spec parameters
    sets: tuple[str, ...] = ()  # KEY=VALUE parameter overrides
    select: tuple[str, ...] = ()  # rule or requirement ID prefixes (already split on commas)
    ignore: tuple[str, ...] = ()
    fail_on: str = "fail"  # "fail", or "warn": a warn (or error) is not conformant too
    waivers: Path | None = None
    rules: Path | None = None  # a custom rule pack directory instead of the bundled one
    rules_version: str | None = None  # a bundled pack by version
    baseline: Path | None = None  # a saved JSON result: only new problems count


@record(frozen=True)
class CheckOptions:
    """``check``: recorded node facts (``facts``), or this node probed (the rest)."""

    report: ReportOptions = field(default_factory=ReportOptions)
    facts: tuple[Path, ...] = ()
    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    rootfs: Path = Path("/")
    nvml: bool | None = None  # query the GPU driver; None: only when sysfs is /sys
    kernel_log: Path | None = None
    dcgm_diag: int | None = None
    since: Path | None = None
    scrape: tuple[str, ...] = ()
    scrape_interval: float = SCRAPE_INTERVAL_S
    scrape_timeout: float = DEFAULT_DEADLINE_S


@record(frozen=True)
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


@record(frozen=True)
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


@record(frozen=True)
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


@record(frozen=True)
class ReplayOptions:
    """A fleet replayed from saved facts: a ``--save-facts`` directory, node facts files
    and/or a cluster facts file."""

    report: ReportOptions = field(default_factory=ReportOptions)
    facts: tuple[Path, ...] = ()
    cluster_name: str = "cluster"
    passes: str = "auto"
