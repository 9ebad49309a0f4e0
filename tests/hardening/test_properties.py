"""Hypothesis properties of every loader and renderer: what a loader accepts is what the
frameworks' own parser accepts, every failure is the loader's own error (never another
exception), and every renderer turns any text into valid output for its medium."""

from __future__ import annotations

import contextlib
import io
import json
import xml.dom.minidom
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.jobs.util import ROOT
from validator.errors import SpecCheckError
from validator.io.source import ReadError, parse_json, parse_toml, parse_yaml
from validator.renderers import escape

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.floats(allow_nan=False),
                    st.text(max_size=20))
keys = st.text(min_size=1, max_size=10)
data = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4),
                    max_leaves=25)
YAML_ALPHABET = st.sampled_from(list("ab01 :-[]{},&*<>|#\n\t'\".?~%@`") + ["<<", "&a", "*a", "!!int", "!!str",
                                                                         "null", "true", "1e3", "0x1f"])


@SETTINGS
@given(st.dictionaries(keys, data, min_size=1, max_size=6))
def test_yaml_reader_reads_what_safe_load_reads(doc: dict) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    assert parse_yaml(text, "f").data == yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@SETTINGS
@given(st.lists(YAML_ALPHABET, max_size=40).map("".join))
@example("!!int\na:")  # found 2026-12-02: a scalar's tag on a mapping was read as the mapping
@example("!!map\n- a")
def test_yaml_reader_never_passes_what_safe_load_rejects(text: str) -> None:
    try:
        ours = parse_yaml(text, "f").data
    except ReadError:
        ours = ReadError
    # safe_load's constructors on the same (libyaml) parser the reader uses: the two
    # parsers of PyYAML differ on a few scanner corner cases (a trailing tab), not on values
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = list(yaml.load_all(text, Loader=loader))
    except Exception:
        assert ours is ReadError, (text, ours)
        return
    if ours is not ReadError and docs:
        assert _same(ours, docs[0]), (text, ours, docs[0])


