from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.helpers, tests.fixtures


@pytest.fixture(autouse=True, scope="session")
def _compiled_pack_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The compiled-pack cache (validator/rules/compiled.py) of the test session, in a temporary
    directory, for this process and every spec-check it starts, never the user's own."""
    os.environ["SPEC_CHECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("compiled-cache"))


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stable timestamps in every rendered result."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", os.environ.get("SOURCE_DATE_EPOCH", "1795000000"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files")


# Fixtures that start one machine-wide service for the session: under pytest-xdist every test
# that uses one runs on the same worker (`--dist loadgroup`), so the service starts once, not
# once per worker, and two workers never race for its ports, namespaces or state.
SERVICE_GROUPS = {"local_slurm": "slurm", "netns_slurm": "netns-slurm"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, group in SERVICE_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(group))
                break
