"""A mutating fuzzer (Hypothesis) over recorded results, facts and fleets (issue 24).

Seeds are real: the H200 node's ``facts.json`` and ``check.json`` (read-only, under
/work/shared/recordings), the DGX fixtures, and a fleet saved by ``cluster --save-facts``
from a live run. Each example takes one seed and mutates it where the campaigns found
defects: a value swapped for a hostile one (a 400-digit integer, 1e400, NaN, a string
where a number was, a negative count, a bool, null, a deep nest), a key written twice, a
member repeated. What must hold, whatever the mutation:

* a reader accepts the document or refuses it with its own one-line error (never another
  exception: no TypeError, no OverflowError, no RecursionError);
* what it accepts evaluates and renders, and the JSON written is strict JSON (no NaN, no
  Infinity, no repeated key: spec-check's own reader takes it back);
* a replayed fleet ends in exit 0 or 1, or exit 2 with one line: never "internal error".
"""

from __future__ import annotations

import copy
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.jobs.util import ROOT
from validator.errors import SpecCheckError

RECORDINGS = Path("/work/shared/recordings/h200-node")
FACTS_SEEDS = [p for p in (RECORDINGS / "facts.json", ROOT / "tests/fixtures/facts/dgx_h100.json",
                           ROOT / "tests/fixtures/facts/dgx_h100_ecc_off.json") if p.is_file()]
RESULT_SEEDS = [p for p in (RECORDINGS / "check.json",) if p.is_file()]
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

HOSTILE: list[Any] = [
    10**400, -(10**400), 2**64 + 1, 1e300, "1e400", "NaN", "Infinity", -1, -0.5, 0, True, False, None,
    "", "x" * 300, "[bold]x[/]", "\x1b[31m", [], {}, [[[[[[[[1]]]]]]]], {"value": 1}, 400.0, "400 Gb/s",
]
# numbers written as JSON text Python's encoder would not write (kept as text until the end)
RAW = {"1e400": "1e400", "NaN": "NaN", "Infinity": "Infinity", "huge": "9" * 400}


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):
            out += _paths(v, (*prefix, i))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


@st.composite
def mutated(draw: Any, seeds: list[Path]) -> tuple[str, str]:
    """(the seed's name, the mutated JSON text)."""
    seed = draw(st.sampled_from(seeds))
    doc = json.loads(seed.read_text())
    paths = _paths(doc)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(["value", "raw", "drop", "twice"]))
        if how == "value":
            doc = _set(doc, path, copy.deepcopy(draw(st.sampled_from(HOSTILE))))
        elif how == "raw" and path:
            doc = _set(doc, path, "@RAW:" + draw(st.sampled_from(sorted(RAW))) + "@")
        elif how == "drop" and path:
            parent = doc
            for p in path[:-1]:
                parent = parent[p]
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif isinstance(parent, list) and parent:
                parent.pop(path[-1] if path[-1] < len(parent) else 0)
        elif how == "twice" and path and isinstance(path[-1], str):
            _set(doc, path, "@TWICE@")
        paths = _paths(doc)
    text = json.dumps(doc, indent=1)
    for name, raw in RAW.items():
        text = text.replace(f'"@RAW:{name}@"', raw)
    # a key written twice: the first copy 200, the one Python keeps 400
    text = re.sub(r'("(?:[^"\\]|\\.)*"): "@TWICE@"', r"\1: 200, \1: 400", text)
    return seed.name, text


def _strict(text: str) -> None:
    """Strict JSON, as spec-check's own reader takes it: no NaN, Infinity or repeated key."""
    from validator.io.jsondoc import parse

    parse(text)


@pytest.fixture(scope="module")
def built() -> Any:
    from validator.cli.common import RunOptions, build

    opts = RunOptions(spec_version="1.0")
    return opts, build(opts, ("node", "job", "cluster"))


@SETTINGS
@given(mutated(FACTS_SEEDS))
def test_mutated_facts_are_read_or_refused_never_a_crash(built: Any, tmp_path_factory: Any, case: Any) -> None:
    from validator.cli.common import evaluate_documents
    from validator.facts.document import load
    from validator.renderers.json_ import JsonRenderer
    from validator.renderers.terminal import TerminalRenderer

    name, text = case
    path = tmp_path_factory.mktemp("facts") / name
    path.write_text(text)
    try:
        doc = load(path)
    except SpecCheckError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    opts, b = built
    report = evaluate_documents("check", b, opts, [doc], [str(path)])
    out = io.StringIO()
    JsonRenderer().render(report, out)
    _strict(out.getvalue())
    TerminalRenderer(width=140).render(report, io.StringIO())


@SETTINGS
@given(mutated(RESULT_SEEDS))
def test_mutated_results_are_read_or_refused_never_a_crash(tmp_path_factory: Any, case: Any) -> None:
    from validator.renderers import get_renderer
    from validator.report.results import load_result

    name, text = case
    path = tmp_path_factory.mktemp("result") / name
    path.write_text(text)
    try:
        _, report = load_result(path)
    except SpecCheckError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    for fmt in ("json", "terminal", "html", "markdown", "sarif"):
        out = io.StringIO()
        get_renderer(fmt).render(report, out)
        if fmt in ("json", "sarif"):
            _strict(out.getvalue())


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fleet saved by a live run (local transport, three hosts)."""
    from tests.cluster.helpers import fake_remote, run_cluster

    tmp = tmp_path_factory.mktemp("fleet")
    rc, live, err = run_cluster(tmp, "--transport", "local", "--hosts", "n01,n02,n03", "--select", "PLAT-02",
                                "--remote-command", fake_remote(tmp, {"n01": "gpu", "n02": "gpu", "n03": "gpu"}),
                                "--save-facts", str(tmp / "saved"))
    assert live is not None and rc == 0, err
    return tmp / "saved"


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_fleets_replay_or_refuse_in_one_line(fleet: Path, tmp_path_factory: Any, data: Any) -> None:
    work = tmp_path_factory.mktemp("replay")
    files = sorted(fleet.glob("*.json"))
    target = data.draw(st.sampled_from(files))
    name, text = data.draw(mutated([target]))
    for f in files:
        (work / f.name).write_text(text if f == target else f.read_text())
    passes = data.draw(st.sampled_from(["itemize", "fold"]))
    out = work / "result.json"
    r = subprocess.run([sys.executable, "-m", "validator", "cluster", "--facts", str(work), "--passes", passes,
                        "--select", "PLAT-02,NET-01", "--format", "json", "-o", str(out)],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    if r.returncode == 2:
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("spec-check: error")]
        assert len(errors) == 1, r.stderr
    else:
        assert r.returncode in (0, 1), r.stderr
        _strict(out.read_text())
