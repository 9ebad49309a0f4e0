from __future__ import annotations

import pytest

from validator.errors import SpecCheckError
from validator.selection import check_prefixes, is_selected, split_csv


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
