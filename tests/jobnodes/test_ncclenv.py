"""NCCL's own reading of NCCL_IB_HCA / NCCL_SOCKET_IFNAME (src/misc/utils.cc
parseStringList/matchIfList, net_ib/init.cc, os/linux.cc at NVIDIA/nccl@5067397c)."""

from __future__ import annotations

import pytest

from validator.jobnodes import ncclenv


@pytest.mark.parametrize(("text", "name", "port", "kept"), [
    ("mlx5_0", "mlx5_0", 1, True),
    ("mlx5_1", "mlx5_10", 1, True),  # a prefix: mlx5_1 also keeps mlx5_10..19
    ("=mlx5_1", "mlx5_10", 1, False),  # '=': exact names only
    ("=mlx5_1", "mlx5_1", 1, True),
    ("mlx5_0:1", "mlx5_0", 1, True),
    ("mlx5_0:2", "mlx5_0", 1, False),  # the port must match when given
    ("mlx5_0:", "mlx5_0", 2, True),  # an empty port is any port
    ("^mlx5_0", "mlx5_0", 1, False),  # '^': exclude
    ("^mlx5_0", "mlx5_1", 1, True),
    ("^=mlx5_1", "mlx5_10", 1, True),  # exclude exactly mlx5_1, keep mlx5_10
    ("^=mlx5_1", "mlx5_1", 1, False),
    ("=^mlx5_1", "mlx5_2", 1, False),  # '=' first: exact match on a name starting with '^'
    ("mlx5_5,mlx5_0:1", "mlx5_0", 1, True),
    ("", "mlx5_0", 1, True),  # an empty list keeps everything
    ("^", "mlx5_0", 1, False),  # ... and '^' of an empty list keeps nothing
    ("ib", "ibp25s0", -1, True),  # NCCL_SOCKET_IFNAME: prefixes, port -1
    ("^docker,lo", "docker0", -1, False),
    ("^docker,lo", "eno3", -1, True),
    ("=eth0", "eth0.100", -1, False),
])
def test_matches_as_nccl_does(text: str, name: str, port: int, kept: bool) -> None:
    assert ncclenv.parse(text).matches(name, port) is kept


def test_parse_entries_and_flags() -> None:
    sel = ncclenv.parse("^=mlx5_0:1,mlx5_3,,mlx5_4:x:2")
    assert sel.exclude and sel.exact
    assert [(e.prefix, e.port) for e in sel.entries] == [("mlx5_0", 1), ("mlx5_3", -1), ("mlx5_4", 0)]


@pytest.mark.parametrize(("text", "idx"), [("3", 3), (" -1 ", -1), ("0x3", 3), ("three", None), ("", None)])
def test_gid_index(text: str, idx: int | None) -> None:
    assert ncclenv.gid_index(text) == idx


def test_ib_expected() -> None:
    assert ncclenv.ib_expected({"NCCL_NET": "IB"})[0] == "NCCL_NET"
    assert ncclenv.ib_expected({"NCCL_IB_DISABLE": "0"})[0] == "NCCL_IB_DISABLE"
    assert ncclenv.ib_expected({"NCCL_IB_DISABLE": "1"}) is None
    assert ncclenv.ib_expected({"NCCL_NET": "Socket"}) is None
    assert ncclenv.ib_expected({}) is None
