"""What the start paths no longer do: modules ``check`` and ``lint`` must not import, and
regular expressions they must not compile (issue 21, deliverable 5).

Each verb runs in a fresh interpreter (the bundled pack comes compiled: bundled.json),
as tests/test_startup.py does; times are never asserted (bench/start_bench.py prints them).
Why each: the standard library modules below are not needed by the psutil baseline a node
check is measured against, and cost milliseconds each at import; the probes' other readers
(dcgmi, journalctl, the NVML fabric call) import them when they run. A pattern declared with
``validator.lazy.Pattern`` is compiled on first use: a run that never reads a saved kernel
log or a run log compiles none of those shapes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.startup_probe import run_probe

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
JOB = ROOT / "tests" / "jobs" / "formats" / "hf"

# the verb in-process, then the modules loaded and the lazy patterns compiled
_PROBE = """
import contextlib, io, json, sys
from validator.entry import main
from validator.lazy import Pattern
code = 0
try:
    with contextlib.redirect_stdout(io.StringIO()):
        main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
compiled = sorted(f"{m}.{n}" for m, mod in list(sys.modules.items()) if m.startswith("validator")
                  for n, v in list(vars(mod).items()) if isinstance(v, Pattern) and v._re is not None)
print(json.dumps({"code": code, "modules": sorted(sys.modules), "compiled": compiled}))
"""

# none of these on any of the paths below: the probes import them only when they run a
# command (dcgmi, journalctl) and the YAML reader only when it reads a file
_NEVER = ("shutil", "bz2", "lzma", "tempfile", "validator.io.yamlfile")
# nor, where nothing is probed: the probes, and what only they (or psutil) import
_NOT_RECORDED = ("socket", "ctypes", "subprocess", "validator.facts.node", "validator.io.source")


def _run(tmp_path: Path, *args: str) -> dict[str, object]:
    return run_probe(tmp_path, _PROBE, *args)


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def _kmsg_readable() -> bool:
    try:
        os.close(os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_a_check_of_recorded_facts_imports_no_probe_and_no_process_machinery(tmp_path: Path, fmt: str) -> None:
    data = _run(tmp_path, "check", "--facts", str(FACTS), "--format", fmt)
    modules = data["modules"]
    assert isinstance(modules, list) and "validator.evaluate.engine" in modules  # it did run a check
    assert _loaded(modules, (*_NEVER, *_NOT_RECORDED)) == []
    # the kernel log's and the run logs' shapes were never needed
    assert not [p for p in data["compiled"] if ".kernel_log." in p or ".recovery_log." in p]  # type: ignore[union-attr]


@pytest.mark.skipif(not _kmsg_readable(), reason="/dev/kmsg unreadable here: the journalctl fallback runs")
@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_a_live_check_runs_no_command_machinery_nor_the_saved_log_shapes(tmp_path: Path, fmt: str) -> None:
    data = _run(tmp_path, "check", "--format", fmt)
    modules = data["modules"]
    assert isinstance(modules, list) and "validator.facts.node.dcgm" in modules  # every source ran
    assert _loaded(modules, _NEVER) == []
    if sys.platform.startswith("linux"):  # read with the calls they make (docs/startup.md)
        assert _loaded(modules, ("subprocess", "socket", "ctypes", "psutil")) == []
    compiled = data["compiled"]
    assert isinstance(compiled, list)
    # /dev/kmsg records only: the dmesg, dmesg -T, journalctl shapes stay uncompiled
    for name in ("_MONO", "_CTIME", "_ISO", "_SHORT", "_KERNEL_TAG", "_MONO_TAG"):
        assert f"validator.facts.node.kernel_log.{name}" not in compiled
    assert "validator.facts.node.kernel_log._KMSG_HEAD" in compiled  # the records were read


def test_lint_of_one_file_imports_no_probe_and_no_process_machinery(tmp_path: Path) -> None:
    job = next(p for p in sorted(JOB.glob("*.yaml")))
    data = _run(tmp_path, "lint", "--format", "json", str(job))
    modules = data["modules"]
    assert isinstance(modules, list) and "validator.evaluate.engine" in modules
    assert _loaded(modules, (*_NEVER[:-1], *_NOT_RECORDED[:-1])) == []  # lint reads YAML: yamlfile, source
    assert not [p for p in data["compiled"] if ".recovery_log." in p]  # type: ignore[union-attr]
