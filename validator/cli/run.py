"""Run a verb so that every user error is one line and exit code 2.

A ``SpecCheckError`` (bad input, bad usage) prints ``spec-check: error: <file:line:
problem>`` and exits 2; click's own usage errors (bad option value, unknown option, missing
argument) of every verb become the same one line, exit 2. Anything else is a bug:
it is reported in one line with a hint to re-run with ``SPEC_CHECK_DEBUG=1`` for the
traceback, and still exits 2, since the run could not be done.

``run_cli`` runs the click group with ``standalone_mode=False`` and ends the run here.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from validator.errors import SpecCheckError

_T = TypeVar("_T")


def _interrupted() -> str:
    """A KeyboardInterrupt that reached the run (an in-process caller's Ctrl-C; the command's
    own signals are validator/entry.py's)."""
    return "interrupted"


def fail(message: str) -> NoReturn:
    # the contract: one line, whatever the parser said; a file name's control characters
    # or undecodable bytes are shown as escapes, never sent to the terminal
    from validator.renderers.escape import text

    one_line = text(" ".join(message.split()))
    click.echo(f"spec-check: error: {one_line}", err=True)
    sys.exit(2)


# errno values of a write to a stream that cannot take more (a full disk or /dev/full, a
# reader gone, an I/O error): on standard output, a one-line error, never "internal error"
_WRITE_ERRNOS = frozenset({"EPIPE", "ENOSPC", "EIO", "EDQUOT", "EFBIG", "EBADF", "ECONNRESET"})


def _stdout_failed(exc: OSError) -> NoReturn:
    """A write to standard output failed: one line on stderr, exit 2; stdout is pointed at
    /dev/null so that the interpreter's own flush at exit does not print a traceback."""
    reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    _quiet_stdout()
    fail(f"cannot write to standard output: {reason}")


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _is_write_error(exc: OSError) -> bool:
    return exc.filename is None and errno.errorcode.get(exc.errno or 0, "") in _WRITE_ERRNOS


def run_cli(group: click.Group, argv: list[str]) -> Any:  # Any: what click's Group.main returns
    return _guarded(lambda: group.main(args=argv, prog_name="spec-check", standalone_mode=False), argv)


def _guarded(run: Callable[[], _T], argv: list[str]) -> _T:
    try:
        out = run()
        _flush_stdout()  # a full stdout shows here, not in the interpreter's exit
        return out
    except SpecCheckError as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # an in-process caller's Ctrl-C (the command's: validator/entry.py)
        fail(_interrupted())
    except SystemExit:
        _flush_stdout()
        raise
    except Exception as exc:
        _failed(exc, argv)


def _failed(exc: Exception, argv: list[str]) -> NoReturn:
    if isinstance(exc, click.exceptions.Abort):  # click's name for a KeyboardInterrupt inside a verb
        fail(_interrupted())
    if isinstance(exc, click.exceptions.Exit):
        _flush_stdout()
        sys.exit(exc.exit_code)
    no_args_is_help = getattr(click.exceptions, "NoArgsIsHelpError", None)  # click >= 8.2
    if no_args_is_help is not None and isinstance(exc, no_args_is_help):  # bare `spec-check` or `spec-check rules`
        help_ctx = getattr(exc, "ctx", None)
        if help_ctx is not None:
            click.echo(help_ctx.get_help())
        sys.exit(2)
    if isinstance(exc, click.ClickException):
        # click's usage errors print Usage/Try/Error on three lines: the contract is one
        verb = ""
        if isinstance(exc, click.UsageError):
            verb = exc.ctx.command_path if exc.ctx is not None else ""
        message = exc.format_message()
        if verb == "spec-check health" and "--npd" in argv:  # NPD's contract: one stdout line
            from validator.cluster import npd
            from validator.renderers.escape import text

            sys.stdout.write(npd.fit(f"spec-check UNKNOWN: {text(' '.join(message.split()))}") + "\n")
            sys.exit(npd.UNKNOWN)
        if verb and verb != "spec-check":
            message = f"{verb.removeprefix('spec-check ')}: {message} (see `{verb} --help`)"
        fail(message)
    if isinstance(exc, BrokenPipeError):  # the reader went away: quietly, as cli.finish.render does (docs/reports.md)
        _quiet_stdout()
        sys.exit(2)
    if isinstance(exc, OSError) and _is_write_error(exc):
        _stdout_failed(exc)
    _internal(exc)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except OSError as exc:
        _stdout_failed(exc)
    except (ValueError, AttributeError):  # closed or replaced
        pass


def _internal(exc: Exception) -> NoReturn:  # pragma: no cover - a bug, not a user error
    if os.environ.get("SPEC_CHECK_DEBUG"):
        raise exc
    fail(f"internal error: {type(exc).__name__}: {exc} (set SPEC_CHECK_DEBUG=1 for a traceback)")
