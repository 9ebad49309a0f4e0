"""A released rule pack version never changes: RELEASED_PACKS (validator/rules/released.py)
holds the digest each released version shipped with, and a change must be a new version.

The digests are checked three ways: what rules/ compiles to now, what the committed
bundled.json (what a run records) says, and what each release commit's own rules/ compiles
to (where the git history is at hand: a shallow clone skips that part).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from validator import __version__
from validator.rules import bundled, released
from validator.rules.loader import load_pack
from validator.rules.released import CHANGED_IN_PLACE, EDIT_HINT, RELEASED_PACKS
from validator.rules.spec import load_fact_catalogue, load_spec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import release  # noqa: E402  (scripts/release.py)

VERSION = re.compile(r"\d+\.\d+\.\d+")


def test_no_released_pack_version_has_changed() -> None:
    """The message says what to do instead."""
    now = released.current()
    assert released.problems(now) == [], "\n".join(released.problems(now))
    committed = json.loads(bundled.BUNDLED.read_text(encoding="utf-8"))
    index = committed["index"]["packs"]
    for version, (release_, digest) in RELEASED_PACKS.items():
        [recorded] = [p["digest"] for key, p in committed["packs"].items() if key.endswith(f" {index[version]}")]
        assert recorded == digest, (f"validator/rules/bundled.json records rule pack v{version} (released in "
                                    f"{release_}) as {recorded}, not {digest}: {EDIT_HINT}")


def test_the_table_is_well_formed() -> None:
    for version, (release_, digest) in RELEASED_PACKS.items():
        assert re.fullmatch(r"\d+\.\d+", version) and VERSION.fullmatch(release_), version
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    for version, earlier in CHANGED_IN_PLACE.items():
        assert version in RELEASED_PACKS
        for release_, digest in earlier:
            assert _key(release_) < _key(RELEASED_PACKS[version][0]) and digest != RELEASED_PACKS[version][1]
    listed = release.releases(ROOT)  # CHANGELOG.md's releases
    assert {r for r, _ in RELEASED_PACKS.values()} <= set(listed)


def test_a_pack_version_not_in_the_table_is_unreleased() -> None:
    """Such as a v1.2 being written on main: listed as unreleased, no problem; the release
    that ships it is the one that records it."""
    now = released.current()
    assert released.problems(now) == []
    unreleased = sorted(set(now) - set(RELEASED_PACKS))  # v1.2 while this is written
    now["9.9"] = "sha256:" + "1" * 64
    assert released.problems(now) == []
    assert released.status_lines(now)[-1] == f"v9.9 sha256:{'1' * 64} unreleased (the next release records it)"
    assert released.table_lines(now, "9.0.0") == [f'    "{v}": ("9.0.0", "{now[v]}"),' for v in [*unreleased, "9.9"]]


def test_an_edit_of_a_released_pack_fails_with_what_to_do(tmp_path: Path) -> None:
    """A released v1.1 rule's summary edited in a copy of rules/: the digest moves, and the
    check says to make a new version; v1.0, which v1.1 extends, is untouched."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules)
    path = rules / "v1.1" / "node.yaml"
    text = path.read_text(encoding="utf-8")
    edited = re.sub(r"(\n\s+summary: )(\S)", r"\1edited, \2", text, count=1)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    spec, catalogue = load_spec("1.0"), load_fact_catalogue()
    now = {v: load_pack(spec, catalogue, pack_path=rules / f"v{v}").digest for v in ("1.0", "1.1")}
    [problem] = released.problems(now)
    assert problem.startswith(f"rule pack v1.1 was released in 0.3.0 as {RELEASED_PACKS['1.1'][1]} and is now ")
    assert problem.endswith("make a new pack version (rules/vX.Y with a CHANGELOG) instead of editing a released one")
    assert "CHANGED since its release in 0.3.0" in released.status_lines(now)[1]
    assert released.problems({"1.1": RELEASED_PACKS["1.1"][1]})[0].startswith(
        "rule pack v1.0 (released in 0.2.0) is no longer bundled")


def test_the_0_1_0_digest_is_what_0_1_0_recorded() -> None:
    """v1.0 as 0.1.0 shipped it: the digest a result written by 0.1.0's own code records."""
    result = json.loads((ROOT / "tests" / "fixtures" / "results" / "check_vm_0.1.0.json").read_text())
    assert result["tool_version"] == "0.1.0"
    assert (result["rule_pack"]["id"], result["rule_pack"]["digest"]) == ("v1.0", CHANGED_IN_PLACE["1.0"][0][1])


# ---- from the release commits ---------------------------------------------------------------------


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=60)


def _history() -> bool:
    if shutil.which("git") is None:
        return False
    r = _git("rev-parse", "--is-shallow-repository")
    return r.returncode == 0 and r.stdout.strip() == b"false"


