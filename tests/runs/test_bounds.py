"""Every run input bounded (issue 32, the hostile-input campaign): timestamps in s, ms, us
and ns read by magnitude and anything else an error; JSON nesting and CSV line size bounded
for every JSON and CSV reader; an MLflow run's metric files opened a few at a time; the walk
stopping at its cap and saying once how many were left. Each case is an error naming the
file (and line) or a read that holds, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from tests.runs.util import ROOT, measure

T0 = 1795000000  # 2026-11-18, in seconds


def _jsonl(run: Path, times: list[float | int]) -> Path:
    run.mkdir(exist_ok=True)
    p = run / "metrics.jsonl"
    p.write_text("".join(json.dumps({"step": 10 * (i + 1), "loss": 1.0, "time": t}) + "\n"
                         for i, t in enumerate(times)))
    return p


@pytest.mark.parametrize(("scale", "unit"), [(1, "s"), (10**3, "ms"), (10**6, "us"), (10**9, "ns")])
def test_unix_times_in_each_unit_read_as_the_same_seconds(tmp_path: Path, scale: int, unit: str) -> None:
    _jsonl(tmp_path / "run", [(T0 + 30 * i) * scale for i in range(5)])
    ev, facts = measure(tmp_path / "run")
    assert ev.errors == [], unit
    [s] = ev.streams
    assert s.first_wall == pytest.approx(T0) and s.families["loss"].wall_gap(0.5) == pytest.approx(30.0)
    assert "error" not in json.dumps(facts["job.metrics.measured"])


@pytest.mark.parametrize("bad", [T0 * 1e12, -T0, 1e300])
def test_a_time_in_no_unit_is_an_error_naming_file_and_line(tmp_path: Path, bad: float) -> None:
    p = _jsonl(tmp_path / "run", [T0, T0 + 30, bad, T0 + 90])
    ev, _ = measure(tmp_path / "run")
    [err] = ev.errors
    assert (err.file, err.line) == (str(p), 3) and "no Unix time in s, ms, us or ns" in err.message


def test_a_csv_time_column_is_read_by_magnitude_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    rows = "".join(f"{10 * i},1.0,{(T0 + 30 * i) * 10**9}\n" for i in range(1, 5))
    (run / "metrics.csv").write_text("step,train_loss,timestamp\n" + rows + f"50,1.0,{T0 * 10**12}\n")
    ev, _ = measure(run)
    [err] = ev.errors
    assert (err.file, err.line) == (str(run / "metrics.csv"), 6) and "no Unix time" in err.message
    assert ev.streams[0].first_wall == pytest.approx(T0 + 30)


def test_time_ns_through_the_cli_is_read_not_an_internal_error(tmp_path: Path) -> None:
    _jsonl(tmp_path / "run", [(T0 + 30 * i) * 10**9 for i in range(5)])
    r = spec_check("lint", "--run", str(tmp_path / "run"), "--format", "json")
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr and r.returncode in (0, 1), r.stderr


def _deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize("at", [1, 3])
def test_a_json_line_nested_5000_deep_is_an_error_naming_its_line(tmp_path: Path, at: int) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = [json.dumps({"step": 10 * i, "loss": 1.0}) for i in range(1, 6)]
    lines[at - 1] = '{"step": 1, "loss": 1.0, "x": ' + _deep(5000) + "}"
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    ev, _ = measure(run)
    [err] = ev.errors
    assert (err.file, err.line) == (str(run / "metrics.jsonl"), at) and "nested deeper" in err.message


def test_a_trainer_state_nested_5000_deep_is_an_error_and_the_configs_are_still_linted(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "trainer_state.json").write_text('{\n  "log_history": [' + _deep(5000) + "]\n}\n")
    ev, _ = measure(run)
    [err] = ev.errors
    assert err.file == str(run / "trainer_state.json") and "nested deeper" in err.message
    cfg = ROOT / "tests" / "jobs" / "formats" / "hf" / (
        "huggingface__open-r1__recipes__OpenR1-Distill-7B__sft__config_distill.yaml")
    r = spec_check("lint", str(cfg), "--run", str(run), "--format", "json")
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    findings = json.loads(r.stdout)["findings"]
    assert any(f["location"].get("file") == str(cfg) for f in findings if f.get("location"))
    assert any("nested deeper" in f["message"] for f in findings if f["status"] == "error")


def _peak_mib(code: str) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter: (its stdout, its peak RSS in MiB)."""
    # the child's own peak (VmHWM): ru_maxrss carries the parent's peak across exec, and a
    # pytest worker that ran other tests first has passed 200 MiB on its own
    wrapped = code + ("\nprint(next(int(l.split()[1]) for l in open('/proc/self/status') "
                      "if l.startswith('VmHWM:')) / 1024)")
    r = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    out, _, peak = r.stdout.rstrip().rpartition("\n")
    return out, float(peak)


