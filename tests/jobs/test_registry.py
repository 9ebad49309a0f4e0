"""One descriptor per job format (validator/jobs/registry.py; issue 21, deliverable 4).

A format registered at run time, with no edit anywhere else, is detected by its keys,
dispatched to its reader, offered by ``lint --kind``, labels its defaults and names its
metric settings; and no module outside the registry keeps a table of format names.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from validator.jobs import registry
from validator.jobs.registry import Format, Framework, Metrics

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "validator"

TOY_KEYS = frozenset({"toy_steps", "toy_gpus", "toy_log_every", "toy_dir"})


def read_toy(ctx: Any) -> None:
    """The throwaway format's reader: records its tag and one fact from its keys."""
    ctx.model.formats.append("toy")
    gpus = ctx.get("toy_gpus")
    if isinstance(gpus, int):
        ctx.set("job.resources.gpus_per_node", gpus, ("toy_gpus",), "toy: toy_gpus")


TOY = Format(
    "toy", "Toy trainer", "tests.jobs.test_registry:read_toy",
    keys=frozenset({"toy_steps"}), catalogue="toy", scored_in=("yaml",), precedence=-1,
    framework=Framework("Toy Trainer", "toy 9.9", "toy"),
    metrics=Metrics({"gpu_utilization": "set toy_log_every: N", "memory": None,
                     "collective_latency": None, "gradient_stats": None}),
)


@pytest.fixture()
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Format]:
    """TOY registered, with its key catalogue (in memory: no file written into the package)."""
    from validator.jobs import keys

    real = keys.catalogue
    cat = keys.Catalogue("toy", "toy", "9.9", {"": TOY_KEYS})
    monkeypatch.setattr(keys, "catalogue", lambda name: cat if name == "toy" else real(name))
    registry.register(TOY)
    try:
        yield TOY
    finally:
        registry.unregister("toy")
    assert "toy" not in registry.kinds() and "toy" not in registry.catalogued()


def _write(tmp_path: Path) -> Path:
    p = tmp_path / "train.yaml"
    p.write_text("toy_steps: 100\ntoy_gpus: 8\ntoy_log_every: 10\ntoy_dir: /ckpt\n")
    return p


def test_a_registered_format_is_detected_dispatched_and_offered(toy: Format, tmp_path: Path) -> None:
    from validator.jobs import format_detection, read_job

    p = _write(tmp_path)
    import yaml

    assert format_detection.kind_of_tree("yaml", yaml.safe_load(p.read_text()), p) == "toy"
    (doc,) = read_job([p])
    facts = doc["facts"]
    assert facts["job.formats"]["value"] == ["toy"]
    assert facts["job.resources.gpus_per_node"]["value"] == 8
    assert facts["job.resources.gpus_per_node"]["source"] == "toy: toy_gpus"
    # its metric settings (precedence -1: it speaks for the job)
    util = facts["job.metrics.gpu_utilization"]
    assert util["value"] == "not emitted" and "toy: to emit it, set toy_log_every: N" in util["source"]
    # its defaults are labelled with its framework, version and where to set it
    from validator.jobs import defaults

    assert defaults.framework_of("toy: toy_log_every = 10 steps") == ("Toy Trainer", "toy 9.9")
    assert defaults.describe("toy: toy_log_every = 10 steps", "train.yaml") == (
        "default of Toy Trainer (not set in your files; toy 9.9): toy_log_every = 10 steps; set it in train.yaml")


def test_a_registered_format_is_a_kind_choice_of_lint(toy: Format, tmp_path: Path) -> None:
    from validator.cli import cli

    p = _write(tmp_path)
    p.rename(tmp_path / "train.cfg")  # no extension detection knows: --kind decides
    r = CliRunner().invoke(cli, ["lint", "--help"])
    assert "|hydra|toy]" in r.output.replace("\n", "").replace(" ", "")
    r = CliRunner().invoke(cli, ["lint", "--kind", "toy", "--format", "json", str(tmp_path / "train.cfg")])
    assert r.exit_code in (0, 1), r.output
    result = json.loads(r.stdout)
    subjects = {f["subject"] for f in result["findings"]}
    assert subjects and all("train.cfg" in s for s in subjects)
    assert not any(f["status"] == "error" and "format" in (f.get("message") or "") for f in result["findings"])


def test_unregistered_it_is_gone(tmp_path: Path) -> None:
    from validator.jobs import format_detection

    registry.register(TOY)
    registry.unregister("toy")
    assert "toy" not in format_detection.KINDS and "toy" not in registry.BY_NAME
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.BY_NAME["hf"])


