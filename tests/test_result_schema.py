"""spec/result.schema.json is generated from the result model (validator/report/model.py) and says
what the hand-written result/2 schema said (tests/fixtures/results/result-2.handwritten.schema.json,
the file as released in 0.2.0) plus what result/3 added (each finding's optional stable "id", a
waiver's own fields, and what was not judged: ADDED_IN_3) and result/4 (a subject's identity:
ADDED_IN_4): the same shape, and the same verdict
on every result in the repository and on results mutated where a result can go wrong."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from validator.report.schemas import result_schema, result_schema_text

ROOT = Path(__file__).resolve().parent.parent
OLD = json.loads((ROOT / "tests" / "fixtures" / "results" / "result-2.handwritten.schema.json").read_text())
NEW = json.loads((ROOT / "spec" / "result.schema.json").read_text())
RESULTS = sorted(
    p for d in ("reports/examples", "tests/golden", "tests/fixtures", "tests/hardening/fuzz_cases")
    for p in (ROOT / d).rglob("*.json") if '"schema": "spec-check/result/' in p.read_text(errors="replace")
)


def test_the_checked_in_schema_is_the_generated_one() -> None:
    assert (ROOT / "spec" / "result.schema.json").read_text() == result_schema_text(), (
        "run: python -m validator.report.schemas result > spec/result.schema.json")


def _shape(node: Any) -> Any:
    """The schema without prose; ``required`` as a set (the generated one lists field order)."""
    if isinstance(node, dict):
        return {k: sorted(v) if k == "required" else _shape(v) for k, v in node.items()
                if k not in ("description", "title")}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


# what result/3 added to the summary (issue 30: verdicts that claim only what was judged),
# each optional: a reader of result/3 reads a result/2 file
ADDED_IN_3 = (
    ("summary", "not_judged"),
    ("summary", "coverage", "requirements_not_judged"),
    ("summary", "coverage", "ignored"),
)


# what result/4 added to each subject (issue 35: the probe's version and the machine's identity)
ADDED_IN_4 = ("probe_version", "machine_id", "board_serial")


def _as_result_2(schema: dict[str, Any]) -> dict[str, Any]:
    """The generated schema less what result/3 added: the version const, the finding id, a
    lint finding's fixes and no_fix, a waiver's own ID, granted date and the day it was judged
    on, and the summary's not-judged keys."""
    out = copy.deepcopy(schema)
    out["$id"] = OLD["$id"]
    out["properties"]["schema"] = OLD["properties"]["schema"]
    for key in ("id", "fixes", "no_fix"):
        out["$defs"]["finding"]["properties"].pop(key)
    waiver = out["$defs"]["finding"]["properties"]["waiver"]["oneOf"][1]["properties"]
    for key in ("waiver_id", "granted", "as_of"):
        waiver.pop(key)
    for path in ADDED_IN_3:
        node = out
        for key in path[:-1]:
            node = node["properties"][key]
        del node["properties"][path[-1]]
    subject = out["properties"]["subjects"]["items"]
    subject = out["$defs"][subject["$ref"].rsplit("/", 1)[-1]] if "$ref" in subject else subject
    for key in ADDED_IN_4:
        subject["properties"].pop(key)
    return out


def test_the_generated_schema_has_the_released_shape() -> None:
    assert _shape(_as_result_2(result_schema())) == _shape(OLD)
    assert NEW["$defs"]["finding"]["properties"]["id"] == {"type": "string", "pattern": "^[0-9a-f]{32}$"}
    assert "id" not in NEW["$defs"]["finding"].get("required", [])  # older results have none


