"""Sequences whose items are made when read, and regular expressions compiled when first used.

Why: a 25,000-node replay must not hold a ``str``, ``Path``, item dict or subject record
per host (validator/cluster/rows.py). Each such sequence keeps something compact and
makes an item from it when asked for; the indexing rules (a slice is a list, a negative
index counts from the end, past either end is an IndexError) are written once, here.

A :class:`Pattern` is a regular expression a module declares at its top but compiles at its
first use: most of the patterns of the modules on the ``check`` and ``lint`` paths are not
used by a given run, and compiling them at import was 5-10 ms of every start.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, AnyStr, Generic

if TYPE_CHECKING:
    import re


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


class Pattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)``, compiled at the first call of one of its methods (the
    compiled pattern is kept); ``compiled()`` gives the ``re.Pattern`` itself, for a loop
    that binds ``.match`` once. Any other attribute is the compiled pattern's."""

    __slots__ = ("_args", "_re")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self._args: tuple[AnyStr, int] = (pattern, flags)
        self._re: re.Pattern[AnyStr] | None = None

    def compiled(self) -> re.Pattern[AnyStr]:
        if self._re is None:
            import re

            self._re = re.compile(*self._args)
        return self._re

    @property
    def pattern(self) -> AnyStr:
        return self._args[0]

    def match(self, string: AnyStr, *args: int) -> re.Match[AnyStr] | None:
        return self.compiled().match(string, *args)

    def fullmatch(self, string: AnyStr, *args: int) -> re.Match[AnyStr] | None:
        return self.compiled().fullmatch(string, *args)

    def search(self, string: AnyStr, *args: int) -> re.Match[AnyStr] | None:
        return self.compiled().search(string, *args)

    def findall(self, string: AnyStr, *args: int) -> list[Any]:
        return self.compiled().findall(string, *args)

    def finditer(self, string: AnyStr, *args: int) -> Iterator[re.Match[AnyStr]]:
        return self.compiled().finditer(string, *args)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]:
        return self.compiled().split(string, maxsplit)

    def sub(self, repl: Any, string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: Any, string: AnyStr, count: int = 0) -> tuple[AnyStr, int]:
        return self.compiled().subn(repl, string, count)

    def __getattr__(self, name: str) -> Any:  # groupindex, groups, flags, scanner, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"Pattern({self._args[0]!r}, {self._args[1]})"