def _same(a: object, b: object) -> bool:
    """Equal, with keys a reader keeps as text (a date, a float) compared as text."""
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(_same(a.get(k if k in a else str(k)), v) for k, v in b.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b or (a != a and b != b)


@SETTINGS
@given(st.text(max_size=200))
def test_json_and_toml_readers_fail_only_with_read_errors(text: str) -> None:
    for parse in (parse_json, parse_toml):
        with contextlib.suppress(ReadError):
            parse(text, "f")


@SETTINGS
@given(st.text(max_size=60))
def test_escaped_text_is_safe_for_every_medium(s: str) -> None:
    out = escape.text(s)
    out.encode("utf-8")  # no lone surrogates left
    assert all(c in "\n\t" or (c.isprintable() or ord(c) > 0x9F) for c in out if not c.isprintable()), out
    assert escape.text(out) == out  # idempotent
    xml.dom.minidom.parseString(f"<a b='{escape.html(s)}'>{escape.html(s)}</a>".encode())
    assert "\n" not in escape.markdown(s) and "|" not in escape.markdown(s).replace("\\|", "")


def _lint_report():  # type: ignore[no-untyped-def]
    from tests.jobs.util import spec_check
    from validator.report.results import load_result

    r = spec_check("lint", "--format", "json", str(ROOT / "tests" / "acceptance" / "jobs" / "negative"
                                                    / "ds_batch_mismatch.json"))
    doc = json.loads(r.stdout)
    p = Path(__import__("tempfile").mkdtemp()) / "r.json"
    p.write_text(r.stdout)
    return doc, load_result(p)[1]


_BASE: list[object] = []


def _base():  # type: ignore[no-untyped-def]
    if not _BASE:
        _BASE.extend(_lint_report())
    return _BASE[0], _BASE[1]


@SETTINGS
@given(st.text(max_size=30), st.text(max_size=30), st.text(max_size=30), st.sampled_from(
    ["terminal", "json", "junit", "sarif", "markdown", "html", "github", "prometheus"]))
def test_every_renderer_renders_any_text(subject: str, message: str, file: str, fmt: str) -> None:
    from validator.renderers import available, get_renderer
    from validator.report.model import Location

    assume(fmt in available())
    _, rep = _base()
    findings = tuple(replace(f, subject=subject or "s", message=message,
                             location=Location(file or "f", 3, message)) for f in rep.findings)
    rep = escape.clean_report(replace(rep, findings=findings))
    buf = io.StringIO()
    get_renderer(fmt).render(rep, buf)
    out = buf.getvalue()
    out.encode("utf-8")
    assert not any(ord(c) < 32 and c not in "\n\t\r" for c in out), fmt
    if fmt == "junit":
        xml.dom.minidom.parseString(out.encode())
    if fmt in ("json", "sarif"):
        json.loads(out)


def _mutations() -> st.SearchStrategy:
    paths = st.sampled_from([
        ("findings", 0, "item"), ("findings", 0, "waiver"), ("findings", 0, "location"), ("selection",),
        ("parameters",), ("subjects", 0, "name"), ("findings", 1, "status"), ("findings", 0, "level"),
        ("tool_version",), ("rule_pack", "id"), ("findings", 0, "message"), ("subjects",), ("rules",),
        ("findings", 0, "location", "line"), ("findings", 0, "waiver", "active"), ("profile",),
    ])
    return st.tuples(paths, data)


@SETTINGS
@given(st.lists(_mutations(), min_size=1, max_size=3))
def test_results_accepted_only_when_every_use_works(tmp_path_factory, muts) -> None:  # type: ignore[no-untyped-def]
    import copy

    import jsonschema

    from validator.renderers import get_renderer
    from validator.report.results import check_result, to_report

    doc, _ = _base()
    d = copy.deepcopy(doc)
    for path, value in muts:
        node = d
        for part in path[:-1]:
            if (isinstance(node, dict) and part in node and isinstance(node[part], (dict, list))) or (isinstance(node, list) and isinstance(part, int) and part < len(node)):
                node = node[part]
            else:
                node = None
                break
        if isinstance(node, dict):
            node[path[-1]] = value
    try:
        check_result(d, "r.json")
        rep = to_report(d, "r.json")
    except SpecCheckError:
        return
    schema = json.loads((ROOT / "spec" / "result.schema.json").read_text())
    jsonschema.validate(d, schema)  # what the reader accepts, the published schema accepts
    for fmt in ("terminal", "json", "junit", "sarif", "markdown", "html"):
        get_renderer(fmt).render(escape.clean_report(rep), io.StringIO())


@SETTINGS
@given(data)
def test_facts_documents_fail_only_with_facts_errors(value: object) -> None:
    from validator.errors import FactsFileError
    from validator.facts.document import validate

    base = json.loads((ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json").read_text())
    for key in ("facts", "subject", "schema"):
        d = dict(base)
        d[key] = value
        with contextlib.suppress(FactsFileError):
            validate(d, "f.json")


@SETTINGS
@given(st.text(max_size=40))
def test_quantities_are_finite_or_refused(text: str) -> None:
    import math

    from validator.values.units import parse_quantity

    try:
        q = parse_quantity(text)
    except SpecCheckError:
        return
    assert math.isfinite(q.base) or text.strip().lower() in ("unlimited", "infinity", "inf")


@pytest.mark.parametrize("kind", ["profile", "waivers"])
@SETTINGS
@given(doc=st.dictionaries(keys, data, max_size=5))
def test_profile_and_waiver_loaders_fail_only_with_their_errors(tmp_path_factory, kind: str, doc: dict) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import built
    from validator.report.waivers import load_waivers
    from validator.rules.spec import resolve_parameters

    p = tmp_path_factory.mktemp("y") / f"{kind}.yaml"
    body = {"parameters": doc} if kind == "profile" else {"waivers": [doc]}
    p.write_text(yaml.safe_dump(body))
    b = built()
    try:
        if kind == "profile":
            resolve_parameters(b.ctx.spec, profile=p)
        else:
            load_waivers(p, b.pack, b.ctx.spec)
    except SpecCheckError:
        pass
