"""Versioned rule packs: --rules-version, `rules diff`, the result's pack record, `diff`
refusing results of different packs, and the rule format defined once."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import typing
from pathlib import Path

from tests.helpers import built
from validator.errors import RuleFileError
from validator.io.resources import rules_dir
from validator.io.yamlfile import load_yaml
from validator.rules import loader, validation_models
from validator.rules.packdiff import changelog_entries
from validator.rules.released import RELEASED_PACKS

ROOT = Path(__file__).resolve().parent.parent

# rule pack v1.0 as released: its verdicts, and the digest its results recorded, never change
V10_DIGEST = RELEASED_PACKS["1.0"][1]  # sha256:a7e26766a6f3... (tests/test_pack_versions.py holds the table)


def spec_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}, timeout=120)


def test_v1_0_is_unchanged_and_selectable() -> None:
    v10 = built(rules_version="1.0").pack
    assert v10.id == "v1.0" and v10.digest == V10_DIGEST
    assert built(rules_version="v1.0").pack.digest == V10_DIGEST  # "v1.0" and "1.0" alike
    v11 = built(rules_version="1.1").pack
    assert v11.id == "v1.1" and v11.digest != V10_DIGEST


def test_unknown_pack_and_two_packs_are_usage_errors(tmp_path: Path) -> None:
    r = spec_check("rules", "list", "--rules-version", "9.9")
    assert r.returncode == 2 and 'no rule pack "9.9" (bundled: 1.0, 1.1, 1.2)' in r.stderr
    assert "Traceback" not in r.stderr
    r = spec_check("check", "--rules-version", "1.0", "--rules", str(rules_dir() / "v1.0"))
    assert r.returncode == 2 and "--rules and --rules-version both name a rule pack" in r.stderr


def test_rules_diff_lists_every_change_with_its_changelog_entry() -> None:
    r = spec_check("rules", "diff", "1.0", "1.1")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("rule pack v1.0 (sha256:a7e26766a6f3) -> v1.1")
    for line in ("+ REC-02.crash-detection-too-slow", "+ REC-02.hang-detection-too-slow",
                 "+ MON-01.collective-latency-not-emitted", "- MON-01.metric-families-missing",
                 "- REC-02.detection-timeout-too-long", "~ CKPT-01.checkpointing-disabled: cite_source, summary, when changed",
                 "+ MON-03.platform-family-not-exported"):
        assert line in out, out
    assert "why: Disabled. It judged the *longest* timeout" in out
    data = json.loads(spec_check("rules", "diff", "1.0", "1.1", "--format", "json").stdout)
    assert data["changed"]["CKPT-01.checkpointing-disabled"]["when"]["old"] != \
        data["changed"]["CKPT-01.checkpointing-disabled"]["when"]["new"]


def test_every_changed_rule_has_a_changelog_entry() -> None:
    from validator.rules.packdiff import diff_packs

    d = diff_packs(built(rules_version="1.0").pack, built(rules_version="1.1").pack, rules_dir() / "v1.1")
    assert not d.undocumented, f"rules changed without a ### entry in rules/v1.1/CHANGELOG.md: {d.undocumented}"
    # and no entry for a rule that did not change (a stale note)
    assert set(changelog_entries(rules_dir() / "v1.1")) == {*d.added, *d.removed, *d.changed}


def _lint_json(tmp_path: Path, version: str, name: str) -> Path:
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}\n')
    out = tmp_path / name
    r = spec_check("lint", str(cfg), "--rules-version", version, "--format", "json", "-o", str(out))
    assert r.returncode in (0, 1), r.stderr
    return out


def test_result_records_the_pack_and_diff_refuses_another_pack(tmp_path: Path) -> None:
    a = _lint_json(tmp_path, "1.0", "a.json")
    b = _lint_json(tmp_path, "1.1", "b.json")
    ra, rb = json.loads(a.read_text())["rule_pack"], json.loads(b.read_text())["rule_pack"]
    assert ra == {"id": "v1.0", "digest": V10_DIGEST} and rb["id"] == "v1.1"
    r = spec_check("diff", str(a), str(b))
    assert r.returncode == 2, r.stdout
    assert "OLD was judged by rule pack v1.0 (sha256:a7e26766a6f3), NEW by rule pack v1.1" in r.stderr
    assert "--allow-pack-change" in r.stderr and "Traceback" not in r.stderr
    r = spec_check("diff", str(a), str(b), "--allow-pack-change")
    assert r.returncode in (0, 1) and "rule_pack" not in r.stderr
    assert spec_check("diff", str(a), str(a)).returncode == 0  # one pack: compared as before


# ---- the rule format is defined once --------------------------------------------------------
# validator/rules/rulemodel.py is the definition: pydantic validates into its dataclasses (no model
# of its own in validation_models.py), spec/rulefile.schema.json is generated from them
# (tests/test_loader.py), and the loader, spec and engine import them from there.


def test_the_formats_are_defined_once_in_the_rule_model() -> None:
    import ast
    import inspect

    from validator.rules import rulemodel, spec

    tree = ast.parse(inspect.getsource(validation_models))
    assert not [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)], "validation_models defines no format"
    for name in ("Check", "Condition", "IfEmpty", "Rule", "Override", "RuleFile", "PackFile", "RulePack"):
        assert getattr(loader, name) is getattr(rulemodel, name)
    for name in ("Spec", "Requirement", "Parameter", "FactInfo"):
        assert getattr(spec, name) is getattr(rulemodel, name)
    schema = json.loads((ROOT / "spec" / "rulefile.schema.json").read_text())
    for name in schema["$defs"]:
        assert dataclasses.is_dataclass(getattr(rulemodel, name)) or issubclass(getattr(rulemodel, name), str), name


def test_scopes_and_levels_are_enums_that_read_as_their_values() -> None:
    from validator.rules.rulemodel import Level, Rule, Scope

    hints = typing.get_type_hints(Rule)
    assert hints["scope"] is Scope and Level in typing.get_args(hints["level"])
    assert [s.value for s in Scope] == ["node", "job", "cluster"] and [lv.value for lv in Level] == ["MUST", "SHOULD"]
    assert Scope.NODE == "node" and f"{Scope.JOB}" == "job" and str(Level.MUST) == "MUST"
    assert json.dumps([Scope.CLUSTER, Level.SHOULD]) == '["cluster", "SHOULD"]'
    data = load_yaml(rules_dir() / "v1.1" / "node.yaml")
    rule = validation_models.validate("RuleFile", data, "node.yaml", RuleFileError).rules[0]
    assert type(rule.scope) is Scope and rule.scope == data["rules"][0]["scope"]


def test_the_schema_carries_the_fields_added_for_v1_1() -> None:
    from validator.io.resources import spec_dir

    schema = json.loads((spec_dir() / "rulefile.schema.json").read_text())
    cond = schema["$defs"]["Condition"]["properties"]
    assert set(cond["otherwise"]["enum"]) == {"skip", "pass"} and "param" in cond
    assert "cite_source" in schema["$defs"]["Rule"]["properties"]


def test_contributing_add_a_rule_names_files_that_exist() -> None:
    """The walk-through's file list matches the tree (placeholders like vX and <scope>
    match any version and scope)."""
    import re

    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text.split("## Recipe: add a rule", 1)[1].split("\n## ", 1)[0]
    named = {m for m in re.findall(r"`([^` ]+)`", section) if "/" in m and not m.startswith("--")}
    assert {"validator/rules/rulemodel.py", "validator/rules/bundled.json", "tests/test_bundled_pack.py"} <= named
    for path in sorted(named):
        pattern = re.sub(r"<[a-z]+>|\bvX\b|\*", "*", path.split(":")[0])
        assert list(ROOT.glob(pattern)), f"CONTRIBUTING.md names {path}, which is not in the tree"
    assert "_ADDED_IN_1_1" in (ROOT / "validator" / "rules" / "loader.py").read_text()
