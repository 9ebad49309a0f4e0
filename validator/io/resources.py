"""Where the bundled spec/ and rules/ live, installed or in a source checkout.

A wheel carries them as ``validator/_data/{spec,rules}``; an editable install or a
checkout reads the repository's top-level ``spec/`` and ``rules/`` directly, so there is
one copy of each file in git.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # validator/ (this module is validator/io/resources.py)


def data_dir(name: str) -> Path:
    """The ``spec`` or ``rules`` directory shipped with this installation."""
    bundled = _PKG / "_data" / name
    if bundled.is_dir():
        return bundled
    return _PKG.parent / name


def spec_dir() -> Path:
    return data_dir("spec")


def rules_dir() -> Path:
    return data_dir("rules")
