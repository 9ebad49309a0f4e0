"""The layouts real runs have (issue 32, deliverable 1): Lightning's resume into a new
version folder, logs past any preamble, Git LFS pointers, MON-01 always present, evaluation
throughput apart from training's, MON-02 over every source, cut lists that say so, one unit
per finding, REC-02's skip naming what was missing, DVCLive and DeepSpeed's log lines.

The Lightning cases read the real recording tests/fixtures/runs/pl_cpu_version_resume
(scripts/record_pl_version_resume.py); the others derive variants from real recordings or
write the frameworks' own formats as their source prints them (named per test)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES, RECORDINGS, item, measure, truth

pytest.importorskip("tensorboard")

PL = FIXTURES / "pl_cpu_version_resume"


def _findings(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    r = spec_check("lint", *args, "--format", "json")
    assert "Traceback" not in r.stderr, r.stderr
    if r.returncode == 2:
        return 2, [], r.stderr
    return r.returncode, json.loads(r.stdout)["findings"], r.stderr


def _truth_recovery_pl() -> float:
    t = truth(PL)
    kill = next(r["t"] for r in t if r["event"] == "kill")
    resumed = next(r["t"] for r in t if r["event"] == "log" and r["fit"] == 0 and r["restart"] == 1)
    return resumed - kill


# ---- Lightning: resume into version_1, a separate fit into version_2 ------------------------


def test_lightning_resume_into_a_new_version_folder_is_timed_as_a_restart() -> None:
    ev, facts = measure(PL)
    [inc] = facts["job.recovery.measured"]["items"]  # one failure; version_2 is no second incident
    f = inc["fields"]
    assert "failed (exitcode: -9)" in f["failure"]["value"]
    rec = f["recovery"]["value"]
    assert abs(_truth_recovery_pl() - 4.15) < 0.01  # from truth.jsonl: kill at step 57 -> step 49 logged again
    assert abs(rec - _truth_recovery_pl()) <= 1.5, rec  # from torchrun's failure line, not the kill
    assert f["resumed"]["value"] == "train_loss step 49" and f["resumed"]["location"]["file"].endswith("tb/version_1")
    by = {Path(d["folder"]).parent.name if d["folder"].endswith(".csv") else Path(d["folder"]).name: d
          for d in ev.versions if "/tb/" in d["folder"]}
    assert by["version_1"]["read_as"].startswith("resumed") and by["version_1"]["first_step"] == 49
    assert by["version_2"]["read_as"] == "a separate fit" and "within one logging interval" in by["version_2"]["why"]


def test_lightning_csv_alone_shows_the_resume_but_cannot_time_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PL / "csv", run / "csv")
    shutil.copy(PL / "console.log", run)
    _, facts = measure(run)
    [inc] = facts["job.recovery.measured"]["items"]
    err = inc["fields"]["recovery"]["error"]
    assert err.startswith("resumed, but not timed: Lightning resumed into a new version folder: version_1 starts at step 49")
    assert "not resumed" not in err


def test_a_separate_fit_after_a_failure_is_not_a_resume(tmp_path: Path) -> None:
    """version_0 killed, then only a new fit from scratch (version_2's data as version_1):
    the failure is "not resumed", never paired with the new fit's first step."""
    run = tmp_path / "run"
    for logger in ("tb", "csv"):
        shutil.copytree(PL / logger / "version_0", run / logger / "version_0")
        shutil.copytree(PL / logger / "version_2", run / logger / "version_1")
    shutil.copy(PL / "console.log", run)
    ev, facts = measure(run)
    [inc] = facts["job.recovery.measured"]["items"]
    assert inc["fields"]["recovery"]["error"].startswith("not resumed in the run")
    assert all(d["read_as"] == "a separate fit" for d in ev.versions)


def test_hf_trainer_resumed_into_a_new_mlflow_run_is_timed_as_a_restart() -> None:
    """HF Trainer with report_to mlflow under torchrun (scripts/record_hf_mlflow_resume.py):
    the restarted worker's MLflowCallback opens a new run in the same experiment."""
    run = FIXTURES / "hf_mlflow_cpu_resume"
    t = truth(run)
    kill = next(r["t"] for r in t if r["event"] == "kill")
    first = next(r["t"] for r in t if r["event"] == "log" and r["restart"] == 1)
    assert abs((first - kill) - 34.95) < 0.01  # truth.jsonl: SIGKILL at step 73 -> step 60 logged again
    ev, facts = measure(run)
    [inc] = facts["job.recovery.measured"]["items"]
    assert abs(inc["fields"]["recovery"]["value"] - (first - kill)) <= 1.5
    assert inc["fields"]["resumed"]["value"].endswith("step 60")
    [d] = ev.versions
    assert d["read_as"].startswith("resumed") and "a new MLflow run of the same experiment" in d["why"]
    assert facts["job.metrics.gradient_stats"]["value"] == "emitted"


def test_version_folders_written_at_once_are_not_a_restart(tmp_path: Path) -> None:
    """Two version folders whose writing overlaps in time are two runs, whatever their steps."""
    from validator.runs.cadence import Stream
    from validator.runs.versions import link

    a, b = Stream(str(tmp_path / "tb" / "version_0"), "tensorboard"), Stream(str(tmp_path / "tb" / "version_1"), "tensorboard")
    for step in range(0, 200, 10):
        a.add("train_loss", step, 1000.0 + step, 1.0)
    for step in range(100, 200, 10):
        b.add("train_loss", step, 1050.0 + step, 1.0)  # begins before version_0's last scalar
    [d] = link([a, b], [])
    assert not d.resumed and "two runs at once" in d.why and b.restarts == []


# ---- logs past a preamble; LFS pointers; MON-01 always -------------------------------------


def test_a_log_after_100_kib_of_preamble_is_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PL / "tb", run / "tb")
    preamble = "".join(f"module load env/{i} (PATH=/opt/env/{i}/bin:/usr/bin; LD_LIBRARY_PATH=/opt/env/{i}/lib)\n"
                       for i in range(1400))
    assert len(preamble) > 100 * 1024
    (run / "slurm-4242.out").write_text(preamble + (PL / "console.log").read_text())
    _, facts = measure(run)
    [inc] = facts["job.recovery.measured"]["items"]
    assert inc["id"].endswith("slurm-4242.out:1407") and inc["fields"]["recovery"]["value"] > 0


