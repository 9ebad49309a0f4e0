"""`lint --run` on real runs: every run recorded on the H200 (shared/recordings/training-runs,
HF Trainer and Lightning with their own loggers) and the CPU runs made here with torchrun
(tests/fixtures/runs, scripts/device/record_runs.py). Each measured value is checked against
the run's truth.jsonl, written by the training script itself."""

from __future__ import annotations

import itertools
import re
import statistics
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES, RECORDINGS, item, measure, truth, truth_recovery

pytest.importorskip("tensorboard")

needs_recordings = pytest.mark.skipif(not RECORDINGS.is_dir(), reason="shared/recordings not here")
RUNS = sorted(p for p in RECORDINGS.iterdir() if (p / "truth.jsonl").is_file()) if RECORDINGS.is_dir() else []
CPU_RUNS = sorted(p for p in FIXTURES.iterdir() if (p / "truth.jsonl").is_file())


def _truth_gap(run: Path) -> float:
    t = [r["t"] for r in truth(run) if r["event"] in ("log", "step") and r["restart"] == 0]
    return statistics.median(b - a for a, b in itertools.pairwise(t))


@needs_recordings
def test_every_recorded_run_is_covered() -> None:
    assert {p.name for p in RUNS} == {"hf_clean", "hf_crash", "pl_clean"}


@needs_recordings
def test_hf_crash_recovery_is_the_truth_within_1_5_s() -> None:
    run = RECORDINGS / "hf_crash"
    _, facts = measure(run)
    inc = facts["job.recovery.measured"]["items"]
    assert len(inc) == 1  # one failure, paired once (console + two event files + torchrun logs)
    f = inc[0]["fields"]
    rec = f["recovery"]["value"]
    assert abs(truth_recovery(run) - 12.6) < 0.05  # the README's figure, from truth.jsonl
    assert abs(rec - truth_recovery(run)) <= 1.5, rec
    assert round(rec, 1) == 12.3  # the figure docs/runs.md states
    assert "failed (exitcode: -9)" in f["failure"]["value"]
    src = f["recovery"]["source"]
    assert "console.log:21" in src and "train/loss step 110" in src and "year from the run's metrics" in src


@pytest.mark.parametrize("run", CPU_RUNS, ids=lambda p: p.name)
def test_cpu_runs_recovery_against_truth(run: Path) -> None:
    _, facts = measure(run)
    inc = facts["job.recovery.measured"]["items"]
    if any(r["event"] == "kill" for r in truth(run)):
        assert len(inc) == 1
        assert abs(inc[0]["fields"]["recovery"]["value"] - truth_recovery(run)) <= 1.5
    else:
        assert inc == []  # REC-02 then skips: "no failure"


@needs_recordings
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_recorded_runs_cadence_against_truth(run: Path) -> None:
    ev, facts = measure(run)
    loss = item(facts["job.metrics.measured"], "loss")
    # HF logging_steps 10; Lightning logs every 10 batches (steps 9, 19, ...)
    assert loss["step_gap_median"]["value"] == 10
    measured = loss["wall_gap_median"]["value"]
    want = _truth_gap(run)
    assert abs(measured - want) <= max(0.2 * want, 0.02), (measured, want)
    assert loss["stalls"]["value"] == [] and loss["nonfinite"]["value"] == []
    assert ev.errors == []


@needs_recordings
@pytest.mark.parametrize(("run", "emitted", "missing"), [
    ("hf_clean", {"gpu_utilization", "gradient_stats"}, {"memory", "collective_latency"}),
    ("hf_crash", {"gpu_utilization", "gradient_stats"}, {"memory", "collective_latency"}),
    ("pl_clean", {"gpu_utilization", "gradient_stats", "memory"}, {"collective_latency"}),
])
def test_recorded_runs_mon01_families(run: str, emitted: set[str], missing: set[str]) -> None:
    _, facts = measure(RECORDINGS / run)
    got = {f for f in emitted | missing if facts[f"job.metrics.{f}"]["value"] == "emitted"}
    assert got == emitted
    if run == "pl_clean":  # ThroughputMonitor and DeviceStatsMonitor, by Lightning's own names
        assert "as Lightning 2.6.6 names it" in facts["job.metrics.gpu_utilization"]["source"]
        assert "DeviceStatsMonitor" in facts["job.metrics.memory"]["source"]
    else:
        assert "train/grad_norm (as HF transformers 5.17.0 names it)" in facts["job.metrics.gradient_stats"]["source"]


