"""The ``spec-check`` command: a click group whose verbs load on first use.

Start-up is part of the product (pre-commit hooks, Slurm prologs), so ``--help`` and each
verb import only what that verb needs. Each verb lives in its own module; this table is
the only place that lists them. cli/ parses options into validator.api's dataclasses,
calls the library (which builds, evaluates and computes the exit code), renders its
outcome, and exits with the outcome's code.

The group itself is in validator/cli/group.py (``cli`` here is that group, loaded on first
use); click parses every verb's arguments, and validator/cli/run.py ends every run the same
way (one-line errors, exit 2).
"""

from __future__ import annotations

import sys
from typing import Any

from validator.cli.verbs import VERBS as VERBS  # re-exported: the one table of verbs


def main(argv: list[str] | None = None) -> Any:  # Any: what click's Group.main returns
    args = sys.argv[1:] if argv is None else list(argv)
    from validator.cli.group import cli
    from validator.cli.run import run_cli

    return run_cli(cli, args)


def __getattr__(name: str) -> object:
    """``validator.cli.cli`` (and ``LazyGroup``): the click group, imported on first use."""
    if name in ("cli", "LazyGroup"):
        from validator.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
