"""The import contract of validator/: no import circle, no private name imported from
another module, and the layers that show the data flow (sources -> rule pack -> engine ->
results -> renderers -> CLI) kept.

Three readers check it. ``lint-imports`` (import-linter, its contracts in pyproject.toml's
``[tool.importlinter]``) checks the layers between validator's packages and that siblings
stay independent (imports under ``if TYPE_CHECKING:`` left out: they never run). grimp,
import-linter's graph, finds circles between modules with every import counted, those
inside functions and under ``if TYPE_CHECKING:`` too (a circle that only type-checking
closes still ties the modules together: a shared piece wants its own module below both).
The graph below is read from the source (ast) for private names and the finer layer rules.

There are no known exceptions: a change that adds a circle or a private import fails here
(break the circle, or make the name public in the module that owns it).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "validator"

KNOWN_CIRCLES: list[frozenset[str]] = []  # none left (issue 21, deliverable 3): keep it so

KNOWN_PRIVATE: set[tuple[str, str, str]] = set()  # none left: keep it so


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _graph() -> tuple[dict[str, set[str]], set[tuple[str, str, str]]]:
    mods = _modules()

    def owner(name: str) -> str:
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, set[str]] = {}
    private: set[tuple[str, str, str]] = set()
    for m, path in mods.items():
        out: set[str] = set()
        for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out |= {owner(a.name) for a in node.names if a.name.split(".")[0] == "validator"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m if path.name == "__init__.py" else m.rsplit(".", 1)[0]
                    for _ in range(node.level - 1):
                        base = base.rsplit(".", 1)[0]
                    target = base + (f".{node.module}" if node.module else "")
                else:
                    target = node.module or ""
                if target.split(".")[0] != "validator":
                    continue
                for a in node.names:
                    if f"{target}.{a.name}" in mods:
                        out.add(f"{target}.{a.name}")
                        continue
                    out.add(owner(target))
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        private.add((m, owner(target), a.name))
        out.discard(m)
        edges[m] = out
    return edges, private


def _circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(frozenset(comp))
    return found


EDGES, PRIVATE = _graph()


def test_the_graph_is_read() -> None:
    """The reader sees top-level and in-function imports (or the contract checks nothing)."""
    assert "validator.rules.rulemodel" in EDGES["validator.evaluate.engine"]  # top level
    assert "validator.rules.validation_models" in EDGES["validator.rules.loader"]  # inside a function
    assert "validator.jobs.defaults" in EDGES["validator.jobs.model"]  # inside a method
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]


def _grimp_edges(package_dir: Path) -> dict[str, set[str]]:
    """Every import between the modules of the ``validator`` package found in
    ``package_dir``'s parent, by grimp, type-checking imports included."""
    code = ("import json, sys, grimp\n"
            "g = grimp.build_graph('validator', exclude_type_checking_imports=False, cache_dir=None)\n"
            "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=package_dir.parent, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(package_dir.parent)}, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    return {m: set(ts) for m, ts in json.loads(r.stdout).items()}


GRIMP_EDGES = _grimp_edges(PKG)


def test_no_import_circle() -> None:
    """No circle between validator's modules, with every import counted (in functions and
    under TYPE_CHECKING too)."""
    assert "validator.rules.operators" in GRIMP_EDGES["validator.rules.rulemodel"]  # in a function
    assert "validator.report.model" in GRIMP_EDGES["validator.renderers.base"]  # under TYPE_CHECKING
    new = [sorted(c) for c in _circles(GRIMP_EDGES) if not any(c <= known for known in KNOWN_CIRCLES)]
    assert new == [], f"import circle(s): {new} (break it: move what both sides need to a module of its own)"


def test_a_circle_closed_by_a_type_checking_import_is_found(tmp_path: Path) -> None:
    shutil.copytree(PKG, tmp_path / "validator", ignore=shutil.ignore_patterns("__pycache__"))
    units = tmp_path / "validator" / "values" / "units.py"
    units.write_text(units.read_text() + "\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                     "    from validator.values.numbers import beyond\n")
    numbers = tmp_path / "validator" / "values" / "numbers.py"
    numbers.write_text(numbers.read_text() + "\n\ndef _late() -> None:\n    from validator.values import units\n")
    found = [sorted(c) for c in _circles(_grimp_edges(tmp_path / "validator"))]
    assert ["validator.values.numbers", "validator.values.units"] in found


def test_the_rule_loading_circle_is_gone() -> None:
    """loader <-> spec <-> validation_models was one circle: the formats now live in the
    leaf rulemodel.py, and validation imports only it."""
    circles = _circles(GRIMP_EDGES)
    for m in ("validator.rules.loader", "validator.rules.spec", "validator.rules.validation_models", "validator.rules.rulemodel",
              "validator.rules.bundled"):
        assert not any(m in c for c in circles), m


def test_no_private_name_imported_from_another_module() -> None:
    assert sorted(PRIVATE - KNOWN_PRIVATE) == []


def test_layers() -> None:
    """The flow, as far as today's packages show it."""
    def imports(m: str) -> set[str]:
        return EDGES[m]

    # the rule model is a leaf: its errors and the operator names it validates against
    assert imports("validator.rules.rulemodel") <= {"validator.errors", "validator.rules.operators"}
    # results: a leaf too, on the rule model's enums (Level, Scope: each key spelled once)
    assert imports("validator.report.model") <= {"validator.versions", "validator.rules.rulemodel", "validator.values"}
    outside_cli = [(m, t) for m, ts in EDGES.items() for t in ts
                   if t.startswith("validator.cli") and not m.startswith("validator.cli") and m != "validator.entry"]
    assert outside_cli == [], "only the entry point imports the CLI"
    for m, ts in EDGES.items():
        if m.startswith("validator.renderers"):  # renderers take a Report, nothing upstream
            assert not {t for t in ts if t.startswith(("validator.evaluate.engine", "validator.rules.loader", "validator.facts",
                                                         "validator.jobs", "validator.cluster", "validator.rules.bundled"))}, m
    for m in ("validator.evaluate.engine", "validator.rules.loader", "validator.rules.spec", "validator.rules.bundled", "validator.rules.rulemodel"):
        up = {t for t in imports(m) if t.startswith(("validator.renderers", "validator.cluster", "validator.cli"))}
        assert not up, (m, up)


# ---- import-linter: the layers contract in pyproject.toml --------------------------------


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the tree at ``root`` (its validator/ and pyproject.toml)."""
    code = ("import sys; from importlinter.cli import lint_imports_command; "
            "sys.argv = ['lint-imports', '--no-cache', '--no-logo']; lint_imports_command()")
    return subprocess.run([sys.executable, "-c", code], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=300)


def test_the_layers_contract_is_kept() -> None:
    r = _lint_imports(ROOT)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "2 kept, 0 broken" in r.stdout, r.stdout[-2000:]


def test_the_layers_contract_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """A lazy import that goes up the layers breaks the contract (grimp reads every import
    statement, not only the top-level ones), and one under TYPE_CHECKING does not."""
    shutil.copytree(PKG, tmp_path / "validator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    units = tmp_path / "validator" / "values" / "units.py"
    units.write_text(units.read_text() + "\n\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from validator.cli import main\n")
    kept = _lint_imports(tmp_path)
    units.write_text(units.read_text() + "\n\ndef _late():\n    from validator.evaluate import engine\n\n"
                     "    return engine\n")
    broken = _lint_imports(tmp_path)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]
    assert broken.returncode != 0 and "validator.values.units -> validator.evaluate.engine" in broken.stdout, \
        broken.stdout[-3000:] + broken.stderr[-2000:]


# ---- CONTRIBUTING.md's "Layout" section says the same --------------------------------------


def _contributing() -> str:
    return (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_the_layout_section_lists_every_package_and_root_module() -> None:
    text = _contributing()
    block = text[text.index("## Layout"):].split("```")[1]
    listed: set[str] = set()
    for line in block.splitlines():
        if line.startswith("  ") and not line.startswith("   "):  # validator/'s entries
            listed |= set(line.strip().split("  ")[0].split())
    folders = {p.name + "/" for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    modules = {p.name for p in PKG.glob("*.py")}
    assert listed == folders | modules
    assert len(modules) <= 8, "at most 8 modules at validator/'s root: put a new one in its stage's package"


def test_the_layers_in_contributing_are_the_contract() -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    shown = " > ".join(layer for layer in layers if not layer.startswith(("(", "__main__")))
    assert f"\n{shown}\n" in _contributing()


def test_renderers_import_only_the_report_and_values() -> None:
    """As CONTRIBUTING.md says: a renderer takes the Report alone."""
    outside = {t for m, ts in EDGES.items() if m.startswith("validator.renderers") for t in ts
               if not t.startswith(("validator.renderers", "validator.report", "validator.values"))}
    assert outside == set()