def test_text_with_no_log_line_is_passed_over_after_being_searched_to_its_end(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PL / "tb" / "version_0", run / "tb")
    (run / "notes.txt").write_text("nothing to see here\n" * 10_000)
    ev, _ = measure(run)
    why = next(p["why"] for p in ev.passed if p["file"].endswith("notes.txt"))
    assert why == "text with no metric format and no launcher, failure or training-step line (all 200000 bytes searched)"


LFS = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 842317\n".format("4d" * 32)


def test_an_lfs_pointer_named_as_an_event_file_is_unknown_not_missing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "runs" / "Nov27_04-37-00_host").mkdir(parents=True)
    (run / "runs" / "Nov27_04-37-00_host" / "events.out.tfevents.1795750000.host.1.0").write_text(LFS)
    (run / "pytorch_model.bin").write_text(LFS)
    rc, fs, err = _findings("--run", str(run))
    assert rc == 1, err
    mon01 = [f for f in fs if f["rule"].startswith("MON-01.")]
    assert len(mon01) == 4 and all(f["status"] == "error" for f in mon01)
    assert all("a Git LFS pointer (sha256:4d4d4d4d4d4d..., 842317 bytes), not the file itself" in f["message"]
               for f in mon01)
    ev, _ = measure(run)
    assert any(p["file"].endswith("pytorch_model.bin") and "Git LFS pointer" in p["why"] for p in ev.passed)


