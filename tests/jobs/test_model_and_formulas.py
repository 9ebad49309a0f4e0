"""The job model's contract (every catalogued fact present, valid facts documents, the
choices about defaults) and the formulas rules use (Daly checked against his paper)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from tests.jobs.util import ROOT, facts, spec_check, value
from validator.facts.document import validate
from validator.jobs.model import FACTS
from validator.rules.formulas import (
    FORMULAS,
    batch_product,
    daly_interval,
    daly_interval_max,
    daly_interval_min,
    daly_steps_max,
    daly_steps_min,
)

CATALOGUE = yaml.safe_load((ROOT / "spec" / "facts" / "job.yaml").read_text())["facts"]


def test_catalogue_and_model_agree() -> None:
    assert set(CATALOGUE) == set(FACTS)
    for name, unit in FACTS.items():
        assert CATALOGUE[name].get("unit") == unit, name
        assert CATALOGUE[name].get("label"), name


def test_every_fact_is_present_and_the_document_is_valid(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text('{"train_micro_batch_size_per_gpu": 2}')
    doc = facts(p)
    assert set(doc["facts"]) == set(FACTS)
    assert doc["subject"]["kind"] == "job"
    validate({k: v for k, v in doc.items() if k != "errors"}, "test")
    micro = doc["facts"]["job.batch.micro"]
    assert micro == {
        "value": 2,
        "source": "deepspeed: train_micro_batch_size_per_gpu",
        # the line travels with the value (captured at read time; renderers never open files)
        "location": {"file": str(p), "line": 1, "text": '{"train_micro_batch_size_per_gpu": 2}'},
    }
    acc = doc["facts"]["job.batch.accumulation"]  # a documented default: source says so, no line
    assert acc["value"] == 1 and acc["source"] == (
        "default of DeepSpeed (not set in your files; microsoft/DeepSpeed@38327e0): "
        "gradient_accumulation_steps = 1 (read in deepspeed 0.19.8, deepspeed/runtime/config.py "
        "(_set_batch_related_parameters), GRADIENT_ACCUMULATION_STEPS_DEFAULT is None: 1 when one batch size "
        f"is given, inferred with both); set it in {p}"
    )
    assert acc["location"] == {"file": str(p), "line": None}
    gl = doc["facts"]["job.batch.global"]  # neither set nor defaulted: null, "not set"
    assert gl["value"] is None and gl["source"] == "not set"


def test_set_values_fill_what_configs_cannot_know(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text('{"train_micro_batch_size_per_gpu": 2, "steps_per_print": 10}')
    doc = facts(p, gpu_count=64, step_time_s=3.0)
    assert (
        value(doc, "job.world_size") == 64
        and doc["facts"]["job.world_size"]["source"] == "--set gpu_count"
    )
    assert value(doc, "job.step_time") == 3.0
    assert value(doc, "job.logging.interval_time") == 30.0  # steps_per_print 10 x 3 s


@pytest.mark.parametrize(
    ("delta_min", "mtbf_h", "expect_min"), [(5, 24, 116.7), (5, 6, 56.7), (5, 0.25, 9.14)]
)
def test_daly_reproduces_the_paper(delta_min: float, mtbf_h: float, expect_min: float) -> None:
    got = daly_interval(1, mtbf_h * 3600, delta_min * 60) / 60
    assert got == pytest.approx(expect_min, abs=0.05)


def test_daly_scales_with_gpu_count_and_saturates() -> None:
    a = daly_interval(1024, 50_000 * 3600, 60)
    b = daly_interval(4096, 50_000 * 3600, 60)
    assert a / b == pytest.approx(2, rel=0.02)  # 4x GPUs: job MTBF / 4, tau / ~2
    assert daly_interval(1, 100, 1000) == 100  # write time >= 2 M: tau = M


def test_bounds_and_steps() -> None:
    lo, hi = daly_interval_min(8, 50_000, 60, 2), daly_interval_max(8, 50_000, 60, 2)
    tau = daly_interval(8, 50_000 * 3600, 60)
    assert lo == pytest.approx(tau / 2) and hi == pytest.approx(tau * 2)
    assert daly_steps_min(8, 50_000, 60, 2, 10) == pytest.approx(lo / 10)
    assert daly_steps_max(8, 50_000, 60, 2, 10) == pytest.approx(hi / 10)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: daly_interval_min(None, 50_000, 60, 2), "--set gpu_count"),
        (lambda: daly_steps_min(8, 50_000, 60, 2, None), "--set step_time"),
        (lambda: batch_product(4, 2, None), "--set gpu_count"),
        (lambda: daly_interval(0, 100, 1), "positive"),
        (lambda: daly_interval_min(8, 50_000, 60, 0.5), ">= 1"),
        (lambda: batch_product("4", 1, 1), "not a number"),
    ],
)
def test_unknown_inputs_raise_valueerror_naming_the_set_key(call, needle: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=needle.replace("-", r"\-")):
        call()


def test_formulas_is_a_closed_dict_of_callables() -> None:
    assert {"product", "daly_interval", "batch_product"} <= set(FORMULAS)
    assert all(callable(f) for f in FORMULAS.values())
    assert math.isclose(FORMULAS["product"](a=400e9, b=0.95), 380e9)


def test_kind_option_and_ignore_unknown(tmp_path: Path) -> None:
    p = tmp_path / "trainer.conf"
    p.write_text("trainer:\n  precision: 32\n  log_every_n_steps: 10\n")
    r = spec_check("lint", "--format", "json", "--kind", "lightning", str(p))
    assert r.returncode == 1 and '"PREC-01.full-precision-training"' in r.stdout
    q = tmp_path / "package.json"
    q.write_text('{"name": "x"}')
    r = spec_check("lint", "--ignore-unknown", str(q))
    assert r.returncode == 0, r.stderr
    r = spec_check("lint", "--kind", "nonsense", str(p))
    assert r.returncode == 2


def test_skips_name_the_set_key(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(
        '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, '
        '"gradient_accumulation_steps": 2, "bf16": {"enabled": true}}'
    )
    r = spec_check("lint", "--format", "json", str(p))
    import json

    f = next(
        x for x in json.loads(r.stdout)["findings"] if x["rule"] == "BATCH-01.global-batch-mismatch"
    )
    assert f["status"] == "skip" and "--set gpu_count=N" in f["message"]
    r = spec_check("lint", "--format", "json", "--set", "gpu_count=8", str(p))
    f = next(
        x for x in json.loads(r.stdout)["findings"] if x["rule"] == "BATCH-01.global-batch-mismatch"
    )
    assert f["status"] == "pass"


def test_ckpt02_skip_names_both_set_keys_when_both_are_unknown(tmp_path: Path) -> None:
    """An interval in steps needs the GPU count and the step time: one run names both."""
    import json

    p = tmp_path / "args.yaml"
    p.write_text("output_dir: o\nbf16: true\nsave_steps: 100\n")
    r = spec_check("lint", "--format", "json", str(p))
    f = next(
        x for x in json.loads(r.stdout)["findings"] if x["rule"] == "CKPT-02.interval-far-from-optimum"
    )
    assert f["status"] == "skip"
    assert "--set gpu_count=N" in f["message"] and "--set step_time=SECONDS" in f["message"]
    r = spec_check("lint", "--format", "json", "--set", "gpu_count=1024", "--set", "step_time=1", str(p))
    f = next(
        x for x in json.loads(r.stdout)["findings"] if x["rule"] == "CKPT-02.interval-far-from-optimum"
    )
    # judged in steps: the expected range is the save_steps to set (1024 GPUs, 1 s/step)
    assert f["status"] == "fail" and f["location"]["line"] == 3
    assert f["expected"] == ("checkpoint interval in steps within 2,276 to 9,106 (Daly's optimum for 1,024 GPUs, "
                             "50,000 GPU-h MTBF per GPU, 60 s per write, 1 s per step, within a factor of 2)")


def test_error_facts_are_valid_documents_with_their_location(tmp_path: Path) -> None:
    """A wrong-typed key is an error fact ({error, source, location}), which the facts
    schema accepts, so record/replay keeps it an error (never a default)."""
    p = tmp_path / "ds.json"
    p.write_text('{\n  "bf16": {"enabled": true},\n  "train_batch_size": "lots"\n}\n')
    doc = facts(p)
    assert [e["line"] for e in doc["errors"]] == [3]
    doc.pop("errors")
    validate(doc, str(p))
    f = doc["facts"]["job.batch.global"]
    assert set(f) == {"error", "source", "location"} and f["location"]["line"] == 3


def test_job_document_is_stamped_with_the_pinned_clock(tmp_path, monkeypatch) -> None:
    """A lint run pinned by SOURCE_DATE_EPOCH is reproducible like check's and cluster's:
    `lint --format html` and `report --format html` of its JSON must not differ by a clock."""
    from tests.jobs.util import facts as job_facts

    (tmp_path / "ds.json").write_text('{"train_batch_size": 8, "bf16": {"enabled": true}}\n')
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1795000000")
    assert job_facts(tmp_path / "ds.json")["collected_at"] == "2026-11-18T11:06:40Z"
