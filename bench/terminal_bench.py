"""The terminal renderer on reports with thousands of rows, against itself drawing every
table with rich (the baseline, measured in the same run on the same report).

Two reports, made once with the CLI as JSON results and then rendered in this process:

1. a lint of N files (the shared corpus copied round-robin, as bench/lint_bench.py does):
   N jobs, each a table of its failing and erroring rules;
2. a fleet of N synthesized DGX H100 nodes (bench/cluster_bench.py's ``write_fleet``),
   ``--passes itemize``, rendered with ``--show passes``: every node's table.

For each: the time to render as piped output (no colour, 140 columns) by rich with tables
reused (``TerminalRenderer(reuse=True)``) and with every table laid out by rich
(``reuse=False``), the ratio, and whether the two outputs are the same bytes (they must be).
The synthesized nodes are all alike; a third report gives each node its own GPU UUIDs, as
a real fleet has them (tables of one shape, laid out once and filled in). Measured values
that differ in length between nodes make more shapes; the lint case is typical of a folder
of similar recipes.

    python bench/terminal_bench.py [--files 1000] [--nodes 2000]
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
CORPUS = next((p for p in (ROOT.parent / "shared" / "corpus", Path("/work/shared/corpus")) if p.is_dir()),
              ROOT.parent / "shared" / "corpus")
EXT = (".json", ".yaml", ".yml", ".toml", ".sh", ".bash", ".slurm", ".sbatch", ".sub", ".env")


def _result(args: list[str], out: Path) -> Path:
    r = subprocess.run([sys.executable, "-m", "validator", *args, "--format", "json", "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    if r.returncode not in (0, 1):
        raise SystemExit(f"spec-check {' '.join(args[:2])} failed: {r.stderr.strip()[:400]}")
    return out


def _render(path: Path, *, reuse: bool, show_passes: bool) -> tuple[float, str]:
    from validator.renderers.terminal import TerminalRenderer
    from validator.report.results import load_result

    _, report = load_result(path)
    buf = io.StringIO()
    t0 = time.perf_counter()
    TerminalRenderer(width=140, show_passes=show_passes, reuse=reuse).render(report, buf)
    return time.perf_counter() - t0, buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=2000)
    args = ap.parse_args()
    from cluster_bench import write_fleet

    sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in EXT)
    if not sources:
        print(f"no corpus configs under {CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sc-bench-term-") as tmp:
        d = Path(tmp)
        many = d / "many"
        many.mkdir()
        for i in range(args.files):
            shutil.copyfile(sources[i % len(sources)], many / f"{i:05d}_{sources[i % len(sources)].name}")
        write_fleet(d / "fleet", args.nodes)
        # and the same fleet with each node's own GPU UUIDs, as a real fleet has them
        import re

        (d / "fleet-own").mkdir()
        for f in sorted((d / "fleet").iterdir()):
            n = int(f.stem.removeprefix("dgx"))
            (d / "fleet-own" / f.name).write_text(
                re.sub(r"GPU-[0-9a-f]{4}", f"GPU-{n:04x}", f.read_text()))
        cases = [
            (f"lint of {args.files} files", _result(["lint", "--ignore-unknown", str(many)], d / "lint.json"), False),
            (f"fleet of {args.nodes} nodes, --show passes",
             _result(["cluster", "--facts", str(d / "fleet"), "--passes", "itemize"], d / "fleet.json"), True),
            ("the same, each node's own GPU UUIDs",
             _result(["cluster", "--facts", str(d / "fleet-own"), "--passes", "itemize"], d / "own.json"), True),
        ]
        print(f"{'report':<36}{'lines':>8}{'rich, every table':>20}{'tables reused':>16}{'ratio':>8}  same bytes")
        for name, path, show in cases:
            t_base, base = _render(path, reuse=False, show_passes=show)
            t_new, new = _render(path, reuse=True, show_passes=show)
            print(f"{name:<36}{base.count(chr(10)):>8}{t_base:>18.2f} s{t_new:>14.2f} s"
                  f"{t_new / t_base:>7.2f}x  {'yes' if new == base else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
