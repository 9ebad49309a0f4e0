"""Rule packs load, extend and fail with file:line messages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from validator.errors import RuleFileError
from validator.io.resources import rules_dir
from validator.rules.loader import load_pack, pack_dir_for
from validator.rules.spec import load_fact_catalogue, load_spec

SPEC = load_spec("1.0")
CATALOGUE = load_fact_catalogue()
GOOD_RULE = """\
rules:
  - id: MEM-02.shm-tiny
    requirement: MEM-02
    scope: node
    summary: s
    why: w
    remediation: r
    fact: memory.shm_size
    check: {op: gte, value: "1 GiB"}
"""


def _pack(tmp_path: Path, rules_text: str, *, pack: str = 'id: t\nspec_version: "1.0"\n') -> Path:
    d = tmp_path / "t"
    d.mkdir(parents=True)
    (d / "pack.yaml").write_text(pack)
    (d / "r.yaml").write_text(rules_text)
    return d


def test_bundled_pack_loads_with_a_stable_digest() -> None:
    a = load_pack(SPEC, CATALOGUE)
    b = load_pack(SPEC, CATALOGUE)
    assert a.id == "v1.2" and a.digest == b.digest and a.digest.startswith("sha256:")  # spec v1.0's default
    assert len(a.rules) >= 30


def test_custom_pack(tmp_path: Path) -> None:
    pack = load_pack(SPEC, CATALOGUE, pack_path=_pack(tmp_path, GOOD_RULE))
    assert [r.id for r in pack.rules] == ["MEM-02.shm-tiny"]


@pytest.mark.parametrize(("old", "new", "message", "line"), [
    ("op: gte", "op: greater", 'unknown operator "greater"', 9),
    ('"1 GiB"', '"1 Gibibyte"', 'unknown unit "Gibibyte"', 9),
    ("    why: w\n", "    why: w\n    colour: red\n", 'unknown key "colour"', 7),
    ("MEM-02.shm-tiny", "MEM02-shm", "String should match pattern", 2),
    ("requirement: MEM-02", "requirement: MEM-99", 'unknown requirement "MEM-99"', 3),
    ("fact: memory.shm_size", "fact: memory.shm", 'unknown fact "memory.shm"', 8),
    ('value: "1 GiB"', "value: {param: shm_maximum}", 'unknown parameter "shm_maximum"', 9),
    ('value: "1 GiB"', "value: {param: shm_min, field: x}", "a value reference is one of", 9),
    ("scope: node", "scope: rack", "Input should be 'node', 'job' or 'cluster'", 4),
    # checked against spec/facts at load: each would otherwise be an ERROR on every node
    ('"1 GiB"', '"1 Gb/s"', '"1 Gb/s" is a bitrate, but memory.shm_size is bytes (B)', 9),
    ('value: "1 GiB"', "value: {param: fabric_port_rate}",
     "parameter fabric_port_rate is a bitrate, but memory.shm_size is bytes", 9),
    ("fact: memory.shm_size", "fact: host.kernel", 'operator "gte" cannot judge host.kernel, a string', 9),
    ('check: {op: gte, value: "1 GiB"}', "check: {op: is_true}", 'operator "is_true" cannot judge', 9),
    ("fact: memory.shm_size\n    check: {op: gte, value: \"1 GiB\"}",
     "fact: gpu.devices\n    field: temperature\n    check: {op: lte, value: 90}\n"
     "    where:\n      - {field: pstat, op: eq, value: 0}",
     'unknown field "pstat" of gpu.devices in where', 12),
    ("fact: memory.shm_size\n    check: {op: gte, value: \"1 GiB\"}",
     "fact: gpu.devices\n    field: temperature\n    check: {op: lte, value: {field: temp_max}}",
     'unknown field "temp_max"', 10),
    ("fact: memory.shm_size\n    check: {op: gte, value: \"1 GiB\"}",
     "fact: gpu.devices\n    field: temperature\n    check: {op: lte, value: 90}\n"
     "    when:\n      - {field: pstate, op: eq, value: 0}",
     'a "when" condition judges a fact, not a field', 12),
])
def test_bad_rule_files_name_file_and_line(tmp_path: Path, old: str, new: str, message: str, line: int) -> None:
    assert old in GOOD_RULE
    d = _pack(tmp_path, GOOD_RULE.replace(old, new))
    with pytest.raises(RuleFileError) as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert message in str(exc.value)
    assert exc.value.file == str(d / "r.yaml")
    assert exc.value.line == line


def test_python_tags_never_run(tmp_path: Path) -> None:
    d = _pack(tmp_path, "rules: !!python/object/apply:os.system ['touch /tmp/pwned-spec-check']\n")
    with pytest.raises(RuleFileError, match="unsupported tag"):
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert not Path("/tmp/pwned-spec-check").exists()


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    d = _pack(tmp_path, "rules:\n  - id: [unclosed\n")
    with pytest.raises(RuleFileError) as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert "invalid YAML" in str(exc.value) and exc.value.line is not None


def test_newer_engine_required_is_checked_first(tmp_path: Path) -> None:
    d = _pack(tmp_path, "rules: [{id: broken}]\n",
              pack='id: t\nspec_version: "1.0"\nmin_engine_version: "99.0"\n')
    with pytest.raises(RuleFileError, match=r"needs spec-check >= 99.0") as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert exc.value.line == 3


def test_a_later_version_extends_and_overrides(tmp_path: Path) -> None:
    """A v1.1 pack, reached through rules/index.yaml as a release would ship it, inherits
    v1.0's rules, changes one, disables one and adds one."""
    shutil.copytree(rules_dir(), tmp_path, dirs_exist_ok=True)
    index = (tmp_path / "index.yaml").read_text()
    (tmp_path / "index.yaml").write_text(index.replace('versions:\n', 'versions:\n  "1.1": later\n'))
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "pack.yaml").write_text('id: later\nspec_version: "1.1"\nextends: v1.0\n')
    (tmp_path / "later" / "changes.yaml").write_text(
        "overrides:\n"
        "  - id: TOPO-01.gpu-nic-far\n    level: MUST\n"
        "  - id: MON-03.no-telemetry-exporter\n    enabled: false\n"
        "  - id: NET-01.fabric-port-slow\n    check: {op: gte, value: \"800 Gb/s\"}\n"
        + GOOD_RULE
    )
    spec11 = SPEC.model_copy(update={"spec_version": "1.1"})
    base = load_pack(SPEC, CATALOGUE, rules_version="1.0")
    later = load_pack(spec11, CATALOGUE, root=tmp_path)
    assert pack_dir_for("1.1", tmp_path) == tmp_path / "later"
    ids = {r.id for r in later.rules}
    assert "MON-03.no-telemetry-exporter" not in ids
    assert "MEM-02.shm-tiny" in ids
    assert len(later.rules) == len(base.rules)  # one disabled, one added
    assert later.get("TOPO-01.gpu-nic-far").level == "MUST"
    assert later.get("NET-01.fabric-port-slow").check.value == "800 Gb/s"
    assert later.id == "later" and later.digest != base.digest


