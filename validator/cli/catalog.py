"""``spec-check rules`` and ``spec-check spec``: the catalogue and the rules, for people.

Which rules, found how, and their JSON forms are the library's (``validator.api.catalog``);
this module renders the text and markdown forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from validator.api.catalog import catalogue as _built
from validator.api.catalog import chosen_rules, fact_words, find_rule, params_of, rule_rows
from validator.cli.common import DEFAULT_SPEC_VERSION, rules_option, rules_version_option
from validator.rules.rulemodel import SCOPES

if TYPE_CHECKING:
    from validator.api.steps import Built
    from validator.rules.rulemodel import Rule


@click.group(invoke_without_command=True)
@click.pass_context
def rules(ctx: click.Context) -> None:
    """List the rules (alone: `rules list`), or explain one rule or requirement."""
    if ctx.invoked_subcommand is None:  # a user's first try lists, as `rules list` does
        ctx.invoke(list_rules)


@rules.command("list", short_help="Every rule with its requirement ID, level and scope.")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
@click.option("--scope", type=click.Choice(SCOPES), default=None)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="markdown: the requirement table (as in the README).")
@rules_option()
@rules_version_option()
def list_rules(spec_version: str, scope: str | None, fmt: str, rules_dir: Path | None,
               rules_version: str | None) -> None:
    """Every rule with its requirement ID, level and scope."""
    built = _built(spec_version, rules_dir, rules_version)
    chosen = chosen_rules(built, scope)
    if fmt == "markdown":
        click.echo(requirement_table(built, chosen), nl=False)
        return
    rows = rule_rows(built, chosen)
    if fmt == "json":
        click.echo(json.dumps([row.as_dict() for row in rows], indent=2))
        return
    width = max((len(r.id) for r in rows), default=10)
    click.echo(f"{'RULE':<{width}}  {'REQ':<8} {'LEVEL':<6} {'SCOPE':<7} SUMMARY")
    for row in rows:
        click.echo(f"{row.id:<{width}}  {row.requirement:<8} {row.level:<6} {row.scope:<7} {row.summary}")


def requirement_table(built: Built, chosen: list[Rule]) -> str:
    """The README's table: each requirement with the rules that check it, in spec order."""
    lines = ["| ID | level | requirement | checked by (scope) |", "|---|---|---|---|"]
    for req in built.ctx.spec.requirements:
        members = [r for r in chosen if r.requirement == req.id]
        cell = "<br>".join(f"`{r.id}` ({r.scope})" for r in members) or "no rule yet"
        lines.append(f"| {req.id} | {req.level} | {req.title} | {cell} |")
    return "\n".join(lines) + "\n"


AGAINST_WORDS = {"nodes": "its nodes' facts, given by lint --nodes",
                 "run": "what NCCL said in its run's logs, given by lint --run"}


@rules.command("explain", short_help="What a rule or requirement checks, why, and how to fix it.")
@click.argument("rule_id")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
@rules_option()
@rules_version_option()
def explain(rule_id: str, spec_version: str, rules_dir: Path | None, rules_version: str | None) -> None:
    """What a rule (or every rule of a requirement) checks, why, and how to fix it."""
    built = _built(spec_version, rules_dir, rules_version)
    spec, pack = built.ctx.spec, built.pack
    req = spec.requirement(rule_id.upper())
    if req is not None:
        click.echo(f"{req.id} ({req.level}) {req.title}\n\n{req.statement.strip()}\n\nWhy: {req.rationale.strip()}")
        if req.parameters:
            click.echo("\nParameters: " + ", ".join(
                f"{p} = {built.ctx.params[p].text}" for p in req.parameters))
        members = [r for r in pack.rules if r.requirement == req.id]
        click.echo("\nRules:" if members else "\nRules: none in this pack")
        for r in members:
            click.echo(f"  {r.id:<34} {r.scope:<7} {r.summary.strip()}")
        return
    from validator.evaluate.engine import describe_rule

    r = find_rule(built, rule_id)
    words = describe_rule(built.ctx, r)
    click.echo(f"{r.id}  ({pack.level_of(r, spec)}, {r.scope} scope, requirement {r.requirement})\n")
    click.echo(f"{r.summary.strip()}\n\nWhy: {r.why.strip()}\n\nFix: {r.remediation.strip()}\n")
    if r.against is not None:  # a rule that compares two documents (lint --nodes / --run)
        reads = f"{fact_words(built.ctx.catalogue, r.fact, r.field)} with " if r.fact else "the job with "
        click.echo(f"Expected: {words['expected']}  (compares {reads}{AGAINST_WORDS[r.against]})")
    else:
        click.echo(f"Expected: {words['expected']}  (reads {fact_words(built.ctx.catalogue, r.fact, r.field)})")
    for text in words["when"]:
        click.echo(f"Applies only where: {text}")
    for text in words["filter"]:
        click.echo(f"Judges only items where: {text}")
    for text, why in words["where"]:
        click.echo(f"Skips items unless: {text}" + (f" ({why})" if why else ""))
    names = params_of([r.check.value, *(c.value for c in (*r.when, *r.where, *r.filter))])
    if names:
        # findings say the values; the names are what --set and a profile take
        click.echo("Parameters: " + ", ".join(f"{n} = {built.ctx.params[n].text}" for n in names)
                   + " (override with --set NAME=VALUE or a profile)")


