"""`lint --run` reading a long run, side by side with a plain loop and tensorboard's and tbparse's readers.

    python bench/run_bench.py [--scalars N | --ten-million] [--files 4] [--dir /tmp/spec-check-run-bench]
                              [--readers loader,tbparse,raw,plain,ours] [--serial] [--generate-only | --ours-only]

Writes a run of N scalars (default 1,000,000; ``--ten-million`` the issue's size), one per
event as torch's SummaryWriter writes them: loss, grad_norm, tokens/s, memory and an
unclassified name, cycling, over N/5 steps with a wall time each, as TFRecord event files.
Then times, each in a fresh process of its own (at once unless ``--serial``):

* loader: tensorboard's ``EventFileLoader`` iterating every event of the same files (what
  TensorBoard itself reads them with);
* tbparse: tbparse's ``SummaryReader``, every scalar in a DataFrame;
* raw: tensorboard's ``RawEventFileLoader`` (its record reader, both CRCs checked, its CRC in
  pure Python where TensorFlow is not installed) with each record parsed into an Event;
* plain: the floor, a plain loop: struct framing, google-crc32c's C CRC-32C on both CRCs,
  protobuf's parser for the Event message, each scalar taken out as (tag, step, time, value);
* ours: ``validator.runs.measure.read_runs`` on the folder (the sniffing, the record reader of
  validator/runs/events.py, the families, the cadence histograms, restarts and stalls), the
  whole of ``lint --run``'s reading.

A reader whose package is not installed is named and left out. Prints each one's CPU time
(the machine's load does not move it as it moves wall time) and peak memory (VmHWM, which
starts again at exec), and the ratios ours/plain (aim: at most 2), ours/loader, ours/tbparse
and ours/raw; ours under 200 MiB whatever N.

Generating is fast: each record is framed with numpy from one template per name and step
varint length (wall time, step and value patched in), and its CRC-32C computed column by column
for up to 100,000 steps at once. The files are byte for byte what protobuf and tensorboard's
CRC make (tests/runs/test_bench_gen.py).

Measured on 2026-12-01 on the project's 2-core VM (shared and loaded, load average 8-10),
with tensorboard 2.21.0, tbparse 0.0.9, protobuf 7.36.2, google-crc32c 1.9.0, Python 3.11,
``--serial``:

* generating 10 million scalars (566 MiB, 4 files): 21 s wall;
* 1 million scalars (57 MiB): loader 50.7 CPU s (47 MiB peak), tbparse 24.4 (195 MiB), raw
  16.6 (47 MiB), plain 3.6 (16 MiB), ours 6.2 (20 MiB): ours/plain 1.71, ours/loader 0.12,
  ours/tbparse 0.25, ours/raw 0.37 (two earlier runs, plain and ours alone: 1.32 and 1.51);
* 10 million scalars (``--ten-million --readers loader,plain,ours``): loader 492.5 CPU s
  (65 MiB), plain 33.4 (16 MiB), ours 48.3 (20 MiB), every scalar counted: ours/plain 1.45,
  ours/loader 0.10. tbparse was not run at 10 million: its DataFrame of every scalar took
  195 MiB at 1 million and grows with the run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

NAMES = ("train/loss", "train/grad_norm", "train/train_tokens_per_second", "memory/max_reserved(GiB)",
         "train/learning_rate")


STEPS_PER_CHUNK = 100_000  # steps framed at once: about 35 MB of records in memory


def _crc32c_table() -> Any:
    import numpy as np

    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):  # CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, as TFRecord uses
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    return t


def masked_crc32c_rows(rows: Any, table: Any) -> Any:
    """TFRecord's masked CRC-32C of each row of a uint8 matrix, one column at a time for every
    row at once (numpy), so a million records cost about as much as one record's bytes in
    Python; tensorboard's own ``masked_crc32c`` is pure Python byte by byte."""
    import numpy as np

    crc = np.full(rows.shape[0], 0xFFFFFFFF, dtype=np.uint32)
    for col in range(rows.shape[1]):
        crc = table[(crc ^ rows[:, col]) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(0xA282EAD8)


def _records(steps: Any, k: int, name_index: int, t0: float, table: Any) -> Any:
    """The framed records (uint8 matrix, one row each) of NAMES[name_index] at ``steps``, whose
    varints are all ``k`` bytes long (0: step 0, which proto3 leaves out), encoded by hand as
    protobuf encodes an Event holding one simple_value (tests/runs/test_bench_gen.py checks it
    byte for byte against protobuf and tensorboard's CRC)."""
    import numpy as np

    from validator.runs.events import masked_crc32c

    name = NAMES[name_index].encode()
    value = b"\x0a" + bytes([len(name)]) + name + b"\x15"  # Value{tag, simple_value}, float follows
    summary_head = b"\x2a" + bytes([len(value) + 6]) + b"\x0a" + bytes([len(value) + 4]) + value
    n = len(steps)
    cols = [np.full((n, 1), 0x09, np.uint8),  # Event.wall_time (double)
            (t0 + steps * 0.25).astype("<f8").view(np.uint8).reshape(n, 8)]
    if k:  # Event.step (int64 varint)
        cols.append(np.full((n, 1), 0x10, np.uint8))
        cols += [(((steps >> (7 * i)) & 0x7F) | (0x80 if i < k - 1 else 0)).astype(np.uint8).reshape(n, 1)
                 for i in range(k)]
    cols.append(np.broadcast_to(np.frombuffer(summary_head, np.uint8), (n, len(summary_head))))
    vals = (1.0 + ((steps * len(NAMES) + name_index) % 97) * 0.01).astype("<f4")
    cols.append(vals.view(np.uint8).reshape(n, 4))
    data = np.concatenate(cols, axis=1)
    head = struct.pack("<Q", data.shape[1])
    head += struct.pack("<I", masked_crc32c(head))
    return np.concatenate([np.broadcast_to(np.frombuffer(head, np.uint8), (n, 12)), data,
                           masked_crc32c_rows(data, table).astype("<u4").view(np.uint8).reshape(n, 4)], axis=1)


def _varint_len(step: int) -> int:
    return 0 if step == 0 else (step.bit_length() + 6) // 7


def generate(folder: Path, scalars: int, files: int) -> int:
    """Event files of ``scalars`` scalars, rounded up to whole steps (one per name per step),
    spread over ``files`` files; returns the number written. Records are framed with numpy:
    steps whose varints have the same length share one template, patched per step."""
    import numpy as np

    from validator.runs.events import event_class, masked_crc32c

    folder.mkdir(parents=True, exist_ok=True)
    table = _crc32c_table()
    steps_total = -(-scalars // len(NAMES))
    per_file = -(-steps_total // files)
    t0 = 1795000000.0
    first = event_class()(wall_time=t0, file_version="brain.Event:2").SerializeToString()
    head = struct.pack("<Q", len(first))
    first_record = head + struct.pack("<I", masked_crc32c(head)) + first + struct.pack("<I", masked_crc32c(first))
    for k in range(files):
        lo, hi = k * per_file, min((k + 1) * per_file, steps_total)
        with open(folder / f"events.out.tfevents.{int(t0) + k}.bench.{k}.0", "wb") as f:
            f.write(first_record)
            s = lo
            while s < hi:  # chunks that never cross a varint-length boundary
                vlen = _varint_len(s)
                e = min(hi, s + STEPS_PER_CHUNK, 1 if vlen == 0 else 1 << (7 * vlen))
                steps = np.arange(s, e, dtype=np.int64)
                f.write(np.concatenate([_records(steps, vlen, i, t0, table) for i in range(len(NAMES))],
                                       axis=1).tobytes())
                s = e
    return steps_total * len(NAMES)


BASELINE = """
import sys, pathlib
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    for ev in EventFileLoader(str(p)).Load():
        n += 1
print(n)
"""

# tensorboard's raw record reader (both CRCs checked, its CRC in pure Python where TensorFlow
# is not installed), each record parsed into an Event
RAW = """
import sys, pathlib
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    for rec in RawEventFileLoader(str(p)).Load():
        n += len(event_pb2.Event.FromString(rec).summary.value)
print(n)
"""

# the floor: a plain loop, struct framing, google-crc32c's C CRC-32C on both CRCs, protobuf's
# parser for the Event message (tensorboard's generated class where it is installed), each
# scalar taken out as (tag, step, wall time, value)
PLAIN = """
import sys, pathlib, struct
import google_crc32c
try:
    from tensorboard.compat.proto.event_pb2 import Event
except ImportError:
    from validator.runs.events import event_class
    Event = event_class()
crc, head, tail = google_crc32c.value, struct.Struct("<QI").unpack, struct.Struct("<I").unpack_from
n = 0
for p in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    with open(p, "rb") as f:
        while True:
            h = f.read(12)
            if len(h) < 12:
                break
            length, hc = head(h)
            c = crc(h[:8])
            assert hc == (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
            d = f.read(length + 4)
            c = crc(d[:length])
            assert tail(d, length)[0] == (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
            ev = Event.FromString(d[:length])
            for v in ev.summary.value:
                scalar = (v.tag, ev.step, ev.wall_time, v.simple_value)
                n += 1
print(n)
"""

# tbparse (a pandas DataFrame of every scalar), where it is installed
TBPARSE = """
import sys
from tbparse import SummaryReader
print(len(SummaryReader(sys.argv[1], pivot=False).scalars))
"""

OURS = """
import sys, pathlib
from validator.runs.measure import read_runs
ev = read_runs([pathlib.Path(sys.argv[1])])
assert not ev.errors, ev.errors
print(sum(s.scalars for s in ev.streams))
"""

READERS = {"loader": ("tensorboard EventFileLoader (events)", BASELINE, "tensorboard"),
           "tbparse": ("tbparse SummaryReader (scalars)", TBPARSE, "tbparse"),
           "raw": ("tensorboard RawEventFileLoader + Event parse", RAW, "tensorboard"),
           "plain": ("plain loop: struct+google-crc32c+protobuf", PLAIN, ""),
           "ours": ("spec-check read_runs (scalars)", OURS, "")}


# the process's own peak resident memory: VmHWM (Linux), which starts again at exec; ru_maxrss
# keeps the parent's peak across fork and exec (this bench's generator, or pytest's)
PEAK = """
def _peak_mib():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""


def _wrapped(code: str) -> str:
    # CPU seconds of the process (not wall time: a shared machine's load would decide a wall
    # ratio) and its peak resident memory
    return ("import resource, sys, time\n" + PEAK + "t0 = time.process_time()\n" + code +
            "\nprint(time.process_time() - t0, _peak_mib())")


def start(code: str, folder: Path) -> subprocess.Popen:
    """``code`` in a fresh interpreter (its own process: its own CPU time and peak RSS)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.Popen([sys.executable, "-c", _wrapped(code), str(folder)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def result(proc: subprocess.Popen) -> tuple[float, float, str]:
    """(CPU seconds, peak RSS MiB, items counted) of a started reader."""
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"a reader failed: {err.strip().splitlines()[-1] if err.strip() else proc.returncode}")
    words = out.split()
    return float(words[-2]), float(words[-1]), words[0]


def timed(code: str, folder: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, output) of ``code`` in a fresh interpreter."""
    return result(start(code, folder))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scalars", type=int, default=1_000_000, help="scalars in the run (default 1,000,000)")
    ap.add_argument("--ten-million", action="store_true", help="the issue's size: --scalars 10000000")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/spec-check-run-bench"))
    ap.add_argument("--generate-only", action="store_true", help="write the event files and stop")
    ap.add_argument("--ours-only", action="store_true", help="time lint --run's reading alone (no baseline)")
    ap.add_argument("--readers", default="loader,tbparse,plain,ours",
                    help="which to time, of loader (EventFileLoader), tbparse, raw (RawEventFileLoader + "
                         "parse), plain (the plain loop) and ours; one not installed is named and left out")
    ap.add_argument("--serial", action="store_true",
                    help="run the readers one after the other (default: at once, each its own process)")
    a = ap.parse_args()
    scalars = 10_000_000 if a.ten_million else a.scalars
    folder = a.dir / f"n{scalars}_f{a.files}"
    if not folder.is_dir():
        t = time.perf_counter()
        n = generate(folder, scalars, a.files)
        print(f"generated {n:,} scalars in {a.files} event files in {time.perf_counter() - t:.0f} s: {folder}")
    size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    if a.generate_only:
        print(f"files {size:.0f} MiB")
        return
    keys = ["ours"] if a.ours_only else [k.strip() for k in a.readers.split(",")]
    if not set(keys) <= set(READERS):
        raise SystemExit(f"--readers: one or more of {', '.join(READERS)}")
    missing = {k for k in keys if READERS[k][2] and importlib.util.find_spec(READERS[k][2]) is None}
    for k in sorted(missing):
        print(f"{READERS[k][0]}: not measured, {READERS[k][2]} is not installed")
    keys = [k for k in keys if k not in missing]
    codes = [READERS[k][1] for k in keys]
    if a.serial:
        got = dict(zip(keys, [timed(code, folder) for code in codes], strict=True))
    else:
        got = dict(zip(keys, [result(p) for p in [start(code, folder) for code in codes]], strict=True))
    print(f"{'':46}{'CPU s':>10}{'peak MiB':>10}  items")
    for k, (cpu, mib, n) in got.items():
        print(f"{READERS[k][0]:46}{cpu:10.1f}{mib:10.0f}  {n}", flush=True)
    if "ours" in got:
        ours_s, ours_mib, _ = got["ours"]
        for k, what, aim in (("plain", "plain loop", " (aim <= 2)"), ("loader", "EventFileLoader", ""),
                             ("tbparse", "tbparse", ""), ("raw", "RawEventFileLoader+parse", "")):
            if k in got:
                print(f"ratio ours/{what}: {ours_s / got[k][0]:.2f}{aim}")
        print(f"files {size:.0f} MiB; peak memory ours {ours_mib:.0f} MiB (aim < 200)")

if __name__ == "__main__":
    main()
