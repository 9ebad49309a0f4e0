from __future__ import annotations

import pytest

from validator.errors import SpecCheckError
from validator.rules.selection import check_prefixes, is_selected, split_csv


@pytest.mark.parametrize(("rule", "select", "ignore", "selected"), [
    ("NET-01.fabric-port-slow", (), (), True),
    ("NET-01.fabric-port-slow", ("NET",), (), True),
    ("NET-01.fabric-port-slow", ("MEM",), (), False),
    ("NET-02.port-not-active", ("NET",), ("NET-02",), False),
    ("NET-01.fabric-port-slow", ("NET",), ("NET-02",), True),
    ("NET-01.fabric-port-slow", ("NET-01.fabric",), ("NET",), True),   # longer prefix wins
    ("NET-01.gpu-nic-slow", ("NET-01.fabric",), ("NET",), False),
    ("NET-01.fabric-port-slow", ("NET-01",), ("NET-01",), False),       # tie: ignore wins
    ("net-01.fabric-port-slow", ("NET-01",), (), True),                 # case-insensitive
])
def test_longest_prefix_wins(rule: str, select: tuple[str, ...], ignore: tuple[str, ...], selected: bool) -> None:
    assert is_selected(rule, select, ignore) is selected


def test_unknown_prefix_is_a_usage_error() -> None:
    with pytest.raises(SpecCheckError, match="--select NTE-01: matches no rule"):
        check_prefixes(["NET-01.fabric-port-slow"], ("NTE-01",), ())


def test_split_csv() -> None:
    assert split_csv(["NET,MEM", " PLAT-01 "]) == ("NET", "MEM", "PLAT-01")


def test_a_run_that_selects_nothing_is_a_usage_error() -> None:
    """--ignore of every node requirement must not end in "CONFORMANT" with nothing checked."""
    from tests.test_cli import assert_one_line_error, spec_check

    r = spec_check("check", "--ignore", "NET,MEM,TOPO,PLAT,MON,ENER", "--facts", "tests/fixtures/facts/dgx_h100.json")
    assert_one_line_error(r, "no rules selected: --ignore NET,MEM,TOPO,PLAT,MON,ENER leave nothing to check")
    assert "CONFORMANT" not in r.stdout


def test_a_prefix_of_another_verbs_rules_names_that_verb() -> None:
    from tests.test_cli import assert_one_line_error, spec_check

    assert_one_line_error(spec_check("check", "--select", "CKPT-01"),
                          "--select CKPT-01: matches only job rules; use `spec-check lint`")
    assert_one_line_error(spec_check("check", "--ignore", "NET-04"),
                          "--ignore NET-04: matches only cluster rules; use `spec-check cluster`")
    assert_one_line_error(spec_check("check", "--select", "ZZZ-99"), "--select ZZZ-99: matches no rule")
