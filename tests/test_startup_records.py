"""Start-up compiles no dataclass method: the start paths declare their classes with ``record``.

``@dataclass`` compiles each generated method with its own ``exec`` at import (about a
quarter of a millisecond each on the machine of issue 21, ~170 of them on ``check``'s
path). validator/values/records.py declares the same classes without that
(tests/test_records.py checks they are the same). Here each verb runs in a fresh
interpreter with dataclasses' code generator counted: no class of validator may go
through it, and ``check --format json`` (which imports no rich) runs none at all. No time
is asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.startup_probe import RUN_VERB, run_probe

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
JOB = ROOT / "tests" / "jobs" / "formats" / "hf"
CORPUS = next((p for p in (ROOT.parent / "shared" / "corpus", Path("/work/shared/corpus")) if p.is_dir()), ROOT / "no-corpus")

# Count what dataclasses compiles (by the module of the class), run a verb in-process,
# print the counts and the classes of validator made by plain @dataclass.
_PROBE = """
import collections, contextlib, dataclasses, io, json, sys
compiled = collections.Counter()
plain = []
if hasattr(dataclasses, "_create_fn"):  # Python 3.10-3.12: one exec per method
    original = dataclasses._create_fn
    def counted(name, args, body, *, globals=None, **kw):
        compiled[(globals or {}).get("__name__", "?")] += 1
        return original(name, args, body, globals=globals, **kw)
    dataclasses._create_fn = counted
process = dataclasses._process_class
def watched(cls, *args, **kw):
    if cls.__module__.startswith("validator") and args[0]:  # init=True: a plain @dataclass
        plain.append(cls.__module__ + "." + cls.__qualname__)
    return process(cls, *args, **kw)
dataclasses._process_class = watched
""" + RUN_VERB + """
print(json.dumps({"code": code, "compiled": compiled, "plain": plain,
                  "records": "validator.values.records" in sys.modules,
                  "verb_options": "validator.api.verb_options" in sys.modules}))
"""


def _run(tmp_path: Path, *args: str) -> dict:
    return run_probe(tmp_path, _PROBE, *args)


def _ours(compiled: dict[str, int]) -> dict[str, int]:
    return {m: n for m, n in compiled.items() if m.startswith("validator")}


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="3.13 compiles a class's methods with one exec")
def test_check_as_json_compiles_no_dataclass_method(tmp_path: Path) -> None:
    data = _run(tmp_path, "check", "--facts", str(FACTS), "--format", "json")
    assert data["records"]  # it declared records
    assert data["plain"] == []
    assert data["compiled"] == {}
    assert not data["verb_options"]  # the options of health, lint and cluster are not built


@pytest.mark.parametrize("args", [
    ("check", "--facts", str(FACTS)),
    ("check",),  # this machine probed
    ("--help",),
], ids=["check", "check-probed", "help"])
def test_check_and_help_declare_no_class_with_dataclass(tmp_path: Path, args: tuple[str, ...]) -> None:
    data = _run(tmp_path, *args)
    assert data["plain"] == []
    assert _ours(data["compiled"]) == {}
    assert not data["verb_options"]


def _lint_inputs() -> list[Path]:
    files = [next(p for p in sorted(JOB.glob("*.yaml")))]
    if CORPUS.is_dir():  # a real config of each kind lint reads
        for pattern in ("deepspeed_json/*.json", "*/*.sh", "*/*.toml", "*/*.yaml"):
            found = sorted(CORPUS.glob(pattern))
            if found:
                files.append(found[0])
    return files


@pytest.mark.parametrize("path", _lint_inputs(), ids=lambda p: p.name)
@pytest.mark.parametrize("fmt", ["terminal", "json"])
def test_lint_of_one_file_declares_no_class_with_dataclass(tmp_path: Path, path: Path, fmt: str) -> None:
    data = _run(tmp_path, "lint", "--format", fmt, str(path))
    assert data["plain"] == []
    assert _ours(data["compiled"]) == {}


def test_the_options_of_other_verbs_are_importable_where_they_were() -> None:
    """check does not build them (above), yet every name validator.api exports, and every
    options class validator.api.options had, imports as before, as the same object."""
    code = """
import sys, validator.api as api, validator.api.options as options
assert "validator.api.verb_options" not in sys.modules
names = sorted(api.__all__)
got = {n: getattr(api, n) for n in names}
from validator.api.options import ClusterOptions, HealthOptions, LintOptions, ReplayOptions
from validator.api import verb_options
for cls in (ClusterOptions, HealthOptions, LintOptions, ReplayOptions):
    assert getattr(api, cls.__name__) is cls is getattr(verb_options, cls.__name__) is getattr(options, cls.__name__)
    assert cls().report == options.ReportOptions() if cls is not HealthOptions else cls("n").report == options.ReportOptions()
print(len(names), sorted(dir(api)) == names)
"""
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["20", "True"]


# ---- the same output as with @dataclass, byte for byte, on real inputs ------------------------

_AS_DATACLASSES = """
import dataclasses, sys
import validator.values.records as records
def record(cls=None, /, *, frozen=False, kw_only=False, slots=False):
    def wrap(c):
        return dataclasses.dataclass(c, frozen=frozen, kw_only=kw_only, slots=slots)
    return wrap if cls is None else wrap(cls)
records.record = record  # before any module declares its classes
records.field = dataclasses.field  # and their fields with dataclasses' own field()
from validator.entry import main
main(sys.argv[1:])
"""
_AS_RECORDS = "import sys\nfrom validator.entry import main\nmain(sys.argv[1:])\n"
RECORDING = Path("/work/shared/recordings/h200-node/facts.json")


def _real_inputs() -> list[tuple[str, ...]]:
    cases: list[tuple[str, ...]] = [("check", "--facts", str(FACTS), "--format", "json"),
                                    ("check", "--facts", str(FACTS)),
                                    ("lint", "--format", "json", str(_lint_inputs()[0]))]
    if RECORDING.is_file():  # a real H200's facts
        cases += [("check", "--facts", str(RECORDING), "--format", fmt) for fmt in ("json", "terminal", "sarif")]
    cases += [("lint", "--format", fmt, str(p)) for p in _lint_inputs()[1:] for fmt in ("json", "terminal")]
    return cases


@pytest.mark.parametrize("args", _real_inputs(), ids=lambda a: "-".join(Path(x).name for x in a))
def test_the_output_is_the_bytes_dataclasses_gave(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Every record of validator declared by plain @dataclass instead (records.record swapped
    before any import), then the same verb on the same real input: the same bytes and exit."""
    outs = []
    for n, code in enumerate((_AS_DATACLASSES, _AS_RECORDS)):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1700000000", "COLUMNS": "100",
               "SPEC_CHECK_CACHE_DIR": str(tmp_path / f"cache{n}")}
        r = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=ROOT, capture_output=True,
                           timeout=180, check=False)
        outs.append((r.returncode, r.stdout, r.stderr))
    assert outs[0][0] in (0, 1), outs[0][2][-2000:]
    assert len(outs[0][1]) > 200
    assert outs[1] == outs[0]
