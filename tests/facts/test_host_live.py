"""The live hostname, CPU count and NVML library check read without socket, psutil and
ctypes (validator/facts/node/host.py, nvidia.py): the same answers as the calls they replace,
on this machine."""

from __future__ import annotations

import ctypes
import socket
import sys

import psutil
import pytest

from validator.facts.node import host, nvidia

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the direct reads are Linux's")


def test_host_name_is_socket_gethostname() -> None:
    assert host.host_name() == socket.gethostname()


def test_logical_cpus_is_psutil_cpu_count() -> None:
    assert host.logical_cpus() == psutil.cpu_count(logical=True)


@linux
def test_a_sysconf_that_cannot_say_asks_psutil(monkeypatch: pytest.MonkeyPatch) -> None:
    def cannot(name: str) -> int:
        raise ValueError(f"unrecognized configuration name {name}")

    asked: list[bool] = []
    monkeypatch.setattr(host.os, "sysconf", cannot)
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: asked.append(logical) or 7)
    assert host.logical_cpus() == 7 and asked == [True]


@linux
def test_a_count_below_one_is_none_as_psutil_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host.os, "sysconf", lambda name: -1)
    assert host.logical_cpus() is None


def _cdll_loads(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


@pytest.mark.parametrize("name", [nvidia.LIBRARY, "libc.so.6", "libm.so.6", "libno-such-library.so.1", ""])
def test_dlopen_loads_what_ctypes_cdll_loads(name: str) -> None:
    if not name and not sys.platform.startswith("linux"):
        pytest.skip("CDLL('') is dlopen(NULL) on Linux")
    try:
        nvidia._dlopen(name)
        loads = True
    except OSError:
        loads = False
    assert loads == _cdll_loads(name)
