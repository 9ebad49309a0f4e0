"""--select / --ignore by rule or requirement ID prefix, longest prefix wins.

After flake8's DecisionEngine: ``--select NET --ignore NET-02`` keeps every NET rule but
NET-02's; ``--ignore NET --select NET-01.fabric`` keeps just that one. A rule ID begins
with its requirement ID (``NET-01.fabric-port-slow``), so one prefix test covers both.
On a tie, ignore wins. A prefix that matches no rule is a usage error (a typo would
otherwise silently check nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from validator.errors import SpecCheckError
from validator.rules.rulemodel import Scope


def _longest(rule_id: str, prefixes: Sequence[str]) -> int:
    return max((len(p) for p in prefixes if rule_id.upper().startswith(p.upper())), default=-1)


def is_selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    sel = _longest(rule_id, select) if select else 0
    ign = _longest(rule_id, ignore)
    if sel < 0:
        return False
    return sel > ign


VERB_OF_SCOPE: dict[str, str] = {
    Scope.NODE: "spec-check check", Scope.JOB: "spec-check lint", Scope.CLUSTER: "spec-check cluster"}


def check_prefixes(rule_ids: Iterable[str], select: Sequence[str], ignore: Sequence[str], *,
                   elsewhere: Mapping[str, str] | None = None) -> None:
    """Every prefix matches a rule this verb evaluates. ``elsewhere`` maps the rule IDs of
    other scopes to their scope, so ``check --select CKPT-01`` says which verb checks it."""
    ids = [r.upper() for r in rule_ids]
    for option, prefixes in (("--select", select), ("--ignore", ignore)):
        for p in prefixes:
            if any(r.startswith(p.upper()) for r in ids):
                continue
            scopes = sorted({scope for rid, scope in (elsewhere or {}).items() if rid.upper().startswith(p.upper())})
            if scopes:
                verbs = " or ".join(f"`{VERB_OF_SCOPE.get(s, s)}`" for s in scopes)
                raise SpecCheckError(f'{option} {p}: matches only {" and ".join(scopes)} rules; use {verbs}')
            raise SpecCheckError(f'{option} {p}: matches no rule (see `spec-check rules list`)')


def check_something_selected(rule_ids: Iterable[str], select: Sequence[str], ignore: Sequence[str]) -> None:
    """A run that would evaluate no rule must not report "conformant": a usage error."""
    if not any(is_selected(r, select, ignore) for r in rule_ids):
        given = " ".join(f"{opt} {','.join(ps)}" for opt, ps in (("--select", select), ("--ignore", ignore)) if ps)
        raise SpecCheckError(f"no rules selected: {given} leave nothing to check")


def split_csv(values: Iterable[str]) -> tuple[str, ...]:
    """``--select A,B --select C`` -> (A, B, C)."""
    return tuple(p.strip() for v in values for p in v.split(",") if p.strip())
