"""``spec-check health --npd``: this node's fast checks as a node-problem-detector plugin.

No Slurm is involved. The probe (or ``--facts``) and the evaluation run in a worker thread
under a deadline inside NPD's 5 s plugin timeout: a driver call that hangs gives an
Unknown (exit 2) with a line saying so, not a plugin NPD has to kill. Every outcome,
including bad input, is one line on stdout of at most 80 characters and the contract's exit
code (validator/cluster/npd.py); nothing else is printed.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any


def run(facts_file: Path | None, sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
        kernel_log: Path | None, kwargs: dict[str, Any], deadline: float | None = None) -> int:  # Any: click's options
    """Print the status line and return the exit code (0 OK, 1 problem, 2 unknown)."""
    from validator.cluster import npd

    limit = npd.DEADLINE if deadline is None else deadline
    box: dict[str, Any] = {}  # Any: the worker's (code, line), or what it raised

    def work() -> None:
        try:
            box["result"] = _judge(facts_file, sysfs, procfs, rootfs, nvml, kernel_log, kwargs)
        except BaseException as exc:  # bad input or a bug: an Unknown with the reason, no traceback
            box["error"] = exc

    worker = threading.Thread(target=work, name="spec-check-npd", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        code, line = npd.UNKNOWN, npd.fit(f"spec-check UNKNOWN: node check did not finish in {limit:g} s")
    elif "error" in box:
        exc = box["error"]
        text = str(exc) or type(exc).__name__
        code, line = npd.UNKNOWN, npd.fit(f"spec-check UNKNOWN: {text}")
    else:
        code, line = box["result"]
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    if worker.is_alive():  # a hung driver call: leave without waiting for it
        os._exit(code)
    return int(code)


def _judge(facts_file: Path | None, sysfs: Path, procfs: Path, rootfs: Path, nvml: bool | None,
           kernel_log: Path | None, kwargs: dict[str, Any]) -> tuple[int, str]:  # Any: as run's
    from validator.cli.common import build, evaluate_documents, run_options
    from validator.cli.node import probe_document
    from validator.cluster import npd

    opts = run_options(kwargs)
    built = build(opts, ("node",))
    if facts_file is not None:
        from validator.errors import FactsFileError

        if kernel_log is not None:  # the recorded facts hold the events their probe read
            raise FactsFileError("--kernel-log goes with the probe, not --facts (give it to `spec-check probe`)")
        from validator.facts.document import load

        doc = load(facts_file)
        if doc["subject"]["kind"] != "node":
            raise FactsFileError(f'judges node facts, not a {doc["subject"]["kind"]}', file=str(facts_file))
        source = str(facts_file)
    else:
        doc = probe_document(sysfs, procfs, rootfs, nvml, kernel_log)
        source = "probe"
    report = evaluate_documents("health", built, opts, [doc], [source])
    from validator.api.steps import apply_baseline

    report, _ = apply_baseline(report, opts.extra.get("baseline"))  # as health does, without its stderr line
    return npd.verdict(report, opts.fail_on)
