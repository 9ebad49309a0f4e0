"""What a reader gets: the file, its parsed tree or text, the job model, and a way to
follow files it names (an Accelerate config naming a DeepSpeed JSON, a launcher passing
``--deepspeed ds.json``). Followed paths are resolved against the naming file's folder,
then the current directory, and read only if they exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from validator.io.source import MISSING, Tree
from validator.jobs.coerce import as_bool, as_float, as_int
from validator.jobs.model import JobModel

if TYPE_CHECKING:
    from validator.report.model import JSONValue

T = TypeVar("T")


def not_set(v: JSONValue) -> bool:
    """``None``, DeepSpeed/HF ``"auto"`` (filled in by the host framework) and an
    unresolved OmegaConf/Hydra ``${...}`` interpolation: not set in this file."""
    if v is None:
        return True
    return isinstance(v, str) and (v.strip().lower() == "auto" or "${" in v)


def typed(
    conv: Callable[[JSONValue], T | None],
    expected: str,
    model: JobModel,
    fact: str,
    raw: JSONValue,
    file: str | None,
    line: int | None,
    source: str,
) -> T | None:
    if not_set(raw):
        return None
    v = conv(raw)
    if v is None:
        model.invalid(fact, raw, file, line, source, expected)
    return v


def int_of(
    model: JobModel, fact: str, raw: JSONValue, file: str | None, line: int | None, source: str
) -> int | None:
    """``raw`` as an integer; ``None`` when not set, or (after recording the key as an
    error at its line and the fact as an error value) when it is of the wrong type, so
    that a caller's ``default()`` cannot stand in for it."""
    return typed(as_int, "an integer", model, fact, raw, file, line, source)


def float_of(
    model: JobModel, fact: str, raw: JSONValue, file: str | None, line: int | None, source: str
) -> float | None:
    """``raw`` as a number (see ``int_of``)."""
    return typed(as_float, "a number", model, fact, raw, file, line, source)


def bool_of(
    model: JobModel, fact: str, raw: JSONValue, file: str | None, line: int | None, source: str
) -> bool | None:
    """``raw`` as true/false (see ``int_of``)."""
    return typed(as_bool, "true or false", model, fact, raw, file, line, source)


@dataclass
class Ctx:
    path: Path
    file: str  # as shown in findings
    text: str
    model: JobModel
    follow: Callable[..., None]  # (naming file, reference, kind, line=None)
    tree: Tree | None = None

    def ref(self, reference: JSONValue, kind: str | None = None, line: int | None = None) -> None:
        if isinstance(reference, str) and reference.strip() and "$" not in reference:
            self.follow(self.path, reference.strip(), kind, line)

    # shorthands over the tree, for structured formats
    def get(self, *path: object) -> JSONValue:
        assert self.tree is not None
        v = self.tree.get(*path)
        return None if v is MISSING else v

    def line(self, *path: object) -> int | None:
        assert self.tree is not None
        return self.tree.line(*path)

    # typed getters: a value of the wrong type becomes an error finding at the key's line
    # and an error fact (never the framework default); None when the key is not set
    def int_at(self, fact: str, path: tuple[object, ...], source: str) -> int | None:
        return int_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def float_at(self, fact: str, path: tuple[object, ...], source: str) -> float | None:
        return float_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def bool_at(self, fact: str, path: tuple[object, ...], source: str) -> bool | None:
        return bool_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def set(self, fact: str, value: JSONValue, path: tuple[object, ...], source: str) -> None:
        """Set ``fact`` from the key at ``path`` (value already converted)."""
        self.model.set(fact, value, self.file, self.line(*path), source)
