#!/usr/bin/env bash
# Node health on a real GPU (issue 23): what the probe, `health --npd`, `check` and
# `--kernel-log` give on a live NVIDIA node, each timed, all written under $OUT.
#
# Run from the repository root on the GPU machine, with the package's dependencies
# installed (the lead installs them from carried wheels) and nvidia-ml-py present:
#   OUT=/some/dir bash scripts/device/health_on_gpu.sh
# Finishes in well under 2 minutes (each command has its own timeout; no DCGM diagnostic
# beyond level 1, and that only when dcgmi and a host engine are there).
#
# Records (each file under $OUT):
#   facts.json            spec-check probe -o (with the new Xid events and error counters)
#   facts_since.json      spec-check probe --since facts.json (gpu.counter_rises)
#   npd.txt, npd.rc       spec-check health --npd: the one status line and its exit code
#   check.json, check.rc  spec-check check --format json
#   dmesg.txt             the live kernel log (dmesg), then judged from the file:
#   kernel_log_check.json spec-check check --kernel-log dmesg.txt --format json
#   kmsg_head.txt         the first 200 /dev/kmsg records (the raw record format)
#   nvml_counters.txt     nvidia-smi -q -d ECC (the oracle for the ECC counters)
#   nvml_row_remapper.txt nvidia-smi -q -d ROW_REMAPPER
#   nvidia-smi-q.xml      nvidia-smi -q -x (the oracle for every GPU fact, PCIe replays included)
#   dcgm_diag.json, .rc   dcgmi diag -r 1 -j, only if dcgmi exists (else dcgm_absent.txt)
#   dcgm_check.json       spec-check check --dcgm-diag 1 --format json (either way)
#   timing.txt            wall seconds and exit code of every step
#   env.txt               python, driver, nvidia-ml-py versions
set -u
OUT=${OUT:?set OUT to the output folder}
mkdir -p "$OUT"
PY=${PYTHON:-python}
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

step() {  # step NAME TIMEOUT CMD...: run, time, record the exit code
  local name=$1 limit=$2; shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" "$@"
  rc=$?
  t1=$(date +%s.%N)
  printf '%-22s rc=%-3s %6.3f s  %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$*" >>"$OUT/timing.txt"
  return $rc
}

{
  echo "date: $(date -u +%FT%TZ)"
  $PY --version 2>&1
  $PY -c 'import importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))' 2>&1
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>&1
  uname -r
} >"$OUT/env.txt"

step probe 30 $PY -m validator probe -o "$OUT/facts.json" 2>"$OUT/probe.stderr"

# the counters again, named where they rose since the first probe (a few seconds apart)
step probe_since 30 $PY -m validator probe --since "$OUT/facts.json" -o "$OUT/facts_since.json" \
  2>"$OUT/probe_since.stderr"

step npd 10 $PY -m validator health --npd >"$OUT/npd.txt" 2>"$OUT/npd.stderr"
echo $? >"$OUT/npd.rc"
step npd_facts 10 $PY -m validator health --npd --facts "$OUT/facts.json" >"$OUT/npd_facts.txt" 2>&1
echo $? >"$OUT/npd_facts.rc"

step check 30 $PY -m validator check --format json -o "$OUT/check.json" 2>"$OUT/check.stderr"
echo $? >"$OUT/check.rc"

step dmesg 10 dmesg >"$OUT/dmesg.txt" 2>"$OUT/dmesg.stderr"
timeout 5 head -n 200 /dev/kmsg >"$OUT/kmsg_head.txt" 2>/dev/null &
KPID=$!
sleep 1; kill "$KPID" 2>/dev/null; wait "$KPID" 2>/dev/null
step kernel_log 30 $PY -m validator check --kernel-log "$OUT/dmesg.txt" --format json \
  -o "$OUT/kernel_log_check.json" 2>"$OUT/kernel_log.stderr"

# one display section per call: driver 580 answered "-d ECC,PCIE,ROW_REMAPPER" with "Failed to
# parse --display/-d flags" (exit 2), naming no section, and recorded nothing (PCIE is not in
# NVIDIA's documented -d list); the PCIe replay counter is in the full XML (pci/replay_counter)
step nvidia_smi_ecc 20 nvidia-smi -q -d ECC >"$OUT/nvml_counters.txt" 2>&1
step nvidia_smi_rows 20 nvidia-smi -q -d ROW_REMAPPER >"$OUT/nvml_row_remapper.txt" 2>&1
step nvidia_smi_xml 20 nvidia-smi -q -x >"$OUT/nvidia-smi-q.xml" 2>"$OUT/nvidia-smi-q.stderr"

if command -v dcgmi >/dev/null 2>&1; then
  step dcgm_diag 60 dcgmi diag -r 1 -j >"$OUT/dcgm_diag.json" 2>"$OUT/dcgm_diag.stderr"
  echo $? >"$OUT/dcgm_diag.rc"
else
  echo "dcgmi not on PATH" >"$OUT/dcgm_absent.txt"
fi
step dcgm_check 70 $PY -m validator check --dcgm-diag 1 --format json -o "$OUT/dcgm_check.json" \
  2>"$OUT/dcgm_check.stderr"

cat "$OUT/timing.txt"
exit 0
