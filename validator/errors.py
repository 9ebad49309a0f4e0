"""Errors that end a run with exit code 2 and a one-line message.

Every error a user can cause (bad input, bad usage) is a ``SpecCheckError``; the CLI
prints ``str(error)`` on one line and exits 2. Anything else is a bug.
"""

from __future__ import annotations


class SpecCheckError(Exception):
    """A run that cannot be done; the message names the file, line and problem."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        self.problem = message
        self.file = file
        self.line = line
        super().__init__(message)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.problem}"


class RuleFileError(SpecCheckError):
    """A rule, spec or profile file that does not load."""


class FactsFileError(SpecCheckError):
    """A facts document that is malformed, truncated or from another schema."""


class UnknownRuleError(SpecCheckError):
    """A rule or requirement ID that the pack does not hold."""


class UnitError(SpecCheckError):
    """A quantity whose unit is unknown or of the wrong dimension."""
