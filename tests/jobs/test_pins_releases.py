"""Keys judged at the release the job runs, for the frameworks whose keys changed across
the releases repositories pin (validator/jobs/pins.py, scripts/gen_key_catalogues.py
RELEASES): transformers 4.40.2 (``evaluation_strategy``; ``eval_strategy`` came in 4.41)
and DeepSpeed 0.14.4 (ZeRO's ``mics_shard_size``; fp16/bf16 read from plain dicts, not
checked strictly), and the framework version of the container image a launcher runs
(validator/jobs/containers.json, NGC's stated versions; other tags refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.util import facts
from validator.jobs import pins
from validator.jobs.keys import releases

HF = "output_dir: out\nbf16: true\nper_device_train_batch_size: 8\n{key}: steps\nsave_steps: 500\n"
DS = {"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True},
      "zero_optimization": {"stage": 3, "mics_shard_size": 8}}


def _repo(tmp_path: Path, requirements: str | None) -> Path:
    (tmp_path / ".git").mkdir()
    if requirements is not None:
        (tmp_path / "requirements.txt").write_text(requirements)
    pins._find.cache_clear()
    return tmp_path


def _ignored(*paths: Path) -> tuple[list[str], str]:
    f = facts(*paths)["facts"]["job.config.ignored_keys"]
    return f["value"], f.get("source", "")


@pytest.mark.parametrize("req,key,reported", [
    ("transformers==4.40.2\n", "evaluation_strategy", False),
    ("transformers==4.40.2\n", "eval_strategy", True),   # new in 4.41: 4.40.2's parser refuses it
    ("transformers==5.23.0\n", "evaluation_strategy", True),  # gone before 5
    ("transformers==5.23.0\n", "eval_strategy", False),
    (None, "evaluation_strategy", False),  # version unknown: a key of any release is none
    (None, "eval_strategy", False),
])
def test_hf_keys_at_the_pinned_release(tmp_path: Path, req: str | None, key: str, reported: bool) -> None:
    root = _repo(tmp_path, req)
    p = root / "train.yaml"
    p.write_text(HF.format(key=key))
    keys, source = _ignored(p)
    assert [k.split(" at ")[0] for k in keys] == ([key] if reported else [])
    if reported:
        (text,) = keys
        other = "4.40.2" if key == "evaluation_strategy" else "5.23.0"
        assert f"a key of the top level in transformers {other}, not in" in text, text
        assert "judged at transformers" in source and "(the job pins transformers==" in source
    if req is None:
        p.write_text(HF.format(key=key) + "save_stratgy: steps\n")  # a typo is still one
        keys, source = _ignored(p)
        assert [k.split(" at ")[0] for k in keys] == ["save_stratgy"]
        assert "no pinned version found; keys of transformers 4.40.2 accepted too" in source


@pytest.mark.parametrize("req,reported", [("deepspeed==0.14.4\n", False), ("deepspeed==0.19.8\n", True),
                                          (None, False), ("deepspeed==0.16.4\n", False)])
def test_deepspeed_zero_keys_at_the_pinned_release(tmp_path: Path, req: str | None, reported: bool) -> None:
    root = _repo(tmp_path, req)
    p = root / "ds_config.json"
    p.write_text(json.dumps(DS, indent=1))
    keys, _source = _ignored(p)
    assert [k.split(" at ")[0] for k in keys] == (["zero_optimization.mics_shard_size"] if reported else [])
    if req == "deepspeed==0.16.4\n":  # between two catalogued releases: both sides' keys accepted
        how = pins.choose("deepspeed", p).how  # nothing reported: the choice itself
        assert "judged at deepspeed 0.14.4, the nearest catalogued release to the pinned deepspeed==0.16.4" \
               in how and "keys of deepspeed 0.19.8 accepted too" in how


def test_the_older_deepspeed_reads_fp16_and_bf16_from_plain_dicts() -> None:
    old = releases("deepspeed")[1]
    assert old.version == "0.14.4"
    assert {"loss_scale", "initial_scale_power", "hysteresis"} <= old.sections["fp16"]
    assert old.sections["bf16"] == {"enabled", "immediate_grad_update"}
    # only ZeRO's pydantic model forbids other keys in 0.14.4
    assert set(old.strict) == {"zero_optimization"}


def test_a_loss_scale_key_in_bf16_is_still_named_at_the_older_release(tmp_path: Path) -> None:
    root = _repo(tmp_path, "deepspeed==0.14.4\n")
    p = root / "ds.json"
    p.write_text(json.dumps({"train_batch_size": 8, "bf16": {"enabled": True, "loss_scale": 0}}, indent=1))
    (text,), source = _ignored(p)
    assert text.startswith("bf16.loss_scale at line") and "deepspeed 0.14.4 does not read it there" in text
    assert "judged at deepspeed 0.14.4 (the job pins deepspeed==0.14.4 at" in source


LAUNCH = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --container-image={image}
srun python train.py --config cli.yaml
"""
CLI = "trainer:\n  gpus: 8\n  precision: 16\n  max_epochs: 3\n"


