"""Bad run outputs: each is an error finding naming the file and line (an event file: the
record and its byte offset), or a one-line exit 2; never a traceback, never a pass. A file
still being written (a half-written last record or line) is read up to it and said so.
Variants are derived from the real recordings and the CPU runs in tmp folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES, measure

RUN = FIXTURES / "cpu_ddp2_crash"


def _copy_tb(tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(RUN / "tb", dst / "tb")
    return dst


def _first_event_file(run: Path) -> Path:
    return sorted((run / "tb").iterdir())[0]


def test_half_written_last_record_is_read_up_to_it(tmp_path: Path) -> None:
    run = _copy_tb(tmp_path)
    ev_file = _first_event_file(run)
    full, _ = measure(run)
    data = ev_file.read_bytes()
    ev_file.write_bytes(data[:-7])  # the last record's data cut: a writer mid-flush
    ev, _ = measure(run)
    assert ev.errors == []
    note = next(r for r in ev.read if r["file"] == str(ev_file))["note"]
    assert "still being written" in note and "half-written" in note
    # one scalar less than the whole file, nothing else lost
    assert ev.streams[0].scalars == full.streams[0].scalars - 1


def test_corrupt_record_is_an_error_naming_file_and_record(tmp_path: Path) -> None:
    run = _copy_tb(tmp_path)
    ev_file = _first_event_file(run)
    data = bytearray(ev_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    ev_file.write_bytes(bytes(data))
    ev, facts = measure(run)
    [err] = ev.errors
    assert err.file == str(ev_file) and err.message.startswith("record ") and "at byte" in err.message
    assert "CRC-32C" in err.message
    bad = next(i for i in facts["job.metrics.measured"]["items"] if i["id"] == str(ev_file))
    assert "error" in bad["fields"]["wall_gap_p95"]
    # the second (restart) file is still read, to its last step
    assert ev.streams[0].families["loss"].last_step == 100


def test_corrupt_event_file_through_the_cli_is_an_error_finding(tmp_path: Path) -> None:
    run = _copy_tb(tmp_path)
    ev_file = _first_event_file(run)
    data = bytearray(ev_file.read_bytes())
    data[40] ^= 0xFF
    ev_file.write_bytes(bytes(data))
    r = spec_check("lint", "--run", str(run), "--format", "json")
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    errs = [f for f in json.loads(r.stdout)["findings"] if f["status"] == "error"]
    assert errs and all(f["location"]["file"] == str(ev_file) for f in errs if f.get("location"))
    assert any("record" in f["message"] for f in errs)


def test_csv_header_changed_half_way_names_the_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("epoch,step,train_loss\n0,9,1.5\n0,19,1.4\n"
                                     "epoch,grad_2.0_norm_total,step,train_loss\n0,2.0,29,1.3\n")
    ev, facts = measure(run)
    [err] = ev.errors
    assert (err.file, err.line) == (str(run / "metrics.csv"), 4)
    assert "header" in err.message
    assert "error" in facts["job.metrics.gradient_stats"]  # may be in the part not read: never "not emitted"


def test_csv_half_written_last_line_is_tolerated(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("epoch,step,train_loss\n0,9,1.5\n0,19,1.4\n0,2")
    ev, _ = measure(run)
    assert ev.errors == [] and "half-written" in ev.read[0]["note"]


def test_json_line_that_does_not_parse_names_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = (RUN / "metrics.jsonl").read_text().splitlines(keepends=True)
    lines[3] = lines[3][:20] + "\n"
    (run / "metrics.jsonl").write_text("".join(lines))
    ev, _ = measure(run)
    [err] = ev.errors
    assert (err.file, err.line) == (str(run / "metrics.jsonl"), 4) and err.message.startswith("not JSON")
    r = spec_check("lint", "--run", str(run))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "metrics.jsonl:4" in r.stdout


def test_json_last_line_half_written_is_tolerated(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    text = (RUN / "metrics.jsonl").read_text()
    (run / "metrics.jsonl").write_text(text[:-30])
    ev, _ = measure(run)
    assert ev.errors == [] and "half-written" in ev.read[0]["note"]


def test_event_files_are_read_without_tensorboard(tmp_path: Path) -> None:
    """The base install reads event files: tensorboard made unimportable, the run is read in full."""
    import subprocess
    import sys

    run = _copy_tb(tmp_path)
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "from pathlib import Path; from validator.runs.measure import read_runs\n"
            f"ev = read_runs([Path({str(run)!r})]); assert not ev.errors, ev.errors\n"
            "print(sum(s.scalars for s in ev.streams), 'tensorboard' in sys.modules and sys.modules['tensorboard'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    full, _ = measure(run)
    assert r.stdout.split() == [str(full.streams[0].scalars), "None"] and full.streams[0].scalars > 50


def test_empty_run_folder_alone_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    r = spec_check("lint", "--run", str(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no training output" in r.stderr and "notes.txt" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_missing_run_folder_is_exit_2(tmp_path: Path) -> None:
    r = spec_check("lint", "--run", str(tmp_path / "nope"))
    assert r.returncode == 2 and "no such file or directory (--run)" in r.stderr


def test_links_are_not_followed(tmp_path: Path) -> None:
    run = _copy_tb(tmp_path)
    (run / "elsewhere").symlink_to(RUN)
    ev, _ = measure(run)
    assert {"file": str(run / "elsewhere"), "why": "a link: not followed"} in ev.passed


def test_a_huge_line_is_an_error_not_a_memory_blowup(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "m.jsonl").write_text('{"step": 1, "loss": 2.0}\n' + "x" * (2 * 1024 * 1024) + "\n")
    ev, _ = measure(run)
    [err] = ev.errors
    assert (err.line, err.message) == (2, "a line longer than 1 MiB")


def test_fifo_in_a_run_folder_is_passed_over(tmp_path: Path) -> None:
    import os

    run = _copy_tb(tmp_path)
    os.mkfifo(run / "pipe")
    ev, _ = measure(run)
    assert {"file": str(run / "pipe"), "why": "not a regular file"} in ev.passed


def test_a_number_beyond_any_real_value_in_a_log_is_an_error_naming_the_line(tmp_path: Path) -> None:
    """The numbers rule (validator.values.numbers) in the run's readers: an integer past 2^64 is an
    error at its line, said as every other reader says it (Python's own int() would refuse
    5,000 digits with a message about sys.set_int_max_str_digits); 1e400 stays a value, an
    infinite one, which MON-02.nonfinite-values is there to fail."""
    run = tmp_path / "run"
    run.mkdir()
    lines = (RUN / "metrics.jsonl").read_text().splitlines(keepends=True)
    rec = json.loads(lines[3])
    key = next(k for k, v in rec.items() if isinstance(v, float))
    lines[3] = lines[3].replace(json.dumps(rec[key]), "9" * 5000, 1)
    (run / "metrics.jsonl").write_text("".join(lines))
    ev, _ = measure(run)
    [err] = ev.errors
    assert (err.file, err.line) == (str(run / "metrics.jsonl"), 4)
    assert err.message == "a 5000-digit integer is beyond any real value (the limit is 2^64 in magnitude)"
    r = spec_check("lint", "--run", str(run))
    assert "Traceback" not in r.stderr and "set_int_max_str_digits" not in r.stdout


@pytest.mark.parametrize("keep", [12, 20, 40])
def test_event_file_cut_inside_its_first_record_is_an_error_naming_it(tmp_path: Path, keep: int) -> None:
    """A real event file truncated inside its first record (its framing's length CRC checks)
    is an error naming the file, never passed over as if it were no metrics file; the other
    event file beside it is still read."""
    run = _copy_tb(tmp_path)
    ev_file = _first_event_file(run)
    ev_file.write_bytes(ev_file.read_bytes()[:keep])
    ev, facts = measure(run)
    [err] = ev.errors
    assert err.file == str(ev_file) and err.message.startswith("record 1 at byte 0: ")
    assert f"ends after {keep} bytes" in err.message and "truncated" in err.message
    assert str(ev_file) not in {p["file"] for p in ev.passed}
    assert "error" in facts["job.metrics.memory"]  # the CPU run logs no memory: unknown, not "not emitted"
    r = spec_check("lint", "--run", str(run), "--format", "json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert any(f["status"] == "error" and f"{ev_file}: record 1 at byte 0" in f["message"]
               for f in json.loads(r.stdout)["findings"])


def test_random_bytes_named_like_an_event_file_are_passed_over(tmp_path: Path) -> None:
    """Framing whose length CRC does not check is no event file, whatever its name."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.out.tfevents.1.host.1.0").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03xyz")
    ev, _ = measure(run)
    assert ev.errors == [] and ev.passed[0]["why"] == "binary, and no TensorBoard event file"


def test_csv_header_changed_half_way_through_the_cli_names_file_and_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("epoch,step,train_loss\n0,9,1.5\n0,19,1.4\n"
                                     "epoch,grad_2.0_norm_total,step,train_loss\n0,2.0,29,1.3\n")
    r = spec_check("lint", "--run", str(run))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{run / 'metrics.csv'}:4" in " ".join(r.stdout.split()) and "PASS MON-01" not in r.stdout
