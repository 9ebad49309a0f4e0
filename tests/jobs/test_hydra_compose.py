"""Hydra composed as Hydra does (hydra.cc, "The Defaults List", "Packages"): absolute
groups (``override /trainer: default``) searched from the config root, ``# @package``
headers, an experiment file linted alone composed with its bases, and a finding about a
defaults entry at that entry's line. Read on the real lightning-hydra-template configs
(tests/corpus/hydra_tree)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.jobs.util import facts, value
from validator.jobs import hydra

TEMPLATE = Path(__file__).resolve().parents[1] / "corpus/hydra_tree/ashleve__lightning-hydra-template/configs"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "configs"
    shutil.copytree(TEMPLATE, root)
    return root


def test_an_experiment_linted_alone_is_composed_with_its_bases_from_the_config_root() -> None:
    doc = facts(TEMPLATE / "experiment/example.yaml")
    assert str(TEMPLATE / "trainer/default.yaml") in value(doc, "job.files")
    assert doc["errors"] == []  # no "outside the job's folder": the config root is the job's


def test_a_precision_inherited_from_the_experiments_base_is_kept(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    base = root / "trainer/default.yaml"
    base.write_text(base.read_text().replace("# precision: 16", "precision: bf16-mixed")
                    if "# precision: 16" in base.read_text() else base.read_text() + "\nprecision: bf16-mixed\n")
    doc = facts(root / "experiment/example.yaml")
    assert value(doc, "job.precision.mode") == "bf16"
    assert doc["facts"]["job.precision.mode"]["location"]["file"] == str(base)


def test_a_missing_option_of_an_existing_group_is_lint_00_at_its_entry(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    exp = root / "experiment/example.yaml"
    exp.write_text(exp.read_text().replace("override /trainer: default", "override /trainer: gpux"))
    doc = facts(exp)
    (err,) = [e for e in doc["errors"] if "gpux" in e["message"]]
    lines = exp.read_text().splitlines()
    assert lines[err["line"] - 1].strip() == "- override /trainer: gpux"
    # groups with no folder here (data/, model/: not in this copy) may come from a search
    # path plugin: not reported
    assert not [e for e in doc["errors"] if "data" in e["message"] or "model" in e["message"]]


def test_an_entry_after_one_that_picks_nothing_is_named_at_its_own_line(tmp_path: Path) -> None:
    # train.yaml: `- logger: null` (line 10) picks nothing; `- trainer: default` is line 11
    root = _copy(tmp_path)
    train = root / "train.yaml"
    train.write_text(train.read_text().replace("- trainer: default", "- trainer: nosuch"))
    doc = facts(train)
    (err,) = [e for e in doc["errors"] if "nosuch" in e["message"]]
    assert train.read_text().splitlines()[err["line"] - 1].strip() == "- trainer: nosuch"


def test_package_headers() -> None:
    assert hydra.package(TEMPLATE / "experiment/example.yaml",
                         (TEMPLATE / "experiment/example.yaml").read_text()) is None
    assert hydra.package(TEMPLATE / "trainer/ddp.yaml", (TEMPLATE / "trainer/ddp.yaml").read_text()) == "trainer"
    assert hydra.package(Path("x/trainer/a.yaml"), "# @package _group_\na: 1\n") == "trainer"
    assert hydra.package(Path("x/y/a.yaml"), "# some comment\n# @package trainer\na: 1\n") == "trainer"
    # the header counts only before the first line of content
    assert hydra.package(Path("x/trainer/a.yaml"), "a: 1\n# @package _global_\n") == "trainer"


def test_a_global_package_in_a_trainer_folder_is_not_trainer_arguments(tmp_path: Path) -> None:
    (tmp_path / "trainer").mkdir()
    p = tmp_path / "trainer/big.yaml"
    p.write_text("# @package _global_\ntrainer:\n  accelerator: gpu\n  devices: 8\n  precision: bf16-mixed\n")
    doc = facts(p)
    assert value(doc, "job.precision.mode") == "bf16"
    assert value(doc, "job.resources.gpus_per_node") == 8


def test_a_config_root_above_the_repository_or_hidden_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secrets"  # beside the repository, not in it
    outside.mkdir()
    (outside / "token.yaml").write_text("trainer:\n  precision: bf16-mixed\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs/experiment").mkdir(parents=True)
    exp = repo / "configs/experiment/x.yaml"
    exp.write_text("# @package _global_\ndefaults:\n  - override /secrets: token\n")
    doc = facts(exp)
    assert str(outside / "token.yaml") not in value(doc, "job.files")
    (err,) = doc["errors"]
    assert err["line"] == 3 and "not a config root of this repository" in err["message"]
    (repo / ".hidden").mkdir()
    (repo / ".hidden/k.yaml").write_text("a: 1\n")
    exp.write_text("# @package _global_\ndefaults:\n  - override /.hidden: k\n")
    doc = facts(exp)
    assert str(repo / ".hidden/k.yaml") not in value(doc, "job.files")
