"""The library API of spec-check: build, evaluate and judge, returning typed results.

Why it exists: the CLI and outside Python callers make the same calls. ``validator/cli``
only parses options into the dataclasses below, calls one function here, renders the
report it gets back, and exits with ``outcome.exit_code``; a test, a scheduler plugin or
a notebook calls the same function and reads the same ``Outcome``. The exit code, the
waivers, the baseline and the ``LINT-00`` findings of unreadable configs are decided here,
once, so that every caller gets the same verdict for the same inputs.

The public surface::

    from validator import api

    outcome = api.check_node(api.CheckOptions(facts=(Path("node.json"),)))
    outcome = api.lint_jobs(api.LintOptions(paths=(Path("ds_config.json"),)))
    outcome = api.judge_node_health(api.HealthOptions("node07"))  # what health then acts on
    fleet = api.run_cluster(api.ClusterOptions(hosts=("a", "b"), transport="ssh"))
    fleet = api.replay_cluster(api.ReplayOptions(facts=(Path("saved/"),)))
    outcome.report      # validator.report.model.Report: findings, summary, subjects
    outcome.exit_code   # 0 conformant, 1 not (the README's exit codes); a fleet: 2 when interrupted
    outcome.notes       # one-line remarks on the inputs (older recordings, the baseline)

Options (frozen records, ``validator.api.options``; the other verbs' in
``validator.api.verb_options``, loaded on first use): ``ReportOptions`` (spec version,
profile, ``--set``, rule pack, select/ignore, waivers, baseline, fail_on), held by each of
``CheckOptions``, ``HealthOptions``, ``LintOptions``, ``ClusterOptions`` (a live fleet run) and
``ReplayOptions`` (a fleet's saved facts). Results (``validator.api.outcome``): ``Outcome``
and ``FleetOutcome`` (live and replay alike). Steps, for callers that want them apart
(``validator.api.steps``): ``build`` (spec, parameters and rule pack, a ``Built``; bad input raises
``SpecCheckError`` before anything is probed), ``evaluate_documents``, ``probe_document``
(``validator.api.node``), ``save_fleet_facts``. Options that cannot go together raise
``OptionsError`` (a ``SpecCheckError``); every other bad input raises ``SpecCheckError``
with a one-line message naming the file and line.

Names are loaded on first use: importing ``validator.api`` costs nothing on start-up,
and ``check`` never loads the fleet machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from validator.api.options import CheckOptions, OptionsError, ReportOptions
from validator.api.outcome import FleetOutcome, Outcome, exit_code

if TYPE_CHECKING:
    from validator.api.verb_options import ClusterOptions as ClusterOptions
    from validator.api.verb_options import HealthOptions as HealthOptions
    from validator.api.verb_options import LintOptions as LintOptions
    from validator.api.verb_options import ReplayOptions as ReplayOptions

# name -> the module of validator.api that defines it (imported when first asked for)
_LAZY = {
    "HealthOptions": "verb_options",
    "LintOptions": "verb_options",
    "ClusterOptions": "verb_options",
    "ReplayOptions": "verb_options",
    "Built": "steps",
    "build": "steps",
    "evaluate_documents": "steps",
    "check_node": "node",
    "judge_node_health": "health",
    "probe_document": "node",
    "lint_jobs": "lint",
    "run_cluster": "cluster",
    "replay_cluster": "cluster",
    "save_fleet_facts": "cluster",
}

__all__ = [
    "CheckOptions",
    "FleetOutcome",
    "OptionsError",
    "Outcome",
    "ReportOptions",
    "exit_code",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'validator.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"validator.api.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
