"""``spec-check check``'s run once its options are parsed, by click (validator/cli/node.py)
or by validator/cli/quick.py: the same function either way, so the two paths differ only in
how the arguments were read."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, TypedDict

from validator.api.node import check_node
from validator.api.options import CheckOptions
from validator.cli.finish import call, finish_outcome, run_options


class CheckParams(TypedDict):
    """``check``'s options as click passes them to its callback (click's parameter names;
    every one present, a default where not given)."""

    facts_files: tuple[Path, ...]
    sysfs: Path
    procfs: Path
    rootfs: Path
    nvml: bool | None
    kernel_log: Path | None
    since: Path | None
    dcgm_diag: int | None
    scrape: tuple[str, ...]
    scrape_interval: float
    scrape_timeout: float
    spec_version: str
    profile: Path | None
    sets: tuple[str, ...]
    fmt: str
    output: Path | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    fail_on: str
    waivers: Path | None
    rules_dir: Path | None
    rules_version: str | None
    show: tuple[str, ...]
    baseline: Path | None


def run_check(params: CheckParams) -> NoReturn:
    """Check with ``params``, say, render, and exit with the outcome's code."""
    opts = run_options(dict(params))  # the common options (the rest are check's own)
    check_opts = CheckOptions(
        report=opts.report, facts=tuple(params["facts_files"]), sysfs=params["sysfs"], procfs=params["procfs"],
        rootfs=params["rootfs"], nvml=params["nvml"], kernel_log=params["kernel_log"],
        dcgm_diag=params["dcgm_diag"], since=params["since"], scrape=tuple(params["scrape"]),
        scrape_interval=params["scrape_interval"], scrape_timeout=params["scrape_timeout"],
    )
    finish_outcome(call(check_node, check_opts), opts)
