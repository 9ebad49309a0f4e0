"""Example jobs of our own, per framework: positive ones lint clean (exit 0), negative
ones fail with the findings their ``_expect.yaml`` names, at their lines. Every entry of
tests/acceptance/jobs/{positive,negative}/ is discovered (check-jsonschema's example
folders); one without expectations in a negative folder is a test failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.jobs.util import spec_check

HERE = Path(__file__).parent / "jobs"


def _cases(kind: str) -> list[tuple[str, Path, dict[str, Any]]]:
    folder = HERE / kind
    expect = yaml.safe_load((folder / "_expect.yaml").read_text()) or {}
    return [
        (kind, p, expect.get(p.name) or {})
        for p in sorted(folder.iterdir())
        if not p.name.startswith("_")
    ]


CASES = _cases("positive") + _cases("negative")


@pytest.mark.parametrize(
    ("kind", "path", "expect"), CASES, ids=[f"{k}-{p.name}" for k, p, _ in CASES]
)
def test_example_job(kind: str, path: Path, expect: dict[str, Any]) -> None:
    if kind == "negative":
        assert expect.get("findings"), f"{path.name}: add its expected findings to _expect.yaml"
    r = spec_check("lint", "--format", "json", *expect.get("args", []), str(path))
    assert r.returncode == (0 if kind == "positive" else 1), (r.stderr, r.stdout[-2000:])
    result = json.loads(r.stdout)
    found = {f["rule"]: f for f in result["findings"]}
    assert "LINT-00.unreadable-config" not in found
    if kind == "positive":
        bad = [
            (f["rule"], f["message"])
            for f in result["findings"]
            if f["status"] in ("fail", "error")
        ]
        assert not bad
    for rule, status, line, *file in expect.get("findings", []):
        f = found[rule]
        assert f["status"] == status, (rule, f["status"], f["message"])
        assert (f.get("location") or {}).get("line") == line, (rule, f.get("location"))
        if file:  # [rule, status, line, file name]: the finding points into that file
            assert Path((f.get("location") or {}).get("file") or "").name == file[0], (
                rule,
                f.get("location"),
            )


def test_every_framework_has_examples() -> None:
    text = " ".join(
        p.read_text(errors="replace")
        for k in ("positive", "negative")
        for p in (HERE / k).rglob("*")
        if p.is_file()
    )
    for marker in (
        "train_micro_batch_size_per_gpu",
        "class_path",
        "per_device_train_batch_size",
        "distributed_type",
        "[checkpoint]",
        "exp_manager",
        "--micro-batch-size",
        "#SBATCH",
        "torchrun",
        "PyTorchJob",
        "NCCL_ALGO=",
        "base_config",
        "mixed_precision_dtype",
    ):
        assert marker in text, marker
