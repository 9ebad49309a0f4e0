"""`spec-check rules` and `spec-check spec`: what people read about the rules and the spec."""

from __future__ import annotations

import json

from tests.test_cli import spec_check
from validator.rules.spec import load_spec


def test_rules_list_has_a_header_and_catalogue_order() -> None:
    r = spec_check("rules", "list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["RULE", "REQ", "LEVEL", "SCOPE", "SUMMARY"]
    rows = [line.split()[:2] for line in lines[1:]]
    order = {req.id: i for i, req in enumerate(load_spec("1.0").requirements)}
    keys = [(order[req], rule) for rule, req in rows]
    assert keys == sorted(keys)
    assert rows[0][1] == load_spec("1.0").requirements[0].id


def test_rules_explain_says_what_is_expected_in_words() -> None:
    r = spec_check("rules", "explain", "NET-01.fabric-port-slow")
    assert r.returncode == 0, r.stderr
    assert "Expected: port rate >= 400 Gb/s  (reads" in r.stdout
    # the value in words; the parameter's name where a person sets it
    assert "Parameters: fabric_port_rate = 400 Gb/s (override with --set NAME=VALUE or a profile)" in r.stdout
    assert "Skips items unless: port state = ACTIVE (port not active; see NET-02)" in r.stdout
    assert '{"op"' not in r.stdout  # no raw check JSON
    nic = spec_check("rules", "explain", "TOPO-02.nic-link-narrow").stdout
    assert "Judges only items where: device role = nic" in nic


def test_unlimited_reads_as_unlimited_not_gte() -> None:
    r = spec_check("rules", "explain", "MEM-02.memlock-limited")
    assert "Expected: locked-memory limit unlimited  (reads" in r.stdout
    assert ">= unlimited" not in r.stdout


def test_spec_show_includes_the_rationale() -> None:
    req = load_spec("1.0").requirement("MEM-02")
    assert req is not None
    r = spec_check("spec", "show", "MEM-02")
    assert r.returncode == 0, r.stderr
    assert "Why: " + " ".join(req.rationale.split()) in r.stdout


def test_spec_show_json_of_one_requirement_has_only_its_parameters() -> None:
    data = json.loads(spec_check("spec", "show", "MEM-02", "--format", "json").stdout)
    assert [r["id"] for r in data["requirements"]] == ["MEM-02"]
    assert set(data["parameters"]) == {"memlock_min", "shm_min"}
    whole = json.loads(spec_check("spec", "show", "--format", "json").stdout)
    assert len(whole["parameters"]) > 2


def test_every_rule_explains_its_expectation_in_words() -> None:
    """No rule's expected sentence (shown by `rules explain` and on skip/error findings)
    leaks the rule file's internals: check JSON, formula or parameter references."""
    from tests.helpers import built
    from validator.evaluate.engine import describe_rule

    b = built()
    for rule in b.pack.rules:
        expected = describe_rule(b.ctx, rule)["expected"]
        for raw in ('{"op"', "{'", "formula=", "args=", "param=", "fact="):
            assert raw not in expected, (rule.id, expected)


def test_every_formula_reads_in_words() -> None:
    """A formula a rule may name has words for the expected sentence, and a rule's
    conditions (when/where/filter) read in words too."""
    from tests.helpers import built
    from validator.evaluate.engine import describe_rule
    from validator.rules.formulas import FORMULAS, LABELS, PRODUCTS

    assert set(FORMULAS) == set(LABELS) | PRODUCTS
    b = built()
    for rule in b.pack.rules:
        d = describe_rule(b.ctx, rule)
        for text in [*d["when"], *(t for t, _ in d["where"]), *d["filter"]]:
            for raw in ("{'", "formula", "param=", "fact="):
                assert raw not in text, (rule.id, text)
    ckpt = describe_rule(b.ctx, b.pack.get("CKPT-02.interval-far-from-optimum"))["expected"]
    assert ckpt == ("checkpoint interval in steps within Daly's optimum range for the job GPU count, "
                    "50,000 GPU-h MTBF per GPU, 60 s per write, the time per step, within a factor of 2")
    batch = describe_rule(b.ctx, b.pack.get("BATCH-01.global-batch-not-divisible"))["expected"]
    assert batch == "global batch size a multiple of micro-batch size per GPU x data-parallel size"
