"""Every value's origin: the command line beats the files and says so; a framework
default says, in every output format, whose default it is and that no file set it."""

from __future__ import annotations

import json

import pytest

from tests.jobs.util import CORPUS, ROOT, spec_check

NEMO = CORPUS / "nemo_yaml" / "NVIDIA__NeMo__examples__nlp__language_modeling__conf__megatron_gpt_config.yaml"
TORCHRUN = ROOT / "tests" / "acceptance" / "jobs" / "negative" / "torchrun_no_restarts.sh"


def _finding(result: dict, rule: str) -> dict:
    return next(f for f in result["findings"] if f["rule"] == rule)


@pytest.mark.skipif(not NEMO.is_file(), reason="shared/corpus not present")
def test_set_gpu_count_wins_over_the_file_and_says_so() -> None:
    r = spec_check("lint", "--format", "json", "--set", "gpu_count=1024", "--set", "step_time=2",
                   str(NEMO))
    result = json.loads(r.stdout)
    ckpt = _finding(result, "CKPT-02.interval-far-from-optimum")
    # the range is computed for 1024 GPUs, and the finding names both values and places
    note = (f"1,024 GPUs (--set gpu_count=1024 wins over nodes x GPUs per node "
            f"= 1 x 1 = 1 at {NEMO}:9)")
    assert note in ckpt["expected"] and note in ckpt["message"]
    one = json.loads(spec_check("lint", "--format", "json", "--set", "step_time=2", str(NEMO)).stdout)

    def low(f: dict) -> int:  # "within 1,138 to 4,553 (Daly's optimum ...)"
        return int(f["expected"].split("within ")[1].split(" ")[0].replace(",", ""))

    low_1024, low_1 = low(ckpt), low(_finding(one, "CKPT-02.interval-far-from-optimum"))
    assert low_1024 < low_1  # more GPUs fail more often: a shorter optimum interval
    topo = _finding(result, "TOPO-03.degrees-do-not-divide-world-size")
    assert topo["value"] == 1024 and "wins over" in topo["source"]
    # the terminal says it too, in the finding's own words
    out = spec_check("lint", "--set", "gpu_count=1024", "--set", "step_time=2", str(NEMO)).stdout
    assert "--set gpu_count=1024 wins over" in " ".join(out.split())


def test_set_that_agrees_with_the_file_keeps_the_files_place(tmp_path) -> None:
    p = tmp_path / "job.sbatch"
    p.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
                 "srun torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n")
    result = json.loads(spec_check("lint", "--format", "json", "--set", "gpu_count=16", str(p)).stdout)
    topo = _finding(result, "TOPO-03.degrees-do-not-divide-world-size")
    assert "wins over" not in json.dumps(result)
    assert topo["status"] == "pass" and topo["value"] == 16
    assert topo["location"]["line"] == 2 and topo["source"] == "nodes x GPUs per node = 2 x 8"


DEFAULT = "default of PyTorch (not set in your files; pytorch/pytorch@010929f)"


@pytest.mark.parametrize("fmt", ["terminal", "json", "sarif", "junit", "markdown", "html", "github"])
def test_framework_default_is_labelled_in_every_format(fmt: str) -> None:
    r = spec_check("lint", "--format", fmt, str(TORCHRUN))
    assert r.returncode == 1, r.stderr
    text = " ".join(r.stdout.split())
    if fmt == "json":
        # rule pack v1.1 names the default inside the mechanism that detects a hang
        hang = _finding(json.loads(r.stdout), "REC-02.hang-detection-too-slow")
        assert DEFAULT in hang["message"] and DEFAULT in hang["source"]
        r = spec_check("lint", "--format", fmt, "--rules-version", "1.0", str(TORCHRUN))
        rec = _finding(json.loads(r.stdout), "REC-02.detection-timeout-too-long")
        assert rec["source"].startswith(DEFAULT) and DEFAULT in rec["message"]
        assert rec["location"] == {"file": str(TORCHRUN), "line": None}
        # the NCCL timeout is an argument of init_process_group: the launch script cannot set it
        # (issue 30: "set it in FILE" for a launcher with no such option)
        assert rec["source"].endswith("set in the training code or the cluster's configuration, not in a config file")
        assert f"set it in {TORCHRUN}" not in rec["source"]
        restart = _finding(json.loads(r.stdout), "REC-01.no-automatic-restart")
        assert restart["source"].startswith("default of torchrun (not set in your files")
        assert "--max-restarts = 0" in restart["source"]
    else:
        assert DEFAULT in text.replace("\\", ""), fmt


def test_profile_fills_what_the_files_leave_and_set_wins_over_both(tmp_path) -> None:
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n"
                   "srun torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n")
    prof = tmp_path / "profile.yaml"
    prof.write_text("parameters:\n  gpu_count: 64\n")

    def world(*args: str) -> dict:
        result = json.loads(spec_check("lint", "--format", "json", *args, str(job)).stdout)
        return _finding(result, "TOPO-03.degrees-do-not-divide-world-size")

    # the file says 2 x 8 = 16: a profile (the platform's settings) does not overrule it
    assert world("--profile", str(prof))["value"] == 16
    # the command line does, and says so
    f = world("--profile", str(prof), "--set", "gpu_count=32")
    assert f["value"] == 32 and f["source"].startswith("--set gpu_count=32 wins over")
    # a job that does not tell takes the profile's value, named as such
    job.write_text("#!/bin/bash\ntorchrun pretrain_gpt.py --tensor-model-parallel-size 2\n")
    f = world("--profile", str(prof))
    assert f["value"] == 64 and f["source"] == f"profile {prof}: gpu_count"


def test_defaults_of_catalogued_frameworks_name_the_catalogue_version(tmp_path) -> None:
    from validator.jobs.defaults import describe
    from validator.jobs.keys import catalogue

    cat = catalogue("axolotl")
    assert cat is not None
    text = describe("axolotl: gradient_accumulation_steps = 1", "cfg.yml")
    assert text == (f"default of axolotl (not set in your files; {cat.package} {cat.version}): "
                    "gradient_accumulation_steps = 1; set it in cfg.yml")
    # no framework's default: the plain wording, never a made-up framework
    assert describe("no energy logging configured", "x") == "default: no energy logging configured"
