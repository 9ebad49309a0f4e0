from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.helpers, tests.fixtures


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stable timestamps in every rendered result."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", os.environ.get("SOURCE_DATE_EPOCH", "1795000000"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


# Fixtures that start one machine-wide service for the session: under pytest-xdist every test
# that uses one runs on the same worker (`--dist loadgroup`), so the service starts once, not
# once per worker, and two workers never race for its ports, namespaces or state.
# The network-namespace fleets pick a random /24 and bridge name each: on one worker they
# never meet another fleet's address.
SERVICE_GROUPS = {"local_slurm": "slurm", "netns_slurm": "netns", "fleet_factory": "netns"}


# The quick run (`pytest -n auto -m "not slow"`, CONTRIBUTING.md) leaves out, besides the tests
# marked slow where they are written, these files: each spends seconds a test on real services
# (sshd, Slurm, network namespaces, a browser, the package index), fuzzing and property runs, or
# spec-check processes for every case. Chosen from `--durations` of the whole suite sampled file
# by file (2026-12-01, CHANGELOG); the whole suite still runs them.
SLOW_FILES = (
    "tests/ship/", "tests/cluster/", "tests/hardening/", "tests/corpus/", "tests/acceptance/",
    "tests/jobs/test_bad_input.py", "tests/jobs/test_formats.py", "tests/jobs/test_corpus.py",
    "tests/jobs/test_renderers.py", "tests/jobs/test_evidence.py", "tests/jobs/test_origins.py",
    "tests/jobs/test_jobs_apart.py", "tests/jobs/test_registry.py", "tests/jobnodes/test_cli_nodes.py",
    "tests/runs/test_streams.py", "tests/runs/test_bench_gen.py",
    "tests/reports/test_html_in_browser.py", "tests/reports/test_html.py", "tests/reports/test_output_for_people.py",
    "tests/reports/test_signing.py", "tests/reports/test_plain_layout.py", "tests/reports/test_report_diff.py",
    "tests/facts/test_digest.py", "tests/facts/test_digest_paths.py", "tests/facts/test_fixture_docs.py",
    "tests/api/test_api.py", "tests/test_release.py", "tests/test_baseline.py", "tests/test_profile.py",
    "tests/test_startup",  # every test_startup*.py: start-up timed in fresh interpreters
)
# single tests of quick files that take seconds (generated inputs, the corpus, every layout)
SLOW_TESTS = (
    "tests/jobs/test_markers.py::test_the_markers_pick_what_the_ordered_code_picked_on_generated_keys",
    "tests/reports/test_terminal_reuse.py::test_tables_of_one_shape_with_other_text_render_rich_s_bytes",
    "tests/reports/test_json_writer.py::test_generated_reports",
    "tests/test_calibration.py::test_the_script_runs_on_the_corpus",
)
# files under those folders that are quick (pure functions, no process or service)
QUICK_FILES = ("tests/cluster/test_hosts_plan.py", "tests/cluster/test_parsers.py", "tests/cluster/test_units.py",
               "tests/hardening/test_safe_open.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, group in SERVICE_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(group))
                break
        path = item.nodeid.split("::", 1)[0]
        if (path.startswith(SLOW_FILES) and path not in QUICK_FILES) or item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