@needs_recordings
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_every_file_is_read_or_passed_over_with_a_reason(run: Path) -> None:
    ev, _ = measure(run)
    read = {r["file"] for r in ev.read}
    passed = {p["file"]: p["why"] for p in ev.passed}
    files = {str(p) for p in run.rglob("*") if p.is_file()}
    assert read | set(passed) == files and not read & set(passed)
    assert all(passed.values())
    if run.name.startswith("hf"):
        assert str(run / "console.log") in read  # by its content: torchrun's and HF's lines
    else:  # Lightning under plain python prints no launcher, failure or step line
        assert passed[str(run / "console.log")].startswith("text with no metric format")
    assert passed[str(run / "truth.jsonl")].startswith("JSON lines whose first record has no step")


def test_stall_and_nan_are_named_with_step_and_time() -> None:
    run = FIXTURES / "cpu_stall_nan"
    _, facts = measure(run)
    loss = item(facts["job.metrics.measured"], "loss")
    [stall] = loss["stalls"]["value"]
    assert stall.startswith("step 55 -> 60: ") and "2026-11-27T" in stall  # the sleep before step 60 logs
    secs = float(stall.split(": ")[1].split(" s")[0])
    assert 8.0 <= secs <= 10.0  # the loop slept 8 s
    [nan] = loss["nonfinite"]["value"]
    assert nan.startswith("train/loss = nan at step 90 (2026-11-27T")
    assert item(facts["job.metrics.measured"], "gradient_stats")["nonfinite"]["value"] == []


@needs_recordings
def test_cli_judges_the_run_alone() -> None:
    r = spec_check("lint", "--run", str(RECORDINGS / "hf_crash"), "--format", "json")
    assert r.returncode == 1, r.stderr  # MON-01 memory and collective latency are not emitted
    import json

    doc = json.loads(r.stdout)
    rules = {f["rule"] for f in doc["findings"]}
    # the run's own rules, and the NCCL-log rules `--run` shares with `--nodes` (validator.jobnodes):
    # this run printed no NCCL_DEBUG=INFO line, so those skip
    nccl = {f["rule"]: f["status"] for f in doc["findings"] if ".run-" in f["rule"]}
    assert nccl == {"NET-02.run-used-sockets": "skip", "NET-02.run-mixed-transports": "skip"}
    assert rules - set(nccl) and all(x.split(".")[0] in {"MON-01", "MON-02", "REC-02"} for x in rules - set(nccl))
    rec = [f for f in doc["findings"] if f["rule"] == "REC-02.measured-recovery-too-slow"]
    assert [f["status"] for f in rec] == ["pass"] and rec[0]["location"]["line"] == 21
    assert {x["file"] for x in doc["extra"]["run"]["read"]} >= {str(RECORDINGS / "hf_crash" / "console.log")}
    assert doc["extra"]["run"]["passed_over"]


def test_cli_stall_nan_fails_and_warns() -> None:
    import json

    r = spec_check("lint", "--run", str(FIXTURES / "cpu_stall_nan"), "--format", "json")
    assert r.returncode == 1, r.stderr
    by = {}
    findings = json.loads(r.stdout)["findings"]
    p95 = next(f for f in findings if f["rule"] == "MON-02.measured-interval-too-long" and f["item"] == "loss")
    assert re.search(r"\(median [\d.]+ m?s, p95 [\d.]+ m?s between emissions; train/loss", p95["message"])
    for f in findings:
        by.setdefault(f["rule"], []).append((f.get("item"), f["status"]))
    assert ("loss", "fail") in by["MON-02.nonfinite-values"]
    assert ("loss", "warn") in by["MON-02.metrics-stalled"]
    assert by["REC-02.measured-recovery-too-slow"] == [(None, "skip")]


@needs_recordings
def test_a_failure_with_no_restart_after_it_is_not_resumed(tmp_path: Path) -> None:
    """hf_crash cut after the failure: its console and the first attempt's event file only."""
    import shutil

    src = RECORDINGS / "hf_crash"
    (tmp_path / "tb").mkdir()
    shutil.copy(src / "console.log", tmp_path / "console.log")
    first = sorted((src / "tb").iterdir())[0]
    shutil.copy(first, tmp_path / "tb" / first.name)
    _, facts = measure(tmp_path)
    [inc] = facts["job.recovery.measured"]["items"]
    assert inc["fields"]["recovery"]["error"].startswith("not resumed in the run")
    assert inc["fields"]["recovery"]["location"]["line"] == 21


