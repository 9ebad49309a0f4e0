"""Run one job per host with bounded concurrency, per-host deadlines and partial results.

A fleet run must finish in bounded time whatever the hosts do: each job is a child
process with its own deadline (``proc.run``), at most ``parallel`` run at once, and the
main thread waits in short slices so that Ctrl-C is seen at once. On Ctrl-C every child is
killed, finished hosts keep their results, and the others become "interrupted" errors:
the caller still writes a result naming every host.
"""

from __future__ import annotations

import contextlib
import json
import math
import shlex
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from validator.cluster import proc
from validator.cluster.transports import Transport

if TYPE_CHECKING:
    from validator.report.model import JSONValue

R = TypeVar("R")  # what a host's job gives (run_all)


@dataclass(frozen=True)
class HostResult:
    host: str
    document: dict[str, JSONValue] | None  # a validated node facts document
    error: str | None  # why there is no document
    seconds: float


def probe_command(remote_command: str, remote_timeout: float | None = None,
                  probe_args: Sequence[str] = ()) -> str:
    """The shell command a host runs. Over ssh the probe is bounded on the host as well
    (``timeout``, a few seconds after our own deadline): without a terminal, a remote
    command outlives a killed ssh client, and a hung probe must not stay behind."""
    cmd = f"{remote_command} probe --format json"
    if probe_args:  # e.g. --scrape http://127.0.0.1:9400/metrics (cluster --scrape-port)
        cmd += " " + " ".join(shlex.quote(a) for a in probe_args)
    if remote_timeout is None:
        return cmd
    return f"timeout -k 5 {math.ceil(remote_timeout)} /bin/sh -c {shlex.quote(cmd)}"


def parse_probe(host: str, out: proc.Outcome, timeout: float, via: str) -> HostResult:
    """A node document from the probe's stdout, or the reason there is none."""
    from validator.cluster.measure.parsers import json_object
    from validator.errors import FactsFileError
    from validator.facts import document

    if out.timed_out:
        return HostResult(
            host,
            None,
            f"timed out after {timeout:g} s (no complete answer over {via})",
            out.seconds,
        )
    if out.rc != 0:
        why = out.stderr_line() or f"exit status {out.rc}"
        if out.rc == 255 and via == "ssh":
            why = (
                f"ssh: {out.stderr_line()}"
                if out.stderr_line()
                else (
                    "ssh: the connection closed before the probe finished "
                    f"(exit status 255, {len(out.stdout)} bytes received)"
                )
            )
        elif out.rc is not None and out.rc < 0:
            why = f"killed by signal {-out.rc}" + (f": {why}" if out.stderr_line() else "")
        else:
            why = f"{why} (exit status {out.rc})" if out.stderr_line() else why
        return HostResult(host, None, why, out.seconds)
    text = out.stdout.strip()
    if not text:
        return HostResult(host, None, "the probe printed nothing", out.seconds)
    try:
        # a login banner or motd may come before the document: find the facts object
        doc = json_object(text, accept=lambda o: "schema" in o and "facts" in o)
        document.validate(doc, host)
    except json.JSONDecodeError as exc:
        return HostResult(
            host,
            None,
            f"the probe's output is not JSON ({exc.msg} at line {exc.lineno}; truncated?)",
            out.seconds,
        )
    except FactsFileError as exc:
        return HostResult(
            host, None, f"the probe's output is not a facts document: {exc.problem}", out.seconds
        )
    if doc["subject"]["kind"] != "node":
        return HostResult(
            host,
            None,
            f'the probe returned a "{doc["subject"]["kind"]}" document, expected "node"',
            out.seconds,
        )
    return HostResult(host, doc, None, out.seconds)


def probe_host(
    transport: Transport,
    host: str,
    remote_command: str,
    timeout: float,
    registry: proc.Registry | None = None,
    probe_args: Sequence[str] = (),
) -> HostResult:
    """Run ``<remote-command> probe --format json`` on ``host`` and read its facts."""
    bound = timeout + 5 if transport.name == "ssh" else None
    out = proc.run(transport.argv(host, probe_command(remote_command, bound, probe_args)), timeout, registry)
    result = parse_probe(host, out, timeout, transport.name)
    if result.error and registry is not None and registry.closed:
        return HostResult(
            host, None, f"interrupted ({registry.why}) before this host finished", out.seconds
        )
    return result


