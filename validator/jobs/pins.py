"""The framework version a job pins, and the key catalogue its keys are judged with.

A key is valid or not *in a release*: ``Trainer(gpus=8)`` is Lightning 1.x's, a
``TypeError`` in 2.x. A repository says which release it runs in its dependency files,
so before judging keys (PREC-02) the folders above the config are searched, up to the
repository root (a folder holding ``.git``) or ``MAX_UP`` levels, for:

* ``requirements*.txt`` (also under ``requirements/``), ``constraints*.txt``;
* ``pyproject.toml``, ``setup.py``, ``setup.cfg`` (dependency strings);
* ``environment.yml`` / ``environment.yaml`` (conda, pip sections);

and the first line that names one of the framework's packages with a version
(``pytorch-lightning==1.9.5``, ``lightning>=2.1,<2.3``) decides. The catalogue used is the
newest catalogued release the requirement allows, else the nearest one of the same major
version; the finding names it and the line that pinned it. With no pin found, the newest
catalogue is used and a key any catalogued release knows is not reported: the version is
unknown, and a key valid in the release the job may run is no failure (refuse rather than
guess).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

MAX_UP = 6  # folders above a config searched for dependency files
MAX_BYTES = 256 * 1024  # a dependency file larger than this is not read
_FILES = re.compile(r"^(?:requirements.*\.txt|constraints.*\.txt|pyproject\.toml|setup\.py|setup\.cfg"
                    r"|environment\.ya?ml)$")
_OP = r"(?:===|==|~=|>=|<=|!=|<|>|=)"  # a lone "=": conda's prefix match (environment.yml)


def _packages() -> dict[str, tuple[str, ...]]:
    """Catalogue -> the PyPI names its framework is installed as (``Format.packages``)."""
    from validator.jobs import registry

    return registry.packages()


@dataclass(frozen=True)
class Pin:
    package: str
    specs: tuple[tuple[str, str], ...]  # (operator, version)
    file: str
    line: int

    def text(self) -> str:
        return self.package + ",".join(f"{op}{v}" for op, v in self.specs)


def _candidates(start: Path) -> list[Path]:
    out: list[Path] = []
    d = start
    for _ in range(MAX_UP):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            names = []
        out += [d / n for n in names if _FILES.match(n)]
        if "requirements" in names and (d / "requirements").is_dir():
            try:
                out += [d / "requirements" / n for n in sorted(os.listdir(d / "requirements"))
                        if n.endswith(".txt")]
            except OSError:
                pass
        if ".git" in names or d.parent == d:
            break
        d = d.parent
    return out


def find(framework: str, start: Path) -> Pin | None:
    """The first requirement with a version of ``framework``'s packages in the dependency
    files above ``start`` (nearest folder first), or None."""
    try:
        folder = str(start.resolve().parent if start.is_file() else start.resolve())
    except OSError:
        return None
    return _find(framework, folder)


@lru_cache(maxsize=256)
def _find(framework: str, folder: str) -> Pin | None:
    """``find`` once per folder and framework: a lint of 1,000 files in one folder
    searches the folders above it once, not 1,000 times."""
    start = Path(folder)
    pkgs = _packages().get(framework)
    if not pkgs:
        return None
    names = "|".join("[-_]".join(re.escape(w) for w in re.split(r"[-_]", p)) for p in pkgs)
    rx = re.compile(rf"""(?:^|[\s"'\[,(])({names})\s*(?:\[[^\]]*\])?\s*((?:{_OP}\s*[\w.*+!-]+\s*,?\s*)+)""",
                    re.I)
    for path in _candidates(start):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for i, ln in enumerate(text.splitlines(), 1):
            if ln.lstrip().startswith("#"):
                continue
            m = rx.search(ln)
            if m:
                specs = tuple(re.findall(rf"({_OP})\s*([\w.*+!-]+)", m.group(2)))
                if specs:
                    return Pin(m.group(1), specs, str(path), i)
    return None


def _allows(specs: tuple[tuple[str, str], ...], version: str) -> bool:
    from validator.jobs.keys import version_key

    v = version_key(version)
    for op, want in specs:
        w = version_key(want.rstrip(".*"))
        n = len(w)
        if op == "=":  # conda: 1.9 is any 1.9.x
            ok = v[:n] == w
        elif op in ("==", "==="):
            ok = v[:n] == w if want.endswith("*") else v == w or (v[:n] == w and all(x == 0 for x in v[n:]))
        elif op == "!=":
            ok = v[:n] != w
        elif op == ">=":
            ok = v >= w
        elif op == ">":
            ok = v > w
        elif op == "<=":
            ok = v[:n] <= w
        elif op == "<":
            ok = v < w
        elif op == "~=":
            ok = v >= w and v[: max(n - 1, 1)] == w[: max(n - 1, 1)]
        else:
            ok = True
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class Judged:
    """The catalogue a file's keys are judged with, and the others still accepted."""

    catalogue: Any
    accepted: tuple[Any, ...]  # catalogues whose keys are not reported either
    how: str  # "judged at lightning 2.6.6 (...)", for findings


def choose(framework: str, start: Path | None) -> Judged | None:
    from validator.jobs.keys import releases, version_key

    cats = releases(framework)
    if not cats:
        return None
    pin = find(framework, start) if start is not None else None
    newest = cats[0]
    if pin is None:
        others = cats[1:]
        also = f"; keys of {', '.join(c.label for c in others)} accepted too" if others else ""
        return Judged(newest, others, f"judged at {newest.label}, the newest catalogued release "
                                      f"(no pinned version found{also})")
    where = f"{pin.text()} at {pin.file}:{pin.line}"
    fits = [c for c in cats if _allows(pin.specs, c.version)]
    if len(fits) > 1 and all(op in (">=", ">", "!=") for op, _ in pin.specs):
        # a lower bound only: any later release may run, so the keys of every catalogued
        # release it allows are valid (pytorch-lightning>=1.6.0 in 2022 meant 1.x's gpus=)
        return Judged(fits[0], tuple(fits[1:]), f"judged at {fits[0].label} (the job pins {where}, a lower "
                                                f"bound: keys of {', '.join(c.label for c in fits[1:])} "
                                                "accepted too)")
    if fits:
        return Judged(fits[0], (), f"judged at {fits[0].label} (the job pins {where})")
    want = next((version_key(v) for op, v in pin.specs if op in ("==", "===", "~=", ">=", ">")), None)
    same = [c for c in cats if want and version_key(c.version)[:1] == want[:1]]
    if same:
        return Judged(same[0], (), f"judged at {same[0].label}, the nearest catalogued release to the "
                                   f"pinned {where}")
    others = cats[1:]
    return Judged(newest, others, f"judged at {newest.label}: no catalogued release matches the pinned "
                                  f"{where}, so keys of every catalogued release are accepted")
