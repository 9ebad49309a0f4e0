"""Hydra's composition order for a defaults list (hydra.cc, "The Defaults List"; Hydra 1.1
"Changes to default composition order"): configs merge in list order, later over earlier,
and ``_self_`` places the naming config's own values (last when it is absent). Read on the
real lightning-hydra-template configs (tests/jobs/formats/hydra, tests/corpus/hydra_tree)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.jobs.util import facts, line, value
from validator.jobs.grouping import split_folder

HYDRA = Path(__file__).resolve().parent / "formats" / "hydra"
TEMPLATE = Path(__file__).resolve().parents[1] / "corpus/hydra_tree/ashleve__lightning-hydra-template/configs"


def test_option_values_override_its_default_base_read_beneath_it() -> None:
    # trainer/ddp.yaml: defaults [default] (no _self_: its own values go last)
    doc = facts(HYDRA / "trainer/ddp.yaml")
    assert value(doc, "job.files") == [str(HYDRA / "trainer/ddp.yaml"), str(HYDRA / "trainer/default.yaml")]
    assert value(doc, "job.config.conflicts") == []
    # devices: 4 (ddp.yaml line 7) over the base's devices: 1
    assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (4, 7)
    assert doc["facts"]["job.resources.gpus_per_node"]["location"]["file"] == str(HYDRA / "trainer/ddp.yaml")


def _tree(tmp_path: Path, defaults: str) -> Path:
    """trainer/default.yaml of the template, and an option shaped like its gpu.yaml
    (accelerator, devices) that sets devices 8 and bf16 on it with the given defaults list."""
    (tmp_path / "trainer").mkdir()
    shutil.copy(HYDRA / "trainer/default.yaml", tmp_path / "trainer/default.yaml")
    opt = tmp_path / "trainer/big.yaml"
    opt.write_text(f"defaults:\n{defaults}\naccelerator: gpu\nprecision: bf16-mixed\ndevices: 8\n")
    return opt


def test_self_first_lets_the_base_override_the_option(tmp_path: Path) -> None:
    opt = _tree(tmp_path, "  - _self_\n  - default")
    doc = facts(opt)
    assert value(doc, "job.config.conflicts") == []
    # the base comes after _self_: its devices: 1 (line 9) wins over the option's 8
    assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (1, 9)
    assert doc["facts"]["job.resources.gpus_per_node"]["location"]["file"] == str(tmp_path / "trainer/default.yaml")
    # what only the option sets stays (the base leaves precision commented out)
    assert value(doc, "job.precision.mode") == "bf16"


def test_self_last_and_no_self_let_the_option_win(tmp_path: Path) -> None:
    for defaults in ("  - default\n  - _self_", "  - default"):
        for p in tmp_path.iterdir():
            shutil.rmtree(p)
        opt = _tree(tmp_path, defaults)
        doc = facts(opt)
        assert value(doc, "job.config.conflicts") == []
        at = opt.read_text().splitlines().index("devices: 8") + 1
        assert (value(doc, "job.resources.gpus_per_node"), line(doc, "job.resources.gpus_per_node")) == (8, at)
        assert value(doc, "job.precision.mode") == "bf16"


def test_a_later_entry_overrides_an_earlier_one_and_same_layer_files_still_conflict(tmp_path: Path) -> None:
    (tmp_path / "trainer").mkdir()
    shutil.copy(HYDRA / "trainer/default.yaml", tmp_path / "trainer/default.yaml")
    shutil.copy(HYDRA / "trainer/ddp.yaml", tmp_path / "trainer/ddp.yaml")
    # a primary config (as lightning-hydra-template's train.yaml) with _self_ first
    root = tmp_path / "train.yaml"
    root.write_text("defaults:\n  - _self_\n  - trainer: ddp\n\ntask_name: train\n")
    doc = facts(root)
    assert value(doc, "job.config.conflicts") == []
    assert value(doc, "job.resources.gpus_per_node") == 4
    # two files of one job that name nothing of each other are still a conflict
    other = tmp_path / "trainer/solo.yaml"
    other.write_text("devices: 2\naccelerator: gpu\n")
    both = facts(tmp_path / "trainer/ddp.yaml", other)
    assert any("devices" in c for c in value(both, "job.config.conflicts"))


def test_absolute_group_path_from_an_experiment_config(tmp_path: Path) -> None:
    """experiment/example.yaml (``@package _global_``) names ``override /trainer: default``:
    from the config root, not from experiment/. Linted with its tree or alone, it composes it."""
    configs = tmp_path / "configs"
    shutil.copytree(TEMPLATE, configs)
    jobs = {d["subject"]["name"]: d for d in split_folder(configs)}
    exp = jobs[str(configs / "experiment/example.yaml")]
    assert str(configs / "trainer/default.yaml") in value(exp, "job.files")
    assert exp["errors"] == []
    assert value(exp, "job.resources.gpus_per_node") == 1
    # linted alone, the config root above experiment/ is searched as Hydra does: the same
    # composition, no finding (it once said "outside the job's folder" at line 10)
    alone = facts(configs / "experiment/example.yaml")
    assert alone["errors"] == []
    assert str(configs / "trainer/default.yaml") in value(alone, "job.files")
    assert value(alone, "job.resources.gpus_per_node") == 1