def test_override_of_unknown_rule(tmp_path: Path) -> None:
    d = _pack(tmp_path, GOOD_RULE + "overrides:\n  - id: NET-01.nope\n    level: MUST\n")
    with pytest.raises(RuleFileError, match='override of unknown rule "NET-01.nope"') as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert exc.value.line == 11


def test_duplicate_rule_id(tmp_path: Path) -> None:
    d = _pack(tmp_path, GOOD_RULE + GOOD_RULE.split("\n", 1)[1])
    with pytest.raises(RuleFileError, match="duplicate rule id"):
        load_pack(SPEC, CATALOGUE, pack_path=d)


def test_rulefile_schema_is_generated_from_the_models() -> None:
    from validator.io.resources import spec_dir
    from validator.report.schemas import rulefile_schema_text

    assert (spec_dir() / "rulefile.schema.json").read_text() == rulefile_schema_text(), (
        "run: python -m validator.report.schemas > spec/rulefile.schema.json")


def test_a_number_like_string_is_a_string_for_a_string_fact(tmp_path: Path) -> None:
    """gpu.driver_version = "550" (or one of "550.54.03", ...) is a string comparison: no
    unit is asked of a string fact, and the engine compares the text."""
    from tests.helpers import document
    from validator.evaluate.engine import Context, evaluate
    from validator.report.model import Status
    from validator.rules.spec import resolve_parameters

    text = GOOD_RULE.replace("fact: memory.shm_size", "fact: gpu.driver_version").replace(
        'check: {op: gte, value: "1 GiB"}', 'check: {op: eq, value: "550"}\n'
        '    when:\n      - {fact: gpu.driver_status, op: ne, value: "550"}\n'
        '      - {fact: gpu.driver_version, op: not_in, value: ["550.54.03", "1 GiB"]}')
    pack = load_pack(SPEC, CATALOGUE, pack_path=_pack(tmp_path, text))
    ctx = Context(SPEC, CATALOGUE, resolve_parameters(SPEC))
    for version, status in (("550", Status.PASS), ("535.104.05", Status.FAIL)):
        doc = document({"gpu.driver_version": version, "gpu.driver_status": "ok"})
        [f] = evaluate(ctx, pack, [doc])
        assert f.status is status, (version, f.message)


