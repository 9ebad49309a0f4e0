"""Each framework's real configuration keys, as data generated from its own source.

The JSON files beside this module are written by ``scripts/gen_key_catalogues.py`` from
the published package at a pinned version (dataclass fields, pydantic models, argument
lists, the keys a recipe reads); each records the framework, package, version and the
source files it came from. Nothing here is typed in by hand, so "is this a key of
DeepSpeed's ``bf16`` block" has the answer DeepSpeed's own code gives.

Two users: detection (``format_detection.rank``) counts a file's keys each framework knows and
does not know, and PREC-02's ignored/misplaced keys (``misplaced``) name a key that is
in the wrong section, a likely typo of a known key, or one the framework rejects under
the chosen precision. Catalogues are loaded on first use (lint start-up stays fast).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import JSONValue

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Catalogue:
    framework: str
    package: str
    version: str
    sections: dict[str, frozenset[str]]
    open: frozenset[str] = frozenset()
    strict: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    # what a framework ships besides keys (torchtune: the recipes and configs `tune run` knows)
    builtin: dict[str, JSONValue] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``deepspeed 0.19.8``: where a key list came from, for messages."""
        return f"{self.package} {self.version}"

    def top(self) -> frozenset[str]:
        """Top-level keys, with those a release removed (still the framework's own)."""
        return self._top

    @cached_property
    def _top(self) -> frozenset[str]:
        return self.sections.get("", frozenset()) | frozenset(self.removed)

    def known(self, section: str = "") -> frozenset[str] | None:
        """The keys of ``section`` (dotted path), or None when the catalogue does not
        list that section's keys (a free-form block: a model's own arguments)."""
        if section in self.open or any(section.startswith(o + ".") for o in self.open):
            return None
        return self.sections.get(section)

    def home_of(self, key: str) -> list[str]:
        """The sections that do accept ``key`` ("" is the top level)."""
        return sorted(s for s, keys in self.sections.items() if key in keys)


def names() -> list[str]:
    """The frameworks catalogued (each at its newest release: ``<name>.json``)."""
    return sorted(p.stem for p in HERE.glob("*.json") if "@" not in p.stem)


@cache
def releases(framework: str) -> tuple[Catalogue, ...]:
    """``framework``'s catalogues, newest first: ``<name>.json`` and the older releases
    still in use, ``<name>@<version>.json`` (scripts/gen_key_catalogues.py, RELEASES)."""
    out = [c for c in (catalogue(framework),) if c is not None]
    for p in sorted(HERE.glob(f"{framework}@*.json"), key=lambda p: version_key(p.stem.split("@", 1)[1]),
                    reverse=True):
        c = catalogue(p.stem)
        if c is not None:
            out.append(c)
    return tuple(out)


def version_key(v: str) -> tuple[int, ...]:
    """``1.9.5`` -> (1, 9, 5); a part that is no number ends it (``2.1.0rc1`` -> (2, 1, 0))."""
    import re

    out = []
    for part in v.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
        if m.end() < len(part):
            break
    return tuple(out)


@cache
def catalogue(framework: str) -> Catalogue | None:
    path = HERE / f"{framework}.json"
    if not path.is_file():
        return None
    data: dict[str, JSONValue] = json.loads(path.read_text(encoding="utf-8"))
    return Catalogue(
        framework=data["framework"],
        package=data["package"],
        version=data["version"],
        sections={k: frozenset(v) for k, v in data["sections"].items()},
        open=frozenset(data.get("open", [])),
        strict=dict(data.get("strict_sections", {})),
        removed=dict(data.get("removed", {})),
        builtin=dict(data.get("builtin", {})),
    )


def close_match(key: str, known: frozenset[str]) -> str | None:
    """The known key ``key`` is probably a misspelling of, or None.

    At most two edits away (``overlap_com``/``overlap_comm``, ``hysterisis``), and not
    the known key with whole words added or removed: ``tokenizer-prompt-format`` is a
    script's own flag, not a typo of Megatron's ``sft-tokenizer-prompt-format``."""
    if len(key) < 5:
        return None
    import difflib  # only when a key is unknown

    for m in difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.88):
        if _edits(key, m) <= 2 and not _words_contain(key, m):
            return m
    return None


def _edits(a: str, b: str) -> int:
    """Levenshtein distance with transpositions (optimal string alignment)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def _words_contain(a: str, b: str) -> bool:
    """Whether one name is the other with whole words added (``sft-x-y`` holds ``x-y``,
    ``moe-z-loss-coeff`` holds ``moe-loss-coeff``): its words, in order, within the other's."""
    import re

    wa, wb = re.split(r"[-_]", a), re.split(r"[-_]", b)
    short, long_ = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    if len(short) >= len(long_):
        return False
    it = iter(long_)
    return all(w in it for w in short)
