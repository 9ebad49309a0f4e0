"""docs/node-health.md: each number, name and default it states is read from the code here
(the behaviours it describes are tested in test_gpu_events, test_dcgm, test_counter_rise,
test_h200_recording, tests/cluster/test_npd.py and tests/ship/test_kubernetes.py)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from validator.cluster import npd
from validator.facts.node import dcgm, kernel_log

ROOT = Path(__file__).resolve().parents[2]
DOC = " ".join((ROOT / "docs" / "node-health.md").read_text().split())  # lines joined
PARAMS = yaml.safe_load((ROOT / "spec" / "v1.0" / "requirements.yaml").read_text())["parameters"]
RULES = {r["id"]: r for r in yaml.safe_load((ROOT / "rules" / "v1.1" / "node.yaml").read_text())["rules"]}


def test_xid_policy_defaults_are_the_spec():
    assert f"`xid_fail` is {', '.join(map(str, PARAMS['xid_fail']['default']))};" in DOC
    assert f"`xid_application` is {', '.join(map(str, PARAMS['xid_application']['default']))};" in DOC
    assert PARAMS["xid_lookback"]["default"] == "unlimited" and "`xid_lookback` is unlimited" in DOC


def test_counter_table_is_the_rules_and_parameters():
    rows = re.findall(r"\| `([A-Z]+-\d\d\.[a-z-]+)` \| (MUST|SHOULD) \| `(\w+)`, (\d+)", DOC)
    assert len(rows) == 3
    for rule_id, level, param, default in rows:
        rule = RULES[rule_id]
        assert rule.get("level", "MUST") == level
        assert rule["check"]["value"] == {"param": param}
        assert PARAMS[param]["default"] == int(default)


def test_rules_named_in_the_doc_exist():
    for rule_id in set(re.findall(r"`([A-Z]+-\d\d\.[a-z-]+)`", DOC)):
        assert rule_id in RULES, rule_id


def test_dcgm_deadlines_and_npd_numbers_are_the_code():
    text = ", ".join(f"{lvl}: {int(s)} s" for lvl, s in dcgm.DEADLINES.items())
    assert f"(level {text})" in DOC
    assert f"within {npd.DEADLINE:g} s" in DOC and f"at most {npd.MAX_LINE} characters" in DOC
    assert (npd.OK, npd.PROBLEM, npd.UNKNOWN) == (0, 1, 2)
    assert "journalctl -k -b -o short-monotonic" in DOC
    assert kernel_log.JOURNAL_TIMEOUT > 0


def test_the_npd_manifest_named_exists_with_its_condition():
    text = (ROOT / "deploy" / "kubernetes" / "npd-spec-check.yaml").read_text()
    assert '"type": "SpecCheckProblem"' in text and "SpecCheckProblem" in DOC


def test_the_example_status_line_is_what_the_h200_gives():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "validator", "health", "--npd", "--facts",
                        str(ROOT / "tests" / "fixtures" / "h200" / "facts.json")], capture_output=True,
                       text=True, timeout=60, cwd=ROOT)
    assert r.stdout.strip() in DOC and r.returncode == 1
