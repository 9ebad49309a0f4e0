"""``spec-check check`` read without click, for the argument lists it can read for sure.

Importing click is about a sixth of a ``check``'s start-up (docs/startup.md), and ``check``
is what a Slurm prolog or a health cron runs, once per node per job. So ``check`` with the
options below, in the forms below, is parsed here into exactly the ``params`` click would
pass ``check``'s callback, and run by the same function (validator/cli/checking.py). Every
other argument list (``--help``, an option or form not below, a value click would refuse
or that this table is not sure of) returns ``None``, and click reads it as before: its
help, its errors, its word for everything. ``tests/test_quick_check.py`` compares this
parser with click's own on generated argument lists, and whole runs on both paths byte
for byte.

Read here: ``--OPT VALUE``, ``--OPT=VALUE`` and ``-o VALUE`` (not ``-oVALUE``), a VALUE not
starting with ``-``, and the flags ``--nvml`` / ``--no-nvml``. A repeated single option
keeps its last value, as click's does. A path is converted as ``click.Path`` converts it,
and refused here whenever click could refuse it (missing where it must exist, a file where
a directory is wanted, unreadable).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from validator.api.options import DEFAULT_SPEC_VERSION
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S

if TYPE_CHECKING:
    from validator.cli.checking import CheckParams


class _Unsure(Exception):
    """A value this parser will not decide: click reads the whole argument list."""


def _path(*, exists: bool = False, file_okay: bool = True, dir_okay: bool = True) -> Callable[[str], Path]:
    """``click.Path(path_type=Path, exists=..., file_okay=..., dir_okay=...)`` for the values
    it accepts."""

    def convert(value: str) -> Path:
        try:
            st = os.stat(value)
        except OSError:
            if exists:
                raise _Unsure from None
            return Path(value)
        if (not file_okay and stat.S_ISREG(st.st_mode)) or (not dir_okay and stat.S_ISDIR(st.st_mode)):
            raise _Unsure
        if not os.access(value, os.R_OK):  # click.Path is readable=True by default
            raise _Unsure
        return Path(value)

    return convert


def _choice(*choices: str) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in choices:
            raise _Unsure
        return value

    return convert


def _format(value: str) -> str:
    """``--format``: a name of the output registry, as ``cli.common.LiveChoice`` reads it."""
    from validator.renderers import Names

    if value not in tuple(Names()):
        raise _Unsure
    return value


def _int_range(low: int, high: int) -> Callable[[str], int]:
    def convert(value: str) -> int:
        # a few digits: int() refuses over 4,300, and click says so as a usage error
        if not (value.isascii() and value.isdigit() and len(value) <= 9) or not low <= int(value) <= high:
            raise _Unsure
        return int(value)

    return convert


def _float_at_least(low: float) -> Callable[[str], float]:
    """``click.FloatRange(min=low)`` for plain decimals (``12``, ``0.5``): the forms whose
    reading no one could doubt."""

    def convert(value: str) -> float:
        whole, dot, part = value.partition(".")
        digits = whole + part
        if not (digits.isascii() and digits.isdigit() and whole and (part or not dot)) or float(value) < low:
            raise _Unsure
        return float(value)

    return convert


def _text(value: str) -> str:
    return value


# option -> (click's parameter name, conversion, multiple)
_OPTIONS: dict[str, tuple[str, Callable[[str], object], bool]] = {
    "--facts": ("facts_files", _path(), True),
    "--sysfs": ("sysfs", _path(exists=True, file_okay=False), False),
    "--procfs": ("procfs", _path(exists=True, file_okay=False), False),
    "--rootfs": ("rootfs", _path(exists=True, file_okay=False), False),
    "--kernel-log": ("kernel_log", _path(exists=True, dir_okay=False), False),
    "--since": ("since", _path(dir_okay=False), False),
    "--dcgm-diag": ("dcgm_diag", _int_range(1, 4), False),
    "--scrape": ("scrape", _text, True),
    "--scrape-interval": ("scrape_interval", _float_at_least(0.0), False),
    "--timeout": ("scrape_timeout", _float_at_least(0.1), False),
    "--scrape-timeout": ("scrape_timeout", _float_at_least(0.1), False),
    "--spec-version": ("spec_version", _text, False),
    "--profile": ("profile", _path(), False),
    "--set": ("sets", _text, True),
    "--format": ("fmt", _format, False),
    "-o": ("output", _path(), False),
    "--output": ("output", _path(), False),
    "--select": ("select", _text, True),
    "--ignore": ("ignore", _text, True),
    "--fail-on": ("fail_on", _choice("fail", "warn"), False),
    "--waivers": ("waivers", _path(), False),
    "--rules": ("rules_dir", _path(exists=True, file_okay=False), False),
    "--rules-version": ("rules_version", _text, False),
    "--show": ("show", _choice("passes"), True),
    "--baseline": ("baseline", _path(exists=True, dir_okay=False), False),
}
_FLAGS: dict[str, tuple[str, bool]] = {"--nvml": ("nvml", True), "--no-nvml": ("nvml", False)}

# what click passes for an option not given: its default, converted by the option's type
# (the directories must exist for click to accept them: checked in parse_check)
_DEFAULT_DIRS = {"sysfs": "/sys", "procfs": "/proc", "rootfs": "/"}


def _defaults() -> dict[str, object]:
    return {
        "facts_files": (), "nvml": None, "kernel_log": None, "since": None, "dcgm_diag": None, "scrape": (),
        "scrape_interval": float(SCRAPE_INTERVAL_S), "scrape_timeout": float(DEFAULT_DEADLINE_S),
        "spec_version": DEFAULT_SPEC_VERSION, "profile": None, "sets": (), "fmt": "terminal", "output": None,
        "select": (), "ignore": (), "fail_on": "fail", "waivers": None, "rules_dir": None, "rules_version": None,
        "show": (), "baseline": None,
    }


def parse_check(args: list[str]) -> CheckParams | None:
    """The ``params`` click would give ``check``'s callback for ``spec-check check ARGS``, or
    ``None`` where click is to read them (see the module's docstring)."""
    if os.environ.get("_SPEC_CHECK_COMPLETE"):  # click's shell completion
        return None
    if not all(isinstance(arg, str) for arg in args):  # an in-process caller's Path or number: click's
        return None
    params = _defaults()
    many: dict[str, list[object]] = {}
    given: set[str] = set()
    i = 0
    try:
        while i < len(args):
            arg = args[i]
            i += 1
            if arg in _FLAGS:
                name, flag = _FLAGS[arg]
                params[name] = flag
                continue
            option, eq, value = arg.partition("=")
            if not eq:
                if i >= len(args):
                    return None
                value = args[i]
                i += 1
            if option not in _OPTIONS or (eq and not option.startswith("--")) or value.startswith("-"):
                return None
            name, convert, multiple = _OPTIONS[option]
            if multiple:
                many.setdefault(name, []).append(convert(value))
            else:
                params[name] = convert(value)
            given.add(name)
        for name, directory in _DEFAULT_DIRS.items():
            if name not in given:
                params[name] = _path(exists=True, file_okay=False)(directory)
    except _Unsure:
        return None
    params.update((name, tuple(values)) for name, values in many.items())
    return cast("CheckParams", params)  # every key, each converted as click converts it (tests/test_quick_check.py)


def check_quickly(args: list[str]) -> None:
    """Run ``spec-check check`` (``args[0]``) when ``parse_check`` reads its arguments: it
    then exits. Returns only when click is to read them."""
    from validator.cli.run import run_quick

    def body() -> bool:
        # read and imported inside, as click reads the arguments and imports a verb's module
        # inside its main: an interrupt there (a stat of a hung NFS path, a Slurm SIGTERM)
        # ends the run as one during the check does
        params = parse_check(args[1:])
        if params is None:
            return False
        from validator.cli.checking import run_check

        run_check(params)

    run_quick(body, args, "spec-check check")  # exits, unless click is to read the arguments
