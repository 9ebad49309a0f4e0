"""One value of the job model: where it came from (file, line, source), whether it is a
framework default (and its row in ``defaults.py``), an error, or a command-line override.

A leaf beside ``model.py``: the mechanisms that derive facts from the model
(``failure_detection.py``, ``metrics.py``) make entries without importing the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Entry:
    value: Any
    file: str | None
    line: int | None
    source: str
    default: bool = False
    error: str | None = None  # the value is of the wrong type, or files disagree
    override: bool = False  # a command-line flag: beats a config file's value
    layer: float = 0.0  # Hydra composition order of the file it came from (hydra.py)
    key: str | None = None  # a framework default: its row in validator/jobs/defaults.py

    def origin(self) -> str:
        """The source as outputs show it: a framework default names its framework, the
        version and source file it was read in (``defaults.origin``)."""
        if not self.default:
            return self.source
        from validator.jobs import defaults

        if self.key is not None:
            return defaults.origin(self.key, self.file, self.source)
        if self.source.startswith("default: "):
            return defaults.describe(self.source.removeprefix("default: "), self.file)
        return self.source
