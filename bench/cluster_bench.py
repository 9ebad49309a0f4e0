"""Benchmarks for ``spec-check cluster``; prints ratios against baselines run alongside.

1. probe fan-out: N real hosts (network namespaces with sshd, as in tests/cluster) probed
   at once versus one host, and versus the same N probed one after another (sequential
   SSH). Needs root; skipped otherwise.
2. ring sweep: rounds per plan as N grows (pure), and measured sweep wall time over real
   iperf3 for small N (root only): a ring sweep's time should not grow with N.
3. evaluation at scale, end to end: 1,000, 10,000 and 25,000 real-shaped node facts
   files (the synthesized DGX H100 node, a few faulty variants) on disk ->
   ``spec-check cluster --facts DIR --format json -o FILE``, beside parsing the same files
   with ``json`` alone: wall time, CPU time, peak RSS, result size; then ``report``,
   ``diff``, ``sign`` and ``verify`` read the largest fleet's result back.

    python bench/cluster_bench.py [--hosts 8] [--nodes 1000,10000,25000] [--skip-netns | --evaluate-only]
                                  [--distinct-nodes 10000]

Times are reported, never asserted (tests do not assert times either).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def bench_probe(n: int) -> None:
    from tests.cluster.netns_fleet import Fleet, netns_unavailable
    from validator.cluster import proc
    from validator.cluster.gather import probe_all
    from validator.cluster.transports import SshTransport

    why = netns_unavailable()
    if why:
        print(f"[probe] skipped: {why}")
        return
    import tempfile

    remote = f"{sys.executable} -m validator"
    remote_cmd = remote
    with tempfile.TemporaryDirectory(prefix="sc-bench-") as tmp:
        fleet = Fleet(Path(tmp) / "fleet")
        try:
            fleet.start(n)

            def timed(hosts: list[str], parallel: int) -> float:
                t = SshTransport(ssh_config=str(fleet.ssh_config))  # fresh: no reused masters
                try:
                    t0 = time.perf_counter()
                    res, _ = probe_all(
                        t,
                        hosts,
                        remote_command=remote_cmd,
                        timeout=120,
                        parallel=parallel,
                        registry=proc.Registry(),
                    )
                    dt = time.perf_counter() - t0
                finally:
                    t.close()
                bad = [h for h, r in res.items() if r.error]
                assert not bad, f"probe failed on {bad}: {res[bad[0]].error}"
                return dt

            recorded = Path(tmp) / "node.json"
            recorded.write_text(
                subprocess.run(
                    [sys.executable, "-m", "validator", "probe"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            # the real probe, then a latency-bound one (1 s of remote wait, no local CPU): on a
            # real fleet each probe burns its own host's CPU, here all "hosts" share this one
            for label, cmd in (
                ("real probe", remote),
                ("1 s remote wait", f"sleep 1; cat {recorded} #"),
            ):
                remote_cmd = cmd
                timed(fleet.addresses[:1], 1)  # warm caches
                one = timed(fleet.addresses[:1], 1)
                par = timed(fleet.addresses, n)
                seq = timed(fleet.addresses, 1)
                print(
                    f"[probe:{label}] 1 host: {one:.2f} s; {n} hosts parallel: {par:.2f} s "
                    f"(x{par / one:.2f} of one host); {n} hosts sequential SSH: {seq:.2f} s "
                    f"(parallel {seq / par:.1f}x faster; {os.cpu_count()} CPUs here)"
                )
        finally:
            fleet.stop()


def bench_rounds(measure_sizes: list[int]) -> None:
    from validator.cluster.plan import all_pairs_rounds, check_rounds, ring_rounds

    for n in (4, 5, 16, 64, 1000, 10_000):
        hosts = [f"n{i}" for i in range(n)]
        r = ring_rounds(hosts)
        check_rounds(r)
        a = len(all_pairs_rounds(hosts)) if n <= 1000 else n - 1 + n % 2
        print(
            f"[rounds] N={n:>6}: ring {len(r)} rounds ({sum(map(len, r))} pairs); "
            f"all pairs {a} rounds"
        )
    if not measure_sizes:
        return
    from tests.cluster.netns_fleet import Fleet, netns_unavailable

    if netns_unavailable():
        print(f"[ring] measured sweep skipped: {netns_unavailable()}")
        return
    import tempfile

    from validator.cluster import proc
    from validator.cluster.measure.runner import MeasureOptions, run_rounds
    from validator.cluster.transports import SshTransport

    base = None
    for n in measure_sizes:
        with tempfile.TemporaryDirectory(prefix="sc-bench-") as tmp:
            fleet = Fleet(Path(tmp) / "fleet")
            try:
                fleet.start(n)
                t = SshTransport(ssh_config=str(fleet.ssh_config))
                rounds = ring_rounds(fleet.addresses)
                t0 = time.perf_counter()
                res = run_rounds(
                    t, rounds, MeasureOptions(seconds=1), proc.Registry(), ("ping", "iperf3")
                )
                dt = time.perf_counter() - t0
                t.close()
                ok = sum(1 for f in res.values() if "value" in f.get("throughput", {}))
                base = base or dt
                print(
                    f"[ring] N={n}: {len(rounds)} rounds, {ok}/{len(res)} pairs measured "
                    f"in {dt:.2f} s "
                    f"(x{dt / base:.2f} of N={measure_sizes[0]})"
                )
            finally:
                fleet.stop()


FIXTURES = ROOT / "tests" / "fixtures" / "facts"
FAULTY = ("ecc_off", "nvlink_inactive", "port_200g", "remap_pending")


_BASE = json.loads((ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json").read_text())["facts"]
MACHINE_ID, SERIAL = _BASE["host.machine_id"]["value"], _BASE["host.board_serial"]["value"]


def write_fleet(directory: Path, n: int, distinct: bool = False) -> int:
    """n real-shaped node facts files: the repository's synthesized DGX H100 node
    (``dgx_h100.json``, 170 findings a node) as every node, each under its own name (its
    subject and hostname), and one node in 1,000 one of the synthesized faulty variants (ECC
    off, an NVLink down, a 200G port, a pending row remap). ``distinct``: each node's GPUs
    also have their own UUIDs and energy counters, and its slurmd its own pid (named in
    MEM-02's source), and the node its own machine ID and board serial, as recorded nodes do
    (no two files are then the same but for the host's name). Returns the bytes written."""
    import re

    texts = [(FIXTURES / "dgx_h100.json").read_text()]
    texts += [(FIXTURES / f"dgx_h100_{k}.json").read_text() for k in FAULTY]
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    uuid = re.compile(r'"GPU-[0-9a-f]{8}')
    energy = re.compile(r'("energy_total": \{\s*"value": )(\d+)')
    for i in range(n):
        text = texts[1 + (i // 1000) % len(FAULTY)] if i % 1000 == 500 else texts[0]
        text = text.replace("dgx-h100-01", f"dgx{i:05d}")
        if distinct:
            text = text.replace("pid 1650): /proc/1650/", f"pid {1000 + i % 30000}): /proc/{1000 + i % 30000}/")
            text = uuid.sub(f'"GPU-{i:08x}', text)
            text = text.replace(MACHINE_ID, f"{i:032x}").replace(SERIAL, f"{SERIAL[:-7]}{i:07d}")
            step = 37 * i
            text = energy.sub(lambda m, step=step: f"{m.group(1)}{int(m.group(2)) + step}", text)
        (directory / f"dgx{i:05d}.json").write_text(text)
        total += len(text)
    return total


_PARSE_ONLY = """
import json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    with open(os.path.join(d, name), "rb") as fh:
        json.loads(fh.read())
"""

# runs one command and prints its wall time, CPU time and peak RSS (its own and its
# children's, so forked workers count) as JSON: each measurement gets a fresh
# RUSAGE_CHILDREN, not the running maximum of every run before it
_MEASURE = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "wall": wall, "cpu": r.ru_utime + r.ru_stime,
                  "rss_mib": r.ru_maxrss / 1024, "stderr": p.stderr[-400:]}))
"""


def _measure(cmd: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def bench_evaluate(sizes: list[int], keep: Path | None = None, distinct: bool = False) -> None:
    """End to end, as an operator replays a fleet: ``spec-check cluster --facts DIR
    --format json -o FILE`` over n real-shaped node facts files on disk, beside the
    baseline: the same files read and parsed with ``json`` alone, in one process. Each
    line: wall time, CPU time (forked workers included) and peak RSS of the largest
    process, then the ratio to the baseline; the result's size and findings. ``distinct``:
    every node's GPU UUIDs and energy counters its own (``write_fleet``)."""
    import tempfile

    peaks: dict[int, float] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="sc-bench-eval-") as tmp:
            facts = Path(tmp) / "facts"
            size = write_fleet(facts, n, distinct)
            out = Path(tmp) / "result.json"
            base = _measure([sys.executable, "-c", _PARSE_ONLY, str(facts)])
            # copies of one node (not distinct) share GPU UUIDs and a machine ID, which
            # PLAT-02.facts-not-own rightly calls copies: that rule is left out of their runs,
            # and judged on the distinct fleets (each host its own)
            copies = [] if distinct else ["--ignore", "PLAT-02.facts-not-own"]
            run = _measure([sys.executable, "-m", "validator", "cluster", "--facts", str(facts),
                            "--format", "json", "-o", str(out), *copies])
            if run["rc"] not in (0, 1):
                raise SystemExit(f"[evaluate] spec-check failed: {run['stderr'].strip()}")
            result = json.loads(out.read_text())
            folded = sum(1 for f in result["findings"] if "folded" in f)
            print(
                f"[evaluate{', distinct GPUs' if distinct else ''}] N={n:>6} "
                f"({size / 2**20:,.0f} MiB of facts): "
                f"spec-check {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU, "
                f"{run['rss_mib']:.0f} MiB peak RSS | json parse only {base['wall']:.2f} s wall, "
                f"{base['cpu']:.2f} s CPU, {base['rss_mib']:.0f} MiB | "
                f"x{run['wall'] / base['wall']:.2f} wall, x{run['cpu'] / base['cpu']:.2f} CPU | "
                f"result {out.stat().st_size / 2**20:.1f} MiB, {len(result['findings'])} findings "
                f"({folded} folded), exit {run['rc']} "
                f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)"
            )
            peaks[n] = run["rss_mib"]
            if keep is not None:
                keep.write_text(out.read_text())
            if n == max(sizes):
                _read_back(out, Path(tmp))
    if len(peaks) > 1:  # does the peak grow with the fleet? (the issue: it must not)
        lo, hi = min(peaks), max(peaks)
        grew = peaks[hi] - peaks[lo]
        print(f"[evaluate{', distinct GPUs' if distinct else ''}] peak RSS N={lo:,} -> N={hi:,}: "
              f"{grew:+.0f} MiB ({grew * 2**20 / (hi - lo):+,.0f} bytes a node)")


