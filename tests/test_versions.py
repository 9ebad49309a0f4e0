"""Versions: the tool's, and the facts and result schema versions (validator/versions.py).

The schema versions must change when their shape changes, and documents written by an
older spec-check must still be read, with one line saying so; a newer one is refused
with a line that says to upgrade. The 0.1.0 documents under tests/fixtures were written
by the 0.1.0 code itself (commit c10a22f, `probe -o` and `check --format json` on this VM).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from validator import __version__, versions
from validator.build_info import build_version

ROOT = Path(__file__).resolve().parent.parent
OLD_FACTS = ROOT / "tests" / "fixtures" / "facts" / "recorded_vm_0.1.0.json"
OLD_RESULT = ROOT / "tests" / "fixtures" / "results" / "check_vm_0.1.0.json"
AFTER_RECORDINGS = "1796169600"  # 2026-12-02T00:00:00Z: after every recording the tests replay


def spec_check(*args: str, cwd: Path | None = None, epoch: str = "1795000000") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": epoch, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env=env, cwd=cwd or ROOT, timeout=60)


def test_version_is_the_next_dev_release_after_the_newest_in_the_changelog() -> None:
    """Between releases HEAD is a `.dev` version of the next one (0.2.0 released: 0.3.0.dev0),
    so a build from a clone never claims to be a release it is not (docs/release.md)."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:\.dev(\d+))?", __version__)
    assert m, __version__
    r = spec_check("--version")
    assert r.returncode == 0 and r.stdout.strip() in (f"spec-check {__version__} (training-spec-check)",
                                                      f"spec-check {build_version()} (training-spec-check)")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d\d-\d\d)$", changelog, re.M)
    assert released and "## [Unreleased]" in changelog and "0.1.0" in [v for v, _ in released]
    newest = tuple(int(x) for x in released[0][0].split("."))
    here = tuple(int(x) for x in m.groups()[:3])
    if m.group(4) is None:  # a release commit: the changelog's newest entry is this version
        assert here == newest, "CHANGELOG.md's newest release is not __version__"
    else:  # after a release: a dev version of a later one
        assert here > newest, f"{__version__} is not after the newest release {released[0][0]}"


@pytest.mark.parametrize(("kind", "current"), [("facts", versions.FACTS_SCHEMA), ("result", versions.RESULT_SCHEMA)])
def test_json_schemas_name_the_version_defined_in_one_place(kind: str, current: str) -> None:
    schema = json.loads((ROOT / "spec" / f"{kind}.schema.json").read_text())
    assert schema["properties"]["schema"] == {"const": current}
    assert schema["$id"].endswith(f"/{kind}-{versions.number(current)}.json")


@pytest.mark.parametrize(("kind", "current"), [("facts", versions.FACTS_SCHEMA), ("result", versions.RESULT_SCHEMA)])
def test_a_shape_change_bumps_the_schema_version(kind: str, current: str) -> None:
    digest = versions.shape_digest(kind, ROOT / "spec")
    released = {v: d for v, (_, d) in versions.RELEASED_SHAPES.items() if v.startswith(f"spec-check/{kind}/")}
    if current in released:
        assert digest == released[current], (
            f"the {kind} shape (spec/{kind}.schema.json"
            + (", spec/facts/*.yaml" if kind == "facts" else "")
            + f") changed since {current} was released: bump the version in validator/versions.py")
    else:  # not released yet: it must really be a new shape, and newer than every released one
        assert digest not in released.values(), f"{current} has the shape of an older version: no bump needed"
        assert all(versions.number(current) > versions.number(v) for v in released)  # type: ignore[operator]


def _spec_at(commit: str, dest: Path) -> Path | None:
    if shutil.which("git") is None:
        return None
    r = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "spec"], capture_output=True, timeout=60)
    if r.returncode != 0:  # a shallow clone without that commit
        return None
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(dest, filter="data")
        else:
            tar.extractall(dest)
    return dest / "spec"


def test_released_digests_are_the_released_files(tmp_path: Path) -> None:
    """The 0.1.0 digests are computed from 0.1.0's spec/ (commit c10a22f), not typed in."""
    spec = _spec_at("c10a22f", tmp_path)
    if spec is None:
        pytest.skip("the 0.1.0 commit is not in this clone")
    for kind in ("facts", "result"):
        assert versions.shape_digest(kind, spec) == versions.RELEASED_SHAPES[f"spec-check/{kind}/1"][1]


def test_the_0_2_0_digests_are_computed_from_its_spec(tmp_path: Path) -> None:
    """The 0.2.0 digests are computed from the spec/ recorded at its release (commit 35f689e)."""
    spec = _spec_at("35f689e", tmp_path)
    if spec is None:
        pytest.skip("the 0.2.0 commit is not in this clone")
    for kind in ("facts", "result"):
        assert versions.shape_digest(kind, spec) == versions.RELEASED_SHAPES[f"spec-check/{kind}/2"][1]
    assert versions.shape_digest("facts", spec) != versions.shape_digest("facts", ROOT / "spec")  # facts added since


def test_prose_does_not_change_the_shape(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "spec", spec)
    before = {k: versions.shape_digest(k, spec) for k in ("facts", "result")}
    node = spec / "facts" / "node.yaml"
    node.write_text(node.read_text().replace("label: hostname", "label: host name"))
    schema = json.loads((spec / "result.schema.json").read_text())
    schema["description"] = "reworded"
    (spec / "result.schema.json").write_text(json.dumps(schema))
    assert {k: versions.shape_digest(k, spec) for k in ("facts", "result")} == before
    node.write_text(node.read_text() + "  host.uptime: {type: quantity, unit: s, label: uptime}\n")
    assert versions.shape_digest("facts", spec) != before["facts"]  # a new fact is a new shape


