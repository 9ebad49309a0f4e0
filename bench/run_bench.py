"""`lint --run` reading a long run, side by side with tensorboard's own event-file reader.

    python bench/run_bench.py [--scalars 10000000] [--files 4] [--dir /tmp/run-bench]

Writes a run of N scalars (one per event, as torch's SummaryWriter writes them: loss,
grad_norm, tokens/s, memory and an unclassified name, cycling, over N/5 steps with a wall
time each) as TFRecord event files, then times, each in a fresh process:

* baseline: tensorboard's ``EventFileLoader`` iterating every event of the same files;
* ours: ``validator.runs.measure.read_runs`` on the folder (the sniffing, the record reader,
  the families, the cadence histograms, restarts and stalls), the whole of ``lint --run``'s
  reading.

Prints both CPU times (the machine's load does not move them as it moves wall time), the
ratio (aim: at most 1.5) and each process's peak memory (max RSS;
aim: ours under 200 MiB whatever N). Generation is slow (tensorboard's CRC32C is pure
Python where TensorFlow is not installed, and the baseline pays the same per record): at
10 million scalars expect tens of minutes on a laptop. Nothing here is asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

NAMES = ("train/loss", "train/grad_norm", "train/train_tokens_per_second", "memory/max_reserved(GiB)",
         "train/learning_rate")


def generate(folder: Path, scalars: int, files: int) -> None:
    from tensorboard.compat.proto import event_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-scalars // files)
    t0 = 1795000000.0
    n = 0
    for k in range(files):
        path = folder / f"events.out.tfevents.{int(t0) + k}.bench.{k}.0"
        with open(path, "wb") as f:
            def write(ev: event_pb2.Event) -> None:
                data = ev.SerializeToString()
                head = struct.pack("<Q", len(data))
                f.write(head + struct.pack("<I", masked_crc32c(head)) + data
                        + struct.pack("<I", masked_crc32c(data)))
            write(event_pb2.Event(wall_time=t0, file_version="brain.Event:2"))
            for _ in range(min(per_file, scalars - n)):
                step = n // len(NAMES)
                ev = event_pb2.Event(wall_time=t0 + step * 0.25, step=step)
                v = ev.summary.value.add()
                v.tag = NAMES[n % len(NAMES)]
                v.simple_value = 1.0 + (n % 97) * 0.01
                write(ev)
                n += 1


BASELINE = """
import sys, pathlib
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    for ev in EventFileLoader(str(p)).Load():
        n += 1
print(n)
"""

OURS = """
import sys, pathlib
from validator.runs.measure import read_runs
ev = read_runs([pathlib.Path(sys.argv[1])])
assert not ev.errors, ev.errors
print(sum(s.scalars for s in ev.streams))
"""


def timed(code: str, folder: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, output) of ``code`` in a fresh interpreter."""
    # CPU seconds of the process (not wall time: a shared machine's load would decide a wall ratio)
    wrapper = ("import resource, sys, time\nt0 = time.process_time()\n" + code +
               "\nprint(time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", wrapper, str(folder)], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    return float(out[-2]), float(out[-1]), out[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scalars", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/spec-check-run-bench"))
    a = ap.parse_args()
    folder = a.dir / f"n{a.scalars}_f{a.files}"
    if not folder.is_dir():
        t = time.perf_counter()
        generate(folder, a.scalars, a.files)
        print(f"generated {a.scalars:,} scalars in {a.files} event files in {time.perf_counter() - t:.0f} s: {folder}")
    size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    base_s, base_mib, base_n = timed(BASELINE, folder)
    ours_s, ours_mib, ours_n = timed(OURS, folder)
    print(f"{'':36}{'CPU s':>10}{'peak MiB':>10}  items")
    print(f"{'tensorboard EventFileLoader (events)':36}{base_s:10.1f}{base_mib:10.0f}  {base_n}")
    print(f"{'spec-check read_runs (scalars)':36}{ours_s:10.1f}{ours_mib:10.0f}  {ours_n}")
    print(f"ratio ours/tensorboard: {ours_s / base_s:.2f} (aim <= 1.5); files {size:.0f} MiB; "
          f"peak memory ours {ours_mib:.0f} MiB (aim < 200)")


if __name__ == "__main__":
    main()
