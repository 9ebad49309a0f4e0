"""Sequences whose items are made when read.

Why: a 25,000-node replay must not hold a ``str``, ``Path``, item dict or subject record
per host (validator/cluster/rows.py). Each such sequence keeps something compact and
makes an item from it when asked for; the indexing rules (a slice is a list, a negative
index counts from the end, past either end is an IndexError) are written once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any


class Made(Sequence):
    """Subclasses give ``__len__`` and ``_made(i)`` for ``0 <= i < len(self)``."""

    __slots__ = ()

    def _made(self, i: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._made(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._made(i)

    def __iter__(self) -> Iterator[Any]:
        return map(self._made, range(len(self)))


class MadeBy(Made):
    """``n`` items, item i being ``make(i)``."""

    __slots__ = ("_make", "_n")

    def __init__(self, n: int, make: Callable[[int], Any]):
        self._n, self._make = n, make

    def __len__(self) -> int:
        return self._n

    def _made(self, i: int) -> Any:
        return self._make(i)
