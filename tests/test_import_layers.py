"""The import contract of validator/: no new import circle, no new private name imported
from another module, and the layers that show the data flow (sources -> rule pack ->
engine -> results -> renderers -> CLI) kept.

The graph is read from the source (ast), counting imports inside functions too (they hide
half the links; a circle through a lazy import still ties the modules together), but not
imports under ``if TYPE_CHECKING:``, which never run. Equivalent to an import-linter
contract with ``ignore_imports`` for the known exceptions, without the dependency.

The exceptions below are the circles and private imports that remain on main and need a
module moved to go (issue 21, deliverable 3); each says what would remove it. A change
that adds a circle or a private import fails here; one that removes an exception should
delete its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "validator"

KNOWN_CIRCLES: list[frozenset[str]] = [
    # yamlfile reads YAML through jobs.source's event reader, which builds yamlfile's
    # LineDict/LineList for line-tracked files: goes when the reader and the line-tracking
    # types sit in one io/ package (harden owns yamlfile.py this round)
    frozenset({"validator.yamlfile", "validator.jobs.source"}),
    # the job model, its detection and metrics call each other's helpers: goes with one
    # descriptor per job format (issue 21, deliverable 4)
    frozenset({"validator.jobs.common", "validator.jobs.detection", "validator.jobs.metrics",
               "validator.jobs.model"}),
    # launcher parsing, shell parsing and tuning flags share parsers: goes when the shared
    # word parsers move to a module of their own
    frozenset({"validator.jobs.launch", "validator.jobs.shell", "validator.jobs.tune"}),
]

KNOWN_PRIVATE: set[tuple[str, str, str]] = {
    # (importer, module, name): each goes when the name is made public in its own module
    # or the caller moves beside it
    ("validator.jobs.tune", "validator.jobs.launch", "_typed"),
    ("validator.jobs.grouping", "validator.jobs", "_walk"),
    ("validator.jobs.launch", "validator.jobs.shell", "_harvest"),
    ("validator.cli.report", "validator.cli.common", "_format_names"),
    ("validator.cli.health", "validator.cli.node", "_root_options"),
    ("validator.cluster.replay", "validator.cluster.shapes", "_COLLECTED"),
    ("validator.cluster.replay", "validator.cluster.shapes", "_HOSTNAME"),
    ("validator.cluster.replay", "validator.cluster.shapes", "_NAME"),
    # the fleet evaluates through the engine's internals: goes with the library API
    # (issue 21, deliverable 2)
    ("validator.cluster.groups", "validator.engine", "_item_label"),
    ("validator.cluster.fleet", "validator.engine", "_Builder"),
    ("validator.cluster.fleet", "validator.engine", "_evaluate_rule"),
}


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
    assert "validator.rulemodel" in EDGES["validator.engine"]  # top level
    assert "validator.validation_models" in EDGES["validator.loader"]  # inside a function
    assert "validator.jobs.source" in EDGES["validator.yamlfile"]  # inside a function
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]


def test_no_new_import_circle() -> None:
    new = [sorted(c) for c in _circles(EDGES) if not any(c <= known for known in KNOWN_CIRCLES)]
    assert new == [], f"new import circle(s): {new} (break it, or, if it needs a module move, add it to KNOWN_CIRCLES "\
        "with a comment that says which move removes it)"


def test_the_rule_loading_circle_is_gone() -> None:
    """loader <-> spec <-> validation_models was one circle: the formats now live in the
    leaf rulemodel.py, and validation imports only it."""
    circles = _circles(EDGES)
    for m in ("validator.loader", "validator.spec", "validator.validation_models", "validator.rulemodel",
              "validator.compiled"):
        assert not any(m in c for c in circles), m


def test_no_new_private_name_imported_from_another_module() -> None:
    assert sorted(PRIVATE - KNOWN_PRIVATE) == []


def test_layers() -> None:
    """The flow, as far as today's packages show it."""
    def imports(m: str) -> set[str]:
        return EDGES[m]

    # the rule model is a leaf: its errors and the operator names it validates against
    assert imports("validator.rulemodel") <= {"validator.errors", "validator.operators"}
    # results: a leaf too, on the rule model's enums (Level, Scope: each key spelled once)
    assert imports("validator.model") <= {"validator.versions", "validator.rulemodel"}
    outside_cli = [(m, t) for m, ts in EDGES.items() for t in ts
                   if t.startswith("validator.cli") and not m.startswith("validator.cli") and m != "validator.entry"]
    assert outside_cli == [], "only the entry point imports the CLI"
    for m, ts in EDGES.items():
        if m.startswith("validator.renderers"):  # renderers take a Report, nothing upstream
            assert not {t for t in ts if t.startswith(("validator.engine", "validator.loader", "validator.facts",
                                                         "validator.jobs", "validator.cluster", "validator.compiled"))}, m
    for m in ("validator.engine", "validator.loader", "validator.spec", "validator.compiled", "validator.rulemodel"):
        up = {t for t in imports(m) if t.startswith(("validator.renderers", "validator.cluster", "validator.cli"))}
        assert not up, (m, up)