def test_mon01_is_judged_on_a_run_holding_only_a_launcher_log(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(PL / "console.log", run)
    rc, fs, err = _findings("--run", str(run))
    mon01 = {f["rule"]: f for f in fs if f["rule"].startswith("MON-01.")}
    assert len(mon01) == 4, (rc, err, [f["rule"] for f in fs])
    assert all(f["status"] == "error" and "only launcher/training logs" in f["message"] for f in mon01.values())


# ---- training throughput apart from evaluation throughput ----------------------------------


def _hf_eval_only(tmp_path: Path) -> Path:
    """HF Trainer's log_history as transformers writes it: loss every logging step, and
    eval_samples_per_second at each evaluation (speed_metrics("eval", ...))."""
    hist = []
    for step in range(10, 510, 10):
        hist.append({"loss": 2.0 - step / 1000, "grad_norm": 1.0, "learning_rate": 1e-4, "epoch": step / 500, "step": step})
        if step % 250 == 0:
            hist.append({"eval_loss": 1.5, "eval_runtime": 3.2, "eval_samples_per_second": 61.4,
                         "eval_steps_per_second": 7.7, "epoch": step / 500, "step": step})
    run = tmp_path / "run"
    (run / "checkpoint-500").mkdir(parents=True)
    (run / "checkpoint-500" / "trainer_state.json").write_text(json.dumps({"global_step": 500, "log_history": hist}))
    return run


def test_evaluation_throughput_is_not_training_throughput(tmp_path: Path) -> None:
    run = _hf_eval_only(tmp_path)
    _, facts = measure(run)
    g = facts["job.metrics.gpu_utilization"]
    assert g["value"] == "not emitted"
    assert "eval_samples_per_second" in g["source"] and "evaluation throughput" in g["source"]
    assert "TrainerCallback (on_log)" in g["source"]  # the setting that changes it, for HF
    ids = [i["id"] for i in facts["job.metrics.measured"]["items"]]
    assert "eval_throughput" not in ids and "throughput" not in ids and "loss" in ids


def test_each_family_names_the_setting_of_its_interval() -> None:
    _, facts = measure(FIXTURES / "pl_cpu_resume")
    loss = item(facts["job.metrics.measured"], "loss")
    assert "its interval is set by Trainer(log_every_n_steps=...) (Lightning; default 50)" in loss["step_gap_p95"]["source"]


# ---- MON-02 over every source; "and N more"; one unit -------------------------------------


def test_a_long_gap_in_an_older_folder_fails_the_gap_rule(tmp_path: Path) -> None:
    """Two event-file folders of one job (its version_0 and version_1): the longest gap is in
    the one with fewer emissions, which is not the family's cadence source: it still fails."""
    from validator.runs.cadence import Stream
    from validator.runs.facts import mon02
    from validator.runs.measure import RunEvidence

    ev = RunEvidence([str(tmp_path)])
    old, new = Stream(str(tmp_path / "a"), "tensorboard"), Stream(str(tmp_path / "b"), "tensorboard")
    for i, step in enumerate(range(0, 100, 10)):
        old.add("train/loss", step, 1000.0 + i * 5 + (600.0 if step >= 50 else 0.0), 1.0)  # a 10-min gap
    for i, step in enumerate(range(0, 1000, 10)):
        new.add("train/loss", step, 5000.0 + i * 5, 1.0)
    ev.streams = [old, new]
    loss = item(mon02(ev), "loss")
    assert loss["source"]["value"] == str(tmp_path / "b")  # the cadence source: most emissions
    assert loss["wall_gap_max"]["value"] == 605.0
    assert loss["wall_gap_max"]["location"]["file"] == str(tmp_path / "a")
    assert "10.1 min from" in loss["wall_gap_max"]["source"] and "1.22e+03" not in loss["wall_gap_max"]["source"]


def test_a_cut_stall_list_says_how_many_more(tmp_path: Path) -> None:
    from validator.runs.cadence import KEEP, Stream
    from validator.runs.facts import mon02
    from validator.runs.measure import RunEvidence

    s = Stream(str(tmp_path / "tb"), "tensorboard")
    wall = 0.0
    for step in range(0, 3000, 10):
        wall += 60.0 if step % 200 == 0 and step else 1.0  # 14 stalls of a minute
        s.add("train/loss", step, wall, 1.0)
    ev = RunEvidence([str(tmp_path)])
    ev.streams = [s]
    stalls = item(mon02(ev), "loss")["stalls"]["value"]
    assert len(stalls) == KEEP + 1 and stalls[-1] == "and 4 more"
    assert all(" 1 min from " in x for x in stalls[:-1])


def test_a_finding_uses_one_unit_for_its_seconds() -> None:
    _rc, fs, _ = _findings("--run", str(FIXTURES / "cpu_stall_nan"))
    gap = next(f for f in fs if f["rule"] == "MON-02.measured-gap-too-long" and f["item"] == "loss")
    assert "e+0" not in gap["message"] and ".0 s" not in gap["message"], gap["message"]


# ---- REC-02's skip -------------------------------------------------------------------------


def test_rec02_skip_says_no_log_or_no_failure(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(PL / "tb" / "version_0", run / "tb")
    _, fs, _ = _findings("--run", str(run))
    [rec] = [f for f in fs if f["rule"] == "REC-02.measured-recovery-too-slow"]
    assert rec["status"] == "skip" and rec["message"].startswith("no launcher or training log in the run")
    # the workers' lines as torchrun --tee 3 labels them, and no failure among them
    (run / "console.log").write_text("".join("[default0]:" + x for x in (PL / "console.log").read_text().splitlines(True)
                                             if "exitcode" not in x))
    _, fs, _ = _findings("--run", str(run))
    [rec] = [f for f in fs if f["rule"] == "REC-02.measured-recovery-too-slow"]
    assert rec["status"] == "skip" and rec["message"] == f"no failure in the log(s): {run / 'console.log'}"


# ---- DVCLive and DeepSpeed's log lines -----------------------------------------------------


def test_dvclive_series_are_read(tmp_path: Path) -> None:
    """DVCLive 3.x's plots/metrics/<name>.tsv (timestamp in ms, step, value) and metrics.json."""
    live = tmp_path / "dvclive"
    (live / "plots" / "metrics" / "train").mkdir(parents=True)
    rows = "".join(f"{1_795_000_000_000 + step * 2000}\t{step}\t{2.0 - step / 100}\n" for step in range(50))
    (live / "plots" / "metrics" / "train" / "loss.tsv").write_text("timestamp\tstep\tloss\n" + rows)
    tput = "".join(f"{1_795_000_000_000 + step * 2000}\t{step}\t{1000 + step}\n" for step in range(50))
    (live / "plots" / "metrics" / "train" / "samples_per_second.tsv").write_text("timestamp\tstep\tsamples_per_second\n" + tput)
    (live / "metrics.json").write_text(json.dumps({"train": {"loss": 1.51, "samples_per_second": 1049}, "step": 49}, indent=4))
    ev, facts = measure(live)
    assert ev.errors == []
    loss = item(facts["job.metrics.measured"], "loss")
    assert loss["emissions"]["value"] == 50 and loss["wall_gap_median"]["value"] == 2.0
    assert loss["tags"]["value"] == "train/loss" and loss["source"]["value"] == str(live)
    assert facts["job.metrics.gpu_utilization"]["value"] == "emitted"
    assert {r["as"] for r in ev.read} == {"DVCLive plots/metrics series", "DVCLive metrics.json (latest values)"}


DS_LINES = """[2026-11-07 01:55:23,711] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped=4, lr=[4.9e-05], mom=[(0.9, 0.95)]
[2026-11-07 01:55:{s:02d},714] [INFO] [timer.py:260:stop] epoch=0/micro_step={micro}/global_step={step}, RunningAvgSamplesPerSec=25.02, CurrSamplesPerSec=25.70, MemAllocated=4.32GB, MaxMemAllocated=38.49GB
[2026-11-07 01:55:{s:02d},720] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd_microstep: 12.34 | bwd_microstep: 23.45 | bwd_inner_microstep: 20.11 | bwd_allreduce_microstep: 3.40 | step_microstep: 5.00
"""


def test_deepspeed_engine_lines_are_metrics(tmp_path: Path) -> None:
    """The lines DeepSpeed v0.19.5 prints (deepspeed/utils/timer.py ThroughputTimer.stop and
    SynchronizedWallClockTimer.log, the engine's step line), every steps_per_print steps."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("".join(DS_LINES.format(step=10 * i, micro=40 * i, s=i) for i in range(1, 31)))
    ev, facts = measure(run)
    assert [s.kind for s in ev.streams] == ["deepspeed_log"]
    for fam in ("gpu_utilization", "memory", "collective_latency"):
        assert facts[f"job.metrics.{fam}"]["value"] == "emitted", fam
    assert "DeepSpeed log 0.19.5" in facts["job.metrics.collective_latency"]["source"]
    tput = item(facts["job.metrics.measured"], "throughput")
    assert tput["step_gap_median"]["value"] == 10 and tput["wall_gap_median"]["value"] == 1.0


def test_deepspeed_pipe_engine_line_is_read(tmp_path: Path) -> None:
    """deepspeed/runtime/pipe/engine.py: 'steps: N loss: X iter time (s): T samples/sec: S'."""
    from validator.runs.dslog import scalars

    got = list(scalars("steps: 20 loss: 2.3456 iter time (s): 0.512 samples/sec: 31.250\n"))
    assert got == [("loss", 20, None, 2.3456), ("samples/sec", 20, None, 31.25)]


@pytest.mark.skipif(not RECORDINGS.is_dir(), reason="shared/recordings not here")
def test_recorded_runs_still_read_the_same() -> None:
    _, facts = measure(RECORDINGS / "hf_crash")
    assert len(facts["job.recovery.measured"]["items"]) == 1
