"""What a fleet's verdicts fold on, and the values a folded verdict saw.

Shared by the fleet evaluator (``fleet.py``) and the shape reader (``shapes.py``), below both
so that neither imports the other for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias

from validator.report.model import FOLDED_VALUES, Finding, Status

if TYPE_CHECKING:
    from validator.report.model import JSONValue

FOLDABLE = (Status.PASS, Status.SKIP)

# what verdicts fold on (``fold_key``): rule, status, expected sentence, unit, a skip's reason
FoldKey: TypeAlias = "tuple[str, Status, str, str | None, str | None]"
# a pass or skip to fold on a host: (its key, the values it saw, the first such finding)
FoldAdd: TypeAlias = "tuple[FoldKey, Span, Finding]"
# per rule, what ``node`` did (``trace``): evaluated on every node, itemized findings, fold additions
TraceStep: TypeAlias = "tuple[bool, list[Finding], list[FoldAdd]]"


def fold_key(f: Finding) -> FoldKey:
    """Verdicts fold together when rule, status, expected sentence and unit agree (and, for
    a skip, its reason): a pass at another threshold or unit is another finding."""
    return (f.rule, f.status, f.expected, f.unit, f.message if f.status is Status.SKIP else None)


def _number(v: JSONValue) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


class Span:
    """How many verdicts, and the values they saw: a numeric range, or distinct texts."""

    __slots__ = ("hi", "hi_text", "lo", "lo_text", "more", "n", "texts")

    def __init__(self) -> None:
        self.n = 0
        self.lo: int | float | None = None
        self.hi: int | float | None = None
        self.lo_text: str | None = None
        self.hi_text: str | None = None
        self.texts: dict[str, None] = {}
        self.more: set[str] = set()

    @classmethod
    def of(cls, found: Iterable[Finding]) -> Span:
        s = cls()
        for f in found:
            s.add_value(f.value, f.observed)
        return s

    def add_value(self, v: JSONValue, text: str | None) -> None:
        self.n += 1
        if _number(v):
            if self.lo is None or v < self.lo:
                self.lo, self.lo_text = v, text
            if self.hi is None or v > self.hi:
                self.hi, self.hi_text = v, text
        elif text is not None:
            self._text(text)

    def _text(self, text: str) -> None:
        if text in self.texts:
            return
        if len(self.texts) < FOLDED_VALUES:
            self.texts[text] = None
        elif len(self.more) < 10_000:  # a count, bounded (serial numbers)
            self.more.add(text)

    def key(self) -> tuple[object, ...]:
        """What the span says, as a key: spans of equal keys are interchangeable."""
        return (self.n, type(self.lo), self.lo, type(self.hi), self.hi, self.lo_text, self.hi_text,
                tuple(self.texts), tuple(sorted(self.more)))

    def merge(self, other: Span, times: int = 1) -> None:
        self.n += other.n * times
        if other.lo is not None and (self.lo is None or other.lo < self.lo):
            self.lo, self.lo_text = other.lo, other.lo_text
        if other.hi is not None and (self.hi is None or other.hi > self.hi):
            self.hi, self.hi_text = other.hi, other.hi_text
        for t in other.texts:
            self._text(t)
        for t in other.more:
            self._text(t)
