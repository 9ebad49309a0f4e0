"""Parse ``--hosts LIST|@FILE`` into the addresses to probe.

A host is keyed by the string it was addressed by (``node07``, ``10.0.0.7``,
``admin@node07``), never by the hostname it reports: cloned images often share one
hostname. Slurm-style ranges (``node[01-04,09]``) are expanded here so that SSH fleets can
be written the way Slurm users write them; duplicates are dropped, first one wins.
"""

from __future__ import annotations

import re

from validator.errors import SpecCheckError
from validator.values.hostlist import MAX_DIGITS, compress  # compress: the inverse of expand (a value format)

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
    return text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS


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


__all__ = ["MAX_HOSTS", "check_address", "compress", "expand", "fabric_column", "listable", "parse_hosts"]