def test_what_result_3_added_to_the_summary_is_checked() -> None:
    doc = json.loads((ROOT / "tests" / "golden" / "check_failing.json").read_text())
    doc["rule_pack"]["digest"] = "sha256:" + "0" * 64  # the golden masks it
    assert doc["schema"] == "spec-check/result/4" and _NEW_V.is_valid(doc)
    doc["summary"]["not_judged"] = ["MEM-01"]
    doc["summary"]["coverage"]["requirements_not_judged"] = ["MEM-01"]
    assert _NEW_V.is_valid(doc)
    for path, bad in ((("not_judged",), 1), (("coverage", "requirements_not_judged"), "MEM-01"),
                      (("coverage", "ignored"), [1])):
        d = copy.deepcopy(doc)
        node = d["summary"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = bad
        assert not _NEW_V.is_valid(d), path


def test_the_generator_can_fail() -> None:
    """A field added to the model shows in the schema (the comparison above is not vacuous)."""
    import dataclasses

    from validator.report import model
    from validator.report.schemas import _ResultSchema

    @dataclasses.dataclass(frozen=True)
    class Grown(model.Subject):
        rack: int = 0

    assert _ResultSchema().object_of(Grown)["properties"]["rack"] == {"type": "integer"}
    assert _shape(_ResultSchema().object_of(Grown)) != _shape(OLD["properties"]["subjects"]["items"])


_OLD_V = jsonschema.Draft202012Validator(OLD)
_NEW_V = jsonschema.Draft202012Validator(NEW)


def _verdicts(doc: Any) -> tuple[bool, bool]:
    """The result/2 schema's verdict on the document as result/2 (no finding ids), the
    generated schema's on it as result/3; the summary keys result/3 added are taken out of
    both (test_what_result_3_added_to_the_summary_is_checked checks those)."""
    old, new = copy.deepcopy(doc), copy.deepcopy(doc)
    for d in (old, new):
        summary = d.get("summary") if isinstance(d, dict) else None
        for path in ADDED_IN_3:
            node = summary
            for key in path[1:-1]:
                node = node.get(key) if isinstance(node, dict) else None
            if isinstance(node, dict):
                node.pop(path[-1], None)
    if isinstance(doc, dict) and isinstance(doc.get("schema"), str) and doc["schema"].startswith("spec-check/result/"):
        old["schema"], new["schema"] = "spec-check/result/2", NEW["properties"]["schema"]["const"]
    for sub in old.get("subjects", []) if isinstance(old, dict) and isinstance(old.get("subjects"), list) else []:
        if isinstance(sub, dict):  # result/4's additions, absent from result/2
            for key in ADDED_IN_4:
                sub.pop(key, None)
    ids_ok = True  # result/3's one addition, checked by hand on the result/2 side
    for f in old.get("findings", []) if isinstance(old, dict) and isinstance(old.get("findings"), list) else []:
        if isinstance(f, dict) and "id" in f:
            fid = f.pop("id")
            ids_ok = ids_ok and isinstance(fid, str) and re.fullmatch("[0-9a-f]{32}", fid) is not None
    return _OLD_V.is_valid(old) and ids_ok, _NEW_V.is_valid(new)


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_result_here_gets_the_same_verdict(path: Path) -> None:
    with _any_int_size():
        doc = json.loads(path.read_text())
        old, new = _verdicts(doc)
    assert old == new


@contextlib.contextmanager
def _any_int_size() -> Iterator[None]:
    """Integers of any size (a fuzz case has 5,000 digits: Python's default limit is 4,300)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit:
        sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        if limit:
            sys.set_int_max_str_digits(limit)


def _mutants(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each field of a result set to each kind of wrong value, and each key removed."""
    wrong: list[Any] = [None, True, 1, -1, 1.5, "", "x", "[/x]", [], ["x"], {}, {"x": 1}]
    out = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in list(items)[:12]:
            for w in wrong + ["MUST", "warning", "node", "sha256:" + "0" * 64, "NET-01", "NET-01.port-rate"]:
                out.append((path + (k,), w))
            if isinstance(node, dict):
                out.append((path + (k,), KeyError))
            walk(v, path + (k,))

    walk(doc, ())
    docs = []
    for path, value in out:
        d = copy.deepcopy(doc)
        node = d
        for part in path[:-1]:
            node = node[part]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        docs.append(d)
    return docs


def test_mutated_results_get_the_same_verdict() -> None:
    doc = json.loads((ROOT / "tests" / "golden" / "check_failing.json").read_text())
    # and the parts this check result lacks: a folded finding, a waiver, a lint run's jobs
    doc["findings"][1]["folded"] = {"subjects": 2, "verdicts": 16, "names": "n[1-2]", "range": [1, 2],
                                    "values": ["a"], "more": 0}
    doc["findings"][0]["waiver"] = {"active": True, "id": "W1", "expires": "2027-01-01"}
    doc["findings"][2]["location"] = {"file": "a.yaml", "line": 3, "text": "x: 1"}
    doc["extra"] = {"jobs": [{"name": "j", "files": ["a.yaml"], "conformant": False, "counts": {"fail": 1}}]}
    for key in ("findings", "subjects", "rules", "requirements"):  # their shapes; keeps the run short
        doc[key] = doc.get(key, [])[:2]
    for key, value in doc.get("extra", {}).items():
        if isinstance(value, list):
            doc["extra"][key] = value[:2]
    rejected = 0
    for d in _mutants(doc):
        old, new = _verdicts(d)
        assert old == new, json.dumps(d)[:300]
        rejected += not old
    assert rejected > 100  # the mutations do break results
