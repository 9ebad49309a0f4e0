"""Flags a launch script passes that its own entry point adds to TrainingArguments
(issue 33, class 4): read from the entry point's dataclasses when it is in the job's
folder; unknown, not typos of HF keys, when it is not."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.jobs.util import facts

LAUNCH = """\
#!/bin/bash
torchrun --nproc_per_node 8 {script} \\
  --model_name_or_path meta-llama/Llama-2-7b-hf \\
  --output_dir out \\
  --bf16 True \\
  --load_in_kbit True \\
  --use_lora True \\
  --model_max_length 2048 \\
  --save_total_limits 3 \\
  --per_device_train_batch_size 4
"""
ENTRY = """\
from dataclasses import dataclass, field
import transformers
from arguments import LoraArguments

@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="x")
    load_in_kbit: bool = False

@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512)

def main():
    parser = transformers.HfArgumentParser((ModelArguments, LoraArguments, TrainingArguments))
"""
ARGS = "from dataclasses import dataclass\n\n@dataclass\nclass LoraArguments:\n    use_lora: bool = False\n"


def _ignored(doc: dict) -> list[str]:
    return [str(v) for v in doc["facts"]["job.config.ignored_keys"]["value"] or []]


def test_the_entry_points_own_dataclass_fields_are_no_typos(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(LAUNCH.format(script="train.py"))
    (tmp_path / "train.py").write_text(ENTRY)
    (tmp_path / "arguments.py").write_text(ARGS)
    doc = facts(tmp_path / "train.sh")
    ignored = _ignored(doc)
    assert not any("load_in_kbit" in i or "use_lora" in i or "model_max_length" in i for i in ignored), ignored
    # without the typo, the pass says whose arguments the others are
    (tmp_path / "train.sh").write_text(LAUNCH.format(script="train.py").replace("  --save_total_limits 3 \\\n", ""))
    src = facts(tmp_path / "train.sh")["facts"]["job.config.ignored_keys"]["source"]
    assert "--use_lora of LoraArguments" in src and "read from its dataclasses" in src
    # a flag none of its dataclasses has, next to an HF key, is still a typo
    assert any("save_total_limits" in i and "save_total_limit" in i for i in ignored), ignored


def test_without_the_entry_point_its_flags_are_unknown_not_typos(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(LAUNCH.format(script="../elsewhere/finetune.py"))
    doc = facts(tmp_path / "train.sh")
    assert _ignored(doc) == []
    # the finding says which flags were left unjudged, and why (a launcher's own are not named)
    src = doc["facts"]["job.config.ignored_keys"]["source"]
    assert "not in the job's folder" in src and "--load_in_kbit" in src and "nproc_per_node" not in src


def test_an_hf_example_script_takes_no_flags_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(LAUNCH.format(script="examples/pytorch/language-modeling/run_clm.py"))
    ignored = _ignored(facts(tmp_path / "train.sh"))
    assert any("load_in_kbit" in i and "load_in_8bit" in i for i in ignored), ignored


def test_an_entry_point_outside_the_job_folder_is_never_read(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (tmp_path / "train.py").write_text(textwrap.dedent(ENTRY))  # beside, not inside, the job
    (job / "train.sh").write_text(LAUNCH.format(script="../train.py"))
    doc = facts(job / "train.sh")
    assert str(tmp_path / "train.py") not in (doc["facts"]["job.files"]["value"] or [])
    assert _ignored(doc) == []  # not read: its flags are unknown


TITAN = """\
[job]
dump_folder = "./outputs"

[model]
name = "llama3"
flavor = "8B"

[training]
steps = 1000
local_batch_size = 1
enable_cpu_offloadd = true
{extra}"""


def test_a_torchtitan_forks_keys_are_its_own_not_ignored_ones(tmp_path: Path) -> None:
    p = tmp_path / "train.toml"
    p.write_text(TITAN.format(extra=""))
    assert any("enable_cpu_offloadd" in i for i in _ignored(facts(p)))  # a typo in torchtitan's own config
    p.write_text(TITAN.format(extra="\n[my_offload]\npin_memory = true\n"))
    doc = facts(p)
    assert _ignored(doc) == []  # a fork's config manager (it adds [my_offload]) defines its keys
    assert "a fork's config" in doc["facts"]["job.config.ignored_keys"]["source"]


def test_a_train_script_after_another_script_is_still_the_entry_point(tmp_path: Path) -> None:
    """``python tools/wrap.py pretrain_gpt.py ...``: pretrain_gpt.py stays the entry point
    (Megatron's), as before the first script of any name was taken."""
    p = tmp_path / "run.sh"
    p.write_text("#!/bin/bash\ntorchrun --nproc_per_node 8 tools/wrap.py pretrain_gpt.py --bf16\n")
    assert "megatron" in facts(p)["facts"]["job.formats"]["value"]
