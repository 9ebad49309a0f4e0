"""The release process of docs/release.md: the workflow, the version between releases,
and the license in the repository, the wheel and the sdist."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from validator import __version__

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("check_jsonschema", reason="check-jsonschema is a test extra: pip install -e '.[test]'")
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_release_workflow_is_valid_for_github(tmp_path: Path) -> None:
    r = check_jsonschema(WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = yaml.safe_load(WORKFLOW.read_text())
    del bad["jobs"]["build"]["runs-on"]  # the schema is really applied: a job without runs-on is refused
    (tmp_path / "bad.yml").write_text(yaml.safe_dump(bad))
    assert check_jsonschema(tmp_path / "bad.yml").returncode == 1


def test_release_workflow_builds_checks_and_publishes_on_a_version_tag() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text())
    assert wf[True]["push"] == {"tags": ["v*"]}  # YAML 1.1 reads the key `on` as True
    runs = [s.get("run", "") for s in wf["jobs"]["build"]["steps"]]
    assert "python -m build" in runs and any(r.startswith("python -m twine check") for r in runs)
    publish = wf["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing: no stored token
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert not any("password" in s.get("with", {}) for s in publish["steps"])


def test_the_tag_check_in_the_workflow_reads_the_version() -> None:
    """The workflow's first step compares the tag with __version__; run its Python here."""
    [step] = [s for s in yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]
              if s.get("name", "").startswith("The tag names")]
    [code] = re.findall(r'python -c "(.*?)"\)', step["run"])
    r = subprocess.run([sys.executable, "-c", code.replace('\\"', '"')], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == __version__, r.stderr


def test_license_is_apache_2_0_as_declared() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()


@pytest.mark.slow
def test_wheel_and_sdist_carry_the_license(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building offline needs hatchling in this venv")
    r = subprocess.run([sys.executable, "-m", "hatchling", "build", "-d", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    license_text = (ROOT / "LICENSE").read_bytes()
    [wheel] = tmp_path.glob(f"training_spec_check-{__version__}-*.whl")
    with zipfile.ZipFile(wheel) as z:
        [lic] = [n for n in z.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert z.read(lic) == license_text
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta and "License-File: LICENSE" in meta
    assert "](docs/" not in meta  # the index shows the README: its links are absolute
    [sdist] = tmp_path.glob(f"training_spec_check-{__version__}.tar.gz")
    with tarfile.open(sdist) as t:
        member = t.extractfile(f"training_spec_check-{__version__}/LICENSE")
        assert member is not None and member.read() == license_text


def test_readme_links_are_absolute_for_the_package_index() -> None:
    """The index renders README.md as the project page, where a relative link leads nowhere."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    relative = re.findall(r"\]\((?!https?://|#)([^)]+)\)", text)
    assert relative == []
    for target in re.findall(r"\]\(https://github\.com/spec-check/spec-check/blob/main/([^)#]+)", text):
        assert (ROOT / target).exists(), target