def release_commit(version: str) -> str | None:
    """The commit of release ``version``: its tag, else the commit that set ``__version__`` to
    it (docs/release.md: "release: X.Y.Z"); None when neither is in the history."""
    r = _git("rev-parse", "--verify", "-q", f"v{version}^{{commit}}")
    if r.returncode == 0:
        return r.stdout.decode().strip()
    r = _git("log", "--format=%H", "--reverse", "-G", f'^__version__ = "{re.escape(version)}"$', "HEAD", "--",
             "validator/__init__.py")
    lines = r.stdout.decode().split()
    return lines[0] if r.returncode == 0 and lines else None


@pytest.mark.skipif(not _history(), reason="a shallow clone or no git: the release commits are not here")
@pytest.mark.parametrize("version", sorted(RELEASED_PACKS))
def test_each_released_digest_is_what_its_release_commit_compiles_to(version: str, tmp_path: Path) -> None:
    """The release commit's own rules/ compiled by today's loader (whose digest of an unchanged
    pack must not move either: `_ADDED_IN_1_1` in loader.py), and the commit's bundled.json
    where it has one (0.3.0 on)."""
    release_, digest = RELEASED_PACKS[version]
    commit = release_commit(release_)
    if commit is None and release_ == __version__:
        pytest.skip(f"{release_} is being released: its commit is not made yet")
    assert commit is not None, f"release {release_} is not in this history (no tag v{release_}, no version commit)"
    archive = _git("archive", commit, "rules")
    assert archive.returncode == 0, archive.stderr
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(tmp_path, filter="data")
        else:
            tar.extractall(tmp_path)
    import yaml

    index = yaml.safe_load((tmp_path / "rules" / "index.yaml").read_text())
    pack_dir = (index.get("packs") or {}).get(version, f"v{version}")  # 0.2.0's index had no packs: table
    pack = load_pack(load_spec("1.0"), load_fact_catalogue(), pack_path=tmp_path / "rules" / pack_dir)
    assert pack.digest == digest, f"rule pack v{version} at {release_} ({commit[:12]}) compiles to {pack.digest}"
    shown = _git("show", f"{commit}:validator/rules/bundled.json")
    if shown.returncode == 0:
        packs = json.loads(shown.stdout)["packs"]
        assert [p["digest"] for k, p in packs.items() if k.endswith(f" {pack_dir}")] == [digest]


# ---- the release script ---------------------------------------------------------------------------


def test_release_packs_lists_them_and_a_release_records_the_new_ones(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "scripts/release.py", "packs"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for version, (release_, digest) in RELEASED_PACKS.items():
        assert f"v{version} {digest} released in {release_}\n" in r.stdout
    # the edit `version X.Y.Z` makes, on a copy of the table
    table = tmp_path / "validator" / "rules" / "released.py"
    table.parent.mkdir(parents=True)
    shutil.copy2(ROOT / "validator" / "rules" / "released.py", table)
    new = ['    "1.2": ("0.4.0", "sha256:' + "2" * 64 + '"),']
    assert release.add_released_packs(tmp_path, new) == ["validator/rules/released.py"]
    namespace: dict[str, object] = {}
    exec(compile(table.read_text(), str(table), "exec"), namespace)
    assert namespace["RELEASED_PACKS"] == {**RELEASED_PACKS, "1.2": ("0.4.0", "sha256:" + "2" * 64)}
    assert namespace["CHANGED_IN_PLACE"] == CHANGED_IN_PLACE
    assert release.add_released_packs(tmp_path, []) == []


def _tree(dest: Path) -> Path:
    """The package, spec/ and rules/ of this working tree, copied: what a release edits."""
    for name in ("validator", "spec", "rules"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_a_release_records_its_new_pack_versions_and_refuses_a_changed_one(tmp_path: Path) -> None:
    """`release.py version X.Y.Z`'s step on a copy of the tree: the unreleased versions (v1.2
    while this is written) are added with this version; an edited released pack stops it."""
    tree = _tree(tmp_path / "tree")
    unreleased = sorted(set(released.current()) - set(RELEASED_PACKS))
    changed = release.record_packs(tree)
    assert changed == (["validator/rules/released.py"] if unreleased else [])
    namespace: dict[str, object] = {}
    exec(compile((tree / "validator/rules/released.py").read_text(), "released.py", "exec"), namespace)
    now = released.current()
    assert namespace["RELEASED_PACKS"] == {**RELEASED_PACKS, **{v: (__version__, now[v]) for v in unreleased}}
    assert release.record_packs(tree) == []  # recorded once
    node = tree / "rules" / "v1.1" / "node.yaml"
    node.write_text(re.sub(r"(\n\s+summary: )(\S)", r"\1edited, \2", node.read_text(), count=1))
    with pytest.raises(release.ReleaseError, match=re.escape(EDIT_HINT)):
        release.record_packs(tree)
    init = (tree / "validator" / "__init__.py").read_text()
    with pytest.raises(release.ReleaseError, match=re.escape(EDIT_HINT)):  # the cut stops before any edit
        release.set_version("9.0.0", "2026-12-02", tree)
    assert (tree / "validator" / "__init__.py").read_text() == init
