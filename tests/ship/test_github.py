"""The GitHub Action (action.yml) and the workflows of docs/ci.md.

Both are validated against GitHub's own schemas for actions and workflows, as
check-jsonschema vendors them (offline: actionlint's installer downloads a binary and
cannot run here). Then the action's lint and gate scripts run here the way a runner runs
a composite step (``bash --noprofile --norc -eo pipefail``, inputs in the environment,
``GITHUB_OUTPUT``), on a good job, a bad job and unusable input.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ship.util import ROOT, doc_block
from validator import __version__

pytest.importorskip("check_jsonschema", reason="check-jsonschema is a test extra: pip install -e '.[test]'")

ACTION = ROOT / "action.yml"
CI_DOC = ROOT / "docs" / "ci.md"
JOB = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm"


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120)


def test_action_is_valid_for_github() -> None:
    r = check_jsonschema("vendor.github-actions", ACTION)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    """The vendored schema is really applied: a composite step without `shell` is refused."""
    action = yaml.safe_load(ACTION.read_text())
    del action["runs"]["steps"][1]["shell"]
    bad = tmp_path / "action.yml"
    bad.write_text(yaml.safe_dump(action))
    assert check_jsonschema("vendor.github-actions", bad).returncode == 1


@pytest.mark.parametrize("first_line", ["# .github/workflows/spec-check.yml",
                                        "# .github/workflows/spec-check-by-hand.yml"])
def test_docs_workflows_are_valid_for_github(tmp_path: Path, first_line: str) -> None:
    wf = tmp_path / "workflow.yml"
    wf.write_text(doc_block(CI_DOC, first_line))
    r = check_jsonschema("vendor.github-workflows", wf)
    assert r.returncode == 0, r.stdout + r.stderr


def test_docs_workflow_uses_this_release_of_the_action_with_its_inputs() -> None:
    wf = yaml.safe_load(doc_block(CI_DOC, "# .github/workflows/spec-check.yml"))
    inputs = yaml.safe_load(ACTION.read_text())["inputs"]
    [job] = wf["jobs"].values()
    assert job["permissions"]["security-events"] == "write"  # upload-sarif needs it
    [step] = [s for s in job["steps"] if s.get("uses", "").startswith("spec-check/spec-check@")]
    from tests.ship.util import PINNED_COMMIT, is_commit_of_this_repository

    m = PINNED_COMMIT.fullmatch(step["uses"])
    assert m and is_commit_of_this_repository(m.group(1))  # no release tag exists yet: a commit of main
    assert set(step["with"]) <= set(inputs)
    assert {k for k, v in inputs.items() if v.get("required")} <= set(step["with"])
    by_hand = yaml.safe_load(doc_block(CI_DOC, "# .github/workflows/spec-check-by-hand.yml"))
    runs = [s.get("run", "") for j in by_hand["jobs"].values() for s in j["steps"]]
    assert f'pip install "training-spec-check @ git+https://github.com/spec-check/spec-check@{m.group(1)}"' in runs


def test_docs_table_lists_every_input() -> None:
    rows = {cells[0]: cells[1] for line in CI_DOC.read_text(encoding="utf-8").splitlines()
            if line.startswith("| `") and len(cells := [c.strip() for c in line.strip("|").split("|")]) == 3}
    inputs = yaml.safe_load(ACTION.read_text())["inputs"]
    for name, spec in inputs.items():
        default = "(required)" if spec.get("required") else (f"`{spec['default']}`" if spec.get("default") else "")
        assert rows.get(f"`{name}`") == default, name


def _steps() -> dict[str, dict[str, Any]]:
    return {s.get("name", s.get("uses")): s for s in yaml.safe_load(ACTION.read_text())["runs"]["steps"]}


def run_step(name: str, tmp_path: Path, inputs: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run one composite step's script as a runner would; returns it and its GITHUB_OUTPUT."""
    step = _steps()[name]
    assert step["shell"] == "bash"
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    out = tmp_path / "github_output"
    out.write_text("")
    defaults = {k: str(v.get("default", "")) for k, v in yaml.safe_load(ACTION.read_text())["inputs"].items()}
    values = {**defaults, **inputs}
    env = {**os.environ, "GITHUB_OUTPUT": str(out), "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # spec-check installed
    for key, expr in step.get("env", {}).items():  # `${{ inputs.NAME }}` only
        env[key] = values[expr.removeprefix("${{ inputs.").removesuffix(" }}")]
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    return r, out.read_text()


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    shutil.copytree(JOB, tmp_path / "configs" / "good")
    shutil.copytree(JOB, tmp_path / "configs" / "bad")
    cfg = tmp_path / "configs" / "bad" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("precision: bf16-mixed", "precision: 32-true"))
    return tmp_path


