"""The options every report shares (``ReportOptions``), the error of options that cannot go
together, and the defaults the verbs' options share.

Why a module of their own: ``options.py`` (``check``'s options) and ``verb_options.py``
(the other verbs') both hold a ``ReportOptions``; ``options.py`` re-exports everything
here and loads ``verb_options.py`` when one of its names is first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from validator.errors import SpecCheckError

DEFAULT_SPEC_VERSION = "1.0"
# the measurements a live fleet run knows, and those it runs when none are named
KNOWN_TOOLS = ("ping", "iperf3", "ib_write_bw", "ib_write_lat", "nccl")
DEFAULT_TOOLS = KNOWN_TOOLS


class OptionsError(SpecCheckError):
    """Options that cannot go together (``--facts`` with ``--kernel-log``): the CLI shows
    it as a usage error of the verb; an outside caller catches it as a SpecCheckError."""


@dataclass(frozen=True)
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