@pytest.mark.parametrize("image", ["nvcr.io#nvidia/nemo:24.07", "nvcr.io/nvidia/nemo:24.07"])
def test_the_version_in_the_launchers_container_image_judges_the_keys(tmp_path: Path, image: str) -> None:
    root = _repo(tmp_path, None)
    (root / "launch.sh").write_text(LAUNCH.format(image=image))
    (root / "cli.yaml").write_text(CLI)
    (text,), source = _ignored(root / "launch.sh")
    assert text.startswith("trainer.gpus at line 2")  # Lightning 2.3.3 has no gpus=
    assert ("judged at lightning 2.6.6, the nearest catalogued release to the version PyTorch Lightning "
            "2.3.3, the version in container image nvcr.io/nvidia/nemo:24.07 at "
            f"{root / 'launch.sh'}:3 (stated in https://docs.nvidia.com/nemo-framework/") in source


def test_a_config_read_before_its_launcher_still_sees_the_image(tmp_path: Path) -> None:
    root = _repo(tmp_path, None)
    (root / "z_launch.sh").write_text(LAUNCH.format(image="nvcr.io/nvidia/nemo:24.09"))
    (root / "cli.yaml").write_text(CLI)
    (text,), source = _ignored(root / "cli.yaml", root / "z_launch.sh")
    assert text.startswith("trainer.gpus")
    assert "PyTorch Lightning 2.4.0, the version in container image nvcr.io/nvidia/nemo:24.09" in source


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/nemo:23.11", "nvcr.io/nvidia/nemo:dev",
                                   "nvcr.io/nvidia/nemo:${NEMO_TAG}"])
def test_an_image_tag_of_unknown_versions_is_refused_not_guessed(tmp_path: Path, image: str) -> None:
    root = _repo(tmp_path, None)
    (root / "launch.sh").write_text(LAUNCH.format(image=image))
    (root / "cli.yaml").write_text(CLI + "  precison: bf16-mixed\n")  # a typo, so the finding shows its source
    keys, source = _ignored(root / "launch.sh")
    assert [k.split(" at ")[0] for k in keys] == ["trainer.precison"]  # version unknown: gpus= is no failure
    assert f"container image {image} at {root / 'launch.sh'}:3: its framework versions are not known here" \
           in source


def test_a_dependency_file_wins_over_the_image(tmp_path: Path) -> None:
    root = _repo(tmp_path, "pytorch-lightning==1.9.5\n")
    (root / "launch.sh").write_text(LAUNCH.format(image="nvcr.io/nvidia/nemo:24.07"))
    (root / "cli.yaml").write_text(CLI + "  precison: bf16-mixed\n")
    keys, source = _ignored(root / "launch.sh")
    assert [k.split(" at ")[0] for k in keys] == ["trainer.precison"]  # gpus=: 1.9.5's
    assert "(the job pins pytorch-lightning==1.9.5 at" in source


def test_images_in_manifests_and_comments() -> None:
    text = ("# built on nvcr.io/nvidia/nemo:24.05\n"
            "spec:\n  containers:\n  - image: nvcr.io/nvidia/nemo:24.05\n"
            "resources:\n  image_id: docker:nvcr.io/nvidia/nemo:24.09\n"
            "IMAGE=\"nvcr.io/nvidia/nemo:24.07\"\n")
    assert [(i.ref, i.line) for i in pins.images_in(text, "x")] == [
        ("nvcr.io/nvidia/nemo:24.05", 4), ("nvcr.io/nvidia/nemo:24.09", 6), ("nvcr.io/nvidia/nemo:24.07", 7)]
    # another repository's image with a similar name is not NeMo's
    assert pins.images_in("image: nvcr.io/nvidia/nemo-rl:24.07\nimage: xnvcr.io/nvidia/nemo:24.07\n", "x") == []


