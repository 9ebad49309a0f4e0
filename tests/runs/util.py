"""Where the runs tests read from, and small helpers over validator.runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "runs"
RECORDINGS = ROOT.parent / "shared" / "recordings" / "training-runs"
if not RECORDINGS.is_dir():  # a checkout with shared/ beside it, or the workplace layout
    RECORDINGS = Path("/work/shared/recordings/training-runs")


def truth(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "truth.jsonl").read_text().splitlines() if line.strip()]


def truth_recovery(run: Path) -> float:
    """Kill to the first step logged after the restart, from the training script's own clock."""
    t = truth(run)
    kill = next(r["t"] for r in t if r["event"] == "kill")
    resumed = next(r["t"] for r in t if r["event"] == "log" and r["restart"] > 0)
    return resumed - kill


def measure(*dirs: Path, logs: tuple[Path, ...] = ()) -> tuple[Any, dict[str, Any]]:
    from validator.runs.facts import run_facts
    from validator.runs.measure import read_runs

    ev = read_runs(list(dirs), list(logs))
    return ev, run_facts(ev)


def item(fact: dict[str, Any], iid: str) -> dict[str, Any]:
    return next(i["fields"] for i in fact["items"] if i["id"] == iid)
