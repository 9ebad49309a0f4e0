"""Rule, pack and spec files are validated without pydantic when they are certainly valid
as they stand; the plain checks must never accept what the pydantic models reject, nor
give different objects than they do."""

from __future__ import annotations

import copy
import random
import subprocess
import sys
from typing import Any

import pytest

from validator import loader, spec, validation_models
from validator.errors import RuleFileError
from validator.resources import rules_dir, spec_dir
from validator.yamlfile import load_yaml


def _files() -> list[tuple[str, Any]]:
    out = []
    for p in sorted(rules_dir().rglob("*.yaml")):
        if p.name != "index.yaml":
            out.append(("PackFile" if p.name == "pack.yaml" else "RuleFile", load_yaml(p)))
    return out


def _plain(model: str, data: Any) -> Any:
    if model == "Spec":
        return spec._plain_spec(data)
    return loader._plain_file(model, data)


def _pydantic(model: str, data: Any) -> Any:
    runtime = spec if model == "Spec" else loader._RUNTIME
    return validation_models.validate(model, data, "f.yaml", RuleFileError, runtime)


def test_bundled_files_take_the_plain_path_and_give_the_same_objects() -> None:
    files = [*_files(), ("Spec", load_yaml(spec_dir() / "v1.0" / "requirements.yaml"))]
    for model, data in files:
        plain = _plain(model, data)  # raises _NotPlain if the plain checks missed a bundled file
        assert plain == _pydantic(model, data)
        assert spec.plain(plain, "json") == getattr(validation_models, model).model_validate(data).model_dump(
            mode="json")


def test_the_bundled_pack_loads_without_pydantic() -> None:
    code = ("import sys; from validator.cli.common import RunOptions, build; build(RunOptions()); "
            "print('pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


_ODD_VALUES: list[Any] = [None, 1, 1.5, float("nan"), True, "yes", "", "x\n", [], {}, ["a"], {"a": 1},
                          "NET-01.x", "MUST", "skip", "gte", "node", "1 GiQ", "400 Gb/s", {"param": "x"},
                          {"param": "x", "fact": "y"}, [{"op": "gte"}]]


def _mutations(data: Any, rnd: random.Random, n: int) -> list[Any]:
    """Copies of ``data`` with one value replaced, one key dropped or one key added."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*path, i))

    walk(data, ())
    out = []
    for _ in range(n):
        doc = copy.deepcopy(data)
        path = rnd.choice(paths[1:])
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = rnd.random()
        if action < 0.6:
            parent[path[-1]] = copy.deepcopy(rnd.choice(_ODD_VALUES))
        elif action < 0.8 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rnd.choice(["extra", "level", "when", "value", "fact", "status", "enabled"])] = copy.deepcopy(
                rnd.choice(_ODD_VALUES))
        out.append(doc)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_plain_checks_never_accept_what_pydantic_rejects(seed: int) -> None:
    rnd = random.Random(seed)
    files = [*_files(), ("Spec", load_yaml(spec_dir() / "v1.0" / "requirements.yaml"))]
    plain_ok = 0
    for model, data in files:
        for doc in _mutations(data, rnd, 150):
            try:
                plain = _plain(model, doc)
            except (loader._NotPlain, spec._NotPlain):
                continue
            plain_ok += 1
            assert plain == _pydantic(model, doc), (model, doc)  # raises if pydantic rejects it
    assert plain_ok > 100  # the mutations did reach the plain path


def test_the_two_definitions_of_each_model_name_the_same_fields() -> None:
    """The plain dataclasses (the fast path) and the pydantic models (the error path) must
    describe the same format: a field added to one and not the other would load differently
    depending on whether a file happens to be plainly valid."""
    import dataclasses

    from validator import loader, spec, validation_models

    pairs = []
    for module in (loader, spec):
        for name, cls in vars(module).items():
            model = getattr(validation_models, name, None)
            if dataclasses.is_dataclass(cls) and model is not None and hasattr(model, "model_fields"):
                pairs.append((name, cls, model))
    assert {"Rule", "Check", "Condition", "IfEmpty"} <= {name for name, _, _ in pairs}
    for name, cls, model in pairs:
        plain = {f.name for f in dataclasses.fields(cls)}
        strict = set(model.model_fields)
        assert plain == strict, (name, sorted(plain ^ strict))
