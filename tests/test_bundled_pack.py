"""The compiled pack (validator/rules/bundled.json) is a build artefact held to its source:
the committed file is what spec/ and rules/ compile to, and what a run reads back from it
equals what the loader gives from the YAML."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from validator.errors import SpecCheckError
from validator.rules import bundled
from validator.rules.loader import load_pack
from validator.rules.spec import load_fact_catalogue, load_spec


def test_the_committed_pack_is_what_the_files_compile_to() -> None:
    assert bundled.BUNDLED.read_text(encoding="utf-8") == bundled.build(), (
        "validator/rules/bundled.json is stale: run "
        "`python -m validator.rules.bundled > validator/rules/bundled.json` and commit it"
    )


def _direct(rules_version: str | None) -> tuple:
    spec = load_spec("1.0")
    catalogue = load_fact_catalogue()
    return spec, catalogue, load_pack(spec, catalogue, rules_version=rules_version)


@pytest.mark.parametrize("rules_version", [None, "1.0", "1.1", "v1.0", " V1.1 "])
def test_the_bundled_pack_gives_the_loaders_objects(rules_version: str | None) -> None:
    direct = _direct(rules_version)
    read = bundled.load_bundled("1.0", rules_version)
    assert read == direct
    assert read[2] is not None and direct[2] is not None
    assert read[2].digest == direct[2].digest and read[2].files == direct[2].files
    assert type(read[2].rules[0].scope).__name__ == "Scope"  # enums rebuilt, not bare strings
    assert bundled.load_bundled("1.0", rules_version, pack=False) == (*direct[:2], None)


def test_every_bundled_pack_is_in_the_artefact() -> None:
    data = json.loads(bundled.BUNDLED.read_text(encoding="utf-8"))
    assert set(data["packs"]) == {"1.0 v1.0", "1.0 v1.1", "1.0 v1.2"}
    assert set(data["specs"]) == {"1.0"}


@pytest.mark.parametrize(("spec_version", "rules_version", "message"), [
    ("9.9", None, 'no spec version "9.9"'),
    ("1.0", "7.0", 'no rule pack "7.0"'),
])
def test_what_the_artefact_lacks_is_the_loaders_error(spec_version: str, rules_version: str | None,
                                                       message: str) -> None:
    with pytest.raises(SpecCheckError, match=message):
        bundled.load_bundled(spec_version, rules_version)


def test_without_the_artefact_the_pack_is_compiled_in_memory(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setattr(bundled, "BUNDLED", tmp_path / "absent.json")
    assert bundled.load_bundled("1.0") == _direct(None)


def test_a_custom_pack_is_read_from_its_files(tmp_path: Path) -> None:
    """--rules DIR: compiled in memory on every run; nothing is written anywhere."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: mine\nspec_version: "1.0"\n')
    (pack / "r.yaml").write_text("rules:\n  - id: NET-01.broken\n    requirement: NET-01\n    scope: node\n")
    before = sorted(tmp_path.rglob("*"))
    r = subprocess.run([sys.executable, "-m", "validator", "rules", "list", "--rules", str(pack)],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and "r.yaml" in r.stderr, r.stderr
    assert sorted(tmp_path.rglob("*")) == before
