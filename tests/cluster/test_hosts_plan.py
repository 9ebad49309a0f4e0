"""Host lists and pairing plans: pure functions."""

from __future__ import annotations

import itertools

import pytest

from validator.cluster.hosts import expand, parse_hosts
from validator.cluster.plan import all_pairs_rounds, check_rounds, ring_rounds
from validator.errors import SpecCheckError


def test_list_ranges_and_dedup():
    assert parse_hosts("a, b,node[08-10,3] a") == ["a", "b", "node08", "node09", "node10", "node3"]
    assert expand("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]


def test_host_file(tmp_path):
    f = tmp_path / "hosts.txt"
    f.write_text("# fleet\nroot@10.0.0.1\n\n10.0.0.2  # spare\ngpu[1-2]\n")
    assert parse_hosts(f"@{f}") == ["root@10.0.0.1", "10.0.0.2", "gpu1", "gpu2"]


@pytest.mark.parametrize("bad", ["", "node[3-1]", "node[1-", "-oProxyCommand=x", "a;b", "n[x-y]"])
def test_bad_host_lists_are_one_line_errors(bad):
    with pytest.raises(SpecCheckError):
        parse_hosts(bad)


def test_unreadable_host_file_names_the_file(tmp_path):
    with pytest.raises(SpecCheckError) as exc:
        parse_hosts(f"@{tmp_path / 'nope'}")
    assert "nope" in str(exc.value)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9, 64, 101])
def test_ring_rounds_are_constant_and_cover_the_ring(n):
    hosts = [f"h{i}" for i in range(n)]
    rounds = ring_rounds(hosts)
    check_rounds(rounds)
    assert len(rounds) == (1 if n == 2 else 2 if n % 2 == 0 else 3)
    edges = {p for r in rounds for p in r}
    want = {(hosts[i], hosts[(i + 1) % n]) for i in range(n)} if n > 2 else {(hosts[0], hosts[1])}
    assert edges == want


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_all_pairs_tournament(n):
    hosts = [f"h{i}" for i in range(n)]
    rounds = all_pairs_rounds(hosts)
    check_rounds(rounds)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    seen = [frozenset(p) for r in rounds for p in r]
    assert len(seen) == len(set(seen)) == n * (n - 1) // 2
    assert set(seen) == {frozenset(c) for c in itertools.combinations(hosts, 2)}


def test_fewer_than_two_hosts_have_no_pairs():
    assert ring_rounds(["a"]) == [] and all_pairs_rounds(["a"]) == []
