"""Run the click group so that every user error is one line and exit code 2.

A ``SpecCheckError`` (bad input, bad usage) prints ``spec-check: error: <file:line:
problem>`` and exits 2; click's own usage errors (bad option value, unknown option, missing
argument) of every verb become the same one line, exit 2. Anything else is a bug:
it is reported in one line with a hint to re-run with ``SPEC_CHECK_DEBUG=1`` for the
traceback, and still exits 2, since the run could not be done.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from validator.errors import SpecCheckError


class _NeverRaised(Exception):
    ctx: click.Context | None = None


_NO_ARGS_IS_HELP: type[Exception] = getattr(click.exceptions, "NoArgsIsHelpError", _NeverRaised)


def _interrupted() -> str:
    entry = sys.modules.get("validator.entry")
    name = getattr(entry, "last_signal", "")
    return f"interrupted ({name})" if name else "interrupted"


def fail(message: str) -> NoReturn:
    from validator.renderers.escape import text

    # the contract: one line, whatever the parser said; a file name's control characters
    # or undecodable bytes are shown as escapes, never sent to the terminal
    one_line = text(" ".join(message.split()))
    click.echo(f"spec-check: error: {one_line}", err=True)
    sys.exit(2)


# errno values of a write to a stream that cannot take more (a full disk or /dev/full, a
# reader gone, an I/O error): on standard output, a one-line error, never "internal error"
_WRITE_ERRNOS = frozenset({"EPIPE", "ENOSPC", "EIO", "EDQUOT", "EFBIG", "EBADF", "ECONNRESET"})


def _stdout_failed(exc: OSError) -> NoReturn:
    """A write to standard output failed: one line on stderr, exit 2; stdout is pointed at
    /dev/null so that the interpreter's own flush at exit does not print a traceback."""
    import errno as errno_names

    reason = exc.strerror or errno_names.errorcode.get(exc.errno or 0, str(exc))
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
    import errno as errno_names

    return exc.filename is None and errno_names.errorcode.get(exc.errno or 0, "") in _WRITE_ERRNOS


def run_cli(group: click.Group, argv: list[str]) -> Any:  # Any: what click's Group.main returns
    try:
        out = group.main(args=argv, prog_name="spec-check", standalone_mode=False)
        _flush_stdout()  # a full stdout shows here, not in the interpreter's exit
        return out
    except SpecCheckError as exc:
        fail(str(exc))
    except click.exceptions.Abort:  # click's name for a KeyboardInterrupt inside a verb
        fail(_interrupted())
    except click.exceptions.Exit as exc:
        _flush_stdout()
        sys.exit(exc.exit_code)
    except _NO_ARGS_IS_HELP as exc:  # bare `spec-check` or `spec-check rules` (click >= 8.2)
        help_ctx = getattr(exc, "ctx", None)
        if help_ctx is not None:
            click.echo(help_ctx.get_help())
        sys.exit(2)
    except click.ClickException as exc:
        # click's usage errors print Usage/Try/Error on three lines: the contract is one
        verb = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx is not None else ""
        message = exc.format_message()
        if verb == "spec-check health" and "--npd" in argv:  # NPD's contract: one stdout line
            from validator.cluster import npd
            from validator.renderers.escape import text

            sys.stdout.write(npd.fit(f"spec-check UNKNOWN: {text(' '.join(message.split()))}") + "\n")
            sys.exit(npd.UNKNOWN)
        if verb and verb != "spec-check":
            message = f"{verb.removeprefix('spec-check ')}: {message} (see `{verb} --help`)"
        fail(message)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM/SIGHUP (validator.entry)
        fail(_interrupted())
    except BrokenPipeError:  # the reader went away: quietly, as cli.common.render does (docs/reports.md)
        _quiet_stdout()
        sys.exit(2)
    except OSError as exc:
        if _is_write_error(exc):
            _stdout_failed(exc)
        _internal(exc)
    except SystemExit:
        _flush_stdout()
        raise
    except Exception as exc:
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