def _read_back(result: Path, tmp: Path) -> None:
    """``report``, ``diff``, ``sign`` and ``verify`` on the largest fleet's result: each
    one's exit status, wall time and peak RSS (each must read the whole result)."""
    cli = [sys.executable, "-m", "validator"]
    key = tmp / "k"
    subprocess.run([*cli, "keygen", str(key)], capture_output=True, check=True)
    steps = [
        ("report --format terminal", [*cli, "report", str(result), "-o", str(tmp / "r.txt")]),
        ("report --format json", [*cli, "report", str(result), "--format", "json", "-o", str(tmp / "r.json")]),
        ("diff", [*cli, "diff", str(result), str(tmp / "r.json")]),
        ("sign", [*cli, "sign", str(result), "--key", f"{key}.key", "-o", str(tmp / "s.json")]),
        ("verify", [*cli, "verify", str(tmp / "s.json"), "--key", f"{key}.pub"]),
    ]
    shown = []
    for label, cmd in steps:
        m = _measure(cmd)
        shown.append(f"{label} exit {m['rc']} {m['wall']:.2f} s {m['rss_mib']:.0f} MiB")
    print(f"[read back] {result.stat().st_size / 2**20:.1f} MiB result: " + "; ".join(shown))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8, help="netns hosts for the probe fan-out")
    ap.add_argument(
        "--nodes",
        default="1000,10000,25000",
        help="fleet sizes to replay (comma list of node counts)",
    )
    ap.add_argument(
        "--ring-sizes", default="2,4,8", help="netns fleet sizes for the measured ring sweep"
    )
    ap.add_argument("--skip-netns", action="store_true", help="only the pure benchmarks")
    ap.add_argument(
        "--evaluate-only",
        action="store_true",
        help="only the evaluation at scale (N facts files -> one result)",
    )
    ap.add_argument(
        "--distinct-nodes",
        default="",
        help="fleet sizes to replay again with each node's GPU UUIDs and energy counters "
        "its own (comma list; none by default)",
    )
    args = ap.parse_args()
    if not args.evaluate_only:
        if not args.skip_netns:
            bench_probe(args.hosts)
        sizes = [] if args.skip_netns else [int(s) for s in args.ring_sizes.split(",") if s]
        bench_rounds(sizes)
    bench_evaluate([int(n) for n in args.nodes.split(",") if n])
    bench_evaluate([int(n) for n in args.distinct_nodes.split(",") if n], distinct=True)


if __name__ == "__main__":
    main()
