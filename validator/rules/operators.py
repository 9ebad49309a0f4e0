"""The closed set of check operators, each with the sentence it reads as.

After kube-bench's compare ops: a rule names an operator and a value; the operator both
decides and says, in words, what was expected, so every renderer shows the same
``expected`` text. Values reach an operator already resolved and converted to the fact's
unit (see engine.py); operators never see units or parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from validator.values import JSONValue


class Operator(NamedTuple):
    test: Callable[[JSONValue, JSONValue], bool]
    sentence: str  # "{label}" and "{value}" are filled in by the engine
    needs_value: bool = True


def _num(x: JSONValue) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _ordered(op: Callable[[float, float], bool]) -> Callable[[JSONValue, JSONValue], bool]:
    def test(actual: JSONValue, expected: JSONValue) -> bool:
        if not (_num(actual) and _num(expected)):
            raise TypeError(f"cannot compare {actual!r} with {expected!r} as numbers")
        return op(actual, expected)

    return test


def _eq(actual: JSONValue, expected: JSONValue) -> bool:
    if isinstance(actual, str) and isinstance(expected, str):
        return actual.casefold() == expected.casefold()
    if type(actual) is int and isinstance(expected, str) and expected.strip().isdigit():
        return actual == int(expected)  # `--set xid_fail=48,79` gives a list of strings
    return bool(actual == expected)


def _in(actual: JSONValue, allowed: JSONValue) -> bool:
    return any(_eq(actual, a) for a in allowed)


def _contains_none(actual: JSONValue, banned: JSONValue) -> bool:
    if not isinstance(actual, (list, tuple)):
        raise TypeError(f"expected a list, got {actual!r}")
    return not any(_in(a, banned) for a in actual)


def _contains_all(actual: JSONValue, wanted: JSONValue) -> bool:
    if not isinstance(actual, (list, tuple)):
        raise TypeError(f"expected a list, got {actual!r}")
    return all(_in(w, actual) for w in wanted)


def _between(actual: JSONValue, bounds: JSONValue) -> bool:
    lo, hi = bounds
    return _ordered(lambda a, _: lo <= a <= hi)(actual, lo)


def _divides(actual: JSONValue, divisor: JSONValue) -> bool:
    if not (_num(actual) and _num(divisor)) or divisor == 0:
        raise TypeError(f"cannot test {actual!r} for divisibility by {divisor!r}")
    return float(actual) % float(divisor) == 0


def _is(flag: bool) -> Callable[[JSONValue, JSONValue], bool]:
    def test(actual: JSONValue, _: JSONValue) -> bool:
        if not isinstance(actual, bool):
            raise TypeError(f"expected true or false, got {actual!r}")
        return actual is flag

    return test


OPERATORS: dict[str, Operator] = {
    "eq": Operator(_eq, "{label} = {value}"),
    "ne": Operator(lambda a, e: not _eq(a, e), "{label} != {value}"),
    "gt": Operator(_ordered(lambda a, e: a > e), "{label} > {value}"),
    "gte": Operator(_ordered(lambda a, e: a >= e), "{label} >= {value}"),
    "lt": Operator(_ordered(lambda a, e: a < e), "{label} < {value}"),
    "lte": Operator(_ordered(lambda a, e: a <= e), "{label} <= {value}"),
    "between": Operator(_between, "{label} within {value}"),
    "in": Operator(_in, "{label} one of {value}"),
    "not_in": Operator(lambda a, e: not _in(a, e), "{label} not one of {value}"),
    "contains_none": Operator(_contains_none, "{label} includes none of {value}"),
    "contains_all": Operator(_contains_all, "{label} includes all of {value}"),
    "divides": Operator(_divides, "{label} a multiple of {value}"),
    "is_true": Operator(_is(True), "{label} is on", needs_value=False),
    "is_false": Operator(_is(False), "{label} is off", needs_value=False),
    "empty": Operator(lambda a, _: len(a) == 0, "{label}: none", needs_value=False),
    "not_empty": Operator(lambda a, _: len(a) > 0, "{label}: at least one", needs_value=False),
    "exists": Operator(lambda a, _: a is not None, "{label} is set", needs_value=False),
    # cluster scope: one verdict over a whole collection (see engine._evaluate_aggregate)
    "all_equal": Operator(lambda a, _: len(set(map(repr, a))) <= 1, "{label} identical on every member",
                          needs_value=False),
}

AGGREGATE_OPS = frozenset({"all_equal"})
