"""Run a verb in a fresh interpreter, as a user's start-up sees it, for the test_startup*
files: each passes its own probe script (it runs the verb in-process and prints one JSON
line of what it saw). The bundled pack comes compiled (validator/rules/bundled.json), so
the first run of a verb is the same as any other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# the verb, run in-process with its report captured: a probe script's middle, after what it
# sets up (its imports of contextlib, io and sys included) and before the JSON line it prints
RUN_VERB = """
from validator.entry import main
out, code = io.StringIO(), 0
try:
    with contextlib.redirect_stdout(out):
        main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
"""


def run_probe(tmp_path: Path, probe: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The probe's JSON line; the run must exit 0 and the verb 0 or 1 (``code``)."""
    env = {**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", probe, *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    data: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["code"] in (0, 1), (args, data.get("code"), r.stderr[-2000:])
    return data
