"""Detection by evidence only one framework leaves (validator/jobs/evidence.py, each format's
descriptor in validator/jobs/registry.py): section
names frameworks share (``trainer:``, ``task:``, ``model:``) decide nothing. Read on the
real configs of frameworks spec-check does not read (tests/corpus/unclaimed_yaml: verl,
fairseq, a Composer trainer built by Hydra) and on those of formats it does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.jobs.util import facts, value
from validator.jobs import format_detection as detect
from validator.jobs import registry as formats

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
UNCLAIMED = sorted((CORPUS / "unclaimed_yaml").glob("*.yaml"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", "lint", *args], capture_output=True, text=True,
                          timeout=120)


def test_every_structured_kind_has_one_descriptor_with_a_reader() -> None:
    for kind in detect.KINDS:
        fmt = formats.BY_NAME[kind]
        assert fmt.claimed and callable(formats.reader(kind)), kind
    for fmt in formats.FORMATS:
        if not fmt.claimed:
            assert fmt.reader is None and (fmt.targets or fmt.keys), fmt.name


def test_decisive_keys_belong_to_one_format_only() -> None:
    owner: dict[str, str] = {}
    for fmt in formats.FORMATS:
        for k in fmt.keys:
            assert k not in owner, f"{k} is decisive for both {owner[k]} and {fmt.name}"
            owner[k] = fmt.name
        for sect, keys in fmt.sections.items():
            for k in keys:
                tag = f"{sect}.{k}"
                assert tag not in owner, f"{tag} is decisive for both {owner[tag]} and {fmt.name}"
                owner[tag] = fmt.name


@pytest.mark.parametrize("path", UNCLAIMED, ids=[p.name[:60] for p in UNCLAIMED])
def test_unclaimed_frameworks_are_refused_naming_what_was_seen(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    assert detect.kind_of_tree("yaml", data, path) is None
    r = _cli(str(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "not a recognized training config" in r.stderr
    assert "Traceback" not in r.stderr


def test_the_refusal_names_the_other_framework_and_the_missing_evidence() -> None:
    verl = CORPUS / "unclaimed_yaml/volcengine__verl__verl__trainer__config___generated_ppo_trainer.yaml"
    why = detect.why_refused("yaml", yaml.safe_load(verl.read_text()), verl)
    assert "verl (RL post-training) (a format spec-check does not read)" in why
    assert "Lightning evidence: nothing decisive" in why and "trainer:" in why
    composer = CORPUS / "unclaimed_yaml/mosaicml__diffusion__yamls__hydra-yamls__SD-2-base-256.yaml"
    why = detect.why_refused("yaml", yaml.safe_load(composer.read_text()), composer)
    assert "_target_ composer.Trainer" in why and "llm-foundry evidence" in why


def test_ignore_unknown_passes_them_over() -> None:
    r = _cli(*map(str, UNCLAIMED), "--ignore-unknown", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["findings"] == []


def test_a_composer_trainer_is_not_given_llm_foundry_defaults(tmp_path: Path) -> None:
    src = (CORPUS / "unclaimed_yaml/mosaicml__diffusion__yamls__hydra-yamls__SD-2-base-256.yaml").read_text()
    p = tmp_path / "train.yaml"
    p.write_text(src)
    doc = facts(p)
    assert "llmfoundry" not in value(doc, "job.formats")


def test_own_evidence_keeps_the_format_against_shared_names(tmp_path: Path) -> None:
    # a verl-shaped trainer block: no Lightning Trainer argument among its keys
    p = tmp_path / "x.yaml"
    p.write_text("trainer:\n  total_epochs: 3\n  n_gpus_per_node: 8\n  save_freq: 10\n  logger: [console]\n"
                 "data:\n  train_batch_size: 8\n")
    assert detect.kind_of_tree("yaml", yaml.safe_load(p.read_text()), p) is None
    # the same block with Lightning's own Trainer arguments is Lightning's
    p.write_text("trainer:\n  accelerator: gpu\n  devices: 8\n  precision: bf16-mixed\n  max_steps: 10\n")
    assert detect.kind_of_tree("yaml", yaml.safe_load(p.read_text()), p) == "lightning"
    # Lightning 1.x arguments (removed in 2.0) are Lightning's evidence too
    p.write_text("trainer:\n  gpus: 8\n  amp_backend: native\n  max_epochs: 3\n")
    assert detect.kind_of_tree("yaml", yaml.safe_load(p.read_text()), p) == "lightning"
    # a class of Lightning's named outright decides it over any key count
    p.write_text("trainer:\n  _target_: lightning.pytorch.Trainer\n  total_epochs: 3\n  foo: 1\n")
    assert detect.kind_of_tree("yaml", yaml.safe_load(p.read_text()), p) == "lightning"
