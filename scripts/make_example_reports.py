#!/usr/bin/env python3
"""Regenerate the example reports in reports/examples/ from committed facts fixtures.

    python scripts/make_example_reports.py            # rewrite reports/examples/
    python scripts/make_example_reports.py --out DIR  # write elsewhere (the drift test does)

The examples are real runs of spec-check's own code (build -> engine -> waivers ->
renderers), with the clock pinned by SOURCE_DATE_EPOCH, so the output is byte-for-byte
reproducible. A test regenerates them into a temporary directory and fails on any
difference: whoever changes a rule or a renderer regenerates the examples in the same
commit. Where the facts come from, honestly:

* ``node-recorded.*``: a genuinely recorded node, ``spec-check probe -o`` on the machine
  that wrote this script (a VM without GPUs or RDMA, so it is not conformant), committed
  as tests/fixtures/facts/recorded_vm.json and checked with ``spec-check check --facts``;
* ``node-dgx-h100.*``: a DGX H100 *shaped* node: the sysfs tree and NVML replay of
  tests/fixtures/ are synthesized from the reference (not recorded from a real DGX), then
  probed by the real probe (tests/fixtures/make_facts.py);
* ``fleet.*``: ``spec-check cluster --facts tests/reports/fixtures/fleet`` (the replay of
  a ``--save-facts`` directory: the real cluster code path after probing and measuring),
  with the example waivers (one active, one expired). The saved facts are four of those
  synthesized nodes (clean, ECC off, an inactive NVLink, a 200G port), each relabelled
  gpu-a01..a04 with its own GPU UUIDs (derived from the fixture's: the UUID's first group
  ends in the host's number), and a cluster document whose pairwise numbers are
  illustrative, hand-written in tests/reports/fixtures/pairs.json, not measured.
  ``--fleet-facts`` rewrites that directory (``write_fleet_facts``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EPOCH = "1795000000"  # 2026-11-18T11:06:40Z
FACTS = Path("tests/fixtures/facts")
FALLBACK = Path("tests/reports/fixtures/facts")
PAIRS = Path("tests/reports/fixtures/pairs.json")
FLEET = Path("tests/reports/fixtures/fleet")
WAIVERS = Path("tests/reports/fixtures/waivers.yaml")
FORMATS = {"html": "html", "md": "markdown", "json": "json", "prom": "prometheus"}


def _render(report: Any, fmt: str) -> str:
    from validator.renderers import get_renderer

    buf = io.StringIO()
    get_renderer(fmt).render(report, buf)
    return buf.getvalue()


def _write(out: Path, stem: str, report: Any, formats: tuple[str, ...]) -> list[Path]:
    written = []
    for ext in formats:
        path = out / f"{stem}.{ext}"
        path.write_text(_render(report, FORMATS[ext]), encoding="utf-8")
        written.append(path)
    return written


def node_example(facts: Path) -> Any:
    from validator.cli.common import RunOptions, build, evaluate_documents
    from validator.facts.document import load

    opts = RunOptions(format="json")
    return evaluate_documents("check", build(opts), opts, [load(facts)], [facts.as_posix()])


def relabel(doc: dict[str, Any], host: str, number: int) -> dict[str, Any]:
    """The fixture as host ``host``: hostname fact and GPU UUIDs of its own.

    The fleet's nodes come from one synthesized fixture family, so their GPUs would share
    UUIDs (and a UUID waiver would match several hosts); the first group of each UUID
    gets the host's number as its last two hex digits instead.
    """
    import hashlib
    import re

    text = json.dumps(doc)
    text = re.sub(
        r"\b(GPU|MIG)-([0-9a-f]{6})[0-9a-f]{2}-", lambda m: f"{m[1]}-{m[2]}{number:02x}-", text
    )
    out: dict[str, Any] = json.loads(text)
    facts = out.get("facts", {})
    if "host.hostname" in facts:
        facts["host.hostname"] = {**facts["host.hostname"], "value": host}
    # the machine's identity of its own (a replay holds two hosts with one to be one machine)
    for name, made in (("host.machine_id", hashlib.md5(host.encode()).hexdigest()),
                       ("host.board_serial", f"1582{int(hashlib.md5(host.encode()).hexdigest()[:8], 16) % 10**9:09d}")):
        if isinstance(facts.get(name), dict) and "value" in facts[name]:
            facts[name] = {**facts[name], "value": made}
    return out


def write_fleet_facts(facts_dir: Path, out: Path) -> list[Path]:
    """The example fleet's saved facts (``--save-facts`` layout): one node document per
    host and the cluster document with the illustrative pairwise numbers of pairs.json.

    Committed under tests/reports/fixtures/fleet/ and rewritten only with
    ``--fleet-facts``; the fleet report is then produced by the real ``spec-check cluster
    --facts`` replay, the code path of a live run after probing and measuring.
    """
    from validator import __version__
    from validator.cluster import facts as cfacts
    from validator.facts.document import load, value

    sweep = json.loads(PAIRS.read_text(encoding="utf-8"))
    hosts = list(sweep["hosts"])
    docs = {
        h: cfacts.rekey(relabel(load(facts_dir / name), h, i), h)
        for i, (h, name) in enumerate(sweep["hosts"].items(), start=1)
    }
    source = "illustrative (tests/reports/fixtures/pairs.json), not measured"
    pairs = {
        (p["sender"], p["receiver"]): {
            "direction": value(f"{p['sender']}->{p['receiver']}"),
            "sender": value(p["sender"]),
            "receiver": value(p["receiver"]),
            "tool": value("ib_write_bw"),
            "latency_tool": value("ping"),
            "throughput": value(p["throughput"], unit="Gb/s", source=source),
            "rdma_throughput": value(p["throughput"], unit="Gb/s", source=source),
            "latency": value(p["latency"], unit="us", source=source),
        }
        for p in sweep["pairs"]
    }
    cluster = cfacts.build(
        hosts,
        docs,
        {},
        name="example-fleet",
        tool_version=__version__,
        collected_at=docs[hosts[0]].get("collected_at") or "2026-11-18T11:06:40Z",
        pairs=pairs,
        measure_status={
            "throughput": cfacts.RUN,
            "latency": cfacts.RUN,
            "collectives": "not requested (--measure-tools ping,ib_write_bw)",
        },
        measured=True,
    )
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, doc in [*((f"{h}.json", docs[h]) for h in hosts), ("cluster.json", cluster)]:
        path = out / name
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def fleet_example() -> Any:
    """``spec-check cluster --facts tests/reports/fixtures/fleet --waivers ...``, run as a
    user would run it (a subprocess of this interpreter), then read back."""
    import subprocess
    import tempfile

    from validator.report.results import load_result

    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "fleet.json"
        proc = subprocess.run(
            [sys.executable, "-m", "validator", "cluster", "--facts", FLEET.as_posix(),
             "--waivers", WAIVERS.as_posix(), "--format", "json", "-o", str(result)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH},
        )
        if proc.returncode not in (0, 1):
            raise SystemExit(f"spec-check cluster --facts failed: {proc.stderr.strip()}")
        return load_result(result)[1]


DESCRIPTIONS = {
    "node-recorded": "a real node: `spec-check probe` recorded on a VM without GPUs, then "
    "`spec-check check --facts`",
    "node-dgx-h100": "a DGX H100-shaped node: synthesized sysfs tree and NVML replay, probed by the "
    "real probe, `spec-check check --facts`",
    "fleet": "`spec-check cluster --facts` replaying four synthesized H100 nodes (own GPU UUIDs "
    "each) and illustrative, hand-written ring bandwidth numbers; with waivers",
    "node-small": "a small hand-made node fixture, `spec-check check --facts`",
}


def _index(out: Path, reports: dict[str, Any]) -> Path:
    """reports/examples/README.md: what each example is and how it came out."""
    lines = [
        "# Example reports",
        "",
        "Generated by `python scripts/make_example_reports.py` (do not edit; a test fails when",
        "these drift from what the script writes). Every report is a real run of spec-check's",
        "engine and renderers; the *facts* behind them are of three kinds, named in each row:",
        "one node recorded for real (`spec-check probe` on a VM with no GPU, hence not",
        "conformant); DGX H100-shaped nodes whose sysfs and NVML fixtures were synthesized",
        "from public references (tests/fixtures/make_facts.py), not recorded on a DGX; and",
        "hand-written, illustrative pairwise bandwidth numbers. The fleet report is",
        "`spec-check cluster --facts tests/reports/fixtures/fleet` (replaying saved facts, as",
        "after `--save-facts`), not a live run against real hosts.",
        "",
        "| example | what | verdict | fail / error / warn / pass / waived | files |",
        "|---|---|---|---|---|",
    ]
    for stem, report in reports.items():
        from validator.renderers.scope import verdict_text

        s = report.summary
        verdict = verdict_text(report)  # scoped: what the example covers
        verdict = f"**{verdict}**" if not s.conformant else verdict
        # as the HTML tiles count: outside active waivers, the waived ones apart
        tiles = {k: 0 for k in ("fail", "error", "warn", "pass", "skip", "waived")}
        for f in report.findings:
            tiles["waived" if f.waived else f.status.value] += 1
        counts = " / ".join(str(tiles[k]) for k in ("fail", "error", "warn", "pass", "waived"))
        files = ", ".join(f"[{p.suffix[1:]}]({p.name})" for p in sorted(out.glob(f"{stem}.*")))
        lines.append(f"| {stem} | {DESCRIPTIONS.get(stem, '')} | {verdict} | {counts} | {files} |")
    lines += ["", "The HTML files are self-contained: download one and open it in a browser.", ""]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def generate(out: Path) -> list[Path]:
    """Write every example into ``out``; returns the files written."""
    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    os.chdir(ROOT)  # sources and waiver paths in the reports are relative to the repository
    sys.path.insert(0, str(ROOT))
    out.mkdir(parents=True, exist_ok=True)
    facts_dir = FACTS if (FACTS / "dgx_h100.json").is_file() else FALLBACK
    written: list[Path] = []
    reports: dict[str, Any] = {}
    if facts_dir == FACTS:
        reports["node-recorded"] = node_example(FACTS / "recorded_vm.json")
        written += _write(out, "node-recorded", reports["node-recorded"], ("html", "md", "json"))
        reports["node-dgx-h100"] = node_example(FACTS / "dgx_h100.json")
        written += _write(out, "node-dgx-h100", reports["node-dgx-h100"], ("html", "md", "json"))
        if not (FLEET / "cluster.json").is_file():
            write_fleet_facts(FACTS, FLEET)
        reports["fleet"] = fleet_example()
        written += _write(out, "fleet", reports["fleet"], ("html", "md", "json", "prom"))
    else:
        reports["node-small"] = node_example(FALLBACK / "small_node.json")
        written += _write(out, "node-small", reports["node-small"], ("html", "md", "json"))
    written.append(_index(out, reports))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "examples")
    parser.add_argument(
        "--fleet-facts",
        action="store_true",
        help=f"first rewrite the example fleet's saved facts ({FLEET}) from the fixtures",
    )
    args = parser.parse_args(argv)
    if args.fleet_facts:
        os.environ["SOURCE_DATE_EPOCH"] = EPOCH
        os.chdir(ROOT)
        write_fleet_facts(FACTS, FLEET)
    for path in generate(args.out.resolve()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