def test_a_100_mib_csv_row_is_the_long_line_error_in_bounded_memory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    piece = ",".join(["1234567"] * (2**20 // 8))  # written a MiB at a time: the test's own peak
    with open(run / "metrics.csv", "w") as f:  # is inherited by the child's ru_maxrss across exec
        f.write("step,train_loss\n10,1.0\n")
        for _ in range(100):
            f.write(piece + ",")
        f.write("1\n")
    out, peak = _peak_mib(textwrap.dedent(f"""
        from pathlib import Path
        from validator.runs.measure import read_runs
        ev = read_runs([Path({str(run)!r})])
        print([(e.line, e.message) for e in ev.errors])"""))
    assert out == "[(3, 'a line longer than 1 MiB')]"
    assert peak < 200, peak


def test_1500_mlflow_metric_files_under_ulimit_1024(tmp_path: Path) -> None:
    metrics = tmp_path / "mlruns" / "0" / "run1" / "metrics"
    metrics.mkdir(parents=True)
    for k in range(1500):
        (metrics / f"key_{k:04d}").write_text("".join(f"{(T0 + 10 * s) * 1000 + k} {s * 0.5} {s}\n"
                                                      for s in range(1, 4)))
    out, _ = _peak_mib(textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        from pathlib import Path
        from validator.runs.measure import read_runs
        ev = read_runs([Path({str(tmp_path)!r})])
        print(len(ev.errors), [e.message for e in ev.errors][:1], sum(s.scalars for s in ev.streams))"""))
    assert out == "0 [] 4500"


def test_the_walk_stops_at_its_cap_and_says_once_how_many_were_left(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from validator.runs import sniff

    monkeypatch.setattr(sniff, "MAX_FILES", 50)
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    for i in range(120):
        (run / f"f{i:03d}.txt").write_text("x\n")
    for i in range(30):
        (run / "sub" / f"g{i:03d}.txt").write_text("x\n")
    s = sniff.survey(run)
    capped = [why for f, why in s.passed if "entries" in why]
    assert capped == ["more than 50 entries: the first 50 were looked at, 100 others were not"]
    assert len(s.passed) == 51  # 50 passed over one by one (text), and the one line


def test_a_walk_far_past_its_cap_stops_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from validator.runs import sniff

    monkeypatch.setattr(sniff, "MAX_FILES", 5)
    run = tmp_path / "run"
    for d in range(20):
        (run / f"d{d:02d}").mkdir(parents=True)
        for i in range(5):
            (run / f"d{d:02d}" / f"f{i}").write_text("x\n")
    s = sniff.survey(run)
    [line] = [why for _, why in s.passed if "entries" in why]
    assert line == "more than 5 entries: the first 5 were looked at, more than 45 others were not"


def test_1500_dvclive_series_under_ulimit_1024_and_a_time_in_no_unit(tmp_path: Path) -> None:
    metrics = tmp_path / "dvclive" / "plots" / "metrics" / "train"
    metrics.mkdir(parents=True)
    for k in range(1500):
        (metrics / f"m{k:04d}.tsv").write_text(f"timestamp\tstep\tm{k:04d}\n" + "".join(
            f"{(T0 + 10 * s) * 1000 + k}\t{s}\t{s * 0.5}\n" for s in range(1, 4)))
    out, _ = _peak_mib(textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        from pathlib import Path
        from validator.runs.measure import read_runs
        ev = read_runs([Path({str(tmp_path)!r})])
        print(len(ev.errors), [e.message for e in ev.errors][:1], sum(s.scalars for s in ev.streams))"""))
    assert out == "0 [] 4500"
    bad = metrics / "m0000.tsv"
    bad.write_text(f"timestamp\tstep\tm0000\n{T0 * 1000}\t1\t0.5\n{T0 * 10**12}\t2\t0.5\n")
    ev, _ = measure(tmp_path)
    [err] = ev.errors
    assert (err.file, err.line) == (str(bad), 3) and "no Unix time in s, ms, us or ns" in err.message