@pytest.mark.parametrize("run", ["pl_cpu_resume", "mlflow_cpu"])
def test_a_restart_without_a_failure_line_is_an_upper_bound(run: str) -> None:
    _, facts = measure(FIXTURES / run)
    [inc] = facts["job.recovery.measured"]["items"]
    rec = inc["fields"]["recovery"]
    assert "failure" not in inc["fields"] and "no failure line" in rec["source"] and "upper bound" in rec["source"]
    assert rec["value"] >= truth_recovery(FIXTURES / run) - 0.5  # the pause includes the time before the kill


@needs_recordings
def test_srun_labelled_console_measures_the_same(tmp_path: Path) -> None:
    """hf_crash's console as `srun -l` would print it (each line behind "0: "), in a file named
    like Slurm output: read by its content, the same recovery."""
    import shutil

    src = RECORDINGS / "hf_crash"
    shutil.copytree(src / "tb", tmp_path / "tb")
    lines = (src / "console.log").read_text().splitlines()
    (tmp_path / "slurm-4242.out").write_text("".join(f"0: {line}\n" for line in lines))
    _, facts = measure(tmp_path)
    [inc] = facts["job.recovery.measured"]["items"]
    assert inc["id"].endswith("slurm-4242.out:21")
    assert abs(inc["fields"]["recovery"]["value"] - truth_recovery(src)) <= 1.5


def test_tensorboardx_run_resumed_with_purge_step() -> None:
    """tbx_cpu_resume (tensorboardX 2.6.5's own writer, tests/fixtures/runs/README.md): SIGKILL
    at step 47 lost the unflushed steps 40 and 45, so the resumed steps (45 on) all lie above
    the last step on disk (35): no step goes back. The resumed writer's SessionLog START at its
    purge_step (41) is the restart, timed from the last scalar on disk to the first after it."""
    run = FIXTURES / "tbx_cpu_resume"
    ev, facts = measure(run)
    assert ev.errors == []
    read = {r["file"] for r in ev.read}
    tb = {str(p) for p in run.rglob("events.out.tfevents.*")}
    assert len(tb) == 6 and tb <= read  # add_scalars: a subfolder and event file per key, per attempt
    got = {f: facts[f"job.metrics.{f}"]["value"] for f in ("gradient_stats", "gpu_utilization", "memory")}
    assert got == {"gradient_stats": "emitted", "gpu_utilization": "emitted", "memory": "not emitted"}
    [inc] = facts["job.recovery.measured"]["items"]
    rec = inc["fields"]["recovery"]
    assert "SessionLog START at step 41" in rec["source"] and "last step before: 35" in rec["source"]
    assert "upper bound" in rec["source"] and "step 45" in rec["source"]
    # from the last flushed scalar (before the kill) to the first after: at most flush_secs (2 s) more
    assert truth_recovery(run) - 0.5 <= rec["value"] <= truth_recovery(run) + 2.0
    loss = item(facts["job.metrics.measured"], "loss")
    assert loss["stalls"]["value"] == []  # the gap across the restart is recovery, not a stall
    assert loss["step_gap_median"]["value"] == 5


def test_torch_summarywriter_purge_step_is_a_restart(tmp_path: Path) -> None:
    """torch's own SummaryWriter, resumed with purge_step above every step on disk (docs/runs.md)."""
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(log_dir=str(tmp_path / "tb"), filename_suffix=".a")
    for step in range(0, 40, 5):
        w.add_scalar("train/loss", 1.0 / (step + 1), step)
    w.close()
    w = SummaryWriter(log_dir=str(tmp_path / "tb"), purge_step=41, filename_suffix=".b")
    for step in range(45, 60, 5):
        w.add_scalar("train/loss", 1.0 / (step + 1), step)
    w.close()
    ev, facts = measure(tmp_path)
    assert ev.errors == []
    [inc] = facts["job.recovery.measured"]["items"]
    src = inc["fields"]["recovery"]["source"]
    assert "SessionLog START at step 41 (its last step before: 35)" in src and "train/loss step 45" in src