@rules.command("diff", short_help="What changed between two bundled rule packs.")
@click.argument("old")
@click.argument("new")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def diff_rules(old: str, new: str, spec_version: str, fmt: str) -> None:
    """What changed between two bundled rule packs (e.g. `rules diff 1.0 1.1`): rules added,
    removed or disabled, and the fields changed, each with the newer pack's CHANGELOG entry."""
    from validator.rules.loader import pack_dir_for
    from validator.rules.packdiff import diff_packs, render_text

    a = _built(spec_version, rules_version=old).pack
    b = _built(spec_version, rules_version=new).pack
    d = diff_packs(a, b, pack_dir_for(spec_version, rules_version=new))
    click.echo(json.dumps(d.to_dict(), indent=2) + "\n" if fmt == "json" else render_text(d), nl=False)


@click.group(invoke_without_command=True)
@click.pass_context
def spec(ctx: click.Context) -> None:
    """The requirement catalogue (alone: `spec show`), and a sample profile."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(show)


@spec.command("show", short_help="Every requirement (or one) with its level and parameters.")
@click.argument("requirement", required=False)
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(requirement: str | None, spec_version: str, fmt: str) -> None:
    """Every requirement (or one) with its level, statement and parameters."""
    from validator.api.catalog import requirements, spec_as_dict
    from validator.rules.bundled import load_bundled

    s = load_bundled(spec_version, pack=False)[0]  # the compiled catalogue (validator/rules/bundled.json)
    reqs = requirements(s, spec_version, requirement)
    if fmt == "json":  # with one requirement, only its parameters
        click.echo(json.dumps(spec_as_dict(s, reqs, bool(requirement)), indent=2))
        return
    click.echo(f"{s.title} — spec v{s.spec_version}\n{s.status.strip()}\n")
    for r in reqs:
        click.echo(f"{r.id:<8} {r.level:<6} {r.title}")
        click.echo(f"         {r.statement.strip()}")
        click.echo(f"         Why: {' '.join(r.rationale.split())}")
        for p in r.parameters:
            param = s.parameters[p]
            click.echo(f"         parameter {p} = {param.default if param.default is not None else 'unset'}"
                       f"  ({param.source.strip()})")
        click.echo("")


@spec.command("export", short_help="The catalogue in a format other tools read (OSCAL catalog).")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["oscal-catalog"]), required=True,
              help="oscal-catalog: an OSCAL 1.0.6 catalog, every requirement a control.")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write to FILE (atomically) instead of stdout.")
def export(spec_version: str, fmt: str, output: Path | None) -> None:
    """Export the requirement catalogue: every requirement a control with its ID, statement,
    level and thresholds as parameters, generated from spec/ (the control IDs that
    `--format oscal` assessment results name).

    \b
    Example:
      spec-check spec export --format oscal-catalog -o spec-v1.0.oscal.json
    """
    from validator.build_info import tool_version
    from validator.clock import now_utc
    from validator.report.oscal_catalog import catalog
    from validator.rules.spec import load_spec

    text = json.dumps(catalog(load_spec(spec_version), now_utc(), tool_version()), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        from validator.io.atomic import write_atomic

        write_atomic(output, text)
        click.echo(f"spec-check: wrote {fmt} to {output} ({len(text.encode()):,} bytes)", err=True)


@spec.command("sample-profile", short_help="Print an annotated profile, valid as printed.")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
def sample_profile(spec_version: str) -> None:
    """Print a profile with every key explained and every parameter at its default,
    commented out: save it (`spec-check spec sample-profile > profile.yaml`), uncomment
    what differs on your platform, and pass it with --profile (docs/profile.md)."""
    from validator.rules.profile_sample import sample_profile as sample
    from validator.rules.spec import load_spec

    click.echo(sample(load_spec(spec_version)), nl=False)