def test_action_lint_and_gate_on_a_good_job(jobs: Path) -> None:
    r, out = run_step("spec-check lint (SARIF)", jobs, {"paths": "configs/good/", "args": "--set step_time=1.5s"})
    assert r.returncode == 0, r.stderr
    assert out == "exit-code=0\n"
    sarif = json.loads((jobs / "spec-check.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["tool"]["driver"]["name"] == "spec-check"
    r, _ = run_step("spec-check gate (annotations on the diff)", jobs, {"paths": "configs/good/"})
    assert r.returncode == 0, r.stdout + r.stderr


def test_action_uploads_a_bad_job_then_fails_the_gate(jobs: Path) -> None:
    r, out = run_step("spec-check lint (SARIF)", jobs,
                      {"paths": "configs/good/\nconfigs/bad/", "sarif-file": "out.sarif"})
    assert r.returncode == 0, r.stderr  # exit 1 goes on to the upload
    assert out == "exit-code=1\n"
    results = json.loads((jobs / "out.sarif").read_text())["runs"][0]["results"]
    [prec] = [x for x in results if x["ruleId"] == "PREC-01.full-precision-training"]
    region = prec["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"].endswith("configs/bad/config.yaml") and region["region"]["startLine"] == 6
    r, _ = run_step("spec-check gate (annotations on the diff)", jobs, {"paths": "configs/good/ configs/bad/"})
    assert r.returncode == 1
    assert "::error file=configs/bad/config.yaml,line=6" in r.stdout


def test_action_stops_on_unusable_input_and_never_runs_input_as_code(jobs: Path) -> None:
    r, out = run_step("spec-check lint (SARIF)", jobs, {"paths": "configs/good/", "args": "--set no_such_param=1"})
    assert r.returncode == 2 and out == "exit-code=2\n"
    assert r.stderr.count("spec-check: error:") == 1
    r, out = run_step("spec-check lint (SARIF)", jobs, {"paths": "  \n"})
    assert r.returncode == 2 and "names no path" in r.stdout and out == ""
    r, _ = run_step("spec-check lint (SARIF)", jobs, {"paths": "configs/good/ $(touch${IFS}pwned) `touch pwned2`"})
    assert not (jobs / "pwned").exists() and not (jobs / "pwned2").exists()


@pytest.mark.slow
def test_action_end_to_end_installs_from_its_own_checkout(jobs: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The install step as a runner runs it (GITHUB_ACTION_PATH: the action's checkout,
    here a copy of this one; RUNNER_TEMP; GITHUB_PATH), then the lint and gate steps with
    only what it put on PATH: the action works with the spec-check it installed."""
    from tests.ship.util import snapshot

    action_path = snapshot(tmp_path_factory.mktemp("action") / "spec-check", f"v{__version__}")
    runner_temp = tmp_path_factory.mktemp("runner-temp")
    github_path = runner_temp / "github_path"
    github_path.write_text("")
    step = _steps()["Install spec-check"]
    script = runner_temp / "install.sh"
    script.write_text(step["run"])
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    shim = runner_temp / "setup-python"  # what actions/setup-python puts first on PATH: `python`
    shim.mkdir()
    (shim / "python").symlink_to(sys.executable)
    env.update({"GITHUB_ACTION_PATH": str(action_path), "RUNNER_TEMP": str(runner_temp),
                "GITHUB_PATH": str(github_path), "INPUT_VERSION": "", "PATH": f"{shim}{os.pathsep}{env['PATH']}"})
    r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.strip().endswith(f"spec-check {__version__} (training-spec-check)")
    [bindir] = github_path.read_text().split()
    assert Path(bindir, "spec-check").exists()
    out = jobs / "github_output"
    for name, inputs, code in [("spec-check lint (SARIF)", {"paths": "configs/bad/"}, 0),
                               ("spec-check gate (annotations on the diff)", {"paths": "configs/bad/"}, 1)]:
        s = _steps()[name]
        (jobs / "step.sh").write_text(s["run"])
        out.write_text("")
        values = {**{k: str(v.get("default", "")) for k, v in yaml.safe_load(ACTION.read_text())["inputs"].items()},
                  **inputs}
        step_env = {**env, "GITHUB_OUTPUT": str(out), "PATH": f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin"}
        for key, expr in s.get("env", {}).items():
            step_env[key] = values[expr.removeprefix("${{ inputs.").removesuffix(" }}")]
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(jobs / "step.sh")], cwd=jobs,
                           env=step_env, capture_output=True, text=True, timeout=300)
        assert r.returncode == code, r.stdout[-2000:] + r.stderr[-2000:]
    assert "::error file=configs/bad/config.yaml,line=6" in r.stdout
    assert json.loads((jobs / "spec-check.sarif").read_text())["runs"][0]["results"]


def test_docs_give_an_install_at_a_commit_that_exists() -> None:
    """No release is tagged or on the index yet: the docs install from a clone or from a commit of main."""
    from tests.ship.util import PINNED_COMMIT, ROOT, is_commit_of_this_repository

    ci = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    pins = set(PINNED_COMMIT.findall(ci)) | set(PINNED_COMMIT.findall(readme))
    assert len(pins) == 1 and all(is_commit_of_this_repository(sha) for sha in pins)
    [sha] = pins
    line = f'pip install "training-spec-check @ git+https://github.com/spec-check/spec-check@{sha}"'
    assert line in ci
    assert line.removeprefix("pip install ") in readme
    assert "@v0." not in ci and "@v0." not in readme  # no tag exists to pin
