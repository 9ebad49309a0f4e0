"""The JSON renderer's fast indented writer gives exactly ``json.dumps(indent=2)``'s text."""

from __future__ import annotations

import enum
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from validator.renderers.json_ import JsonRenderer, dumps_indented, result_document
from validator.report.model import Finding, Location, Report, Status, Subject


def _std(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str)


class _Kind(str, enum.Enum):
    A = "a"


class _Num(enum.IntEnum):
    X = 3


CASES: list[Any] = [
    {}, [], (), 1, "x", None, True, 1.5, 10**30,
    {"a": {}, "b": [], "c": [{}], "d": {"e": []}},
    {7: "a", 2.5: "b", True: 1, False: 0, None: 2, "é": "ü\u2028\x00\"\\"},
    {"a": {1: [1, 2, {"x": (1, 2)}]}, "p": Path("/tmp"), "s": {3}, "e": _Kind.A, "i": _Num.X},
    [[[]], [[1]], [{"a": None}]],
    {"a": {"b": {"c": {"d": [1, [2, [3]]]}}}},
    [Path("/x"), 1, _Kind.A, {"k": Path("/y")}],
]


@pytest.mark.parametrize("obj", CASES, ids=range(len(CASES)))
def test_same_text_as_the_standard_encoder(obj: Any) -> None:
    assert dumps_indented(obj) == _std(obj)


@pytest.mark.parametrize("obj", [float("nan"), float("inf"), [1.5, -float("inf")], {"a": {"b": float("nan")}}])
def test_never_nan_or_infinity(obj: Any) -> None:
    """Issue 24: a result is JSON every parser reads back: NaN and infinity are written as
    strings ("nan", "inf", "-inf"), never bare NaN/Infinity (which only Python accepts)."""
    from validator.values.numbers import finite

    text = dumps_indented(obj)
    assert "NaN" not in text and "Infinity" not in text
    assert text == _std(finite(obj))


def test_same_text_on_random_nested_documents() -> None:
    rnd = random.Random(7)

    def gen(depth: int) -> Any:
        r = rnd.random()
        if depth > 4 or r < 0.4:
            return rnd.choice([0, -2.25, 'q"\\', None, False, 1e20, "ä", "", 10**20])
        if r < 0.7:
            return {rnd.choice(["a", "b", "c", 1, None]): gen(depth + 1) for _ in range(rnd.randint(0, 4))}
        return [gen(depth + 1) for _ in range(rnd.randint(0, 4))]

    for _ in range(2000):
        obj = gen(0)
        assert dumps_indented(obj) == _std(obj)


def test_bad_key_is_a_type_error_as_in_the_standard_encoder() -> None:
    with pytest.raises(TypeError):
        dumps_indented({"a": [{(1, 2): 1}]})


def test_renderer_output_is_the_standard_dump_of_the_result() -> None:
    findings = tuple(
        Finding(rule="NET-01.fabric-port-slow", requirement="NET-01", level="MUST", status=st,
                subject="node1", expected="rate >= 400 Gb/s", message="m", remediation="r",
                item=f"mlx5_{i}", value=v, unit="Gb/s",
                location=Location("a.json", 3) if i == 1 else None)
        for i, (st, v) in enumerate([(Status.PASS, 400), (Status.FAIL, {"a": [1, 2]}), (Status.SKIP, None)])
    )
    report = Report(command="check", spec_version="1.0", tool_version="0", rule_pack={"id": "v1.0"},
                    generated_at="2026-01-01T00:00:00Z", parameters={"p": {"value": "1", "origin": "default"}},
                    subjects=(Subject("node1", "node"),), findings=findings, extra={"fleet": {"hosts": 1}})
    buf = io.StringIO()
    JsonRenderer().render(report, buf)
    assert buf.getvalue() == _std(result_document(report)) + "\n"
    assert json.loads(buf.getvalue())["findings"][1]["value"] == {"a": [1, 2]}


def _report(findings: tuple[Finding, ...]) -> Report:
    return Report(command="check", spec_version="1.0", tool_version="0", rule_pack={"id": "v1.0"},
                  generated_at="2026-01-01T00:00:00Z", parameters={}, subjects=(), findings=findings)


def test_finding_dict_keys_follow_the_fields() -> None:
    from dataclasses import fields, replace

    from validator.report.model import finding_from_dict

    f = Finding(rule="R-01.x", requirement="R-01", level="SHOULD", status=Status.WARN, subject="n",
                expected="e", message="m", remediation="r", location=Location("f.json", None),
                waiver={"id": "W1", "active": True})
    d = f.to_dict()
    names = [x.name for x in fields(Finding)]
    # written only when set, after "severity": folded (a folded finding), fixes and no_fix (lint)
    assert names[-3:] == ["folded", "fixes", "no_fix"]
    assert list(d) == names[:-3] + ["severity"]
    folded = replace(f, folded={"subjects": 2, "verdicts": 16})
    assert list(folded.to_dict()) == names[:-3] + ["severity", "folded"]
    assert finding_from_dict(folded.to_dict()) == folded
    fixed = replace(f, fixes=[{"file": "f.json", "kind": "key", "target": "bf16.enabled", "value": True,
                               "why": "w"}], no_fix=None)
    assert list(fixed.to_dict()) == names[:-3] + ["severity", "fixes"]
    assert finding_from_dict(fixed.to_dict()) == fixed
    unfixable = replace(f, no_fix="no key can; a run's logs would decide it")
    assert finding_from_dict(unfixable.to_dict()) == unfixable
    assert d["status"] == "warn" and d["severity"] == "warning"
    assert d["location"] == {"file": "f.json", "line": None} and d["waiver"] == {"id": "W1", "active": True}
    assert d["waiver"] is not f.waiver  # a copy: the result dict never aliases the finding


def test_summary_is_counted_per_report() -> None:
    from dataclasses import replace

    ok = Finding(rule="R-01.x", requirement="R-01", level="MUST", status=Status.PASS, subject="n",
                 expected="e", message="m", remediation="r")
    report = _report((ok,))
    assert report.summary.conformant and report.summary.counts["pass"] == 1
    failed = replace(report, findings=(replace(ok, status=Status.FAIL),))
    assert not failed.summary.conformant and failed.summary.counts == {**report.summary.counts, "pass": 0,
                                                                       "fail": 1}
    assert report.with_findings(()).summary.counts["pass"] == 0


def test_finding_constructor_matches_its_fields() -> None:
    import inspect
    from dataclasses import MISSING, fields, replace

    params = list(inspect.signature(Finding.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields(Finding)]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is MISSING else f.default for f in fields(Finding)
    ]
    values: list[Any] = ["R-01.x", "R-01", "MUST", Status.FAIL, "n", "e", "m", "r", "GPU0", "1 W", 1, "W", "nvml",
              Location("f", 2), {"id": "W"}, {"subjects": 2},
              [{"file": "f", "kind": "key", "target": "k", "value": 1, "why": "w"}], "no edit"]
    by_position = Finding(*values)
    by_name = Finding(**{f.name: v for f, v in zip(fields(Finding), values, strict=True)})
    assert by_position == by_name
    assert [getattr(by_position, f.name) for f in fields(Finding)] == values
    assert replace(by_position, item="GPU1").item == "GPU1"
    assert Finding("R-01.x", "R-01", "MUST", Status.PASS, "n", "e", "m", "r").waiver is None


def test_subject_dict_is_asdict() -> None:
    from dataclasses import asdict

    s = Subject("n1", "node", "sha256:x", "2026-01-01T00:00:00Z", "probe")
    assert s.to_dict() == asdict(s) and list(s.to_dict()) == list(asdict(s))
