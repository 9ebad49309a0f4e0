"""What a reader gets: the file, its parsed tree or text, the job model, and a way to
follow files it names (an Accelerate config naming a DeepSpeed JSON, a launcher passing
``--deepspeed ds.json``). Followed paths are resolved against the naming file's folder,
then the current directory, and read only if they exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from validator.io.source import MISSING, Tree
from validator.jobs.model import JobModel

if TYPE_CHECKING:
    from validator.report.model import JSONValue


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
        from validator.jobs import common as c

        return c.int_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def float_at(self, fact: str, path: tuple[object, ...], source: str) -> float | None:
        from validator.jobs import common as c

        return c.float_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def bool_at(self, fact: str, path: tuple[object, ...], source: str) -> bool | None:
        from validator.jobs import common as c

        return c.bool_of(self.model, fact, self.get(*path), self.file, self.line(*path), source)

    def set(self, fact: str, value: JSONValue, path: tuple[object, ...], source: str) -> None:
        """Set ``fact`` from the key at ``path`` (value already converted)."""
        self.model.set(fact, value, self.file, self.line(*path), source)
