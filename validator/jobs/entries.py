"""One job fact as read: its value and where it came from (file, line, source text, a
framework default's row).

A leaf of jobs/: the model holds entries and failure-detection mechanisms, and the
derivations run when a job is read whole (failure_detection.py, metrics.py) make them;
they import this module rather than the model's, so that no import circle ties the model
to its derivations (tests/test_import_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import JSONValue


@dataclass
class Entry:
    value: JSONValue  # a config's value as read (a number, text, a list, ...)
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


@dataclass(frozen=True)
class Mechanism:
    mode: str  # "crash" | "hang"
    name: str  # "torchrun worker monitor", "NCCL watchdog (collective timeout)"
    seconds: float
    file: str | None
    line: int | None
    origin: str  # "--monitor-interval at run.sh:12" or a cited default
