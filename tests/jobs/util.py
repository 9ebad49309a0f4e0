"""Helpers for job-config tests: read a job in-process, or run the CLI as users do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers import built
from validator.evaluate.engine import evaluate
from validator.jobs import read_job
from validator.report.model import Finding

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
if not CORPUS.is_dir():  # a checkout with shared/ beside it, or the workplace layout
    CORPUS = Path("/work/shared/corpus")


def facts(
    *paths: str | Path,
    kind: str | None = None,
    gpu_count: int | None = None,
    step_time_s: float | None = None,
) -> dict[str, Any]:
    """The job document of ``paths`` (one job)."""
    return read_job([Path(p) for p in paths], kind, gpu_count=gpu_count, step_time_s=step_time_s)[0]


def value(doc: dict[str, Any], name: str) -> Any:
    return doc["facts"][name]["value"]


def line(doc: dict[str, Any], name: str) -> int | None:
    return (doc["facts"][name].get("location") or {}).get("line")


def findings(
    *paths: str | Path,
    sets: tuple[str, ...] = (),
    kind: str | None = None,
    rules_version: str | None = "1.0",
) -> list[Finding]:
    """Findings of one job; by rule pack v1.0 unless told (the corpus expectations pin v1.0's
    verdicts, which must stay unchanged; tests/jobs/test_pack_v11.py judges v1.1)."""
    b = built(*sets, rules_version=rules_version)
    params = b.ctx.params
    gpu = params["gpu_count"].value
    step = params["step_time"].value
    doc = read_job(
        [Path(p) for p in paths],
        kind,
        gpu_count=int(gpu) if gpu is not None else None,
        step_time_s=step.base if step is not None else None,
    )[0]
    doc = {k: v for k, v in doc.items() if k != "errors"}
    return evaluate(b.ctx, b.pack, [doc])


def by_rule(fs: list[Finding]) -> dict[str, Finding]:
    return {f.rule: f for f in fs}


def spec_check(
    *args: str, cwd: Path | None = None, timeout: int = 60
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "validator", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=timeout,
    )
