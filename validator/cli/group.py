"""The click group of ``spec-check``: its verbs (validator/cli/__init__.py's ``VERBS``) load
on first use, and an unknown verb names the closest ones."""

from __future__ import annotations

import importlib

import click

from validator import DISTRIBUTION
from validator.cli.verbs import VERBS


def _load(name: str) -> click.Command | None:
    module_name, attr, _ = VERBS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None  # a verb not built yet in this version
        raise
    command: click.Command = getattr(module, attr)
    if command.epilog is None:
        from validator.cli.examples import epilog

        command.epilog = epilog(name)  # the verb's examples, shown by its --help
    return command


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(VERBS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in VERBS:
            return None
        return _load(cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
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


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``spec-check 0.4.0.dev0+g1a2b3c4d5e6f (training-spec-check)``: the build, its commit where
    known (validator/build_info.py, looked up only now); the distribution name tells this
    tool from the unrelated `spec-check` package."""
    if not value or ctx.resilient_parsing:
        return
    from validator.build_info import build_version

    click.echo(f"spec-check {build_version()} ({DISTRIBUTION})")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version and exit.")
def cli() -> None:
    """Check GPU training clusters and training jobs against the 2026 large-scale
    training specification (spec v1.0).

    \b
    Exit codes: 0 conformant, 1 not conformant, 2 the run itself could not be done.
    """
