"""Slurm-style host lists: ``compress`` writes ``node[01-03,05]`` from host names.

A value format, below every stage that names hosts in a sentence: the fleet
(``validator.cluster``), and a job judged against its nodes (``validator.jobnodes``),
which the engine calls. ``validator.cluster.hosts`` parses the same notation
(``expand``, ``parse_hosts``) and re-exports ``compress``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

# ASCII digits only: ``\d`` also matches other scripts' digits (``int("٣")`` is 3), which
# would name host "n٣" as n3, in a host list that drops one of n3 and n٣
_NUMBERED = re.compile(r"^(.*?)([0-9]+)$")
# a number longer than a host name can be (253 characters) is part of the name: int()
# refuses 4,300 digits (sys.get_int_max_str_digits), and the fold would end in a traceback
MAX_DIGITS = 253


def _compress_ascending(names: Sequence[str]) -> str | None:
    """``compress``'s text when each prefix's numbers come in ascending order (a number
    repeated next to itself counts once); else None."""
    spans: dict[tuple[str, int], list[int]] = {}  # lo, hi, lo, hi, ...
    plain: set[str] = set()
    for name in names:
        parsed = _numbered(name)
        if parsed is None:
            plain.add(name)
            continue
        prefix, width, n = parsed
        runs = spans.get((prefix, width))
        if runs is None:
            spans[(prefix, width)] = [n, n]
        elif n == runs[-1] + 1:
            runs[-1] = n
        elif n > runs[-1]:
            runs += (n, n)
        elif n != runs[-1]:
            return None
    for prefix, width in list(spans):  # n10000 joins n[00001-09999], as in compress
        unpadded = spans.get((prefix, 0)) if width else None
        if unpadded:
            joined, rest = _split_runs(unpadded, 10 ** (width - 1), 10**width - 1)
            spans[(prefix, width)] = _merged_runs(spans[(prefix, width)] + joined)
            spans[(prefix, 0)] = rest
    parts: list[tuple[str, str]] = [(p, p) for p in plain]
    for (prefix, width), runs in spans.items():
        if not runs:
            continue
        if len(runs) == 2 and runs[0] == runs[1]:
            text = f"{prefix}{runs[0]:0{width}d}"
        else:
            text = prefix + "[" + ",".join(
                f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi:0{width}d}"
                for lo, hi in zip(runs[::2], runs[1::2], strict=True)) + "]"
        parts.append((f"{prefix}{runs[0]:0{width}d}", text))
    return ",".join(text for _, text in sorted(parts))


def _split_runs(runs: list[int], lo: int, hi: int) -> tuple[list[int], list[int]]:
    """(the parts of ``runs`` within lo..hi, the parts outside), as runs."""
    inside: list[int] = []
    outside: list[int] = []
    for a, b in zip(runs[::2], runs[1::2], strict=True):
        if max(a, lo) <= min(b, hi):
            inside += (max(a, lo), min(b, hi))
        if a < lo:
            outside += (a, min(b, lo - 1))
        if b > hi:
            outside += (max(a, hi + 1), b)
    return inside, outside


def _merged_runs(runs: list[int]) -> list[int]:
    """Runs sorted, those that touch or overlap made one."""
    out: list[int] = []
    for a, b in sorted(zip(runs[::2], runs[1::2], strict=True)):
        if out and a <= out[-1] + 1:
            out[-1] = max(out[-1], b)
        else:
            out += (a, b)
    return out


def _numbered(name: str) -> tuple[str, int, int] | None:
    """(prefix, zero-padded width or 0, number) of a name ending in digits, as ``compress``
    groups it; None for a name it leaves as it is."""
    m = _NUMBERED.match(name)
    if m is None or "[" in name or "," in name or len(m.group(2)) > MAX_DIGITS:
        return None
    digits = m.group(2)
    return m.group(1), len(digits) if digits.startswith("0") and len(digits) > 1 else 0, int(digits)


def compress(names: Sequence[str] | set[str]) -> str:
    """The inverse of ``expand`` over a list: ``node01 node02 node03 node05 gpu7`` ->
    ``gpu7,node[01-03,05]``, as Slurm writes host lists (one bracket per prefix and zero
    padding), sorted, each name once. ``parse_hosts`` of the text gives
    the same set back (a test checks). Names without a trailing number stay as they are.

    Names in ascending order per prefix (a fleet's hosts in file order, 25,000 of them)
    are read once into spans, without a set or a list of every name or number (a
    sequence made when read, such as a ``rows.StringTable``, stays unmade); any other
    order takes the general path."""
    if isinstance(names, Sequence):
        text = _compress_ascending(names)
        if text is not None:
            return text
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in set(names):
        parsed = _numbered(name)
        if parsed is None:
            plain.append(name)
            continue
        prefix, width, n = parsed
        groups.setdefault((prefix, width), []).append(n)
    for prefix, width in list(groups):  # n10000 joins n[00001-09999]
        if width:
            unpadded = groups.get((prefix, 0), [])
            groups[(prefix, width)] += [n for n in unpadded if len(str(n)) == width]
            if unpadded:
                groups[(prefix, 0)] = [n for n in unpadded if len(str(n)) != width]
    parts: list[tuple[str, str]] = [(p, p) for p in plain]
    for (prefix, width), numbers in groups.items():
        if not numbers:
            continue
        numbers.sort()
        spans: list[str] = []
        lo = prev = numbers[0]
        following: list[int | None] = [*numbers[1:], None]
        for nxt in following:
            if nxt is not None and nxt == prev + 1:
                prev = nxt
                continue
            spans.append(f"{lo:0{width}d}" if lo == prev else f"{lo:0{width}d}-{prev:0{width}d}")
            if nxt is not None:
                lo = prev = nxt
        if len(numbers) == 1:
            text = f"{prefix}{numbers[0]:0{width}d}"
        else:
            text = f"{prefix}[{','.join(spans)}]"
        parts.append((f"{prefix}{numbers[0]:0{width}d}", text))
    return ",".join(text for _, text in sorted(parts))


def host_names(names: Sequence[str], files: Sequence[Path]) -> Sequence[str]:
    """Each node document's host name, by rule: its subject name (``names[k]``), or, where
    documents share one, its file name (``files[k]``) without ``.json`` (whatever their
    order); two files of one name and one subject are refused (exit 2), naming both.
    Names that are all different come back as given (no copy, no table of them)."""
    from collections import Counter
    from itertools import pairwise

    from validator.errors import SpecCheckError

    if all(a != b for a, b in pairwise(sorted(names))):
        return names
    counts = Counter(names)
    out = [name if counts[name] == 1 else files[k].stem for k, name in enumerate(names)]
    if len(set(out)) != len(out):
        seen: dict[str, Path] = {}
        for k, final in enumerate(out):
            if final in seen:
                raise SpecCheckError(
                    f'two node facts documents for host "{final}" (the other: {seen[final]}); '
                    "rename one of the files",
                    file=str(files[k]),
                )
            seen[final] = files[k]
    return out
