"""HF Trainer ``max_grad_norm`` and the gradient-statistics family (MON-01).

From transformers 5.3.0 the Trainer computes and logs ``grad_norm`` on every optimizer step,
clipping only where ``max_grad_norm > 0`` (transformers/trainer.py, Trainer._run_epoch and
Trainer._get_grad_norm, read at 5.3.0, 5.16.1 and 5.23.0); up to 5.2.0 it logged none at 0.
The readers judge at the newest release read (5.23.0; axolotl 0.19.0 pins 5.16.1), and say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobs.util import by_rule, facts, findings, spec_check
from validator.jobs.hf import GRAD_NORM_UNCLIPPED
from validator.report.model import Status

HF = "output_dir: out\nbf16: true\nreport_to: wandb\n"
AXOLOTL = ("base_model: NousResearch/Meta-Llama-3-8B\ndatasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
           "micro_batch_size: 1\nnum_epochs: 1\nlearning_rate: 2e-5\noptimizer: adamw_torch\n")


def _write(tmp_path: Path, text: str, name: str = "train.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("setting", ["0", "0.0", "-1"])
def test_max_grad_norm_zero_still_logs_grad_norm(tmp_path: Path, setting: str) -> None:
    """``max_grad_norm: 0`` turns clipping off, not the logged norm: the family is emitted at
    the key's line, the source naming the transformers versions, file and symbols, and MON-01
    passes under both packs (it used to fail v1.0's families and pass v1.1 only by accident)."""
    p = _write(tmp_path, HF + f"max_grad_norm: {setting}\n")
    fact = facts(p)["facts"]["job.metrics.gradient_stats"]
    assert fact["value"] == "emitted", fact
    assert GRAD_NORM_UNCLIPPED in fact["source"] and "5.3.0" in fact["source"], fact
    assert fact["location"]["line"] == 4, fact
    v11 = by_rule(findings(p, rules_version="1.1"))["MON-01.gradient-stats-not-emitted"]
    assert v11.status is Status.PASS and "Trainer._get_grad_norm" in v11.message, v11
    v10 = by_rule(findings(p, rules_version="1.0"))["MON-01.metric-families-missing"]
    assert "gradient" not in v10.message, v10.message


def test_max_grad_norm_above_zero_and_unset_log_grad_norm(tmp_path: Path) -> None:
    for text in (HF + "max_grad_norm: 0.3\n", HF):
        fact = facts(_write(tmp_path, text))["facts"]["job.metrics.gradient_stats"]
        assert fact["value"] == "emitted" and GRAD_NORM_UNCLIPPED not in fact["source"], fact


@pytest.mark.parametrize("setting", ["null", "abc"])
def test_max_grad_norm_null_or_not_a_number_is_an_error_not_a_default(tmp_path: Path, setting: str) -> None:
    """An explicit null is no default: transformers 5.3.0+ compares it with 0 and raises, so
    the key is an error at its line and the family an error, never "logged by default"."""
    p = _write(tmp_path, HF + f"max_grad_norm: {setting}\n")
    doc = facts(p)
    fact = doc["facts"]["job.metrics.gradient_stats"]
    assert fact.get("value") is None and "max_grad_norm" in fact["error"], fact
    assert any("max_grad_norm" in e["message"] and e.get("line") == 4 for e in doc["errors"]), doc["errors"]
    if setting == "null":
        assert "TypeError" in fact["error"], fact
    f = by_rule(findings(p, rules_version="1.1"))["MON-01.gradient-stats-not-emitted"]
    assert f.status is Status.ERROR, f


def test_lint_cli_shows_the_source_of_max_grad_norm_zero(tmp_path: Path) -> None:
    p = _write(tmp_path, HF + "max_grad_norm: 0\n")
    r = spec_check("lint", "--rules-version", "1.1", "--select", "MON-01", "--format", "json", str(p))
    assert r.returncode in (0, 1), r.stderr
    assert "Trainer._get_grad_norm" in r.stdout and "traceback" not in r.stderr.lower()


def test_axolotl_max_grad_norm_zero_logs_grad_norm_at_its_pinned_transformers(tmp_path: Path) -> None:
    """axolotl 0.19.0 passes max_grad_norm on to TrainingArguments and pins transformers 5.16.1;
    null there means "not passed" (the HF default, 1.0), not an error."""
    fact = facts(_write(tmp_path, AXOLOTL + "max_grad_norm: 0\n"))["facts"]["job.metrics.gradient_stats"]
    assert fact["value"] == "emitted" and "5.16.1" in fact["source"] and GRAD_NORM_UNCLIPPED in fact["source"], fact
    fact = facts(_write(tmp_path, AXOLOTL + "max_grad_norm: null\n"))["facts"]["job.metrics.gradient_stats"]
    assert fact["value"] == "emitted" and "max_grad_norm = 1.0" in fact["source"], fact
