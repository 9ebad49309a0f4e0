"""What CONTRIBUTING.md's "The library API" says holds: validator/api imports nothing of
validator/cli or click, and the verbs that call it (check, lint, cluster, health) only parse and
render: building, evaluating, waivers, baseline, LINT-00 and exit codes are the API's."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "validator" / "api"
VERBS = [ROOT / "validator" / "cli" / n for n in ("node.py", "lint.py", "cluster.py", "health.py")]


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def _names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}  # not attributes: outcome.exit_code
            | {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names})


def test_the_api_imports_nothing_of_the_cli_or_click():
    modules = sorted(API.glob("*.py"))
    assert len(modules) >= 6
    for path in modules:
        bad = {m for m in _imports(path) if m.startswith(("validator.cli", "click"))}
        assert not bad, (path.name, bad)


def test_the_verbs_leave_building_judging_and_exit_codes_to_the_api():
    library = {"evaluate_documents", "evaluate", "apply_waivers", "apply_baseline", "with_baseline",
               "exit_code", "Finding", "RuleDoc", "note_older", "write_result", "replay", "probe_node",
               "add_to_report", "finish"}
    for path in VERBS:
        used = _names(path) & library
        assert not used, (path.name, used)
        strings = [n.value for n in ast.walk(ast.parse(path.read_text()))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        assert not [t for t in strings if "LINT-00" in t], path.name
        assert "validator.api" in path.read_text(), path.name


def test_the_named_files_exist():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("### The library API"):text.index("## Recipe: add a rule")]
    for name in ("options.py", "steps.py", "outcome.py"):
        assert f"`validator/api/{name}`" in section and (API / name).is_file()
    import validator.api as api

    for name in ("ReportOptions", "CheckOptions", "LintOptions", "ClusterOptions", "ReplayOptions", "Outcome",
                 "FleetOutcome", "check_node", "lint_jobs", "run_cluster", "replay_cluster", "OptionsError",
                 "HealthOptions", "judge_node_health"):
        assert f"`{name}`" in section and hasattr(api, name), name
    assert (ROOT / "tests" / "api").is_dir()
