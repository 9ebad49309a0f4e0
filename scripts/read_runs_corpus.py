#!/usr/bin/env python3
"""Print what each run folder of the public runs corpus holds, read with the formats' own
loaders (tensorboard's EventFileLoader, csv, json), not with spec-check: the reading that the
verdicts in tests/fixtures/runs_corpus/expectations.yaml were written from.

    python scripts/read_runs_corpus.py tests/fixtures/runs_corpus
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
import statistics
import struct
import sys
from pathlib import Path

Point = tuple[int | None, float | None, float]


def summary(name: str, pts: list[Point]) -> str:
    steps = sorted({p[0] for p in pts if p[0] is not None})
    walls = sorted(p[1] for p in pts if p[1] is not None)
    nonfinite = sum(1 for p in pts if not math.isfinite(p[2]))
    sg = [b - a for a, b in itertools.pairwise(steps)]
    wg = [b - a for a, b in itertools.pairwise(walls)]
    med = statistics.median(sg) if sg else None
    out = f"  {name}: n={len(pts)} steps {steps[:1]}..{steps[-1:]} step gap median={med}"
    if wg:
        out += f" wall gap median={statistics.median(wg):.3g} max={max(wg):.4g}"
    return out + (f" NONFINITE={nonfinite}" if nonfinite else "")


def event_file(p: Path) -> dict[str, list[Point]]:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    tags: dict[str, list[Point]] = {}
    for ev in EventFileLoader(str(p)).Load():
        for v in ev.summary.value:
            x = v.simple_value if v.HasField("simple_value") else None
            if x is None and v.tensor.float_val:
                x = v.tensor.float_val[0]
            if x is None and len(v.tensor.tensor_content) == 4:
                x = struct.unpack("<f", v.tensor.tensor_content)[0]
            if x is not None:
                tags.setdefault(v.tag, []).append((ev.step, ev.wall_time, x))
    return tags


def show(run: Path) -> None:
    print("==", run.name)
    for p in sorted(run.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(run)
        if "tfevents" in p.name:
            tags = event_file(p)
            print(" ", rel, "TensorBoard tags:", len(tags))
            for t, pts in sorted(tags.items()):
                print(summary(t, pts))
        elif p.suffix == ".csv":
            with p.open(newline="") as fh:
                rows = list(csv.DictReader(fh))
            print(" ", rel, "CSV rows", len(rows), "columns", list(rows[0]) if rows else None)
            if rows and "step" in rows[0]:
                for col in (c for c in rows[0] if c != "step"):
                    print(summary(col, [(int(float(r["step"])), None, float(r[col])) for r in rows if r.get(col)]))
        elif p.suffix == ".tsv":
            with p.open(newline="") as fh:
                rows = list(csv.DictReader(fh, delimiter="\t"))
            col = next(c for c in rows[0] if c not in ("step", "timestamp"))
            print(summary(f"{rel} [{col}]", [
                (int(r["step"]), float(r["timestamp"]) / 1000 if "timestamp" in r else None, float(r[col]))
                for r in rows]))
        elif p.name == "trainer_state.json":
            hist = json.loads(p.read_text())["log_history"]
            keys = sorted({k for r in hist for k in r})
            print(" ", rel, "log_history", len(hist), "keys", keys)
            for k in (k for k in keys if k not in ("step", "epoch")):
                print(summary(k, [(r.get("step"), None, float(r[k])) for r in hist
                                  if isinstance(r.get(k), (int, float))]))
        elif p.suffix == ".jsonl":
            recs = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
            print(" ", rel, "JSON lines", len(recs), "keys", sorted(recs[0]))
        elif "mlruns" in rel.parts and p.parent.name == "metrics":
            pts: list[Point] = []
            for line in p.read_text().splitlines():
                a = line.split()
                pts.append((int(a[2]) if len(a) > 2 else None, int(a[0]) / 1000, float(a[1])))
            print(summary(f"{rel} (MLflow)", pts))
        elif p.suffix in (".log", ".out", ".txt"):
            text = p.read_text(errors="replace")
            bad = [x for x in text.splitlines() if re.search(r"exitcode|Traceback|Error|error|Killed|CANCELLED", x)]
            print(" ", rel, f"text, {len(text)} characters; failure-like lines: {len(bad)}", bad[:3])
        elif p.name == "metrics.json":
            print(" ", rel, "JSON", p.read_text()[:300])


if __name__ == "__main__":
    for folder in sorted(Path(sys.argv[1]).iterdir()):
        if folder.is_dir():
            show(folder)
