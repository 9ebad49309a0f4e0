"""validator/jobs/edits.py: a fix changes only the line its setting is on (or inserts one),
in every syntax, and refuses what it cannot edit as written."""

from __future__ import annotations

from typing import Any

import pytest

from validator.jobs.edits import EditError, apply, replacement

YAML = "# c\nbf16: False  # x\nlogging_steps: 500\ntrainer:\n  precision: 32   # comment\n  max_steps: 10\nlist:\n  - a\n"
JSON = '{\n  "train_batch_size" : 256,\n  "fp16": {\n    "enabled": false,\n    "loss_scale": 1e9\n  },\n  "x": 1\n}\n'
TOML = '[job]\ndump_folder = "x"  # c\n\n[metrics]\nlog_freq = 10\n'
SHELL = '#!/bin/bash\n#SBATCH -N 2\n\nGPT_ARGS="\n    --num-layers 24 \\\n    --log-interval 100 \\\n"\ntorchrun $GPT_ARGS\n'


def fix(file: str, kind: str, target: str, value: Any, line: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"file": file, "kind": kind, "target": target, "value": value, "why": "w"}
    if line is not None:
        out["line"] = line
    return out


def changed(old: str, new: str) -> list[tuple[str, str]]:
    import difflib

    return [(op, line) for op, line in ((d[0], d[2:]) for d in difflib.ndiff(old.splitlines(), new.splitlines()))
            if op in "+-"]


@pytest.mark.parametrize(("f", "want"), [
    (fix("a.yaml", "key", "bf16", True), [("-", "bf16: False  # x"), ("+", "bf16: true  # x")]),
    (fix("a.yaml", "key", "trainer.precision", "bf16-mixed"),
     [("-", "  precision: 32   # comment"), ("+", "  precision: bf16-mixed   # comment")]),
    (fix("a.yaml", "key", "trainer.log_every_n_steps", 50), [("+", "  log_every_n_steps: 50")]),
    (fix("a.yaml", "key", "exp_manager.resume_if_exists", True),
     [("+", "exp_manager:"), ("+", "  resume_if_exists: true")]),
    (fix("a.json", "key", "fp16.enabled", True), [("-", '    "enabled": false,'), ("+", '    "enabled": true,')]),
    (fix("a.json", "key", "bf16.enabled", True), [("+", '  "bf16": {"enabled": true},')]),
    (fix("a.toml", "key", "metrics.log_freq", 5), [("-", "log_freq = 10"), ("+", "log_freq = 5")]),
    (fix("a.sh", "flag", "--log-throughput", True, 5),
     [("-", "    --num-layers 24 \\"), ("+", "    --log-throughput --num-layers 24 \\")]),
    (fix("a.sh", "flag", "--log-interval", 10, 6), [("-", "    --log-interval 100 \\"), ("+", "    --log-interval 10 \\")]),
    (fix("a.sh", "env", "TORCH_NCCL_ENABLE_TIMING", "1"), [("+", "export TORCH_NCCL_ENABLE_TIMING=1")]),
], ids=lambda x: x["target"] if isinstance(x, dict) else "")
def test_an_edit_changes_only_its_line(f: dict[str, Any], want: list[tuple[str, str]]) -> None:
    old = {"yaml": YAML, "json": JSON, "toml": TOML, "sh": SHELL}[f["file"].rsplit(".", 1)[1]]
    new = apply(old, f)  # type: ignore[arg-type]
    assert changed(old, new) == want
    rep = replacement(old, new)
    lines = old.splitlines(keepends=True)
    assert "".join(lines[: rep["start"] - 1]) + rep["text"] + "".join(lines[rep["end"]:]) == new


@pytest.mark.parametrize(("text", "f", "why"), [
    ("a: {b: 1}\n", fix("a.yaml", "key", "a.c", 1), "flow-style"),
    ("a:\n  - b: 1\n", fix("a.yaml", "key", "a.c", 1), "not a mapping"),
    ("a: 1\n---\nb: 2\n", fix("a.yaml", "key", "c", 1), "several YAML documents"),
    ('{"a": {"b": 1}}\n', fix("a.json", "key", "a.c", 1), "one member a line"),
    ("x=1\n", fix("a.sh", "flag", "--bf16", True, 1), "no flag"),
    ("a: 1\n", fix("a.yaml", "flag", "--bf16", True), "cannot be made in a yaml file"),
])
def test_what_cannot_be_edited_as_written_is_refused(text: str, f: dict[str, Any], why: str) -> None:
    with pytest.raises(EditError, match=why):
        apply(text, f)  # type: ignore[arg-type]


def test_a_launcher_flag_goes_after_the_launcher_not_among_the_scripts_arguments() -> None:
    text = "#!/bin/bash\nsrun torchrun train.py --lr 1e-4 --epochs 3\n"
    new = apply(text, fix("a.sh", "flag", "torchrun --max-restarts", 3, 2))  # type: ignore[arg-type]
    assert new.splitlines()[1] == "srun torchrun --max-restarts 3 train.py --lr 1e-4 --epochs 3"
    with pytest.raises(EditError, match="does not run torchrun"):
        apply(text, fix("a.sh", "flag", "torchrun --max-restarts", 3, 1))  # type: ignore[arg-type]


def test_a_fix_that_needs_a_value_is_not_applied() -> None:
    f = {**fix("a.yaml", "key", "save_steps", None), "needs": "pass --set step_time=SECONDS"}
    with pytest.raises(EditError, match="step_time"):
        apply("save_steps: 500\n", f)  # type: ignore[arg-type]
