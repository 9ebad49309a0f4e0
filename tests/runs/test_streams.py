"""The pieces of `lint --run` on their own: the cadence of a stream (bounded memory, restarts,
one emission per step), the family table (every framework row versioned, the recorded tags
of HF and Lightning classified), and files judged by content, not by name."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
import yaml

from tests.jobs.util import spec_check
from tests.runs.util import FIXTURES, RECORDINGS
from validator.runs.cadence import Stream
from validator.runs.families import FAMILIES, MON01, classify
from validator.runs.sniff import kind_of


def _feed(s: Stream, steps: range, t0: float = 1.7e9, dt: float = 0.5) -> float:
    t = t0
    for step in steps:
        t += dt + (step % 7) * 0.013  # gaps that differ, so the histogram has many buckets
        s.add("train/loss", step, t, 1.0)
        s.add("train/grad_norm", step, t, 0.5)
        s.add("lr", step, t, 1e-4)
    return t


def test_memory_does_not_grow_with_the_run() -> None:
    def peak(n: int) -> int:
        tracemalloc.start()
        s = Stream("x", "tensorboard")
        _feed(s, range(n))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert s.families["loss"].emissions == n
        return top

    small, large = peak(20_000), peak(200_000)
    assert large < 1.5 * small + 256 * 1024, (small, large)  # ten times the run, not ten times the memory


def test_names_of_one_step_are_one_emission_and_gaps_are_per_family() -> None:
    s = Stream("x", "csv")
    for step in range(0, 100, 10):
        for k in range(4):
            s.add(f"grad_2.0_norm/layer{k}", step, None, 0.1)
    g = s.families["gradient_stats"]
    assert g.emissions == 10 and g.step_gap(0.5) == 10 and g.step_gap(0.95) == 10
    assert g.wall_gap(0.5) is None and g.tags[:2] == ["grad_2.0_norm/layer0", "grad_2.0_norm/layer1"]
    assert g.tag_count == 4


def test_step_going_back_is_a_restart_and_its_gap_is_not_a_stall() -> None:
    s = Stream("x", "tensorboard")
    t = _feed(s, range(0, 50))
    s.add("train/loss", 40, t + 60.0, 1.0)  # resumed from step 40 a minute later
    s.add("train/grad_norm", 40, t + 60.0, 1.0)  # the same restart, not a second one
    _feed(s, range(41, 60), t0=t + 60.0)
    [r] = s.restarts
    assert (r.step_before, r.step_after, r.tag) == (49, 40, "train/loss")
    assert r.wall_after - r.wall_before == pytest.approx(60.0)
    assert s.families["loss"].stalls() == [] and s.families["loss"].max_gap().seconds < 1.0


def test_a_step_logged_twice_at_once_is_no_restart() -> None:
    s = Stream("x", "tensorboard")
    s.add("train/epoch", 300, 100.0, 1.0)
    s.add("train/epoch", 300, 100.01, 1.0)  # HF's final summary logs epoch again at the last step
    assert s.restarts == []


def test_stall_is_many_times_the_median_and_at_least_5_s() -> None:
    s = Stream("x", "tensorboard")
    t = _feed(s, range(0, 100), dt=0.1)
    s.add("train/loss", 100, t + 4.0, 1.0)  # 40x the median but under 5 s: no stall
    s.add("train/loss", 101, t + 10.0, 1.0)  # 6 s: a stall
    [stall] = s.families["loss"].stalls()
    assert (stall.step_from, stall.step_to) == (100, 101) and stall.seconds == pytest.approx(6.0)


def test_nonfinite_only_for_loss_and_gradients() -> None:
    s = Stream("x", "tensorboard")
    s.add("train/loss", 5, 1.0, float("nan"))
    s.add("train/grad_norm", 5, 1.0, float("inf"))
    s.add("train/train_tokens_per_second", 5, 1.0, float("nan"))
    assert s.families["loss"].nonfinite[0][:2] == ("train/loss", 5)
    assert s.families["gradient_stats"].nonfinite_count == 1
    assert s.families["throughput"].nonfinite_count == 0


def test_every_framework_row_names_its_version_and_source() -> None:
    data = yaml.safe_load((Path(__file__).resolve().parents[2] / "validator" / "runs" / "tags.yaml").read_text())
    assert tuple(data["families"]) == FAMILIES
    names = {fw["name"] for fw in data["frameworks"]}
    assert {"HF transformers", "Lightning", "torchtitan", "Megatron-LM", "NeMo", "DeepSpeed monitor"} <= names
    for fw in data["frameworks"]:
        assert fw["version"] and fw["source"].strip()
    from validator.jobs.metrics import FAMILIES as JOB_FAMILIES

    assert set(MON01) == set(JOB_FAMILIES)  # the same vocabulary as the declared-metrics rules


@pytest.mark.parametrize(("name", "family", "framework"), [
    ("train/loss", "loss", "HF transformers 5.17.0"),
    ("train/grad_norm", "gradient_stats", "HF transformers 5.17.0"),
    ("train/train_tokens_per_second", "throughput", "HF transformers 5.17.0"),
    ("grad_2.0_norm_total", "gradient_stats", "Lightning 2.6.6"),
    ("train/device/samples_per_sec", "throughput", "Lightning 2.6.6"),
    ("DeviceStatsMonitor.on_train_batch_end/reserved_bytes.all.current", "memory", "Lightning 2.6.6"),
    ("memory/max_reserved(GiB)", "memory", "torchtitan commit c594d8ac"),
    ("mfu(%)", "throughput", "torchtitan"),
    ("lm loss", "loss", "Megatron-LM"),
    ("mem-reserved-bytes", "memory", "Megatron-LM"),
    ("all-grads-sync-time", "collective_latency", "Megatron-LM"),
    ("iter-energy/gpu", "energy", "Megatron-LM"),
    ("reduced_train_loss", "loss", "NeMo"),
    ("TFLOPS_per_GPU", "throughput", "NeMo"),
    ("Train/Samples/train_loss", "loss", "DeepSpeed monitor"),
])
def test_framework_names(name: str, family: str, framework: str) -> None:
    m = classify(name)
    assert m is not None and m.family == family and m.framework.startswith(framework)


@pytest.mark.parametrize("name", ["train/learning_rate", "epoch", "lr-AdamW", "train/epoch", "train/time",
                                  "train/num_input_tokens_seen", "Train/Samples/lr",
                                  "DeviceStatsMonitor.on_train_batch_end/cpu_percent"])
def test_names_of_no_family(name: str) -> None:
    assert classify(name) is None


@pytest.mark.skipif(not RECORDINGS.is_dir(), reason="shared/recordings not here")
def test_every_recorded_tag_is_classified_or_knowingly_not() -> None:
    """Each name the recorded HF and Lightning runs logged: a family, or one of the names
    that is no family (counters, learning rate, epoch, time, CUDA allocator counts)."""
    pytest.importorskip("tensorboard")
    csv_head = (RECORDINGS / "pl_clean" / "csv" / "version_0" / "metrics.csv").read_text().splitlines()[0]
    unclassified = {n for n in csv_head.split(",") if classify(n) is None}
    for n in unclassified:
        assert n in {"epoch", "step", "lr-AdamW", "train/batches", "train/samples", "train/time"} or (
            n.startswith("DeviceStatsMonitor.") and "bytes" not in n), n


def test_files_are_judged_by_content_not_by_name(tmp_path: Path) -> None:
    text = Path(tmp_path / "metrics.csv")
    text.write_text("this is a note, not metrics\n")
    assert kind_of(text, text.read_bytes())[0] is None  # named metrics.csv, holds no step column
    slurm = tmp_path / "notes.txt"
    slurm.write_text("0: [2024-05-01 12:00:10,000] torch.distributed.elastic.multiprocessing.api: [ERROR] "
                     "failed (exitcode: -6) local_rank: 3 (pid: 1734) of binary: /usr/bin/python3\n")
    assert kind_of(slurm, slurm.read_bytes())[0] == "log"  # srun -l labelled torch elastic line
    jl = tmp_path / "x.log"
    jl.write_text(json.dumps({"step": 1, "loss": 2.0, "time": 1.7e9}) + "\n")
    assert kind_of(jl, jl.read_bytes())[0] == "jsonl"
    assert kind_of(tmp_path / "y", b"1795752682147 1.81 5\n")[0] == "mlflow"


def test_a_run_beside_a_job_replaces_what_the_config_declared(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    cfg = Path(__file__).resolve().parents[1] / "jobs" / "formats" / "hf" / (
        "huggingface__open-r1__recipes__OpenR1-Distill-7B__sft__config_distill.yaml")
    r = spec_check("lint", str(cfg), "--run", str(FIXTURES / "cpu_ddp2_crash"), "--format", "json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    by = {f["rule"]: f for f in doc["findings"]}
    lat = by["MON-01.collective-latency-not-emitted"]
    assert lat["status"] == "pass" and "measured in the run" in lat["message"]
    assert by["REC-02.measured-recovery-too-slow"]["status"] == "pass"
    assert "PREC-01.full-precision-training" in by  # the config's own rules are still judged
    assert doc["extra"]["run"]["read"] and doc["extra"]["jobs"][0]["name"] == str(cfg)


def test_a_name_of_no_family_repeating_its_step_is_no_restart() -> None:
    s = Stream("x", "tensorboard")
    s.add("epoch", 99, 100.0, 0.0)
    s.add("epoch", 99, 130.0, 0.0)  # logged again after a 30 s validation loop
    assert s.restarts == []
    s.add("train_loss", 99, 130.0, 1.0)
    s.add("train_loss", 99, 160.0, 1.0)  # a loss at the same step again, 30 s later: a resumed job
    assert [r.step_after for r in s.restarts] == [99]


def test_mlflow_step_0_is_no_step(tmp_path: Path) -> None:
    run = tmp_path / "mlruns" / "0" / "abc" / "metrics"
    run.mkdir(parents=True)
    (run / "loss").write_text("".join(f"{1795000000000 + i * 2000} {1.0 / (i + 1)} 0\n" for i in range(10)))
    from tests.runs.util import measure

    ev, _ = measure(tmp_path)
    loss = ev.streams[0].families["loss"]
    assert loss.emissions == 10 and ev.streams[0].restarts == []
    assert loss.wall_gap(0.5) == pytest.approx(2.0)


def test_histograms_stay_small_whatever_the_gaps() -> None:
    import random

    rnd = random.Random(0)
    s = Stream("x", "jsonl")
    step, t = 0, 0.0
    for _ in range(50_000):
        step += rnd.randrange(1, 10**7)
        t += rnd.random() * 1000
        s.add("loss", step, 1.7e9 + t, 1.0)
    f = s.families["loss"]
    assert len(f.step_gaps) < 10_000 and len(f.wall_gaps) < 10_000
    assert f.step_gap(0.5) == pytest.approx(5e6, rel=0.05)


def test_a_writers_restart_marker_is_one_restart_with_or_without_a_step_going_back() -> None:
    from validator.runs.cadence import RESTART_MARK

    # steps 36-40 never reached disk (a SIGKILL before the flush): nothing goes back
    s = Stream("x", "tensorboard")
    s.add(RESTART_MARK, 0, 100.0, 0.0)  # a new run's first file may open with one: no restart
    t = _feed(s, range(0, 36), t0=100.0)
    s.add(RESTART_MARK, 41, t + 5.0, 0.0)  # resumed at purge_step 41
    s.add("train/loss", 45, t + 6.0, 1.0)
    [r] = s.restarts
    assert (r.tag, r.step_before, r.step_after, r.marker) == ("train/loss", 35, 45,
                                                             "TensorBoard SessionLog START at step 41")
    assert r.wall_after - r.wall_before == pytest.approx(6.0)
    assert s.scalars == 36 * 3 + 1  # the markers are no scalars
    # every step reached disk: the resumed job logs steps it had logged, the same one restart
    s = Stream("x", "tensorboard")
    t = _feed(s, range(0, 46))
    s.add(RESTART_MARK, 41, t + 5.0, 0.0)
    _feed(s, range(41, 60), t0=t + 5.0)
    [r] = s.restarts
    assert (r.step_before, r.step_after, r.marker) == (45, 41, "TensorBoard SessionLog START at step 41")
    assert s.families["loss"].stalls() == []