def test_a_number_like_string_still_needs_the_unit_of_a_numeric_fact(tmp_path: Path) -> None:
    """For a quantity, the same string is a quantity: a unit of another kind, or none to
    speak of, stays a load error at file:line (in a formula's arguments too)."""
    d = _pack(tmp_path, GOOD_RULE.replace('"1 GiB"', '"550.54.03"'))
    with pytest.raises(RuleFileError, match='unknown unit ".03"') as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert exc.value.line == 9
    bad_arg = GOOD_RULE.replace('"1 GiB"', '{formula: product, args: {a: {param: shm_min}, b: "2 Gibibyte"}}')
    with pytest.raises(RuleFileError, match='unknown unit "Gibibyte"'):
        load_pack(SPEC, CATALOGUE, pack_path=_pack(tmp_path / "2", bad_arg))


def test_rule_files_named_yml_are_loaded_too(tmp_path: Path) -> None:
    """A pack's *.yml rule files load like *.yaml ones (in name order), never passed over
    in silence; a pack.yml beside pack.yaml is refused, naming it."""
    d = _pack(tmp_path, GOOD_RULE)
    (d / "s.yml").write_text(GOOD_RULE.replace("shm-tiny", "shm-small-too"))
    pack = load_pack(SPEC, CATALOGUE, pack_path=d)
    assert [r.id for r in pack.rules] == ["MEM-02.shm-tiny", "MEM-02.shm-small-too"]
    assert pack.files == (str(d / "r.yaml"), str(d / "s.yml"))
    (d / "pack.yml").write_text('id: t\nspec_version: "1.0"\n')
    with pytest.raises(RuleFileError, match="named pack.yaml, not pack.yml") as exc:
        load_pack(SPEC, CATALOGUE, pack_path=d)
    assert exc.value.file == str(d / "pack.yml")


def test_a_quoted_number_on_a_plain_number_fact_says_so(tmp_path: Path) -> None:
    """`value: "8"` on gpu.count is a typo for 8: the load error says that, not "has a unit"."""
    text = GOOD_RULE.replace("fact: memory.shm_size", "fact: gpu.count").replace('"1 GiB"', '"8"')
    with pytest.raises(RuleFileError, match='"8" is a quoted number, but .* write 8 without quotes'):
        load_pack(SPEC, CATALOGUE, pack_path=_pack(tmp_path, text))
