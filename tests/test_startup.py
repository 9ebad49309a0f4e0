"""Start-up stays fast: which modules `check`, `lint` and `--help` import.

Times are never asserted (machines differ: bench/start_bench.py prints the ratios); what
each verb imports is the same on every machine, and a heavy library imported on these
paths is what made start-up slow before (the bundled pack parsed with the YAML reader and
validated with pydantic on every run). Each verb runs in a fresh interpreter; the bundled
pack comes compiled (validator/rules/bundled.json, generated from spec/ and rules/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.startup_probe import RUN_VERB, run_probe

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
JOB = ROOT / "tests" / "jobs" / "formats" / "hf"

# Run a verb in-process, then print the names in sys.modules.
_PROBE = ("import contextlib, io, json, sys\n" + RUN_VERB
          + 'print(json.dumps({"code": code, "modules": sorted(sys.modules)}))\n')

# never on these paths: parsing and validating the rule pack, other verbs' machinery, and
# libraries no node check needs
_NEVER = ("yaml", "pydantic", "pydantic_core", "jsonschema", "cryptography", "validator.rules.loader",
          "validator.rules.validation_models", "validator.report.schemas", "validator.cluster", "validator.report.waivers",
          "validator.report.signing", "validator.report.diffing", "asyncio", "multiprocessing", "concurrent.futures",
          "http.client", "email", "xml.etree", "xml.dom", "sqlite3", "unittest")


def _modules(tmp_path: Path, *args: str) -> set[str]:
    return set(run_probe(tmp_path, _PROBE, *args)["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def _one_job_file() -> Path:
    return next(p for p in sorted(JOB.glob("*.yaml")))


@pytest.mark.parametrize("args", [("check", "--facts", str(FACTS)), ("check", "--facts", str(FACTS), "--format", "json")],
                         ids=["terminal", "json"])
def test_check_imports_no_yaml_pydantic_or_loader(tmp_path: Path, args: tuple[str, ...]) -> None:
    modules = _modules(tmp_path, *args)
    assert "validator.evaluate.engine" in modules and "validator.rules.bundled" in modules  # it did run a check
    assert _loaded(modules, _NEVER) == []
    assert _loaded(modules, ("validator.jobs",)) == []  # job formats are lint's
    if "json" in args:
        assert _loaded(modules, ("rich",)) == []  # JSON is written without rich


def test_lint_of_one_file_imports_no_pydantic_or_loader(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "lint", "--format", "json", str(_one_job_file()))
    assert "validator.evaluate.engine" in modules
    assert _loaded(modules, (*_NEVER[1:], "psutil", "pynvml", "rich")) == []  # yaml: job files are YAML
    assert _loaded(modules, ("socket",)) == []  # validator.io.atomic names temporary files only when it writes


def _nvidia_driver_or_gpu() -> bool:
    """Whether this machine has libnvidia-ml.so.1 or an NVIDIA function on its PCI bus."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        pass
    vendors = Path("/sys/bus/pci/devices").glob("*/vendor")
    return any(p.read_text().strip() == "0x10de" for p in vendors if p.is_file())


@pytest.mark.skipif(_nvidia_driver_or_gpu(), reason="an NVIDIA driver or GPU here: NVML is asked, pynvml imported")
def test_a_live_check_on_a_node_without_nvidia_imports_no_pynvml(tmp_path: Path) -> None:
    """The probe itself: without the NVIDIA library and GPU, nvmlInit's answer is known
    (LibraryNotFound) and pynvml, with the tempfile and ctypes.util it loads, is not
    imported (tests/facts/test_nvidia.py checks that the facts are the same)."""
    modules = _modules(tmp_path, "check", "--format", "json")
    assert "validator.facts.node.nvidia" in modules  # the GPU source did run
    assert _loaded(modules, ("pynvml", "ctypes.util", "tempfile", *_NEVER)) == []
    # no endpoint named: the scrape source and its HTTP client stay unloaded
    assert _loaded(modules, ("validator.facts.node.scrape", "validator.io.netfetch")) == []


def test_a_one_node_terminal_report_lays_out_each_table_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check of one node prints one table of each shape: rich lays out each once (the
    shape's template is made only when a second table of that shape comes), and the bytes
    are rich's own layout of every table (reuse off)."""
    import io

    from tests.helpers import built
    from validator.cli.common import RunOptions, evaluate_documents
    from validator.facts.document import load
    from validator.renderers import terminal, terminal_tables

    # a port rate above the fixture's 400 Gb/s: a table of problems beside the table of passes
    report = evaluate_documents("check", built("fabric_port_rate=800Gb/s"), RunOptions(), [load(FACTS)], [str(FACTS)])
    layouts, tables = [], []
    real_capture, real_wide = terminal_tables._capture, terminal.TerminalRenderer._wide
    monkeypatch.setattr(terminal_tables, "_capture", lambda *a: layouts.append(1) or real_capture(*a))
    monkeypatch.setattr(terminal.TerminalRenderer, "_wide", lambda *a, **k: tables.append(1) or real_wide(*a, **k))
    reused, plain = io.StringIO(), io.StringIO()
    terminal.TerminalRenderer(width=200, show_passes=True).render(report, reused)
    assert len(tables) >= 2 and len(layouts) == len(tables)
    terminal.TerminalRenderer(width=200, show_passes=True, reuse=False).render(report, plain)
    assert reused.getvalue() == plain.getvalue()


def test_help_imports_no_library_but_click(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "--help")
    heavy = ("rich", "psutil", "pynvml", "validator.evaluate.engine", "validator.report.model", "validator.facts",
             "validator.renderers", "validator.rules.rulemodel", "validator.rules.bundled", "validator.jobs")
    assert _loaded(modules, (*_NEVER, *heavy)) == []
    assert len([m for m in modules if m.startswith("validator")]) <= 8


def test_the_bundled_pack_is_read_and_a_custom_pack_compiled_in_memory(tmp_path: Path) -> None:
    """Every run of the bundled pack reads the compiled JSON, the first included; a pack
    given with --rules is parsed (YAML) and validated (pydantic) from its files."""
    args = ("check", "--facts", str(FACTS), "--format", "json")
    bundled = _modules(tmp_path, *args)
    custom = _modules(tmp_path, *args, "--rules", str(ROOT / "rules" / "v1.0"))
    assert not {"yaml", "pydantic", "validator.rules.loader"} & bundled
    assert {"yaml", "pydantic", "validator.rules.loader"} <= custom
