"""How NCCL reads the device-selection variables a job exports, as NCCL's own code does.

Taken from NVIDIA/nccl at commit 5067397c2676d5aed50042fc39e5c8ee96eb0027 (June 2026,
the 2.28/2.29 line; the same logic since 2.4):

* ``src/misc/utils.cc`` ``parseStringList``: a comma-separated list of
  ``name[:port[:rail[:plane]]]`` entries; an empty or absent port is -1 (any port);
  empty entries are skipped.
* ``src/misc/utils.cc`` ``matchIf``/``matchPort``/``matchIfList``: a name matches an
  entry when it *starts with* the entry (``strncmp`` over the entry's length), or, in
  exact mode, when it is equal; a port matches when either side is -1 or they are equal;
  an empty list matches everything.
* ``src/transport/net_ib/init.cc`` (``NCCL_IB_HCA``) and ``src/os/linux.cc``
  ``ncclOsFindInterfaces`` (``NCCL_SOCKET_IFNAME``): a leading ``^`` inverts the match
  (exclude), then a leading ``=`` makes it exact; so ``^=mlx5_1`` excludes exactly
  mlx5_1, while ``=^x`` is an exact match on a name starting with ``^``.
* ``NCCL_IB_HCA`` is matched against each device and port, and only ports whose state is
  ACTIVE with link layer InfiniBand or Ethernet are considered at all (init.cc skips the
  rest before matching). ``NCCL_SOCKET_IFNAME`` is matched against interface names with
  port -1, among interfaces that are RUNNING with an IPv4/IPv6 address.
* ``src/transport/net_ib/connect.cc`` ``ncclIbGetGidIndex``: ``NCCL_IB_GID_INDEX``
  (default -1, automatic) is used only on RoCE (Ethernet link layer) ports; an
  InfiniBand port uses GID 0 (or the routable-FLID index) whatever it says.

Pure functions, no I/O: tests check them against the cases these sources define.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "NVIDIA/nccl@5067397c src/misc/utils.cc (parseStringList, matchIfList)"
IB_SOURCE = "NVIDIA/nccl@5067397c src/transport/net_ib/init.cc (NCCL_IB_HCA)"
IF_SOURCE = "NVIDIA/nccl@5067397c src/os/linux.cc ncclOsFindInterfaces (NCCL_SOCKET_IFNAME)"
GID_SOURCE = "NVIDIA/nccl@5067397c src/transport/net_ib/connect.cc ncclIbGetGidIndex"


@dataclass(frozen=True)
class Entry:
    prefix: str
    port: int  # -1: any port


@dataclass(frozen=True)
class Selector:
    """A parsed device list: ``^`` (exclude), ``=`` (exact), and its entries."""

    text: str
    exclude: bool
    exact: bool
    entries: tuple[Entry, ...]

    def matches(self, name: str, port: int = -1) -> bool:
        """Whether NCCL keeps device ``name`` (port ``port``; -1 for an interface)."""
        hit = not self.entries or any(
            _match_name(name, e.prefix, self.exact) and (port == -1 or e.port == -1 or port == e.port)
            for e in self.entries
        )
        return hit != self.exclude

    def describe(self) -> str:
        how = "exact names" if self.exact else "name prefixes"
        if self.exclude:
            return f"every device except {how} {', '.join(_shown(e) for e in self.entries) or '(none)'}"
        return f"{how} {', '.join(_shown(e) for e in self.entries) or '(none)'}"


def _shown(e: Entry) -> str:
    return e.prefix if e.port == -1 else f"{e.prefix}:{e.port}"


def _match_name(name: str, ref: str, exact: bool) -> bool:
    # matchIf: strncmp(string, ref, exact ? strlen(string)+1 : strlen(ref)) == 0
    return name == ref if exact else name.startswith(ref)


def _int_or_minus_one(tok: str) -> int:
    """atoi: leading digits (with a sign), 0 when there are none; absent/empty is -1."""
    if tok == "":
        return -1
    s = tok.lstrip()
    sign = -1 if s.startswith("-") else 1
    s = s[1:] if s[:1] in "+-" else s
    digits = ""
    for ch in s:
        if not ch.isdigit() or not ch.isascii():
            break
        digits += ch
    return sign * int(digits) if digits else 0


def parse(text: str) -> Selector:
    """``NCCL_IB_HCA`` / ``NCCL_SOCKET_IFNAME`` as NCCL parses it."""
    rest = text
    exclude = rest.startswith("^")
    if exclude:
        rest = rest[1:]
    exact = rest.startswith("=")
    if exact:
        rest = rest[1:]
    entries = []
    for raw in rest.split(","):
        name, _, tail = raw.partition(":")
        if not name:
            continue  # NCCL skips an entry with an empty name
        port_tok = tail.split(":", 1)[0] if tail else ""
        entries.append(Entry(name[:63], _int_or_minus_one(port_tok)))  # prefix[64]
    return Selector(text, exclude, exact, tuple(entries))


def gid_index(text: str) -> int | None:
    """``NCCL_IB_GID_INDEX`` as an int (NCCL_PARAM reads it with strtoll), None if not one."""
    s = text.strip()
    try:
        return int(s, 0) if s.lower().startswith(("0x", "-0x")) else int(s)
    except ValueError:
        return None


def ib_expected(env: dict[str, str]) -> tuple[str, str] | None:
    """The variable that says the job expects the IB transport, and what NCCL does on a
    node with no ACTIVE RDMA port; None when the job says nothing about it.

    ``NCCL_NET=IB`` names the only network plugin NCCL may use: the recorded run on a
    node without IB fails ("Failed to initialize any NET plugin",
    recordings/h200-node/nccl_info_net_ib_forced.log). ``NCCL_IB_DISABLE=0`` (the default
    written out) asks for IB but NCCL still falls back to sockets when it finds no device
    ("NET/IB : No device found." then "Using network Socket", nccl_info_default.log)."""
    net = env.get("NCCL_NET")
    if net is not None and net.strip().upper() == "IB":
        return "NCCL_NET", "NCCL fails at init (Failed to initialize any NET plugin)"
    v = env.get("NCCL_IB_DISABLE")
    if v is not None and _int_or_minus_one(v.strip()) == 0:
        return "NCCL_IB_DISABLE", "NCCL falls back to TCP sockets without an error"
    return None


def ib_disabled(env: dict[str, str]) -> bool:
    v = env.get("NCCL_IB_DISABLE")
    return v is not None and _int_or_minus_one(v.strip()) not in (0, -1)
