"""The ``spec-check`` command: a click group whose verbs load on first use.

Start-up is part of the product (pre-commit hooks, Slurm prologs), so ``--help`` and each
verb import only what that verb needs. Each verb lives in its own module; this table is
the only place that lists them. cli/ parses options into validator.api's dataclasses,
calls the library (which builds, evaluates and computes the exit code), renders its
outcome, and exits with the outcome's code.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from validator import DISTRIBUTION, __version__

# verb -> (module, attribute, one-line help shown by --help without importing the module)
VERBS: dict[str, tuple[str, str, str]] = {
    "check": ("validator.cli.node", "check", "Check this node (or recorded --facts) against the spec."),
    "probe": ("validator.cli.node", "probe", "Record this node's facts as JSON."),
    "health": ("validator.cli.health", "health", "Slurm health check: drain a failing node, resume it when it passes."),
    "lint": ("validator.cli.lint", "lint", "Lint training job configs against the spec."),
    "cluster": ("validator.cli.cluster", "cluster", "Check a fleet over SSH, Slurm or locally."),
    "report": ("validator.cli.report", "report", "Render a result in another format."),
    "diff": ("validator.cli.report", "diff", "Compare two results; exit 1 on new failures."),
    "keygen": ("validator.cli.signing", "keygen", "Write an Ed25519 key pair for signing results."),
    "sign": ("validator.cli.signing", "sign", "Sign a result."),
    "verify": ("validator.cli.signing", "verify", "Verify a signed result."),
    "rules": ("validator.cli.catalog", "rules", "List the rules, or explain one."),
    "spec": ("validator.cli.catalog", "spec", "Show the requirement catalogue."),
}


def _load(name: str) -> click.Command | None:
    module_name, attr, _ = VERBS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None  # a verb not built yet in this version
        raise
    command: click.Command = getattr(module, attr)
    return command


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(VERBS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in VERBS:
            return None
        return _load(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown verb names the closest ones (``chekc`` -> ``check``)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in VERBS:
            import difflib

            close = difflib.get_close_matches(name, list(VERBS), n=3, cutoff=0.5)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} (see `spec-check --help`)")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, VERBS[name][2]) for name in VERBS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
# the distribution name in the line tells this tool from the unrelated `spec-check` package
@click.version_option(__version__, prog_name="spec-check", message=f"%(prog)s %(version)s ({DISTRIBUTION})")
def cli() -> None:
    """Check GPU training clusters and training jobs against the 2026 large-scale
    training specification (spec v1.0).

    \b
    Exit codes: 0 conformant, 1 not conformant, 2 the run itself could not be done.
    """


def main(argv: list[str] | None = None) -> Any:  # Any: what click's Group.main returns
    from validator.cli.run import run_cli

    return run_cli(cli, argv if argv is not None else sys.argv[1:])
