"""The compiled-pack cache (validator/rules/compiled.py): the same objects as the loader gives,
never a stale or corrupt entry trusted, never an unsafe place used."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validator.errors import RuleFileError
from validator.io import resources
from validator.rules import compiled
from validator.rules.loader import load_pack
from validator.rules.spec import load_fact_catalogue, load_spec

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("SPEC_CHECK_CACHE_DIR", str(d))
    return d


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled spec/ and rules/, used as the bundled data."""
    root = tmp_path / "data"
    for name in ("spec", "rules"):
        shutil.copytree(resources.data_dir(name), root / name)
    monkeypatch.setattr(resources, "data_dir", lambda name: root / name)
    return root


def _direct(rules_version: str | None = None) -> tuple:
    spec = load_spec("1.0")
    catalogue = load_fact_catalogue()
    return spec, catalogue, load_pack(spec, catalogue, rules_version=rules_version)


@pytest.mark.parametrize("rules_version", [None, "1.0", "1.1"])
def test_cached_and_compiled_give_the_loaders_objects(cache: Path, rules_version: str | None) -> None:
    direct = _direct(rules_version)
    first = compiled.load_bundled("1.0", rules_version)  # compiles, writes
    again = compiled.load_bundled("1.0", rules_version)  # reads
    assert first == direct and again == direct
    assert again[2].digest == direct[2].digest and again[2].files == direct[2].files
    assert len(list(cache.glob("pack-*.json"))) == 1
    assert type(again[2].rules[0].scope).__name__ == "Scope"  # enums rebuilt, not bare strings


