"""Words a user knows (issue 22, deliverable 4): what a user reads names things by what they
are and by the command or file behind them, never by the Python call the tool happens to make."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from validator.cli.node import probe_document

# ``os.statvfs(``, ``psutil.cpu_count``, ``socket.gethostname``, ``nvml:nvmlInit``: a module-dot-name
# or a binding prefix; file paths (/proc/cpuinfo) and commands (ulimit -l) do not match.
PYTHON_NAME = re.compile(r"\b(?:os|psutil|socket|resource|pynvml|amdsmi)\.\w+|\w+\.\w+\(|\b(?:nvml|amdsmi):\w")


def _sources(doc: Any) -> list[str]:
    if isinstance(doc, dict):
        here = [doc["source"]] if isinstance(doc.get("source"), str) else []
        return here + [s for v in doc.values() for s in _sources(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _sources(v)]
    return []


def test_pattern_catches_the_old_sources() -> None:
    """The check below can fail: every source the older tool wrote matches it."""
    old = ["os.statvfs(/dev/shm)", "psutil.cpu_count", "socket.gethostname", "nvml:nvmlInit",
           "amdsmi:amdsmi_init"]
    assert all(PYTHON_NAME.search(s) for s in old)
    assert not any(PYTHON_NAME.search(s) for s in ["/proc/1650/limits", "size of /dev/shm (statvfs, as df shows it)",
                                                   "NVML (nvidia-smi's library): nvmlInit"])


def test_fresh_probe_of_this_machine_names_no_python_call() -> None:
    doc = probe_document(Path("/sys"), Path("/proc"), Path("/"))
    sources = _sources(doc)
    assert sources, "the probe document carries sources"
    assert [s for s in sources if PYTHON_NAME.search(s)] == []


def test_generated_fact_fixtures_name_no_python_call() -> None:
    """The fixtures make_facts.py writes come from the probe; the recorded ones keep old words."""
    import json

    fixtures = Path(__file__).parent / "fixtures" / "facts"
    for path in sorted(fixtures.glob("dgx_h100*.json")) + [fixtures / "plain_host.json"]:
        bad = [s for s in _sources(json.loads(path.read_text())) if PYTHON_NAME.search(s)]
        assert bad == [], path.name
