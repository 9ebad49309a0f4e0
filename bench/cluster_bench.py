"""Benchmarks for ``spec-check cluster``; prints ratios against baselines run alongside.

1. probe fan-out: N real hosts (network namespaces with sshd, as in tests/cluster) probed
   at once versus one host, and versus the same N probed one after another (sequential
   SSH). Needs root; skipped otherwise.
2. ring sweep: rounds per plan as N grows (pure), and measured sweep wall time over real
   iperf3 for small N (root only): a ring sweep's time should not grow with N.
3. evaluation at scale, end to end: 10,000 generated node facts files on disk ->
   ``spec-check cluster --facts DIR --format json -o FILE`` (load, validate, build the
   cluster document, evaluate, render, write); wall time and the child's peak RSS.

    python bench/cluster_bench.py [--hosts 8] [--nodes 10000] [--skip-netns | --evaluate-only]

Times are reported, never asserted (tests do not assert times either).
"""

from __future__ import annotations

import argparse
import copy
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


def _node_doc(i: int, template: dict) -> dict:
    doc = copy.deepcopy(template)
    doc["subject"]["name"] = f"node{i:05d}"
    f = doc["facts"]
    f["gpu.vendor"] = {"value": "nvidia"}
    f["gpu.count"] = {"value": 8}
    f["gpu.models"] = {"value": ["NVIDIA H100 80GB HBM3"]}
    f["gpu.driver_version"] = {"value": "550.54.15" if i % 997 else "535.104.05"}
    f["gpu.cuda_version"] = {"value": "12.4"}
    return doc


def bench_evaluate(n: int, keep: Path | None = None) -> None:
    """End to end, as an operator replays a fleet: ``spec-check cluster --facts DIR
    --format json -o FILE`` over n node facts files written to disk first. The time and
    the peak RSS are the child process's own (``getrusage(RUSAGE_CHILDREN)``): loading and
    validating the files, building the cluster document, evaluating, rendering JSON and
    writing it, interpreter start-up included."""
    import resource
    import tempfile

    probe = subprocess.run(
        [sys.executable, "-m", "validator", "probe", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    template = json.loads(probe.stdout)
    size = len(probe.stdout)
    with tempfile.TemporaryDirectory(prefix="sc-bench-eval-") as tmp:
        facts = Path(tmp) / "facts"
        facts.mkdir()
        for i in range(n):
            doc = _node_doc(i, template)
            (facts / f"{doc['subject']['name']}.json").write_text(json.dumps(doc))
        out = Path(tmp) / "result.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "validator", "cluster", "--facts", str(facts),
             "--format", "json", "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        dt = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode not in (0, 1):
            raise SystemExit(f"[evaluate] spec-check failed: {p.stderr.strip()}")
        result = json.loads(out.read_text())
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(
            f"[evaluate] {n} node facts files (~{size / 1024:.0f} KiB each) -> "
            f"spec-check cluster --facts DIR --format json: {len(result['findings'])} findings, "
            f"{out.stat().st_size / 2**20:.0f} MiB of JSON in {dt:.2f} s wall "
            f"({cpu:.2f} s CPU, {dt / n * 1e3:.2f} ms/node); peak RSS {after.ru_maxrss / 1024:.0f} MiB "
            f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs: wall time is only "
            "comparable on a quiet machine)"
        )
        if keep is not None:
            keep.write_text(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8, help="netns hosts for the probe fan-out")
    ap.add_argument(
        "--nodes", type=int, default=10_000, help="generated node documents to evaluate"
    )
    ap.add_argument(
        "--ring-sizes", default="2,4,8", help="netns fleet sizes for the measured ring sweep"
    )
    ap.add_argument("--skip-netns", action="store_true", help="only the pure benchmarks")
    ap.add_argument(
        "--evaluate-only",
        action="store_true",
        help="only the evaluation at scale (10,000 facts files -> one result)",
    )
    args = ap.parse_args()
    if not args.evaluate_only:
        if not args.skip_netns:
            bench_probe(args.hosts)
        sizes = [] if args.skip_netns else [int(s) for s in args.ring_sizes.split(",") if s]
        bench_rounds(sizes)
    bench_evaluate(args.nodes)


if __name__ == "__main__":
    main()
