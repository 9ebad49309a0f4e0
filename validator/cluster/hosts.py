"""Parse ``--hosts LIST|@FILE`` into the addresses to probe.

A host is keyed by the string it was addressed by (``node07``, ``10.0.0.7``,
``admin@node07``), never by the hostname it reports: cloned images often share one
hostname. Slurm-style ranges (``node[01-04,09]``) are expanded here so that SSH fleets can
be written the way Slurm users write them; duplicates are dropped, first one wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from validator.errors import SpecCheckError

MAX_HOSTS = 100_000
MAX_HOST_FILE = 16 * 1024 * 1024  # bytes: 100,000 host names fit many times over
_RANGE = re.compile(r"\[([^\[\]]*)\]")


def expand(pattern: str) -> list[str]:
    """``node[01-03,7]`` -> node01 node02 node03 node7 (zero padding kept, nesting not)."""
    m = _RANGE.search(pattern)
    if not m:
        return [pattern]
    head, tail = pattern[: m.start()], pattern[m.end() :]
    out: list[str] = []
    for part in m.group(1).split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not _bound(lo) or (sep and not _bound(hi)):
            raise SpecCheckError(f'bad host range "[{m.group(1)}]" in "{pattern}"')
        if not sep:
            hi = lo
        if int(hi) < int(lo):
            raise SpecCheckError(f'bad host range "{part}" in "{pattern}" (end before start)')
        if int(hi) - int(lo) >= MAX_HOSTS:
            raise SpecCheckError(f'host range "{part}" is larger than {MAX_HOSTS} hosts')
        width = len(lo) if lo.startswith("0") else 0
        for n in range(int(lo), int(hi) + 1):
            out.extend(expand(f"{head}{n:0{width}d}{tail}"))
    return out


def _bound(text: str) -> bool:
    """A range bound ``int`` reads as ``compress`` writes it: ASCII digits ("²" and "٣"
    pass ``str.isdigit``), no longer than a host name (``int`` refuses 4,300 digits)."""
    return text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS


def _split_list(text: str) -> list[str]:
    """Split on commas and whitespace, but not on commas inside ``[...]``."""
    tokens: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if cur:
                tokens.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise SpecCheckError(f'unbalanced "[" in host list "{text.strip()[:80]}"')
    if cur:
        tokens.append("".join(cur))
    return tokens


def _from_file(path: str) -> list[str]:
    """A regular file of at most MAX_HOST_FILE bytes (``@/dev/zero`` must not read forever)."""
    text = "\n".join(_read_lines(path))
    return _tokens(text)


def _read_lines(path: str) -> list[str]:
    from validator.io.safeio import InputError, read_text

    try:
        text = read_text(path, cap=MAX_HOST_FILE, what="host file")
    except InputError as exc:
        raise SpecCheckError(f"cannot read host file: {exc.problem}", file=path) from None
    return text.splitlines()


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:  # a "fabric=ADDR" column belongs to the host before it (fabric_column)
            out.extend(t for t in _split_list(line) if not t.startswith(FABRIC))
    return out


FABRIC = "fabric="


def check_address(addr: str, where: str) -> None:
    """An address goes into the tools' command lines (quoted): one word, no options."""
    if addr.startswith("-") or any(c in addr for c in " \t'\"`$;|&<>\\,[]"):
        raise SpecCheckError(f'{where}: not an address: "{addr}"')


def fabric_column(path: str) -> dict[str, tuple[str, int]]:
    """``HOST fabric=ADDR`` lines of a host file: host -> (ADDR, line number). The column
    names one host's address on the training fabric, so it needs exactly one host (no
    range) before it on its line."""
    text = "\n".join(_read_lines(path))
    out: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        tokens = _split_list(line.split("#", 1)[0].strip())
        marks = [t for t in tokens if t.startswith(FABRIC)]
        if not marks:
            continue
        names = [t for t in tokens if not t.startswith(FABRIC)]
        if len(marks) > 1 or len(names) != 1 or "[" in names[0]:
            raise SpecCheckError(f"line {n}: fabric= needs exactly one host (no range) before it", file=path)
        addr = marks[0][len(FABRIC):]
        check_address(addr, f"{path}:{n}")
        out[names[0]] = (addr, n)
    return out


# what a name in a host list cannot hold: the list's separators and brackets, and what
# parse_hosts refuses or reads otherwise (a leading "-", a leading "@": a file)
_UNLISTABLE = re.compile(r"[\[\],\s'\"`$;|&<>\\]|^[-@]|^$")


def listable(name: str) -> bool:
    """Whether a host list can name ``name``: ``parse_hosts`` reads it back as itself."""
    return _UNLISTABLE.search(name) is None


def parse_hosts(spec: str) -> list[str]:
    """``a,b,node[1-3]`` or ``@hosts.txt`` (one or more per line, ``#`` comments)."""
    spec = spec.strip()
    tokens = _from_file(spec[1:]) if spec.startswith("@") else _split_list(spec)
    hosts: list[str] = []
    seen: set[str] = set()
    for token in tokens:
        for host in expand(token):
            if host.startswith("-") or any(c in host for c in " \t'\"`$;|&<>\\"):
                raise SpecCheckError(f'not a host name: "{host}"')
            if host not in seen:
                seen.add(host)
                hosts.append(host)
            if len(hosts) > MAX_HOSTS:
                raise SpecCheckError(f"more than {MAX_HOSTS} hosts")
    if not hosts:
        where = spec[1:] if spec.startswith("@") else None
        raise SpecCheckError(
            "no hosts given" + ("" if where else " (--hosts is empty)"), file=where
        )
    return hosts


# ASCII digits only: ``\d`` also matches other scripts' digits (``int("٣")`` is 3), which
# would name host "n٣" as n3, in a host list that drops one of n3 and n٣
_NUMBERED = re.compile(r"^(.*?)([0-9]+)$")
# a number longer than a host name can be (253 characters) is part of the name: int()
# refuses 4,300 digits (sys.get_int_max_str_digits), and the fold would end in a traceback
_MAX_DIGITS = 253


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
    if m is None or "[" in name or "," in name or len(m.group(2)) > _MAX_DIGITS:
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
