"""REC-02 measured recovery: `lint --recovery-log FILE` on logs shaped like real output.

The line shapes are those the frameworks print: torch elastic before 2.4 (``[date]
torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: ...``) and from
2.4 on (glog ``E0724 20:47:36.140000 PID .../multiprocessing/api.py:NNN] failed ...``,
no year), ProcessGroupNCCL's watchdog (``[rank3]:[E0501 ...] [Rank 3] Watchdog caught
collective operation timeout: WorkNCCL(...)``), Megatron-LM's ``training_log`` (`` [date]
iteration {:8d}/{:8d} |``) and torchtitan's metrics line (``[rank0]:[titan] date - root -
INFO - step: N  loss: ...``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from validator.jobs.recovery_log import NOT_GIVEN, measured

RULE = "REC-02.measured-recovery-too-slow"


def _megatron(ts: str, it: int) -> str:
    return (f" [{ts}] iteration {it:8d}/{10000:8d} | consumed samples: {it * 256:12d} | "
            f"elapsed time per iteration (ms): 1020.3 | learning rate: 3.000000E-04 |")


def megatron_elastic_log(resume: str) -> str:
    """Megatron under torchrun (torch < 2.4 elastic logging); failure at 12:00:10."""
    return "\n".join([
        _megatron("2024-05-01 11:59:58", 99),
        _megatron("2024-05-01 12:00:00", 100),
        "[rank3]:[E501 12:00:09.000000000 ProcessGroupNCCL.cpp:1] not a glog header (no 0)",
        "[2024-05-01 12:00:09,500] torch.distributed.elastic.multiprocessing.api: [WARNING] "
        "Sending process 1733 closing signal SIGTERM",
        "[2024-05-01 12:00:10,000] torch.distributed.elastic.multiprocessing.api: [ERROR] "
        "failed (exitcode: -6) local_rank: 3 (pid: 1734) of binary: /usr/bin/python3",
        "RuntimeError: CUDA error: an illegal memory access was encountered",  # no timestamp
        "[2024-05-01 12:00:10,100] torch.distributed.elastic.agent.server.api: [INFO] "
        "[default] Worker group FAILED. 2/3 attempts left; will restart worker group",
        "[2024-05-01 12:00:20,000] torch.distributed.elastic.rendezvous.dynamic_rendezvous: "
        "[INFO] The node 'n1' has joined round 1 of the rendezvous 'job' as rank 0",
        " loading checkpoint from /ckpt/gpt at iteration 100",  # untimed restart marker
        _megatron(resume, 100),
        _megatron("2024-05-01 12:30:00", 101),
    ]) + "\n"


def titan_glog_log() -> str:
    """torchtitan under torch >= 2.4: the failure lines are glog-stamped (no year)."""
    return "\n".join([
        "[rank0]:[titan] 2025-06-20 19:13:25,465 - root - INFO - step: 10  loss: 9.3421  "
        "memory: 48.91GiB(51.52%)  tps: 21,734  tflops: 23.15  mfu: 2.34%",
        "[rank3]:[E0620 19:13:40.426415540 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=100000) ran for 100081 milliseconds before timing out.",
        "E0620 19:13:42.140000 1237 torch/distributed/elastic/multiprocessing/api.py:869] "
        "failed (exitcode: -6) local_rank: 3 (pid: 1734) of binary: /usr/bin/python3",
        "[rank0]:[titan] 2025-06-20 19:14:00,000 - root - INFO - validate step:  10  loss: 2.0",
        "[rank0]:[titan] 2025-06-20 19:18:30,000 - root - INFO - Loading the checkpoint at step 10.",
        "[rank0]:[titan] 2025-06-20 19:18:40,426 - root - INFO - \x1b[31mstep: 10  "
        "\x1b[32mloss:  9.3400  \x1b[33mmemory: 48.91GiB(51.52%)  tps: 512",
    ]) + "\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def only(fact: dict) -> dict:
    assert len(fact["items"]) == 1, fact
    return fact["items"][0]


def test_megatron_45s_recovery_is_measured_from_the_first_failure_line(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", megatron_elastic_log("2024-05-01 12:00:55"))
    it = only(measured([log]))
    rec = it["fields"]["recovery"]
    assert rec["value"] == 45.0 and rec["unit"] == "sec"
    # the elastic "failed (exitcode" line (5); the "Worker group FAILED" is the same incident
    assert rec["location"] == {"file": str(log), "line": 5}
    assert it["id"] == f"{log}:5"
    assert it["fields"]["resumed"]["location"]["line"] == 10  # after the checkpoint load (9)
    assert "failed (exitcode: -6)" in rec["source"]


def test_torchtitan_with_yearless_glog_failure(tmp_path: Path) -> None:
    log = write(tmp_path, "titan.log", titan_glog_log())
    rec = only(measured([log]))["fields"]["recovery"]
    # 19:13:40.426415 -> 19:18:40.426: the validation line is no training step
    assert rec["value"] == pytest.approx(299.9996, abs=1e-3)
    assert rec["location"]["line"] == 2


def test_failure_never_resumed_is_an_error_value(tmp_path: Path) -> None:
    text = "".join(megatron_elastic_log("2024-05-01 12:00:55").splitlines(True)[:9])
    log = write(tmp_path, "dead.log", text)
    rec = only(measured([log]))["fields"]["recovery"]
    assert "not resumed" in rec["error"] and rec["location"]["line"] == 5


def test_a_failure_that_cannot_be_timed_is_an_error_not_a_skip(tmp_path: Path) -> None:
    """A log in a format this reader does not date still shows a failure: its recovery is
    unknown (an error), never "no failure in the log"."""
    text = ("failed (exitcode: 1) local_rank: 0 (pid: 7) of binary: python\n"
            " iteration      100/   10000 | consumed samples: 25600 |\n")
    rec = only(measured([write(tmp_path, "plain.log", text)]))["fields"]["recovery"]
    assert "cannot be measured" in rec["error"] and rec["location"]["line"] == 1


def test_the_same_step_from_another_rank_is_no_resume(tmp_path: Path) -> None:
    """Every rank may log step 10: one logged just after the failure is a duplicate, not
    training resumed from a checkpoint."""
    text = "\n".join([
        "[rank0]:[titan] 2025-06-20 19:13:39,900 - root - INFO - step: 10  loss: 9.3",
        "[rank1]:[titan] 2025-06-20 19:13:40,000 - root - ERROR - CUDA error: an illegal memory access",
        "[rank2]:[titan] 2025-06-20 19:13:40,200 - root - INFO - step: 10  loss: 9.3",
        "[rank0]:[titan] 2025-06-20 19:24:50,000 - root - INFO - Loading the checkpoint at step 10.",
        "[rank0]:[titan] 2025-06-20 19:25:00,000 - root - INFO - step: 11  loss: 9.2",
    ]) + "\n"
    rec = only(measured([write(tmp_path, "ranks.log", text)]))["fields"]["recovery"]
    assert rec["value"] == 680.0


def test_restart_in_a_second_log_pairs_with_the_failure_in_the_first(tmp_path: Path) -> None:
    lines = megatron_elastic_log("2024-05-01 12:00:55").splitlines(True)
    first = write(tmp_path, "attempt0.log", "".join(lines[:9]))
    second = write(tmp_path, "attempt1.log", "".join(lines[9:]))
    rec = only(measured([second, first]))["fields"]["recovery"]
    assert rec["value"] == 45.0 and rec["location"]["file"] == str(first)


def test_no_log_is_null_naming_the_option() -> None:
    assert measured([]) == {"value": None, "source": NOT_GIVEN}


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: p.write_bytes(b"\x7fELF\x00\x00binary"), "binary"),
        (lambda p: p.write_bytes(b"[2024-05-01 12:00:00] \xff\xfe bad\n"), "not UTF-8"),
        (lambda p: os.mkfifo(p), "not a regular file"),
        (lambda p: p.mkdir(), "directory"),
    ],
    ids=["binary", "latin1", "fifo", "directory"],
)
def test_unreadable_log_is_an_error_item_and_the_others_still_count(
    tmp_path: Path, make, problem: str
) -> None:
    bad = tmp_path / "bad.log"
    make(bad)
    good = write(tmp_path, "train.log", megatron_elastic_log("2024-05-01 12:00:55"))
    got = {m["id"]: m["fields"]["recovery"] for m in measured([bad, good])["items"]}
    assert problem in got[str(bad)]["error"]
    assert got[f"{good}:5"]["value"] == 45.0


# ---- end to end, as users run it ---------------------------------------------------------


@pytest.fixture
def job(tmp_path: Path) -> Path:
    d = tmp_path / "job"
    d.mkdir()
    (d / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4, '
                               '"gradient_accumulation_steps": 2, "bf16": {"enabled": true}}\n')
    return d


def lint_json(job: Path, *logs: Path) -> tuple[int, list[dict]]:
    args = [a for log in logs for a in ("--recovery-log", str(log))]
    r = spec_check("lint", str(job), *args, "--select", RULE, "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, [f for f in json.loads(r.stdout)["findings"] if f["rule"] == RULE]


def test_cli_45s_passes(tmp_path: Path, job: Path) -> None:
    log = write(tmp_path, "train.log", megatron_elastic_log("2024-05-01 12:00:55"))
    rc, fs = lint_json(job, log)
    assert rc == 0 and [f["status"] for f in fs] == ["pass"] and fs[0]["value"] == 45.0


def test_cli_300s_fails_at_the_failure_line(tmp_path: Path, job: Path) -> None:
    log = write(tmp_path, "train.log", megatron_elastic_log("2024-05-01 12:05:10"))
    rc, fs = lint_json(job, log)
    assert rc == 1 and [f["status"] for f in fs] == ["fail"]
    assert fs[0]["value"] == 300.0
    assert fs[0]["location"] == {"file": str(log), "line": 5}


def test_cli_not_resumed_is_error(tmp_path: Path, job: Path) -> None:
    text = "".join(megatron_elastic_log("2024-05-01 12:00:55").splitlines(True)[:9])
    rc, fs = lint_json(job, write(tmp_path, "dead.log", text))
    assert rc == 1 and [f["status"] for f in fs] == ["error"]


def test_cli_log_without_failure_skips(tmp_path: Path, job: Path) -> None:
    log = write(tmp_path, "ok.log", _megatron("2024-05-01 12:00:00", 100) + "\n")
    rc, fs = lint_json(job, log)
    # the one rule selected skipped: REC-02 (a MUST) was not judged, so INCOMPLETE (exit 1)
    assert rc == 1 and [(f["status"], f["message"]) for f in fs] == [("skip", "no failure in the log(s)")]


def test_cli_without_log_skips_naming_the_option(job: Path) -> None:
    rc, fs = lint_json(job)
    assert rc == 1 and [f["status"] for f in fs] == ["skip"]  # not judged: INCOMPLETE
    assert "--recovery-log FILE" in fs[0]["message"]


def test_cli_missing_log_is_exit_2_in_one_line(tmp_path: Path, job: Path) -> None:
    r = spec_check("lint", str(job), "--recovery-log", str(tmp_path / "nope.log"))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "nope.log" in r.stderr and "Traceback" not in r.stderr


def test_a_straggling_step_after_the_failure_is_no_resume(tmp_path: Path) -> None:
    """A surviving rank logs its next step before it notices the fault: that is not resumed
    training, so it must not end the incident (and pass it) early."""
    lines = megatron_elastic_log("2024-05-01 12:03:00").splitlines()
    lines.insert(5, _megatron("2024-05-01 12:00:11", 101))  # rank 0's next step, no restart yet
    log = write(tmp_path, "train.log", "\n".join(lines) + "\n")
    it = only(measured([log]))
    assert it["fields"]["recovery"]["value"] == 170.0  # 12:00:10 -> 12:03:00, not 1 s
    alone = write(tmp_path, "cut.log", "\n".join(lines[:7]) + "\n")  # the straggler, no resume
    assert "not resumed" in only(measured([alone]))["fields"]["recovery"]["error"]


def test_hf_resume_is_recognised_by_its_restart_marker(tmp_path: Path) -> None:
    """HF Trainer's logged dict carries no step number: the resume is the first one after
    the Trainer says it continues from a checkpoint."""
    text = "\n".join([
        "2024-05-01 12:00:00,000 - INFO - {'loss': 1.93, 'grad_norm': 0.8, 'learning_rate': 2e-05, 'epoch': 0.5}",
        "[2024-05-01 12:00:05,000] torch.distributed.elastic.multiprocessing.api: [ERROR] "
        "failed (exitcode: 1) local_rank: 0 (pid: 7) of binary: /usr/bin/python3",
        "2024-05-01 12:00:06,000 - INFO - {'loss': 1.92, 'grad_norm': 0.8, 'learning_rate': 2e-05, 'epoch': 0.51}",
        "  Continuing training from checkpoint, will skip to saved global_step",
        "2024-05-01 12:01:05,000 - INFO - {'loss': 1.91, 'grad_norm': 0.8, 'learning_rate': 2e-05, 'epoch': 0.52}",
    ]) + "\n"
    rec = only(measured([write(tmp_path, "hf.log", text)]))["fields"]["recovery"]
    assert rec["value"] == 60.0
