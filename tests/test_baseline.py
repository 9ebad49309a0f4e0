"""``--baseline RESULT``: fail only on problems a saved result did not have, matched by
rule, subject and item (not line), on lint, check and cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOB = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm"
FACTS = ROOT / "tests" / "fixtures" / "facts"


def spec_check(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=180)


def bad_job(tmp_path: Path) -> Path:
    """The conformant Lightning job with its precision set to full fp32 (PREC-01 fails)."""
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    cfg = job / "config.yaml"
    cfg.write_text(cfg.read_text().replace("precision: bf16-mixed", "precision: 32-true"))
    return job


def test_lint_fails_only_on_problems_the_baseline_does_not_have(tmp_path: Path) -> None:
    job = bad_job(tmp_path)
    saved = tmp_path / "baseline.json"
    first = spec_check("lint", "job", "--format", "json", "-o", str(saved), cwd=tmp_path)
    assert first.returncode == 1, first.stderr  # not conformant: the baseline records the problem
    assert any(f["rule"] == "PREC-01.full-precision-training" and f["status"] == "fail"
               for f in json.loads(saved.read_text())["findings"])
    # lines added above the problem: the same problem (rule, subject, item), another line
    cfg = job / "config.yaml"
    cfg.write_text("# tuned for the new cluster\n# owner: training-infra\n" + cfg.read_text())
    # --set step_time: CKPT-02 is judged (without it the MUST is not judged: INCOMPLETE, exit 1)
    again = spec_check("lint", "job", "--baseline", str(saved), "--set", "step_time=1.5s", cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr
    assert "KNOWN PREC-01.full-precision-training job/config.yaml:8" in again.stdout
    problems = sorted(f["rule"] for f in json.loads(saved.read_text())["findings"] if f["status"] in ("fail", "warn"))
    assert f"--baseline {saved}: {len(problems)} known problems not counted; 0 still count" in again.stderr
    # a new problem counts, and only it
    text = cfg.read_text()
    assert "timeout: {seconds: 45}" in text
    cfg.write_text(text.replace("timeout: {seconds: 45}", "timeout: {seconds: 3600}"))  # REC-02 fails
    new = spec_check("lint", "job", "--baseline", str(saved), "--set", "step_time=1.5s", "--format", "json",
                     cwd=tmp_path)
    assert new.returncode == 1, new.stderr
    result = json.loads(new.stdout)
    counted = [f["rule"] for f in result["findings"] if f["status"] == "fail" and not (f.get("waiver") or {}).get("active")]
    known = [f for f in result["findings"] if (f.get("waiver") or {}).get("baseline") == str(saved)]
    assert sorted(f["rule"] for f in known) == problems
    assert counted == ["REC-02.hang-detection-too-slow"]
    assert result["extra"]["baseline"] == {"file": str(saved), "known": len(problems)}


def test_check_with_a_baseline_of_itself_passes_and_another_problem_fails(tmp_path: Path) -> None:
    saved = tmp_path / "port200.json"
    assert spec_check("check", "--facts", str(FACTS / "dgx_h100_port_200g.json"), "--format", "json",
                      "-o", str(saved)).returncode == 1
    assert spec_check("check", "--facts", str(FACTS / "dgx_h100_port_200g.json"), "--baseline",
                      str(saved)).returncode == 0
    other = spec_check("check", "--facts", str(FACTS / "dgx_h100_port_init.json"), "--baseline", str(saved))
    assert other.returncode == 1 and "FAIL NET-02.port-not-active" in other.stdout


def test_cluster_takes_a_baseline(tmp_path: Path) -> None:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for name, src in (("n1", "dgx_h100.json"), ("n2", "dgx_h100_port_200g.json")):
        doc = json.loads((FACTS / src).read_text())
        doc["subject"]["name"] = name
        (fleet / f"{name}.json").write_text(json.dumps(doc))
    saved = tmp_path / "fleet.json"
    first = spec_check("cluster", "--facts", str(fleet), "--format", "json", "-o", str(saved))
    assert first.returncode == 1, first.stderr
    again = spec_check("cluster", "--facts", str(fleet), "--baseline", str(saved))
    # every problem known; what is left is NET-01's measured part, which a replay without
    # pairwise measurements does not judge: INCOMPLETE (exit 1), never CONFORMANT
    assert "0 still count" in again.stderr, again.stderr
    assert again.returncode == 1 and "\nINCOMPLETE for node and cluster scope" in again.stdout, again.stdout[-3000:]
    assert "NET-01 (MUST, on some subjects)" in again.stdout


def test_a_known_error_is_accepted_and_a_new_or_changed_one_counts(tmp_path: Path) -> None:
    """An error in the baseline (same rule, subject, item and reason) is known, as a known
    fail is: an unchanged job whose setting cannot be read does not exit 1 forever. An
    error whose reason changed, or one the baseline lacks, still counts."""
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    cfg = job / "config.yaml"
    cfg.write_text(cfg.read_text().replace("log_every_n_steps: 20", "log_every_n_steps: twenty"))
    saved = tmp_path / "baseline.json"
    args = ("lint", "job", "--set", "step_time=1.5s")
    assert spec_check(*args, "--format", "json", "-o", str(saved), cwd=tmp_path).returncode == 1
    doc = json.loads(saved.read_text())
    errors = [f for f in doc["findings"] if f["status"] == "error" and f["level"] == "MUST"]
    assert {f["rule"] for f in errors} >= {"MON-02.metrics-interval-too-long", "LINT-00.unreadable-config"}
    again = spec_check(*args, "--baseline", str(saved), cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr
    assert "KNOWN MON-02.metrics-interval-too-long" in again.stdout and "0 still count" in again.stderr
    # the same error with another reason is not the known one
    changed = next(f for f in errors if f["rule"] == "MON-02.metrics-interval-too-long")
    changed["message"] = "a reason the baseline recorded once, not today's"
    saved.write_text(json.dumps(doc))
    third = spec_check(*args, "--baseline", str(saved), "--format", "json", cwd=tmp_path)
    assert third.returncode == 1, third.stderr
    counted = [f["rule"] for f in json.loads(third.stdout)["findings"]
               if f["status"] == "error" and not (f.get("waiver") or {}).get("active")]
    assert counted == ["MON-02.metrics-interval-too-long"]
    assert "1 still counts" in third.stderr
    # an error the baseline does not have counts
    doc["findings"] = [f for f in doc["findings"] if f["rule"] != "MON-02.metrics-interval-too-long"]
    saved.write_text(json.dumps(doc))
    assert spec_check(*args, "--baseline", str(saved), cwd=tmp_path).returncode == 1


def test_a_waiver_file_still_never_accepts_an_error() -> None:
    """Only a baseline accepts a known error (it records the reason); a waiver does not."""
    from validator.report.model import Finding, Level, Status

    err = Finding("MON-01.x", "MON-01", Level.MUST, Status.ERROR, "job", "e", "why", "fix",
                  waiver={"active": True, "id": "MON-01"})
    assert not err.waived and err.against_verdict


def test_a_baseline_that_is_no_result_is_one_line_and_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--baseline", str(junk))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    missing = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--baseline", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
