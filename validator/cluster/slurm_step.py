"""One Slurm step for the whole fleet: every node probed at once, by one ``srun``.

A step per host costs a scheduler round trip per host (2,000 for 2,000 nodes; outside an
allocation, 2,000 jobs with their prologs). One multi-node step has three traps, each
handled here:

* **a node that is down, drained or unknown** holds the whole step pending, or fails it:
  the nodes are asked about first (``sinfo -h -N -n LIST -o '%N|%T|%E'``); each one that
  Slurm does not list, or lists as down, drained, failing, in maintenance or not
  responding, is that host's error with its state and reason, and the step runs on the
  others only. The step is bounded by ``--timeout`` as a whole: a node that does not
  answer in time is that host's "timed out", and the others keep their answers;
* **srun's line handling** (lines split at 1 KiB, tasks' output interleaved): each task
  writes its stdout and stderr base64-encoded in lines of at most 730 bytes, each tagged
  with the node that ran it and the stream, then an end line with its exit status, so any
  output of any size comes back whole and attributed;
* **a task on another node than asked for**: every line carries ``$SLURMD_NODENAME`` as
  the node running it says; output is counted for that node only, and a requested node
  with no end line of its own is an error, never another node's answer.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Sequence
from typing import Any

from validator.cluster import proc

TAG = "SPECCHECK1"
# states in which a node runs no step (sinfo %T, long form; "*": not responding)
_UNUSABLE = ("down", "drain", "fail", "maint", "unknown", "future", "power", "reboot", "inval")


def framed(command: str) -> str:
    """``command`` as each task runs it: its stdout and stderr base64-encoded in short
    lines tagged ``SPECCHECK1 NODE out|err``, then ``SPECCHECK1 NODE end RC``."""
    return (
        'n="${SLURMD_NODENAME:-unknown}"; o=$(mktemp) && e=$(mktemp) || exit 98; '
        f'(\n{command}\n) >"$o" 2>"$e" </dev/null; rc=$?; '  # own lines: a "#" in it ends there
        f'base64 -w 720 "$o" | sed "s/^/{TAG} $n out /"; '
        f'base64 -w 720 "$e" | sed "s/^/{TAG} $n err /"; '
        f'echo "{TAG} $n end $rc"; rm -f "$o" "$e"'
    )


def parse_frames(text: str, wanted: set[str]) -> tuple[dict[str, proc.Outcome], set[str]]:
    """({node: its outcome} for each wanted node with an end line, other nodes seen)."""
    chunks: dict[tuple[str, str], list[str]] = {}
    ends: dict[str, int] = {}
    strays: set[str] = set()
    for line in text.splitlines():
        if not line.startswith(TAG + " "):
            continue
        parts = line.split(" ", 3)
        if len(parts) < 4:
            continue
        _, node, kind, payload = parts
        if node not in wanted:
            strays.add(node)
            continue
        if kind == "end":
            try:
                ends[node] = int(payload.strip())
            except ValueError:
                continue
        elif kind in ("out", "err"):
            chunks.setdefault((node, kind), []).append(payload.strip())
    out: dict[str, proc.Outcome] = {}
    for node, rc in ends.items():
        texts = []
        for kind in ("out", "err"):
            try:
                raw = base64.b64decode("".join(chunks.get((node, kind), [])), validate=True)
            except (binascii.Error, ValueError):
                raw = b""
                rc = rc or 99
            texts.append(raw.decode("utf-8", "replace"))
        out[node] = proc.Outcome(rc, texts[0], texts[1], 0.0)
    return out, strays


def node_states(hosts: Sequence[str], timeout: float = 30.0) -> dict[str, tuple[str, str]] | str:
    """{node: (state, reason)} as Slurm lists them, or why they could not be read."""
    import shutil

    sinfo = shutil.which("sinfo")
    if sinfo is None:
        return "sinfo not found on PATH"
    res = proc.run([sinfo, "-h", "-N", "-n", ",".join(hosts), "-o", "%N|%T|%E"], timeout)
    if res.timed_out or res.rc != 0:
        return f"sinfo: {res.stderr_line() or f'exit {res.rc}'}"
    states: dict[str, tuple[str, str]] = {}
    for line in res.stdout.splitlines():
        name, _, rest = line.strip().partition("|")
        state, _, reason = rest.partition("|")
        if name and name not in states:
            states[name] = (state.strip(), reason.strip())
    return states


def unusable(state: str) -> bool:
    s = state.lower()
    return s.endswith("*") or s.endswith("~") or any(word in s for word in _UNUSABLE)


# nodes per step: a step's output is held in memory (proc.MAX_OUTPUT, 64 MiB) and a node's
# framed facts are about 100 KiB; larger fleets run several such steps at once
STEP_NODES = 256
STEPS_AT_ONCE = 8


def probe_fleet(
    transport: Any,  # Any: a transport that probes in one step (SlurmTransport; `one_step` duck-typed)
    hosts: Sequence[str],
    command: str,
    timeout: float,
    registry: proc.Registry,
) -> dict[str, proc.Outcome | str]:
    """Each host's probe outcome, or why it has none: one ``srun`` step per STEP_NODES
    usable nodes (one step for most fleets), at most STEPS_AT_ONCE steps at once."""
    from concurrent.futures import ThreadPoolExecutor

    if len(hosts) <= STEP_NODES:
        return _probe_step(transport, hosts, command, timeout, registry)
    batches = [hosts[i : i + STEP_NODES] for i in range(0, len(hosts), STEP_NODES)]
    results: dict[str, proc.Outcome | str] = {}
    with ThreadPoolExecutor(max_workers=min(STEPS_AT_ONCE, len(batches)),
                            thread_name_prefix="spec-check-step") as ex:
        for part in ex.map(lambda b: _probe_step(transport, b, command, timeout, registry), batches):
            results.update(part)
    return results


def _probe_step(
    transport: Any,  # Any: as probe_fleet's
    hosts: Sequence[str],
    command: str,
    timeout: float,
    registry: proc.Registry,
) -> dict[str, proc.Outcome | str]:
    """Each host's probe outcome from one ``srun`` step, or why it has none."""
    results: dict[str, proc.Outcome | str] = {}
    states = node_states(hosts)
    if isinstance(states, str):
        return {h: f"cannot ask Slurm about the nodes: {states}" for h in hosts}
    ready = []
    for h in hosts:
        if h not in states:
            results[h] = f'node "{h}" is unknown to Slurm (sinfo lists no such node)'
        elif unusable(states[h][0]):
            state, reason = states[h]
            results[h] = f"node is {state}" + (f" ({reason})" if reason and reason != "none" else "") + \
                ": no step runs there"
        else:
            ready.append(h)
    if not ready:
        return results
    argv = [
        transport.srun,
        f"--nodes={len(ready)}",
        f"--ntasks={len(ready)}",
        "--ntasks-per-node=1",
        f"--nodelist={','.join(ready)}",
        "--quiet",
        "--kill-on-bad-exit=0",
        "--job-name=spec-check",
        *(["--overlap"] if transport.in_allocation else []),
        *transport.extra_args,
        "/bin/sh",
        "-c",
        framed(command),
    ]
    t0 = time.monotonic()
    res = proc.run(argv, timeout, registry)
    seconds = time.monotonic() - t0
    got, strays = parse_frames(res.stdout, set(ready))
    for h in ready:
        if h in got:
            o = got[h]
            results[h] = proc.Outcome(o.rc, o.stdout, o.stderr, seconds)
        elif res.timed_out:
            results[h] = proc.Outcome(None, "", "", seconds)  # parse_probe: "timed out"
        else:
            why = res.stderr_line() or f"srun exit {res.rc}"
            also = f"; output came from {', '.join(sorted(strays))} instead" if strays else ""
            results[h] = f"no answer from {h} in the fleet's srun step ({why}){also}"
    return results
