"""Run ``spec-check cluster`` as a user would, and read its JSON result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_remote.py"
REAL_REMOTE = f"{sys.executable} -m validator"


def fake_remote(tmp: Path, modes: dict[str, str]) -> str:
    path = tmp / "modes.json"
    path.write_text(json.dumps(modes))
    return f"{sys.executable} {FAKE} {path}"


def run_cluster(
    tmp: Path, *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    out = tmp / "result.json"
    # the clock pinned as conftest pins it, also for a module-scoped fixture (which runs before
    # the autouse one): a fleet's facts age (PLAT-02.facts-stale) depends on it
    pinned = {"SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "1795000000")}
    p = subprocess.run(
        [sys.executable, "-m", "validator", "cluster", *args, "--format", "json", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **pinned, **(env or {})},
    )
    result = json.loads(out.read_text()) if out.exists() else None
    return p.returncode, result, p.stderr


def by_rule(result: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["rule"] == rule]


def probe_status(result: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {
        f["subject"]: (f["status"], f["message"])
        for f in by_rule(result, "PLAT-02.host-not-probed")
    }
