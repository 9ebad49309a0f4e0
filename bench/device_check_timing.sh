#!/usr/bin/env bash
# Start-up of `spec-check check` on a real GPU node, side by side with nvidia-smi -q.
#
#   bash bench/device_check_timing.sh [RUNS]        (RUNS defaults to 8)
#
# Times, as fresh processes and round-robin (so that other load slows them alike), RUNS
# runs each of:
#   spec-check check, spec-check check --format json, spec-check probe -o FILE,
#   nvidia-smi -q, and python -c "import psutil" (the floor of a Python node tool),
# after one untimed first run of `check` (bytecode written, page cache cold); that first
# time is printed apart. The bundled rule pack comes compiled (validator/rules/bundled.json).
# Prints min, median and max wall time of each, and the ratios of the medians. The aim:
# check / nvidia-smi -q <= 2.5. The last H200 figures, before the compiled pack, were
# check 0.658 s against nvidia-smi -q 0.119 s (5.5x; recordings/h200-node/timing.txt).
#
# spec-check is this checkout (python -m validator, PYTHONPATH set to it) unless
# SPEC_CHECK names a command (SPEC_CHECK=spec-check for an installed one); PYTHON picks
# the interpreter (default python3). Writes nothing outside a temporary directory.
set -u
# an installed package has its bytecode compiled; a checkout run with bytecode writes
# off would time Python compiling every module on every run
unset PYTHONDONTWRITEBYTECODE
RUNS=${1:-8}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -z "${SPEC_CHECK:-}" ]; then
  export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
  SPEC_CHECK="$PY -m validator"
fi
export RUNS TMP PY SPEC_CHECK
exec "$PY" - <<'PYEOF'
import os, shlex, shutil, statistics, subprocess, sys, time

runs = int(os.environ["RUNS"])
sc = shlex.split(os.environ["SPEC_CHECK"])
py = os.environ["PY"]
probe_out = os.path.join(os.environ["TMP"], "probe.json")


def run(cmd):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        rc, err = r.returncode, r.stderr.decode(errors="replace").strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        rc, err = -1, str(exc)
    return time.perf_counter() - t0, rc, err


def show(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


print(f"host {os.uname().nodename}; python {sys.version.split()[0]}; spec-check = {show(sc)}")
if shutil.which("nvidia-smi"):
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip().splitlines()
    print(f"GPUs: {len(gpus)}; {gpus[0] if gpus else 'none listed'}")
else:
    print("nvidia-smi: not on PATH (its rows are left out)")
cases = {
    "spec-check check": [*sc, "check"],
    "spec-check check --format json": [*sc, "check", "--format", "json"],
    "spec-check probe -o FILE": [*sc, "probe", "-o", probe_out],
    "nvidia-smi -q": ["nvidia-smi", "-q"],
    'python -c "import psutil"': [py, "-c", "import psutil"],
}
if not shutil.which("nvidia-smi"):
    del cases["nvidia-smi -q"]
cold, rc, err = run(cases["spec-check check"])
print(f"cold check (the first run): {cold:.3f} s, rc={rc}")
if rc not in (0, 1):
    print(f"  ! spec-check check exited {rc}: {err[-500:]}")
for cmd in cases.values():  # warm the page cache
    run(cmd)
times = {k: [] for k in cases}
rcs = {}
for _ in range(runs):
    for name, cmd in cases.items():
        t, rc, err = run(cmd)
        times[name].append(t)
        if rc not in ((0, 1) if "check" in name else (0,)) and name not in rcs:
            print(f"  ! {name} exited {rc}: {err[-300:]}")
        rcs[name] = rc
med = {k: statistics.median(v) for k, v in times.items()}
print(f"\nwall time, {runs} runs each, round-robin")
for name, v in times.items():
    print(f"{name!r}: rc={rcs[name]} min={min(v):.3f} med={med[name]:.3f} max={max(v):.3f}")
print("\nratios of medians")
base = 'python -c "import psutil"'
for name in ("spec-check check", "spec-check check --format json", "spec-check probe -o FILE"):
    line = f"{name:<32} / import psutil {med[name] / med[base]:5.2f}x"
    if "nvidia-smi -q" in med:
        line += f"   / nvidia-smi -q {med[name] / med['nvidia-smi -q']:5.2f}x"
    print(line)
if "nvidia-smi -q" in med:
    r = med["spec-check check"] / med["nvidia-smi -q"]
    print(f"\naim: check / nvidia-smi -q <= 2.5x: {r:.2f}x ({'met' if r <= 2.5 else 'not met'}); "
          f"before: 0.658 / 0.119 = 5.53x")
print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
PYEOF
