"""DCGM diagnostics: ``dcgmi diag -r LEVEL -j`` run with a deadline, its JSON read per test.

Only on request (``spec-check check --dcgm-diag LEVEL``): level 1 takes seconds, level 3
many minutes, and a diagnostic loads the GPUs. The JSON, per DCGM's own schema
(NVIDIA/DCGM testing/python3/dcgm_diag_schema.json) and the samples Meta's GCM tests with
(facebookresearch/gcm gcm/tests/health_checks_tests/test_check_dcgmi.py):
* DCGM 3.x: ``{"DCGM GPU Diagnostic": {"test_categories": [{"category", "tests": [{"name",
  "results": [{"status": "Pass", "gpu_ids"?, "warnings"?, "info"?}]}]}]}}``
* DCGM 4.x: the top key is ``"DCGM Diagnostic"``, each test has ``"test_summary":
  {"status"}`` and per-entity ``results`` (``entity_group``, ``entity_id``, ``status``,
  ``warnings: [{"warning", "error_id", "error_category", "error_severity"}]``), and a
  failure to run is ``"runtime_error"``.
DCGM's documentation says the JSON has no published stable schema (reference/diagnostics/
errors.html): both shapes are read, anything else is an error value naming what was found.

States: ``dcgm.diag_status`` is ``ran`` or ``not requested`` (a skip for the rules), or an
error value (asked for with ``--dcgm-diag`` where dcgmi is not installed, dcgmi hung past its
deadline, exited with no JSON, or answered a shape of neither version: unknown is never pass).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from validator.facts.document import Fact, error, item, items, value
from validator.facts.node.base import Context

if TYPE_CHECKING:
    from validator.report.model import JSONValue

NAME = "dcgm"
FACTS = ("dcgm.diag_status", "dcgm.tests")
LEVELS = (1, 2, 3, 4)
# seconds: DCGM's user guide gives level 1 "seconds", 2 "< 2 minutes", 3 "< 30 minutes",
# 4 "1-2 hours"; the deadline leaves headroom and is never unbounded
DEADLINES = {1: 120.0, 2: 300.0, 3: 2400.0, 4: 9000.0}
MAX_OUTPUT = 16 * 1024 * 1024

# a test's requirement, by the test's name as dcgmi prints it (3.x and 4.x names, lower case)
REQUIREMENTS = {
    "memory": "MEM-01", "page retirement/row remap": "MEM-01", "memory bandwidth": "MEM-01",
    "memtest": "MEM-01",
    "pcie": "TOPO-02", "pcie bandwidth": "TOPO-02", "pci express": "TOPO-02",
    "nvlink": "NET-03", "nvbandwidth": "NET-03",
    "targeted power": "PLAT-03", "targeted stress": "PLAT-03", "diagnostic": "PLAT-03",
    "sm stress": "PLAT-03", "pulse test": "PLAT-03", "power": "PLAT-03",
}


def requirement_of(test: str) -> str:
    """The requirement a DCGM test speaks to; the software/deployment checks are PLAT-01."""
    return REQUIREMENTS.get(test.strip().lower(), "PLAT-01")


def collect(ctx: Context) -> dict[str, Fact]:
    level = getattr(ctx, "dcgm_level", None)
    src = "dcgmi diag"
    if level is None:
        return {"dcgm.diag_status": value("not requested", source="spec-check check --dcgm-diag LEVEL runs it"),
                "dcgm.tests": items([], source=src)}
    import shutil  # only when asked for (--dcgm-diag): not on check's start path

    exe = shutil.which("dcgmi")
    if exe is None:
        # asked for and not run: an error, not a skip (a prolog relying on it would lose its
        # GPU test unseen, with a conformant exit code)
        why = f"dcgmi not found on PATH: --dcgm-diag {level} asked for a DCGM diagnostic that could not run"
        return {"dcgm.diag_status": error(why, source="PATH: DCGM is not installed"),
                "dcgm.tests": error(why, source=src)}
    return run(exe, level)


def run(exe: str, level: int, deadline: float | None = None) -> dict[str, Fact]:
    argv = [exe, "diag", "-r", str(level), "-j"]
    src = f"dcgmi diag -r {level} -j"
    limit = DEADLINES.get(level, 120.0) if deadline is None else deadline
    import subprocess

    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        why = error(f"{src} did not finish in {limit:g} s (hung? nv-hostengine unresponsive?)", source=src)
        return {"dcgm.diag_status": why, "dcgm.tests": dict(why)}
    except OSError as exc:
        why = error(f"{src}: {exc.strerror or exc}", source=src)
        return {"dcgm.diag_status": why, "dcgm.tests": dict(why)}
    return parse_output(p.stdout[:MAX_OUTPUT], p.returncode, p.stderr, src)


def parse_output(stdout: str, rc: int, stderr: str, src: str) -> dict[str, Fact]:
    """dcgmi's answer as facts. dcgmi exits non-zero when a test fails and still prints the
    JSON (GCM treats exit 205 with JSON as a result), so the JSON decides, not the code."""
    try:
        doc = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError as exc:
        doc = None
        why = f"{src} exit {rc}: output is not JSON ({exc.msg} at line {exc.lineno})"
    else:
        lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
        why = f"{src} exit {rc} with no JSON" + (f": {lines[-1][:200]}" if lines else "")
    if not isinstance(doc, dict):
        if "host engine" in why.lower() or "hostengine" in why.lower() or "connect" in why.lower():
            why += " (is nv-hostengine running?)"
        e = error(why, source=src)
        return {"dcgm.diag_status": e, "dcgm.tests": dict(e)}
    body = doc.get("DCGM Diagnostic", doc.get("DCGM GPU Diagnostic"))
    if not isinstance(body, dict):
        e = error(f"{src}: JSON of an unknown shape (top keys {sorted(doc)[:5]}; expected "
                  "'DCGM Diagnostic' (4.x) or 'DCGM GPU Diagnostic' (3.x))", source=src)
        return {"dcgm.diag_status": e, "dcgm.tests": dict(e)}
    if body.get("runtime_error"):
        e = error(f"{src}: {str(body['runtime_error'])[:300]}", source=src)
        return {"dcgm.diag_status": e, "dcgm.tests": dict(e)}
    members = []
    for cat in body.get("test_categories") or []:
        if not isinstance(cat, dict):
            continue
        for test in cat.get("tests") or []:
            if isinstance(test, dict):
                members.append(_test(cat.get("category", "?"), test, src))
    if not members:
        e = error(f"{src}: the JSON lists no test", source=src)
        return {"dcgm.diag_status": e, "dcgm.tests": dict(e)}
    return {"dcgm.diag_status": value("ran", source=src), "dcgm.tests": items(members, source=src)}


def _test(category: str, test: dict[str, JSONValue], src: str) -> dict[str, JSONValue]:
    name = str(test.get("name", "?"))
    results = [r for r in test.get("results") or [] if isinstance(r, dict)]
    summary = test.get("test_summary")
    if isinstance(summary, dict) and isinstance(summary.get("status"), str):
        status = _status(summary["status"])  # 4.x: the test's own verdict over its entities
    elif results:
        status = _worst([_status(str(r.get("status", ""))) for r in results])  # 3.x
    else:
        status = None
    where = f"{src}: {category} / {name}"
    detail = "; ".join(_messages(results))[:400]
    return item(name, {
        "category": value(str(category), source=where),
        "requirement": value(requirement_of(name), source="spec-check's map of DCGM tests to requirements"),
        # DCGM's own words travel with the result, so the finding quotes them
        "result": (value(status, source=f"{where}: {detail}" if detail else where) if status
                   else error("no status in the JSON", source=where)),
        "detail": value(detail, source=where),
    })


ORDER = ("fail", "warn", "pass", "skip")


def _status(text: str) -> str:
    t = text.strip().lower()
    return {"pass": "pass", "fail": "fail", "warn": "warn", "warning": "warn", "skip": "skip",
            "not run": "skip", "skipped": "skip"}.get(t, f"unknown ({text})")


def _worst(statuses: list[str]) -> str:
    for s in ORDER:
        if s in statuses:
            return s
    return statuses[0] if statuses else "unknown ()"


def _messages(results: list[dict[str, JSONValue]]) -> list[str]:
    out = []
    for r in results:
        ent = r.get("entity_id", r.get("gpu_id"))
        for w in r.get("warnings") or []:
            text = w.get("warning") if isinstance(w, dict) else str(w)
            if text:
                out.append(f"GPU {ent}: {text}" if ent is not None else str(text))
    return out