def test_every_image_version_is_a_catalogued_framework_with_a_cited_source() -> None:
    data = json.loads((Path(pins.__file__).parent / "containers.json").read_text())
    for repo, info in data["repositories"].items():
        assert info["source"].startswith("https://"), repo
        for tag, versions in info["tags"].items():
            assert set(versions) <= set(info["packages"]), tag
            assert all(releases(fw) for fw in versions), tag


def test_a_second_image_of_unknown_versions_leaves_the_version_unknown(tmp_path: Path) -> None:
    root = _repo(tmp_path, None)
    (root / "launch.sh").write_text(LAUNCH.format(image="nvcr.io/nvidia/nemo:24.09")
                                    + "srun bash -c 'enroot import docker://nvcr.io#nvidia/nemo:24.12'\n")
    (root / "cli.yaml").write_text(CLI + "  precison: bf16-mixed\n")
    keys, source = _ignored(root / "launch.sh")
    assert [k.split(" at ")[0] for k in keys] == ["trainer.precison"]  # gpus=: not judged at 2.4.0
    assert "container image nvcr.io/nvidia/nemo:24.12 at" in source and "not known here" in source


CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_a_real_repository_pinning_the_older_releases_is_judged_at_them() -> None:
    """allenai/open-instruct at 46f0df1 pins deepspeed==0.14.4 and transformers==4.40.2
    (tests/corpus/pinned_tree): its DeepSpeed config is judged at 0.14.4, naming the line."""
    tree = CORPUS / "pinned_tree/allenai__open-instruct__46f0df1"
    conf = tree / "ds_configs/stage3_no_offloading_accelerate.conf"
    pins._find.cache_clear()
    ds = pins.choose("deepspeed", conf)
    assert ds is not None and ds.exact and ds.catalogue.label == "deepspeed 0.14.4"
    assert ds.how == f"judged at deepspeed 0.14.4 (the job pins deepspeed==0.14.4 at {tree / 'requirements.txt'}:7)"
    hf = pins.choose("hf", conf)
    assert hf is not None and hf.catalogue.label == "transformers 4.40.2" and "requirements.txt:14" in hf.how


def test_a_real_setup_scripts_container_image_gives_the_version() -> None:
    """NVIDIA/dgxc-benchmarking's llama3.1/setup.sh imports docker://nvcr.io#nvidia/nemo:24.09
    (tests/corpus/container_tree): a config of its job is judged at PyTorch Lightning 2.4.0,
    the version NVIDIA states for that container, citing the script's line."""
    from types import SimpleNamespace

    folder = CORPUS / "container_tree/NVIDIA__dgxc-benchmarking/llama3.1"
    setup = folder / "setup.sh"
    (img,) = pins.images_in(setup.read_text(), str(setup))
    assert (img.ref, img.line) == ("nvcr.io/nvidia/nemo:24.09", 39)
    job = SimpleNamespace(texts={}, job_paths=[str(setup), str(folder / "llama3.1_8b.yaml")])
    judged = pins.choose("lightning", folder / "llama3.1_8b.yaml", job)
    assert judged is not None and judged.catalogue.label == "lightning 2.6.6"
    assert (f"nearest catalogued release to the version PyTorch Lightning 2.4.0, the version in container "
            f"image nvcr.io/nvidia/nemo:24.09 at {setup}:39") in judged.how


def test_a_requirements_file_is_no_launcher_script(tmp_path: Path) -> None:
    """``deepspeed==0.14.4`` in a requirements file is a pin (read by pins.py), not a
    ``deepspeed`` launcher line: named on the command line the file is refused (exit 2)."""
    from validator.jobs import format_detection as detect

    req = CORPUS / "pinned_tree/allenai__open-instruct__46f0df1/requirements.txt"
    assert detect.syntax_of(req, req.read_text()) != "shell"
    assert detect.syntax_of(tmp_path / "train.sh", "deepspeed --num_gpus 8 train.py\n") == "shell"


def test_a_pass_at_a_pinned_release_says_which_it_was_judged_at() -> None:
    conf = CORPUS / "pinned_tree/allenai__open-instruct__46f0df1/ds_configs/stage3_no_offloading_accelerate.conf"
    pins._find.cache_clear()
    f = facts(conf)["facts"]["job.config.ignored_keys"]
    assert f["value"] == []
    assert f["source"].startswith("none at the release the job runs (deepspeed: keys of deepspeed 0.14.4; "
                                  "judged at deepspeed 0.14.4 (the job pins deepspeed==0.14.4 at")