def test_a_corrupt_entry_is_recompiled_never_used(cache: Path) -> None:
    good = compiled.load_bundled("1.0")
    (entry,) = cache.glob("pack-*.json")
    raw = entry.read_bytes()
    # a summary edited in place (valid JSON, wrong digest), then a truncated file
    for bad in (raw.replace(b'"summary":"', b'"summary":"EDITED ', 1), raw[: len(raw) // 2], b"", b"\n{}"):
        entry.write_bytes(bad)
        assert compiled.load_bundled("1.0") == good
        assert entry.read_bytes() == raw  # rewritten whole


def test_an_edited_rule_file_is_seen_at_once(cache: Path, data: Path) -> None:
    before = compiled.load_bundled("1.0")[2]
    node = data / "rules" / "v1.1" / "node.yaml"
    text = node.read_text()
    rule_id = "NET-01.collective-busbw-low"  # its summary is one line of this file (an override)
    old = before.get(rule_id).summary.strip()
    assert old in text
    node.write_text(text.replace(old, "A summary changed after the cache was written", 1))
    after = compiled.load_bundled("1.0")[2]
    assert after.get(rule_id).summary.strip() == "A summary changed after the cache was written"
    assert after.digest != before.digest
    # a broken rule file is the loader's error at file:line, whatever the cache holds
    node.write_text(text.replace("scope: node", "scope: nodes", 1))
    with pytest.raises(RuleFileError) as exc:
        compiled.load_bundled("1.0")
    assert exc.value.file == str(node) and exc.value.line and "scope" in exc.value.problem
    node.write_text(text)
    assert compiled.load_bundled("1.0")[2] == before  # and back


def test_a_new_file_in_the_pack_changes_the_key(cache: Path, data: Path) -> None:
    before = compiled.load_bundled("1.0")[2]
    (data / "rules" / "v1.1" / "zz_extra.yaml").write_text("rules: []\n")
    after = compiled.load_bundled("1.0")[2]
    assert after.files[-1].endswith("zz_extra.yaml") and after.rules == before.rules


def test_off_and_unusable_places_compile_without_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _direct()
    monkeypatch.setenv("SPEC_CHECK_CACHE_DIR", "off")
    assert compiled.cache_dir() is None and compiled.load_bundled("1.0") == want
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SPEC_CHECK_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    assert compiled.load_bundled("1.0") == want
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # another user could plant an entry: not used, not written
    monkeypatch.setenv("SPEC_CHECK_CACHE_DIR", str(shared))
    assert compiled.load_bundled("1.0") == want and list(shared.iterdir()) == []
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    monkeypatch.setenv("SPEC_CHECK_CACHE_DIR", str(link))
    assert compiled.load_bundled("1.0") == want and list((tmp_path / "elsewhere").iterdir()) == []


def test_an_entry_others_can_write_or_a_symlink_is_not_read(cache: Path, tmp_path: Path) -> None:
    compiled.load_bundled("1.0")
    (entry,) = cache.glob("pack-*.json")
    key = entry.name[len("pack-"):-len(".json")]
    entry.chmod(0o666)
    assert compiled._read(key) is None
    entry.chmod(0o600)
    assert compiled._read(key) is not None
    real = tmp_path / "real.json"
    entry.rename(real)
    entry.symlink_to(real)
    assert compiled._read(key) is None


def test_the_cache_follows_the_effective_user_not_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pwd

    monkeypatch.delenv("SPEC_CHECK_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # sudo may keep the invoking user's HOME
    home = pwd.getpwuid(os.geteuid()).pw_dir
    assert compiled.cache_dir() == Path(home) / ".cache" / "spec-check"
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    assert compiled.cache_dir() == xdg / "spec-check"
    if os.geteuid() == 0:  # a directory of another user is not this user's cache
        os.chown(xdg, 65534, 65534)
        assert compiled.cache_dir() == Path(home) / ".cache" / "spec-check"


def test_concurrent_cold_runs_agree_and_leave_one_whole_entry(tmp_path: Path) -> None:
    env = {**os.environ, "SPEC_CHECK_CACHE_DIR": str(tmp_path / "c"), "PYTHONPATH": str(ROOT),
           "SOURCE_DATE_EPOCH": "1795000000"}
    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
    cmd = [sys.executable, "-m", "validator", "check", "--facts", str(facts), "--format", "json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert {p.returncode for p in procs} <= {0, 1}, [o[1][-500:] for o in outs]
    assert len({o[0] for o in outs}) == 1
    assert [p.name for p in (tmp_path / "c").iterdir()] == [next((tmp_path / "c").glob("pack-*.json")).name]
    warm = subprocess.run(cmd, env=env, capture_output=True, timeout=180)
    assert warm.stdout == outs[0][0]
    assert json.loads(warm.stdout)["rule_pack"]["digest"] == _direct()[2].digest


def test_a_compile_runs_no_code_the_key_leaves_out() -> None:
    """Every module of validator that a compile imports is in COMPILER_MODULES, so a
    change to any of them is a new key (a stricter check is never hidden by the cache)."""
    code = ("import sys; import validator.rules.compiled as c; before = set(sys.modules); "
            "c._compile('1.0', None, True); c._compile('1.0', '1.0', True); "
            "print('\\n'.join(sorted(set(sys.modules) | before)))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True, timeout=120).stdout.split()
    used = set()
    for name in out:
        if name.startswith("validator.") and name != "validator.rules.compiled":
            rel = name.removeprefix("validator.").replace(".", "/")
            used.add(f"{rel}/__init__.py" if (ROOT / "validator" / rel).is_dir() else f"{rel}.py")
    assert used - set(compiled.COMPILER_MODULES) == set()


def test_the_directory_is_private_and_entries_are_json_never_pickles(cache: Path) -> None:
    import stat

    compiled.load_bundled("1.0")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    source = Path(compiled.__file__).read_text()
    assert "import pickle" not in source and "marshal" not in source
    (entry,) = cache.glob("pack-*.json")
    head, _, body = entry.read_bytes().partition(b"\n")
    assert head.startswith(b"spec-check-compiled ") and json.loads(body)["pack"]["id"] == "v1.1"


def test_at_most_32_entries_are_kept_the_least_recently_used_go(cache: Path) -> None:
    compiled.load_bundled("1.0", "1.0")
    (used,) = cache.glob("pack-*.json")
    os.utime(used, (1000, 1000))
    compiled.load_bundled("1.0", "1.0")  # a read marks it used
    assert used.stat().st_mtime > 1000
    for i in range(40):
        (cache / f"pack-{i:064x}.json").write_text("old")
        os.utime(cache / f"pack-{i:064x}.json", (2000 + i, 2000 + i))
    compiled.load_bundled("1.0")
    left = sorted(p.name for p in cache.glob("pack-*.json"))
    assert len(left) == 32 and used.name in left
    assert f"pack-{39:064x}.json" in left and f"pack-{0:064x}.json" not in left


def test_a_custom_pack_is_read_from_its_files_on_every_run(cache: Path, tmp_path: Path) -> None:
    from validator.cli.common import RunOptions, build

    mine = tmp_path / "mine"
    shutil.copytree(resources.data_dir("rules") / "v1.1", mine)
    rule_id = "NET-01.collective-busbw-low"
    first = build(RunOptions(rules=mine)).pack.get(rule_id).summary.strip()
    node = mine / "node.yaml"
    node.write_text(node.read_text().replace(first, "Edited in a custom pack", 1))
    assert build(RunOptions(rules=mine)).pack.get(rule_id).summary.strip() == "Edited in a custom pack"
    assert build(RunOptions()).pack.get(rule_id).summary.strip() == first  # the bundled pack, unchanged