@dataclass
class Progress:
    """Callbacks the CLI hooks a progress bar to; a no-op by default."""

    start: Callable[[int], None] = lambda total: None
    advance: Callable[[str], None] = lambda host: None


def run_all(
    hosts: Sequence[str],
    job: Callable[[str], R],
    *,
    parallel: int,
    registry: proc.Registry,
    on_missing: Callable[[str, str], R],
    progress: Progress | None = None,
) -> tuple[dict[str, R], bool]:
    """``{host: job(host)}`` for every host, and whether the run was interrupted.

    Hosts whose job did not finish (Ctrl-C) get ``on_missing(host, reason)``; a job that
    raises gets ``on_missing(host, "internal error: ...")``: one host's bug is that host's
    error, not the run's end.
    """
    progress = progress or Progress()
    progress.start(len(hosts))
    results: dict[str, R] = {}
    interrupted = False
    pool = ThreadPoolExecutor(
        max_workers=max(1, min(parallel, len(hosts) or 1)), thread_name_prefix="spec-check-host"
    )
    futures: dict[Future[R], str] = {}
    try:
        futures = {pool.submit(job, h): h for h in hosts}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                host = futures[f]
                exc = f.exception()
                results[host] = (
                    on_missing(host, f"internal error: {type(exc).__name__}: {exc}")
                    if exc
                    else f.result()
                )
                progress.advance(host)
    except KeyboardInterrupt:
        interrupted = True
        registry.kill_all()
    finally:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    if interrupted:
        deadline = time.monotonic() + 5  # killed children end their jobs quickly
        for f, host in futures.items():
            if host in results:
                continue
            if f.done() and not f.cancelled() and f.exception() is None:
                results[host] = f.result()
            elif not f.done() and time.monotonic() < deadline:
                with contextlib.suppress(Exception):
                    results[host] = f.result(timeout=max(0.0, deadline - time.monotonic()))
    for host in hosts:
        if host not in results:
            results[host] = on_missing(host, f"interrupted ({registry.why}) before this host finished")
    return {h: results[h] for h in hosts}, interrupted


def probe_all(
    transport: Transport,
    hosts: Sequence[str],
    *,
    remote_command: str,
    timeout: float,
    parallel: int,
    registry: proc.Registry,
    progress: Progress | None = None,
    probe_args: Sequence[str] = (),
) -> tuple[dict[str, HostResult], bool]:
    """Probe every host; every host gets a HostResult, finished or not. The slurm
    transport probes the fleet in one srun step (``slurm_step``), not a step per host.
    ``probe_args`` go to each host's probe (``--scrape URL`` from ``cluster --scrape-port``)."""
    if getattr(transport, "one_step", False):
        return _probe_one_step(transport, hosts, remote_command, timeout, registry, progress, probe_args)
    return run_all(
        hosts,
        lambda h: probe_host(transport, h, remote_command, timeout, registry, probe_args),
        parallel=parallel,
        registry=registry,
        on_missing=lambda h, why: HostResult(h, None, why, 0.0),
        progress=progress,
    )


def _probe_one_step(
    transport: Transport,
    hosts: Sequence[str],
    remote_command: str,
    timeout: float,
    registry: proc.Registry,
    progress: Progress | None,
    probe_args: Sequence[str] = (),
) -> tuple[dict[str, HostResult], bool]:
    from validator.cluster.slurm_step import probe_fleet

    progress = progress or Progress()
    progress.start(len(hosts))
    try:
        outcomes = probe_fleet(transport, hosts, probe_command(remote_command, probe_args=probe_args), timeout,
                               registry)
    except KeyboardInterrupt:
        registry.kill_all()
        why = f"interrupted ({registry.why}) before this host finished"
        return {h: HostResult(h, None, why, 0.0) for h in hosts}, True
    results = {}
    for h in hosts:
        o = outcomes.get(h, "no answer")
        results[h] = (
            HostResult(h, None, o, 0.0) if isinstance(o, str) else parse_probe(h, o, timeout, "slurm")
        )
        progress.advance(h)
    return results, False
