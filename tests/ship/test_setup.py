"""The README's two set-up commands, run verbatim on a copy of this checkout.

The copy holds what a fresh clone would (tracked files and untracked ones git does not
ignore; no .venv). The first command builds the package as a wheel (`pip install .`
builds one with the project's build backend and installs it) into a new venv and checks
this machine; the second installs the system packages and the test extras into the same
venv and runs pytest. The inner pytest is narrowed through PYTEST_ADDOPTS (the command
itself stays verbatim) to the README's own tests, since the whole suite is what CI's
`.ci/run` already runs with this command. Needs network to the package index (as CI has)
and root or sudo for the system packages; about a minute.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.ship.util import ROOT
from validator import __version__

pytestmark = pytest.mark.slow
INNER = "SPEC_CHECK_SETUP_TEST_INNER"


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```sh\n(.*?)\n```$", setup, re.M | re.S)[:2]


def copy_checkout(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True, timeout=60).stdout.split(b"\0")
    for raw in filter(None, files):
        src = ROOT / raw.decode()
        if src.is_file():
            (dest / raw.decode()).parent.mkdir(parents=True, exist_ok=True)
            (dest / raw.decode()).write_bytes(src.read_bytes())
            (dest / raw.decode()).chmod(src.stat().st_mode)


def run(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS")}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env={**clean, **env}, capture_output=True, text=True,
                          timeout=900)


def test_readme_has_exactly_the_two_commands_ci_runs() -> None:
    first, second = readme_commands()
    assert first == "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/spec-check check"
    assert second in (ROOT / ".ci" / "run").read_text()


@pytest.mark.skipif(os.environ.get(INNER) == "1", reason="inside the README's own test run")
def test_readme_setup_commands_verbatim(tmp_path: Path) -> None:
    first, second = readme_commands()
    work = tmp_path / "spec-check"
    copy_checkout(work)
    r = run(first, work)
    assert r.returncode in (0, 1), r.stdout[-3000:] + r.stderr[-3000:]  # 1: this machine is not conformant
    assert "spec v1.0" in r.stdout and ("CONFORMANT" in r.stdout)
    venv_python = work / ".venv" / "bin" / "python"
    where = subprocess.run(
        [str(venv_python), "-c", "import json, importlib.metadata as m, validator; d = m.distribution("
         "'training-spec-check'); print(json.dumps([validator.__file__, d.version, d.read_text('direct_url.json'),"
         " d.read_text('WHEEL')]))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0, where.stderr
    module, version, direct_url, wheel = json.loads(where.stdout)
    assert "site-packages" in module and version == __version__
    assert wheel and "Root-Is-Purelib: true" in wheel  # installed from a built wheel
    assert not json.loads(direct_url or "{}").get("dir_info", {}).get("editable", False)
    version_line = subprocess.run([str(work / ".venv" / "bin" / "spec-check"), "--version"],
                                  capture_output=True, text=True, timeout=60).stdout.strip()
    assert version_line == f"spec-check {__version__} (training-spec-check)"
    alias = subprocess.run([str(work / ".venv" / "bin" / "training-spec-check"), "--version"],
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert alias == version_line  # the same command under a name no other package installs

    if os.geteuid() != 0 and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("the second command installs system packages: needs root or passwordless sudo")
    r = run(second, work, **{INNER: "1", "PYTEST_ADDOPTS": "-q -p no:cacheprovider tests/test_readme.py "
                                                          "tests/ship/test_setup.py"})
    out = r.stdout + r.stderr
    if "Could not get lock" in out:
        pytest.skip("another apt/dpkg run holds the package lock on this machine")
    assert r.returncode == 0, out[-4000:]
    assert "system packages installed" in out
    assert re.search(r"^\d+ passed, 1 skipped", r.stdout, re.M), r.stdout[-2000:]


def test_no_install_line_names_the_other_package() -> None:
    """`spec-check` on the package index is another project: every install line in the
    README, docs, examples and the action names training-spec-check (the one mention of
    `pip install spec-check` is the warning against it in docs/ci.md)."""
    wrong = re.compile(r"pip3? install (?:-\S+ )*['\"]?spec-check(?![-\w])")
    texts = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "action.yml",
             ROOT / "Dockerfile", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "deploy").rglob("*.yaml")),
             *sorted((ROOT / "reports" / "examples").glob("*.md"))]
    found = [(p.name, m.group(0)) for p in texts for line in p.read_text(encoding="utf-8").splitlines()
             for m in wrong.finditer(line) if not line.startswith("`pip install spec-check`: that name")]
    assert found == []
    assert "training-spec-check==$INPUT_VERSION" in (ROOT / "action.yml").read_text()
