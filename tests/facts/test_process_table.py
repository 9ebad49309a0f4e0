"""One read of the process table per probe: the memlock source (limits) and the exporter
scan (telemetry) find what they found when each read every process's ``comm`` itself.

Why: on a GPU node of a thousand processes the two scans read a thousand ``comm`` files
each; inside ``probe_node`` they now share one read (``base.one_process_table``). The
reference here is each scan as written before, run on this machine's /proc, a DGX-shaped
tree, and trees with the odd cases (a pid written "007", a comm that cannot be read, a
process without cmdline, a digit that is no number, no process at all).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.fixtures import nodes
from validator.facts.node import base, limits, telemetry
from validator.facts.node.base import ReadError, read


def _old_processes(procfs: Path, names: tuple[str, ...]) -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        pids = sorted(int(p.name) for p in procfs.iterdir() if p.name.isdigit())
    except OSError:
        return found
    for pid in pids:
        try:
            comm = read(procfs / str(pid) / "comm")
        except ReadError:
            continue
        if comm in names and comm not in found:
            found[comm] = pid
    return found


def _old_scan(procfs: Path) -> list[telemetry.Process] | None:
    try:
        pids = [p for p in procfs.iterdir() if p.name.isdigit()]
    except OSError:
        return None
    if not pids:
        return None
    found: list[telemetry.Process] = []
    for pid in sorted(pids, key=lambda p: int(p.name)):
        try:
            comm = read(pid / "comm")
            argv0 = read(pid / "cmdline").split("\0")[0]
        except ReadError:
            continue
        hit = telemetry.match(comm, argv0)
        if hit:
            found.append(telemetry.Process(int(pid.name), hit, telemetry._uid(pid), telemetry._cgroup(pid)))
    return found


NAMES = ("slurmd", *limits.RUNTIMES, "systemd", "bash", "python3", "dcgm-exporter")


def _same(procfs: Path) -> None:
    want = (_old_processes(procfs, NAMES), _old_scan(procfs))
    assert (limits._processes(procfs, NAMES), telemetry._scan(procfs)) == want  # each reads its own
    with base.one_process_table():  # shared, as in probe_node
        assert (limits._processes(procfs, NAMES), telemetry._scan(procfs)) == want
        assert base._TABLES is not None and procfs in base._TABLES  # the second scan used the first's read
    assert base._TABLES is None


def test_a_dgx_tree(tmp_path: Path) -> None:
    tree = nodes.dgx_h100(tmp_path)
    assert _old_scan(tree.procfs) and _old_processes(tree.procfs, NAMES)
    _same(tree.procfs)


def test_odd_trees(tmp_path: Path) -> None:
    tree = nodes.dgx_h100(tmp_path)
    proc = tree.procfs
    b = nodes.Builder(tmp_path)
    b.process(7, "containerd", ["/usr/bin/containerd"])
    os.rename(proc / "7", proc / "007")  # read as pid 7 by the sort, /proc/7/comm by limits
    b.process(8, "dockerd", ["/usr/bin/dockerd"])
    (proc / "8" / "comm").unlink()
    (proc / "8" / "comm").mkdir()  # a comm that cannot be read
    b.process(9, "node_exporter", ["/usr/bin/node_exporter"])
    (proc / "9" / "cmdline").unlink()  # gone mid-scan
    b.process(10, "crio", ["/usr/bin/crio"])
    _same(proc)
    (proc / "\u00b2").mkdir()  # a digit, no number: both scans fail as before
    with pytest.raises(ValueError):
        _old_scan(proc)
    for shared in (False, True):
        with base.one_process_table() if shared else contextlib.nullcontext():
            with pytest.raises(ValueError):
                limits._processes(proc, NAMES)
            with pytest.raises(ValueError):
                telemetry._scan(proc)


def test_no_process_and_no_procfs(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _same(tmp_path / "empty")
    _same(tmp_path / "absent")


def test_this_machines_proc() -> None:
    """A live table changes between two reads: equal on one of a few tries."""
    for _ in range(5):
        try:
            _same(Path("/proc"))
            return
        except AssertionError:
            continue
    _same(Path("/proc"))
