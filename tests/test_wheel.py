"""A non-editable install finds its bundled spec/ and rules/ from any directory.

The wheel carries them as validator/_data/{spec,rules} (pyproject force-include); an
editable install reads the checkout's. This builds the real wheel and runs its console
script from an unrelated directory, the way `pip install .` leaves a user.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_install_finds_bundled_spec_and_rules(tmp_path: Path) -> None:
    pytest.importorskip("hatchling", reason="building the wheel offline needs hatchling in this venv")
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    [wheel] = dist.glob("training_spec_check-*.whl")
    # every module of every stage package is in it (a new package is picked up, not left out)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    held = {n for n in names if n.startswith("validator/") and n.endswith(".py")}
    tree = {p.relative_to(ROOT).as_posix() for p in (ROOT / "validator").rglob("*.py") if "__pycache__" not in p.parts}
    assert tree - held == set()
    # and the data the readers load (key catalogues, run tags, container versions)
    data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "validator").rglob("*")
            if p.is_file() and p.suffix in (".json", ".yaml") and "__pycache__" not in p.parts}
    assert {"validator/runs/tags.yaml", "validator/jobs/containers.json", "validator/rules/bundled.json"} <= data
    assert data - names == set()
    assert {"validator/io/__init__.py", "validator/rules/loader.py", "validator/evaluate/engine.py"} <= held
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True, timeout=120)
    vpy = venv / "bin" / "python"
    site = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(vpy), "install", "--no-deps",
                              "--no-index", "--force-reinstall", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    if install.returncode != 0 and "no such option: --python" in install.stderr:
        pytest.skip("pip too old for --python")
    assert install.returncode == 0, install.stderr[-2000:]
    # the dependencies come from this venv's site-packages; a .pth line adds the directory only
    # (its own .pth files, among them the editable install's, are not processed), after the
    # wheel. Written after the install: where this venv holds a non-editable spec-check (CI),
    # pip would otherwise see it through the line and not install the wheel at all
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(vpy), "-c", "import validator.io.resources as r; print(r.rules_dir())"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == Path(site) / "validator" / "_data" / "rules"  # the wheel's copy
    r = subprocess.run([str(venv / "bin" / "spec-check"), "rules", "list"], capture_output=True, text=True,
                       cwd=elsewhere, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "NET-01.fabric-port-slow" in r.stdout and "MEM-02.memlock-limited" in r.stdout
    shown = subprocess.run([str(venv / "bin" / "spec-check"), "spec", "show", "NET-01"], capture_output=True,
                           text=True, cwd=elsewhere, env=env, timeout=60)
    assert shown.returncode == 0 and "NET-01" in shown.stdout
    # the compiled pack comes in the wheel, and names the wheel's own rule files
    files = subprocess.run([str(vpy), "-c", "import sys; from validator.rules.bundled import load_bundled; "
                            "print(load_bundled('1.0')[2].files[0]); print('yaml' in sys.modules)"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert files.returncode == 0, files.stderr
    first, yaml_loaded = files.stdout.split()
    assert Path(first).is_file() and Path(first).is_relative_to(Path(site) / "validator" / "_data" / "rules")
    assert yaml_loaded == "False"  # read from bundled.json, not compiled from the YAML
