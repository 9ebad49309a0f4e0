"""--select / --ignore by rule or requirement ID prefix, longest prefix wins.

After flake8's DecisionEngine: ``--select NET --ignore NET-02`` keeps every NET rule but
NET-02's; ``--ignore NET --select NET-01.fabric`` keeps just that one. A rule ID begins
with its requirement ID (``NET-01.fabric-port-slow``), so one prefix test covers both.
On a tie, ignore wins. A prefix that matches no rule is a usage error (a typo would
otherwise silently check nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from validator.errors import SpecCheckError


def _longest(rule_id: str, prefixes: Sequence[str]) -> int:
    return max((len(p) for p in prefixes if rule_id.upper().startswith(p.upper())), default=-1)


def is_selected(rule_id: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    sel = _longest(rule_id, select) if select else 0
    ign = _longest(rule_id, ignore)
    if sel < 0:
        return False
    return sel > ign


def check_prefixes(rule_ids: Iterable[str], select: Sequence[str], ignore: Sequence[str]) -> None:
    ids = [r.upper() for r in rule_ids]
    for option, prefixes in (("--select", select), ("--ignore", ignore)):
        for p in prefixes:
            if not any(r.startswith(p.upper()) for r in ids):
                raise SpecCheckError(f'{option} {p}: matches no rule (see `spec-check rules list`)')


def split_csv(values: Iterable[str]) -> tuple[str, ...]:
    """``--select A,B --select C`` -> (A, B, C)."""
    return tuple(p.strip() for v in values for p in v.split(",") if p.strip())
