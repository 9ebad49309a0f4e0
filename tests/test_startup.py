"""Start-up stays fast: which modules `check`, `lint` and `--help` import.

Times are never asserted (machines differ: bench/start_bench.py prints the ratios); what
each verb imports is the same on every machine, and a heavy library imported on these
paths is what made start-up slow before (the bundled pack parsed with the YAML reader and
validated with pydantic on every run). Each verb runs in a fresh interpreter, after one
run that fills the compiled-pack cache (validator/rules/compiled.py), as on any machine after
its first run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
JOB = ROOT / "tests" / "jobs" / "formats" / "hf"

# Run a verb in-process, then print the names in sys.modules.
_PROBE = """
import contextlib, io, json, sys
from validator.entry import main
out, code = io.StringIO(), 0
try:
    with contextlib.redirect_stdout(out):
        main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# never on these paths: parsing and validating the rule pack, other verbs' machinery, and
# libraries no node check needs
_NEVER = ("yaml", "pydantic", "pydantic_core", "jsonschema", "cryptography", "validator.rules.loader",
          "validator.rules.validation_models", "validator.rules.schemas", "validator.cluster", "validator.report.waivers",
          "validator.report.signing", "validator.report.diffing", "asyncio", "multiprocessing", "concurrent.futures",
          "http.client", "email", "xml.etree", "xml.dom", "sqlite3", "unittest")


def _modules(tmp_path: Path, *args: str) -> set[str]:
    env = {**os.environ, "SPEC_CHECK_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", _PROBE, *args]
    subprocess.run(cmd, env=env, capture_output=True, check=False, timeout=120)  # fills the cache
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout.strip().splitlines()[-1])
    assert data["code"] in (0, 1), (args, data["code"], r.stderr[-2000:])
    return set(data["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def _one_job_file() -> Path:
    return next(p for p in sorted(JOB.glob("*.yaml")))


@pytest.mark.parametrize("args", [("check", "--facts", str(FACTS)), ("check", "--facts", str(FACTS), "--format", "json")],
                         ids=["terminal", "json"])
def test_check_imports_no_yaml_pydantic_or_loader(tmp_path: Path, args: tuple[str, ...]) -> None:
    modules = _modules(tmp_path, *args)
    assert "validator.evaluate.engine" in modules and "validator.rules.compiled" in modules  # it did run a check
    assert _loaded(modules, _NEVER) == []
    assert _loaded(modules, ("validator.jobs",)) == []  # job formats are lint's
    if "json" in args:
        assert _loaded(modules, ("rich",)) == []  # JSON is written without rich


def test_lint_of_one_file_imports_no_pydantic_or_loader(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "lint", "--format", "json", str(_one_job_file()))
    assert "validator.evaluate.engine" in modules
    assert _loaded(modules, (*_NEVER[1:], "psutil", "pynvml", "rich")) == []  # yaml: job files are YAML


def test_help_imports_no_library_but_click(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "--help")
    heavy = ("rich", "psutil", "pynvml", "validator.evaluate.engine", "validator.report.model", "validator.facts",
             "validator.renderers", "validator.rules.rulemodel", "validator.rules.compiled", "validator.jobs")
    assert _loaded(modules, (*_NEVER, *heavy)) == []
    assert len([m for m in modules if m.startswith("validator")]) <= 8


def test_a_cold_run_compiles_and_a_warm_run_reads_the_cache(tmp_path: Path) -> None:
    """The first run parses the YAML (and imports pydantic to validate it); the next
    reads the compiled pack: neither import happens again."""
    env = {**os.environ, "SPEC_CHECK_CACHE_DIR": str(tmp_path / "c"), "PYTHONPATH": str(ROOT)}
    args = ["check", "--facts", str(FACTS), "--format", "json"]
    cold = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True,
                          timeout=120)
    warm = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, capture_output=True, text=True,
                          timeout=120)
    cold_mods = set(json.loads(cold.stdout.strip().splitlines()[-1])["modules"])
    warm_mods = set(json.loads(warm.stdout.strip().splitlines()[-1])["modules"])
    assert {"yaml", "pydantic", "validator.rules.loader"} <= cold_mods
    assert not {"yaml", "pydantic", "validator.rules.loader"} & warm_mods
    assert len(list((tmp_path / "c").glob("pack-*.json"))) == 1
