"""One YAML loader for configs, rule packs, profiles and waivers: byte and node budgets
against alias bombs, and PyYAML ``safe_load``'s refusals (what the frameworks reject is
an error, never a pass)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.hardening.conftest import spec_check_within_1gib
from tests.jobs.util import ROOT, spec_check
from validator.errors import RuleFileError
from validator.io.source import MAX_EXPANDED_BYTES, ReadError, parse_yaml
from validator.io.yamlfile import load_yaml

DS = ROOT / "tests" / "acceptance" / "jobs" / "negative" / "ds_batch_mismatch.json"


def _one_line(r, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout[-300:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-check: error: ") and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def _byte_bomb(key: str = "items", indent: str = "") -> str:
    """One 100 KB string aliased 20,000 times: 20,000 nodes (under any node budget), 2 GB of text."""
    return f"{indent}anchor: &a {'x' * 100_000}\n{indent}{key}:\n" + f"{indent}  - *a\n" * 20_000


def _laughs(indent: str = "") -> str:
    lines = [f'{indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for p, q in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{indent}{p}: &{p} [" + ",".join([f"*{q}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_byte_bomb_in_a_config_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    p = tmp_path / "bomb.yaml"
    p.write_text("trainer:\n  precision: bf16\n" + _byte_bomb())
    r = spec_check_within_1gib("lint", str(p))  # it took 4 GB before
    _one_line(r, f"{p}:", "once its aliases are expanded", "alias bomb")


def test_byte_budget_counts_aliases_not_the_text(tmp_path: Path) -> None:
    # an alias-free file of several MiB is fine; the same bytes reached through aliases are not
    big = "k: " + "y" * (3 * 2**20) + "\n"
    assert parse_yaml(big, "f").data["k"] == "y" * (3 * 2**20)
    n = MAX_EXPANDED_BYTES // 100_000 + 5
    with pytest.raises(ReadError, match="alias bomb"):
        parse_yaml(f"a: &a {'x' * 100_000}\nb: [" + ", ".join(["*a"] * n) + "]\n", "f")


@pytest.mark.parametrize("where", ["profile", "waivers", "rules"])
@pytest.mark.parametrize("bomb", ["laughs", "bytes"])
def test_alias_bombs_in_profiles_waivers_and_rule_packs(tmp_path: Path, lint_result: Path,
                                                       where: str, bomb: str) -> None:
    body = _laughs("  ") if bomb == "laughs" else _byte_bomb("items", "  ")
    if where == "profile":
        p = tmp_path / "profile.yaml"
        p.write_text("parameters:\n" + body)
        r = spec_check("lint", "--profile", str(p), str(DS))
    elif where == "waivers":
        p = tmp_path / "waivers.yaml"
        p.write_text("waivers:\n  - rule: MON-01\n    extra:\n  " + body.replace("\n  ", "\n    ").lstrip())
        r = spec_check("report", "--waivers", str(p), str(lint_result))
    else:
        pack = tmp_path / "pack"
        pack.mkdir()
        (pack / "pack.yaml").write_text('id: mine\nspec_version: "1.0"\nextends: v1.0\n')
        p = pack / "extra.yaml"
        p.write_text("rules:\n  - id: MON-01.x\n    requirement: MON-01\n    extra:\n  "
                     + body.replace("\n  ", "\n    ").lstrip())
        r = spec_check("lint", "--rules", str(pack), str(DS))
    _one_line(r, str(p), "alias")


SAFE_LOAD_REJECTS = [
    ("int", "trainer:\n  precision: bf16\n  devices: !!int abc\n", 3),
    ("float", "trainer:\n  precision: bf16\n  max_steps: !!float ten\n", 3),
    ("bool", "trainer:\n  precision: bf16\n  logger: !!bool perhaps\n", 3),
    ("merge-list", "base: &b [1, 2]\ntrainer:\n  <<: *b\n  precision: bf16\n", 3),
    ("merge-scalar", "trainer:\n  <<: 5\n  precision: bf16\n", 2),
    ("list-key", "trainer:\n  precision: bf16\n  ? [a, b]\n  : 1\n", 3),
    ("date", "trainer:\n  precision: bf16\nstarted: 2027-02-30\n", 3),
]


@pytest.mark.parametrize(("name", "text", "line"), SAFE_LOAD_REJECTS, ids=[c[0] for c in SAFE_LOAD_REJECTS])
def test_what_safe_load_rejects_is_an_error_never_a_pass(tmp_path: Path, name: str, text: str, line: int) -> None:
    with pytest.raises((yaml.YAMLError, ValueError, KeyError)):
        yaml.safe_load(text)  # the frameworks' own loader refuses these files
    p = tmp_path / "config.yaml"
    p.write_text(text)
    _one_line(spec_check("lint", str(p)), f"{p}:{line}:")
    (tmp_path / "ds.json").write_text(DS.read_text())  # in a job: an error finding, not conformant
    r = spec_check("lint", "--format", "json", str(tmp_path))
    result = json.loads(r.stdout)
    assert r.returncode == 1 and not result["summary"]["conformant"]
    errs = [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert [(e["location"]["file"], e["location"]["line"]) for e in errs] == [(str(p), line)]


def test_rule_files_keep_line_numbers_duplicates_and_tags(tmp_path: Path) -> None:
    p = tmp_path / "r.yaml"
    p.write_text("a: 1\nb:\n  - x\n  - y: 2\n")
    data = load_yaml(p)
    assert data == {"a": 1, "b": ["x", {"y": 2}]}
    assert data.key_lines == {"a": 1, "b": 2} and data["b"].item_lines == [3, 4]
    for text, needle in (("a: 1\na: 2\n", "duplicate key"), ("a: !Ref x\n", "unsupported tag"),
                         ("a: 1\n---\nb: 2\n", "more than one document"),
                         ("a: !!python/object:os.system x\n", "unsupported tag")):
        p.write_text(text)
        with pytest.raises(RuleFileError, match=needle):
            load_yaml(p)
    p.write_text("# nothing but a comment\n")
    assert load_yaml(p) is None


def test_extends_cycle_by_another_name(tmp_path: Path) -> None:
    pack = tmp_path / "packs" / "mine"
    pack.mkdir(parents=True)
    (pack / "pack.yaml").write_text('id: mine\nspec_version: "1.0"\nextends: ../packs/mine\n')
    _one_line(spec_check("lint", "--rules", str(pack), str(DS)), "extends loops back to itself")
