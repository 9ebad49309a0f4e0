"""Which pairs to measure, in which round.

A pairwise measurement saturates both hosts' links, so a host takes part in at most one
pair per round, and the rounds run one after another. Two plans:

* ``ring``: every host measured against its ring neighbour. The ring's edges split into
  two perfect matchings for an even fleet and three for an odd one, so the sweep takes
  2 (or 3) rounds whatever the fleet size: its wall time does not grow with N.
* ``all``: every unordered pair once, by round-robin tournament scheduling (the circle
  method): N-1 rounds for even N, N rounds for odd N (one host sits out each round).

A pair ``(a, b)`` means ``a`` is the client and sends to ``b``: the direction ``a->b``.
"""

from __future__ import annotations

from collections.abc import Sequence

Pair = tuple[str, str]
Round = list[Pair]


def ring_rounds(hosts: Sequence[str]) -> list[Round]:
    """The ring edges h[i] -> h[i+1] (and the closing one) in 2 rounds, or 3 when N is odd."""
    n = len(hosts)
    if n < 2:
        return []
    if n == 2:
        return [[(hosts[0], hosts[1])]]
    edges = [(hosts[i], hosts[(i + 1) % n]) for i in range(n)]
    if n % 2 == 0:
        return [edges[0::2], edges[1::2]]
    # odd: edges 0,2,..,n-3 | 1,3,..,n-2 | the closing edge n-1 (shares a host with both)
    return [edges[0 : n - 1 : 2], edges[1 : n - 1 : 2], [edges[n - 1]]]


def all_pairs_rounds(hosts: Sequence[str]) -> list[Round]:
    """Every unordered pair exactly once, each host in at most one pair per round."""
    players: list[str | None] = list(hosts)
    if len(players) < 2:
        return []
    if len(players) % 2:
        players.append(None)  # a bye
    n = len(players)
    rounds: list[Round] = []
    for _ in range(n - 1):
        pairs = [(players[i], players[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        players = [players[0], players[-1], *players[1:-1]]  # rotate all but the first
    return rounds


PLANS = {"ring": ring_rounds, "all": all_pairs_rounds}


def check_rounds(rounds: Sequence[Round]) -> None:
    """Assert the invariant every plan keeps (used by tests and the bench)."""
    for r in rounds:
        busy = [h for pair in r for h in pair]
        if len(busy) != len(set(busy)):
            raise AssertionError(f"a host is in two pairs of one round: {r}")
