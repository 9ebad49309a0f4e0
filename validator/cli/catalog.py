"""``spec-check rules`` and ``spec-check spec``: the catalogue and the rules, for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from validator.cli.common import DEFAULT_SPEC_VERSION, RunOptions, build, rules_option, rules_version_option
from validator.rules.rulemodel import SCOPES


def _built(spec_version: str, rules_dir: Path | None = None, rules_version: str | None = None) -> Any:
    return build(RunOptions(spec_version=spec_version, rules=rules_dir, rules_version=rules_version))


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
    order = {req.id: i for i, req in enumerate(built.ctx.spec.requirements)}
    chosen = sorted((r for r in built.pack.rules if scope is None or r.scope == scope),
                    key=lambda r: (order.get(r.requirement, len(order)), r.id))
    if fmt == "markdown":
        click.echo(requirement_table(built, chosen), nl=False)
        return
    if fmt == "json":
        rows = [{"id": r.id, "requirement": r.requirement, "level": built.pack.level_of(r, built.ctx.spec),
                 "scope": r.scope, "summary": r.summary.strip()} for r in chosen]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max((len(r.id) for r in chosen), default=10)
    click.echo(f"{'RULE':<{width}}  {'REQ':<8} {'LEVEL':<6} {'SCOPE':<7} SUMMARY")
    for r in chosen:
        level = built.pack.level_of(r, built.ctx.spec)
        click.echo(f"{r.id:<{width}}  {r.requirement:<8} {level:<6} {r.scope:<7} {r.summary.strip()}")


def requirement_table(built: Any, chosen: list[Any]) -> str:
    """The README's table: each requirement with the rules that check it, in spec order."""
    lines = ["| ID | level | requirement | checked by (scope) |", "|---|---|---|---|"]
    for req in built.ctx.spec.requirements:
        members = [r for r in chosen if r.requirement == req.id]
        cell = "<br>".join(f"`{r.id}` ({r.scope})" for r in members) or "no rule yet"
        lines.append(f"| {req.id} | {req.level} | {req.title} | {cell} |")
    return "\n".join(lines) + "\n"


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

    if rule_id not in {r.id for r in pack.rules}:
        from validator.errors import UnknownRuleError

        raise UnknownRuleError(f'no such rule: "{rule_id}"'
                               f"{_closest_ids(rule_id, spec, pack)} (see `spec-check rules list`)")
    r = pack.get(rule_id)
    words = describe_rule(built.ctx, r)
    click.echo(f"{r.id}  ({pack.level_of(r, spec)}, {r.scope} scope, requirement {r.requirement})\n")
    click.echo(f"{r.summary.strip()}\n\nWhy: {r.why.strip()}\n\nFix: {r.remediation.strip()}\n")
    click.echo(f"Expected: {words['expected']}  (reads {_fact_words(built.ctx.catalogue, r.fact, r.field)})")
    for text in words["when"]:
        click.echo(f"Applies only where: {text}")
    for text in words["filter"]:
        click.echo(f"Judges only items where: {text}")
    for text, why in words["where"]:
        click.echo(f"Skips items unless: {text}" + (f" ({why})" if why else ""))
    names = _params_of([r.check.value, *(c.value for c in (*r.when, *r.where, *r.filter))])
    if names:
        # findings say the values; the names are what --set and a profile take
        click.echo("Parameters: " + ", ".join(f"{n} = {built.ctx.params[n].text}" for n in names)
                   + " (override with --set NAME=VALUE or a profile)")


def _fact_words(catalogue: Any, fact: str, field: str | None) -> str:
    """A fact in words: its label from the fact catalogue (spec/facts/*.yaml), then its key in
    quotes, the name `spec-check probe` output and --facts files use: `hung-rank detection time
    ("job.recovery.hang_detection")`, `each GPU's ECC mode (current) ("gpu.devices" field "ecc_enabled")`."""
    info = catalogue.get(fact)
    label = info.label if info is not None else fact
    if not field:
        return f'{label} ("{fact}")'
    sub = info.fields.get(field) if info is not None else None
    return f'each {label}\'s {sub.label if sub is not None else field} ("{fact}" field "{field}")'


def _closest_ids(typed: str, spec: Any, pack: Any) -> str:
    """`; did you mean NET-01?` for NET-1 (a requirement ID without its zero), else the
    rule or requirement IDs closest to what was typed, one line."""
    import difflib
    import re

    reqs = [q.id for q in spec.requirements]
    ids = reqs + [r.id for r in pack.rules]
    m = re.fullmatch(r"([A-Za-z]+)-?0*(\d+)(\..*)?", typed.strip())
    if m:  # NET-1 -> NET-01, plat-2.gpu-model-mixed -> PLAT-02.gpu-model-mixed
        typed = f"{m.group(1).upper()}-{int(m.group(2)):02d}{m.group(3) or ''}"
        if typed in ids:
            return f"; did you mean {typed}?"
    close = difflib.get_close_matches(typed, ids, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _params_of(values: list[object]) -> list[str]:
    """The spec parameters a rule's values name, in order of first use."""
    out: list[str] = []

    def walk(v: object) -> None:
        if isinstance(v, dict):
            if isinstance(v.get("param"), str) and v["param"] not in out:
                out.append(v["param"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for v in values:
        walk(v)
    return out


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
    from validator.rules.compiled import load_bundled

    s = load_bundled(spec_version, pack=False)[0]  # the compiled catalogue (validator/rules/compiled.py)
    reqs = s.requirements
    if requirement:
        reqs = [r for r in reqs if r.id.startswith(requirement.upper())]
        if not reqs:
            from validator.errors import UnknownRuleError

            raise UnknownRuleError(f'no requirement "{requirement}" in spec {spec_version}')
    if fmt == "json":
        data = s.model_dump(mode="json")
        data["requirements"] = [r.model_dump(mode="json") for r in reqs]
        if requirement:  # only the parameters of the requirements shown
            used = {p for r in reqs for p in r.parameters}
            data["parameters"] = {k: v for k, v in data["parameters"].items() if k in used}
        click.echo(json.dumps(data, indent=2))
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


@spec.command("sample-profile", short_help="Print an annotated profile, valid as printed.")
@click.option("--spec-version", default=DEFAULT_SPEC_VERSION, show_default=True)
def sample_profile(spec_version: str) -> None:
    """Print a profile with every key explained and every parameter at its default,
    commented out: save it (`spec-check spec sample-profile > profile.yaml`), uncomment
    what differs on your platform, and pass it with --profile (docs/profile.md)."""
    from validator.rules.profile_sample import sample_profile as sample
    from validator.rules.spec import load_spec

    click.echo(sample(load_spec(spec_version)), nl=False)