def test_the_current_writers_write_the_current_versions(tmp_path: Path) -> None:
    facts = tmp_path / "facts.json"
    r = spec_check("probe", "-o", str(facts))
    assert r.returncode == 0, r.stderr
    doc = json.loads(facts.read_text())
    assert doc["schema"] == versions.FACTS_SCHEMA and doc["tool_version"] == __version__
    r = spec_check("check", "--facts", str(facts), "--format", "json")
    assert json.loads(r.stdout)["schema"] == versions.RESULT_SCHEMA
    assert "note:" not in r.stderr  # a current recording is read without a note


def test_an_older_recording_is_read_with_one_line_saying_so() -> None:
    assert json.loads(OLD_FACTS.read_text())["schema"] == "spec-check/facts/1"
    # judged after it was recorded (2026-11-23): its age is no note (facts_max_age)
    r = spec_check("check", "--facts", str(OLD_FACTS.relative_to(ROOT)), epoch=AFTER_RECORDINGS)
    assert r.returncode == 1, r.stderr  # evaluated: this VM has no GPU and no RDMA fabric
    assert "NOT CONFORMANT" in r.stdout
    assert r.stderr == (
        "spec-check: note: tests/fixtures/facts/recorded_vm_0.1.0.json: written by spec-check 0.1.0 "
        f"(spec-check/facts/1; spec-check {__version__} writes {versions.FACTS_SCHEMA}): facts added since are "
        "missing from it (a rule that needs one is an error, never a pass) until it is re-recorded with this "
        "version (`spec-check probe -o FILE`)\n")


def test_a_fact_an_older_recording_lacks_is_an_error_naming_the_cause(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json").read_text())
    doc["schema"], doc["tool_version"] = "spec-check/facts/1", "0.1.0"
    del doc["facts"]["gpu.driver_status"]  # added in 0.2.0
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    r = spec_check("check", "--facts", str(old), "--format", "json")
    errors = [f for f in json.loads(r.stdout)["findings"] if f["status"] == "error"]
    assert errors and all("re-record it with this version" in f["message"] for f in errors)
    assert {f["requirement"] for f in errors} == {"PLAT-01"}
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "written by spec-check 0.1.0" in r.stderr


def test_many_older_recordings_make_one_line(tmp_path: Path) -> None:
    for i in range(3):
        doc = json.loads(OLD_FACTS.read_text())
        doc["subject"]["name"] = f"vm{i}"
        (tmp_path / f"vm{i}.json").write_text(json.dumps(doc))
    r = spec_check("cluster", "--facts", str(tmp_path), "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    assert r.stderr.count("\n") == 1 and "(and 2 more like it)" in r.stderr


def test_an_older_result_is_read_with_one_line_saying_so(tmp_path: Path) -> None:
    r = spec_check("report", str(OLD_RESULT), "--format", "markdown")
    assert r.returncode == 0 and "spec-check 0.1.0" in r.stdout
    assert r.stderr.startswith("spec-check: note: ") and r.stderr.count("\n") == 1
    assert "written by spec-check 0.1.0 (spec-check/result/1;" in r.stderr
    new = tmp_path / "new.json"
    # judged by rule pack v1.0 as the 0.1.0 result was, though by a later digest of it (its
    # rules changed before the release): diff refuses results of different packs unless told
    r = spec_check("check", "--facts", str(OLD_FACTS), "--rules-version", "1.0", "--format", "json", "-o", str(new))
    assert spec_check("diff", str(OLD_RESULT), str(new)).returncode == 2
    r = spec_check("diff", str(OLD_RESULT), str(new), "--allow-pack-change")
    assert r.returncode in (0, 1) and "(and 1 more" not in r.stderr and r.stderr.count("note:") == 1


@pytest.mark.parametrize(("kind", "verb"), [("facts", ("check", "--facts")), ("result", ("report",))])
def test_a_newer_document_is_refused_in_one_line(tmp_path: Path, kind: str, verb: tuple[str, ...]) -> None:
    src = OLD_FACTS if kind == "facts" else OLD_RESULT
    doc = json.loads(src.read_text())
    doc["schema"] = f"spec-check/{kind}/{versions.number(getattr(versions, kind.upper() + '_SCHEMA')) + 1}"  # type: ignore[operator]
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    r = spec_check(*verb, str(newer))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "was written by a newer spec-check" in r.stderr
    assert "upgrade spec-check" in r.stderr and str(newer) in r.stderr


def test_a_signed_older_result_still_verifies(tmp_path: Path) -> None:
    key = tmp_path / "k"
    assert spec_check("keygen", str(key)).returncode == 0
    signed = tmp_path / "signed.json"
    r = spec_check("sign", str(OLD_RESULT), "--key", f"{key}.key", "-o", str(signed))
    assert r.returncode == 0, r.stderr
    r = spec_check("verify", str(signed), "--key", f"{key}.pub")
    assert r.returncode == 0 and "verified" in r.stderr


def test_a_host_running_an_older_spec_check_is_named(tmp_path: Path) -> None:
    """A live fleet where a host's spec-check is older: its probe output is read, and one
    line names the host and says to upgrade it there."""
    stub = tmp_path / "old-spec-check"
    stub.write_text(f"#!/bin/sh\ncat {OLD_FACTS}\n")
    stub.chmod(0o755)
    r = spec_check("cluster", "--transport", "local", "--hosts", "gpu-01", "--remote-command", str(stub),
                   "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("spec-check: note: host gpu-01: written by spec-check 0.1.0")
    assert r.stderr.rstrip().endswith("until spec-check on that host is upgraded")