def test_every_claimed_format_reads_and_every_tag_is_one_formats() -> None:
    tags: dict[str, str] = {}
    for f in registry.FORMATS:
        if f.claimed:
            assert callable(registry.reader(f.name)), f.name
        for t in (f.job_tag, *f.launch_tags):
            assert tags.get(t, f.name) == f.name or t in ("shell", "deepspeed_launcher"), (t, f.name)
            tags[t] = f.name
        if f.metrics is not None:
            assert f.precedence is not None, f"{f.name} has metric settings but no precedence"
        if f.catalogue:
            from validator.jobs.keys import catalogue

            assert catalogue(f.catalogue) is not None, f"{f.name}: no validator/jobs/keys/{f.catalogue}.json"
    precedences = [f.precedence for f in registry.FORMATS if f.precedence is not None]
    assert len(precedences) == len(set(precedences)), "two formats of the same precedence"


# --- no table of format names outside the registry -----------------------------------------

# (file, the names together in one literal): what each is, and why it is no format table
ALLOWED: dict[tuple[str, frozenset[str]], str] = {
    # launcher programs at a command position (shell.py): program names, spelled as formats
    ("validator/jobs/shell.py", frozenset({"torchrun", "deepspeed", "accelerate", "ft_launcher"})): "launchers",
}


def _format_names() -> set[str]:
    names = {f.name for f in registry.FORMATS if f.claimed} | {f.job_tag for f in registry.FORMATS}
    return names | {f.catalogue for f in registry.FORMATS if f.catalogue}


def _tables(tree: ast.AST, names: set[str]) -> Iterator[tuple[int, frozenset[str]]]:
    """Every dict/set/list/tuple literal with two or more format names among its strings
    (dict keys and values, elements): a table keyed by, or listing, formats."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = list(node.elts)
        else:
            continue
        hits = frozenset(i.value for i in items if isinstance(i, ast.Constant) and i.value in names)
        if len(hits) >= 2:
            yield node.lineno, frozenset(i.value for i in items if isinstance(i, ast.Constant)
                                         and isinstance(i.value, str))


def test_no_table_of_format_names_outside_the_registry() -> None:
    names = _format_names()
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "validator/jobs/registry.py":
            continue
        for line, strings in _tables(ast.parse(path.read_text(), rel), names):
            if (rel, strings) not in ALLOWED:
                found.append(f"{rel}:{line}: {sorted(strings)}")
    assert not found, "tables of format names outside validator/jobs/registry.py (derive them from it):\n" + \
        "\n".join(found)
    seen = {(p.relative_to(ROOT).as_posix(), s) for p in PKG.rglob("*.py")
            for _, s in _tables(ast.parse(p.read_text()), names)}
    assert set(ALLOWED) <= seen, f"stale allow-list entries: {set(ALLOWED) - seen}"


def test_the_scan_finds_a_table() -> None:
    tree = ast.parse('SETTINGS = {"megatron": 1, "hf_trainer": 2}\nX = ("a", "b")\n')
    assert [s for _, s in _tables(tree, _format_names())] == [frozenset({"megatron", "hf_trainer"})]


def test_contributing_recipes_name_the_files_touched() -> None:
    """The add-a-job-format and add-an-output-format walk-throughs name files that exist
    (placeholders such as <name> match any), among them the registries, and every
    descriptor field they name is one."""
    import dataclasses
    import re

    from validator import renderers

    text = (ROOT / "CONTRIBUTING.md").read_text()
    want = {
        "add a job-config format": ({"validator/jobs/registry.py", "tests/jobs/formats/MANIFEST.tsv"},
                                    {f.name for f in dataclasses.fields(Format)}),
        "add an output format": ({"validator/renderers/__init__.py", "docs/reports.md"},
                                 {f.name for f in dataclasses.fields(renderers.OutputFormat)}),
    }
    for recipe, (files, fields) in want.items():
        section = text.split(f"## Recipe: {recipe}", 1)[1].split("\n## ", 1)[0]
        named = {m for m in re.findall(r"`([^` ]+)`", section) if "/" in m and not m.startswith(("--", '"'))}
        assert files <= named, recipe
        for path in sorted(named):
            pattern = re.sub(r"<[a-z]+>", "*", path.split(":")[0])
            assert list(ROOT.glob(pattern)), f"CONTRIBUTING.md ({recipe}) names {path}, which is not in the tree"
        # the step that writes the registry line: every field it names is the descriptor's
        step = next(p for p in re.split(r"\n\d\. ", section) if "`FORMATS`" in p or "`OUTPUTS`" in p)
        named_fields = set(re.findall(r"`([a-z_]+)`", step)) - {"show_passes"}  # a renderer option
        assert len(named_fields) >= 3 and named_fields <= fields, (recipe, named_fields - fields)
