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


def test_rules_explain_names_every_fact_by_its_label() -> None:
    """`rules explain` says what a rule reads in words; a dotted fact key appears only in quotes
    right after its label (the form `probe` output and --facts files use)."""
    from click.testing import CliRunner

    from validator.cli.catalog import explain
    from validator.cli.common import DEFAULT_SPEC_VERSION
    from validator.rules.bundled import load_bundled

    _spec, catalogue, pack = load_bundled(DEFAULT_SPEC_VERSION)
    runner = CliRunner()
    for rule in pack.rules:
        out = runner.invoke(explain, [rule.id])
        assert out.exit_code == 0, (rule.id, out.output)
        line = next(x for x in out.output.splitlines() if x.startswith("Expected: "))
        if not rule.fact:  # a run rule (against: run) reads no job fact: "compares the job with ..."
            assert "compares the job with" in line, (rule.id, line)
            continue
        label = catalogue[rule.fact].label
        assert f'{label} ("{rule.fact}")' in line or f"{label}'s" in line, (rule.id, line)
        assert re.search(r"reads [a-z]+\.[a-z_.]+\)", line) is None, (rule.id, line)


def test_markdown_and_html_pass_rows_state_what_holds() -> None:
    """A pass row says what holds (the expected, met) before the rule ID, as the terminal's PASS
    line does, in the example reports made from the DGX H100 fixture."""
    examples = Path(__file__).parents[1] / "reports" / "examples"
    md = (examples / "node-dgx-h100.md").read_text()
    assert "| what holds | rule |" in md
    assert "| ECC mode (current) is on | `MEM-01.ecc-disabled` |" in md
    html = (examples / "node-dgx-h100.html").read_text()
    # the page folds passes by default (one row per rule: what holds, subjects, passes, values)
    assert re.search(r'<code class="id">MEM-01\.ecc-disabled</code>(<[^>]*>|[^<])*</th><td>ECC mode \(current\) is on</td>',
                     html)
