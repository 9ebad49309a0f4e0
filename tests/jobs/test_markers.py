"""The markers that name a file's format before evidence is weighed are data on each
format's descriptor (``registry.Marker``; issue 21, deliverable 4), and they pick what the
ordered code they replaced picked.

``_legacy_marker_kind`` is that code as it stood (validator/jobs/format_detection.py at
1306ef3), kept here as the reference: every real config of the corpora and many generated
key sets must get the same answer from the registry's markers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validator.jobs import format_detection as detect
from validator.jobs import registry
from validator.jobs.registry import Format, Marker

ROOT = Path(__file__).resolve().parents[2]
CORPORA = [ROOT / "tests" / "jobs" / "formats", ROOT / "tests" / "corpus", Path("/work/shared/corpus")]

DS_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "fp16", "bf16",
           "gradient_accumulation_steps", "steps_per_print", "optimizer", "wall_clock_breakdown"}
HF_KEYS = {"per_device_train_batch_size", "output_dir", "logging_steps", "save_strategy", "save_steps",
           "learning_rate", "num_train_epochs", "gradient_accumulation_steps", "report_to", "bf16"}
MAXTEXT_KEYS = {"base_config", "per_device_batch_size", "checkpoint_period", "ici_fsdp_parallelism",
                "dcn_data_parallelism", "log_period", "max_target_length"}


def _legacy_marker_kind(syntax: str, data: dict[str, Any]) -> str | None:
    """format_detection._marker_kind before the markers moved into the registry."""
    keys = set(data)
    if syntax == "toml":
        return "torchtitan" if keys & {"training", "parallelism", "checkpoint", "job", "metrics"} else None
    if syntax == "json":
        if len(keys & DS_KEYS) >= 1 and not keys & {"output_dir", "per_device_train_batch_size"}:
            return "deepspeed"
        if keys & HF_KEYS:
            return "hf"
        return None
    if data.get("kind") == "PyTorchJob" or (
        "apiVersion" in keys and "pytorchReplicaSpecs" in str(data.get("spec"))[:2000]
    ):
        return "pytorchjob"
    if len(keys & MAXTEXT_KEYS) >= 1 and "trainer" not in keys:
        return "maxtext"
    trainer = data.get("trainer")
    if (
        ("runtime" in keys or "task" in keys)
        and (not isinstance(trainer, dict) or (keys & {"runtime", "task"} and "exp_manager" not in keys))
        and ("model" not in keys or "task" in keys)
    ):
        return "tfmg"
    if "exp_manager" in keys or (
        isinstance(data.get("model"), dict)
        and {"micro_batch_size", "tensor_model_parallel_size"} & set(data["model"])
    ):
        return "nemo"
    if keys & {"distributed_type", "compute_environment"} or ("deepspeed_config" in keys and "num_processes" in keys):
        return "accelerate"
    if (
        isinstance(trainer, dict)
        or "class_path" in str(data)[:5000]
        or "_target_" in keys
        or any(isinstance(v, dict) and "_target_" in v for v in data.values())
    ):
        return "lightning"
    if keys & HF_KEYS:
        return "hf"
    return None


def _documents() -> list[tuple[str, str, Any]]:
    """(file, syntax, parsed document) of every structured file of the corpora."""
    from validator.io.source import ReadError, parse_json, parse_toml, parse_yaml, read_text

    parsers = {"json": parse_json, "toml": parse_toml, "yaml": parse_yaml}
    out = []
    for corpus in CORPORA:
        if not corpus.is_dir():
            continue
        for p in sorted(corpus.rglob("*")):
            if not p.is_file() or p.suffix in (".tsv", ".md", ".py"):
                continue
            try:
                text = read_text(p)
                syntax = detect.syntax_of(p, text)
                if syntax not in parsers:
                    continue
                tree = parsers[syntax](text, str(p))
            except (ReadError, UnicodeDecodeError, OSError):
                continue
            out.extend((str(p), syntax, doc) for doc in (tree.docs or [tree.data]))
    return out


def test_the_markers_pick_what_the_ordered_code_picked_on_every_real_config() -> None:
    docs = [(f, s, d) for f, s, d in _documents() if isinstance(d, dict)]
    assert len(docs) > 150, len(docs)  # the corpora are there
    picked = {}
    for file, syntax, doc in docs:
        for as_syntax in {syntax, "yaml", "json", "toml"}:
            assert detect._marker_kind(as_syntax, doc) == _legacy_marker_kind(as_syntax, doc), (file, as_syntax)
        picked[file] = detect._marker_kind(syntax, doc)
    # every marked format is picked by some real file
    assert {"deepspeed", "hf", "torchtitan", "pytorchjob", "maxtext", "nemo", "accelerate",
            "lightning"} <= set(picked.values())


KEYS = sorted(DS_KEYS | HF_KEYS | MAXTEXT_KEYS | {
    "training", "parallelism", "checkpoint", "job", "metrics", "kind", "apiVersion", "spec", "trainer",
    "runtime", "task", "model", "exp_manager", "distributed_type", "compute_environment", "deepspeed_config",
    "num_processes", "_target_", "class_path", "other"})
LEAF = st.sampled_from(["PyTorchJob", "pytorchReplicaSpecs", "class_path", "x", 1, None])
VALUE = st.one_of(LEAF, st.dictionaries(st.sampled_from(KEYS), LEAF, max_size=4))


@settings(max_examples=3000, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), VALUE, max_size=8), st.sampled_from(["yaml", "json", "toml"]))
def test_the_markers_pick_what_the_ordered_code_picked_on_generated_keys(data: dict[str, Any], syntax: str) -> None:
    assert detect._marker_kind(syntax, data) == _legacy_marker_kind(syntax, data)


def test_ranks_are_unique_within_a_syntax() -> None:
    for syntax in ("yaml", "json", "toml"):
        ranks = [m.rank for _, m in registry.markers(syntax)]
        assert len(ranks) == len(set(ranks)), syntax


def test_a_registered_formats_marker_is_tried_in_its_rank() -> None:
    toy = Format("toy", "Toy trainer", markers=(Marker("yaml", 5, ("toy_steps !trainer{}",)),), claimed=False)
    registry.register(toy)
    try:
        assert detect._marker_kind("yaml", {"toy_steps": 1, "exp_manager": {}}) == "toy"  # before NeMo's
        assert detect._marker_kind("yaml", {"toy_steps": 1, "trainer": {}}) == "lightning"
    finally:
        registry.unregister("toy")
    assert detect._marker_kind("yaml", {"toy_steps": 1, "exp_manager": {}}) == "nemo"


@pytest.mark.parametrize("atom,data,want", [
    ("a|b", {"b": 1}, True), ("!a|b", {"b": 1}, False), ("a{}", {"a": {}}, True), ("!a{}", {"a": []}, True),
    ("a.x|y", {"a": {"y": 1}}, True), ("a.x", {"a": ["x"]}, False), ("*.x", {"q": {"x": 1}}, True),
    ("a=v", {"a": "v"}, True), ("a=v", {"a": "w"}, False), ("a~zz:5", {"a": "1234zz"}, False),
    ("a~zz:8", {"a": "1234zz"}, True), ("~zz:9", {"a": "zz"}, True),
])
def test_each_atom(atom: str, data: dict[str, Any], want: bool) -> None:
    assert detect._atom(atom)(set(data), data) is want


@pytest.mark.parametrize("atom", ["!", "a~zz", "a~:5", "~zz:n"])
def test_a_malformed_atom_is_refused_naming_it(atom: str) -> None:
    with pytest.raises(ValueError, match="marker atom"):
        detect._atom(atom)
