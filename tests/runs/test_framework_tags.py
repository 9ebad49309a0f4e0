"""scripts/check_framework_tags.py: a tags.yaml row is checked against a framework's source
at the row's commit, and a name the source does not hold is reported missing (so the check
can fail)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("check_framework_tags", ROOT / "scripts" / "check_framework_tags.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(shutil.which("git") is None, reason="git not here")
def test_a_renamed_tag_is_missing(tmp_path: Path) -> None:
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "training.py").write_text(
        "writer.add_scalar('grad-norm', g, it)\nwriter.add_scalar(name + '-time', t, it)\n"
        "timers_to_log = ['all-grads-sync']\nwandb.log({'throughput/tokens_per_sec': x})\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    row = {"read_at": {"commit": commit, "files": ["training.py"]},
           "exact": {"grad-norm": "gradient_stats", "all-grads-sync-time": "collective_latency",
                     "lm loss": "loss", "params-all-gather-time": "collective_latency"},
           "prefix": {"throughput/": "throughput", "memory/mem-": "memory"}}
    got = dict(_script().check(row, str(tmp_path / ".git")))
    assert got == {"grad-norm": True, "all-grads-sync-time": True, "lm loss": False,
                   "params-all-gather-time": False, "throughput/*": True, "memory/mem-*": False}


def test_every_pinned_row_names_what_the_script_reads() -> None:
    import yaml

    rows = [r for r in yaml.safe_load((ROOT / "validator" / "runs" / "tags.yaml").read_text())["frameworks"]
            if r.get("read_at")]
    assert {r["name"] for r in rows} == {"Megatron-LM", "NeMo", "DeepSpeed monitor", "DeepSpeed log"}
    for r in rows:
        assert set(r["read_at"]) == {"repo", "ref", "commit", "files"}
        assert "scripts/check_framework_tags.py" in " ".join(r["source"].split())
