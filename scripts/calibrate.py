"""Calibration of the job rules: per rule, how many jobs of the public corpus pass, fail,
warn, skip or error under rule pack v1.0 and under v1.1 (docs/calibration.md).

Each config the corpus manifests list (``MANIFEST.tsv``, column ``local_file``) is linted
as its own job, as a new user would lint it (no --set values), once per pack. The table
goes between the ``<!-- calibration:begin -->`` / ``<!-- calibration:end -->`` markers of
docs/calibration.md with ``--write``; without it, it is printed.

    python scripts/calibrate.py [--write] [CORPUS_DIR ...]

Default corpora: the shared corpus (``../shared/corpus`` beside the checkout, or
/work/shared/corpus) and the project's public corpus (``tests/corpus``) where present.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "calibration.md"
BEGIN, END = "<!-- calibration:begin -->", "<!-- calibration:end -->"
STATUSES = ("pass", "fail", "warn", "skip", "error")
PLATFORM = "platform_metric_families=gpu_utilization,memory,collective_latency"
# column -> (rule pack, --set values): v1.1 also under a profile declaring a DCGM exporter
# and an NCCL profiler plugin, the platform most clusters run
PACKS = {"1.0": ("1.0", ()), "1.1": ("1.1", ()), "1.1 + platform": ("1.1", (PLATFORM,))}


def default_corpora() -> list[Path]:
    out = []
    for p in (ROOT.parent / "shared" / "corpus", Path("/work/shared/corpus"), ROOT / "tests" / "corpus"):
        if (p / "MANIFEST.tsv").is_file() and p.resolve() not in [o.resolve() for o in out]:
            out.append(p)
    return out


def corpus_files(roots: list[Path]) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        with (root / "MANIFEST.tsv").open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                p = root / row["local_file"]
                if p.is_file():
                    files.append(p)
    return files


def judge(files: list[Path]) -> tuple[dict[str, dict[str, Counter[str]]], dict[str, list[tuple[str, str]]], int]:
    """Counts per pack, rule and status; v1.1's failures per rule (file, message); jobs read."""
    from validator.cli.common import RunOptions, build
    from validator.evaluate.engine import evaluate
    from validator.jobs import read_job

    counts: dict[str, dict[str, Counter[str]]] = {v: {} for v in PACKS}
    failures: dict[str, list[tuple[str, str]]] = {}
    jobs = 0
    built = {col: build(RunOptions(rules_version=v, sets=sets), scopes=("job",)) for col, (v, sets) in PACKS.items()}
    for path in files:
        try:
            doc = read_job([path], None, strict=False)[0]
        except Exception as exc:  # a reader crash is itself a finding of this calibration
            print(f"{path}: {exc}", file=sys.stderr)
            continue
        if not doc["facts"]["job.formats"]["value"]:
            continue  # not recognized as a training config: nothing judged
        jobs += 1
        doc = {k: v for k, v in doc.items() if k != "errors"}
        for v in PACKS:
            b = built[v]
            for f in evaluate(b.ctx, b.pack, [doc]):
                counts[v].setdefault(f.rule, Counter())[f.status.value] += 1
                if v == "1.1" and f.status.value == "fail":
                    # paths as the corpus names them, not as this machine mounts it
                    message = f.message.replace(str(path.parent) + "/", "")
                    failures.setdefault(f.rule, []).append((path.name, message))
    return counts, failures, jobs


def table(counts: dict[str, dict[str, Counter[str]]], failures: dict[str, list[tuple[str, str]]],
          jobs: int, roots: list[Path]) -> str:
    def label(r: Path) -> str:
        r = r.resolve()
        if r.is_relative_to(ROOT):
            return str(r.relative_to(ROOT))
        return f"{r.parent.name}/{r.name}"

    names = ", ".join(f"`{label(r)}`" for r in roots)
    lines = [f"{jobs} jobs (every recognized config of {names}, each linted alone, no `--set`; the last "
             f"column with `--set {PLATFORM}`).",
             "Counts are pass / fail / warn / skip / error; `-` means the pack has no such rule.", "",
             "| rule | " + " | ".join(PACKS) + " |", "|---|" + "---|" * len(PACKS)]
    rules = sorted(set().union(*(set(c) for c in counts.values())))

    def cell(v: str, rule: str) -> str:
        c = counts[v].get(rule)
        return " / ".join(str(c[s]) for s in STATUSES) if c else "-"

    for rule in rules:
        lines.append(f"| `{rule}` | " + " | ".join(cell(col, rule) for col in PACKS) + " |")
    lines += ["", "A sample of v1.1 failures (first two per rule, by file name):", ""]
    for rule in sorted(failures):
        for name, message in sorted(failures[rule])[:2]:
            short = message if len(message) < 400 else message[:397] + "..."
            lines.append(f"- `{rule}` on `{name}`: {short.replace('|', '/')}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpora", nargs="*", type=Path)
    ap.add_argument("--write", action="store_true", help="replace the table in docs/calibration.md")
    args = ap.parse_args(argv)
    roots = args.corpora or default_corpora()
    if not roots:
        print("no corpus found (give CORPUS_DIR with a MANIFEST.tsv)", file=sys.stderr)
        return 2
    counts, failures, jobs = judge(corpus_files(roots))
    text = table(counts, failures, jobs, roots)
    if not args.write:
        print(text, end="")
        return 0
    doc = DOC.read_text(encoding="utf-8")
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
