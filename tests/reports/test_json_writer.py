"""The JSON result written the fast way has the old way's bytes, on real and generated reports.

Why: the writer takes a dict of enums (a rule's level and scope, a finding's level) in one
call of the C encoder, and ``Report.to_dict`` builds the rule and requirement dicts without
``dataclasses.asdict``'s deep copy (start-up: a check's JSON result). The old way, written
out here as the reference, is ``json.dumps(indent=2, ensure_ascii=False, default=str)`` of
the result document with ``asdict`` for the rules and requirements. It is compared on the
example reports, the real H200's check, checks of every recorded facts fixture and of this
machine, and hypothesis-generated reports.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.api import CheckOptions
from validator.api.node import check_node
from validator.renderers.escape import clean_report
from validator.renderers.json_ import JsonRenderer, dumps_indented, result_document
from validator.report.model import (
    Finding,
    Level,
    Location,
    Report,
    RequirementDoc,
    RuleDoc,
    Scope,
    Status,
    Subject,
    report_from_dict,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "reports" / "examples").glob("*.json")) + [ROOT / "tests" / "golden" / "check_failing.json"]
H200 = Path("/work/shared/recordings/h200-node")
FACTS = sorted((ROOT / "tests" / "fixtures" / "facts").glob("*.json"))


def _old(report: Report) -> str:
    """The result as the renderer wrote it before: the standard encoder, asdict per doc."""
    doc = result_document(report)
    doc["rules"] = [dataclasses.asdict(r) for r in report.rules]
    doc["requirements"] = [dataclasses.asdict(r) for r in report.requirements]
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def _new(report: Report) -> str:
    buf = io.StringIO()
    JsonRenderer().render(report, buf)
    return buf.getvalue()


def _same(report: Report) -> None:
    report = clean_report(report)
    assert _new(report) == _old(report)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_example_reports(path: Path) -> None:
    report = report_from_dict(json.loads(path.read_text()))
    assert report.rules or report.findings
    _same(report)


def test_the_real_h200_check_reads_back_to_its_own_bytes() -> None:
    if not (H200 / "check.json").is_file():
        pytest.skip("no /work/shared recordings here")
    text = (H200 / "check.json").read_text()
    report = report_from_dict(json.loads(text))
    written = _new(clean_report(report))
    assert written == _old(clean_report(report))
    # recorded as result/2: the same bytes but for result/4's version, each finding's "id", each
    # subject's identity (none recorded then), and the summary, which this version recomputes
    # (what was not judged, and the verdict saying it)
    doc = json.loads(written)
    assert doc.pop("schema") == "spec-check/result/4"
    for f in doc["findings"]:
        assert len(f.pop("id")) == 32
    for sub in doc["subjects"]:
        assert [sub.pop(k) for k in ("probe_version", "machine_id", "board_serial")] == [None, None, None]
    recorded = json.loads(text)
    assert recorded.pop("schema") == "spec-check/result/2"
    old_summary, new_summary = recorded.pop("summary"), doc.pop("summary")
    assert json.dumps(doc, indent=2, ensure_ascii=False) == json.dumps(recorded, indent=2, ensure_ascii=False)
    counts = ("pass", "fail", "warn", "skip", "error", "total", "conformant")
    assert {k: old_summary[k] for k in counts} == {k: new_summary[k] for k in counts}


@pytest.mark.parametrize("path", [*FACTS, H200 / "facts.json"], ids=lambda p: p.name)
def test_checks_of_recorded_facts(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} absent")
    report = check_node(CheckOptions(facts=(path,))).report
    assert report.rules and report.findings
    _same(report)


def test_a_check_of_this_machine() -> None:
    _same(check_node(CheckOptions()).report)


def test_rule_and_requirement_dicts_are_asdicts() -> None:
    report = check_node(CheckOptions(facts=(FACTS[0],))).report
    d = report.to_dict()
    for got, rec in [*zip(d["rules"], report.rules, strict=True),
                     *zip(d["requirements"], report.requirements, strict=True)]:
        want = dataclasses.asdict(rec)
        assert got == want and list(got) == list(want)
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


class _Kind(str, enum.Enum):
    A = "a\u2028\""


class _Num(enum.IntEnum):
    X = 7


class _F(float):
    pass


_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=8),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([_Kind.A, _Num.X, _F(2.5), Level.MUST,
                                                                       Scope.NODE, Status.FAIL, Path("/p")]),
)
_JSON = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.text(max_size=5), st.integers(), st.booleans()), inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_generated_documents_with_enums_and_subclasses(obj: Any) -> None:
    assert dumps_indented(obj) == json.dumps(obj, indent=2, ensure_ascii=False, default=str)


_TEXT = st.text(max_size=12)
_FINDING = st.builds(
    Finding, rule=_TEXT, requirement=_TEXT, level=st.sampled_from([Level.MUST, Level.SHOULD, "MUST"]),
    status=st.sampled_from(list(Status)), subject=_TEXT, expected=_TEXT, message=_TEXT, remediation=_TEXT,
    item=st.none() | _TEXT, observed=st.none() | _JSON, value=st.none() | _JSON, unit=st.none() | _TEXT,
    source=st.none() | _TEXT,
    location=st.none() | st.builds(Location, _TEXT, st.none() | st.integers(0, 10**6), st.none() | _TEXT),
    waiver=st.none() | st.dictionaries(_TEXT, _TEXT, max_size=3),
    folded=st.none() | st.dictionaries(_TEXT, st.integers(), max_size=2))
_RULE = st.builds(RuleDoc, _TEXT, _TEXT, _TEXT, st.sampled_from(list(Level)), st.sampled_from(list(Scope)),
                  _TEXT, _TEXT, _TEXT)
_REQ = st.builds(RequirementDoc, _TEXT, st.sampled_from(list(Level)), _TEXT, _TEXT)
_REPORT = st.builds(
    Report, command=st.sampled_from(["check", "cluster", "lint"]), spec_version=_TEXT, tool_version=_TEXT,
    rule_pack=st.dictionaries(_TEXT, _TEXT, max_size=2), generated_at=_TEXT,
    parameters=st.dictionaries(_TEXT, st.fixed_dictionaries({"value": _TEXT, "origin": _TEXT}), max_size=3),
    subjects=st.lists(st.builds(Subject, _TEXT, st.sampled_from(list(Scope)), st.none() | _TEXT), max_size=3).map(tuple),
    findings=st.lists(_FINDING, max_size=6).map(tuple), rules=st.lists(_RULE, max_size=4).map(tuple),
    requirements=st.lists(_REQ, max_size=3).map(tuple), profile=st.none() | _TEXT,
    extra=st.dictionaries(_TEXT, _JSON, max_size=2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_REPORT)
def test_generated_reports(report: Report) -> None:
    _same(report)
