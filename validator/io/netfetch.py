"""The one HTTP GET spec-check makes: a deadline for the whole response, a size cap, no redirects.

Every network read of the tool goes through ``fetch()`` (the node probe's telemetry sources,
``--scrape``, ``cluster --scrape-port``), because a per-read socket timeout is not a
deadline: a server that sends one byte every 2 s never trips a 3 s read timeout and holds
the caller forever. Here a watchdog shuts the socket down when the deadline passes, so
whatever the server does (drip headers, drip a body, stream 10 GB, never answer) the call
returns within ``deadline_s`` plus a few milliseconds, with the reason.

It never raises for anything the network or the server does: the answer is a ``Fetched``
whose ``problem`` is None (a complete 200 response, at most ``cap`` bytes) or a sentence
naming the URL's trouble. Only ``http://`` and ``https://`` URLs are fetched, and a
redirect is a problem, not followed (it would connect where the server says).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from validator.io.scrape_defaults import DEFAULT_DEADLINE_S as DEFAULT_DEADLINE_S  # re-exported
from validator.io.scrape_defaults import SCRAPE_INTERVAL_S as SCRAPE_INTERVAL_S

DEFAULT_CAP = 16 << 20  # a dcgm-exporter of 8 GPUs with every field is well under 1 MiB
_CHUNK = 64 << 10


@dataclass(frozen=True)
class Fetched:
    url: str
    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    problem: str | None = None  # None: a complete 200 response within the deadline and the cap
    seconds: float = 0.0


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be fetched (scheme, host), or None; for a one-line usage error."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{url!r} is not a URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"{url!r} is not an http:// or https:// URL"
    if not parts.hostname:
        return f"{url!r} names no host"
    if port == 0:
        return f"{url!r} names port 0"
    return None


def fetch(url: str, *, deadline_s: float = DEFAULT_DEADLINE_S, cap: int = DEFAULT_CAP,
          accept: str = "*/*") -> Fetched:
    """GET ``url``; the whole exchange (connect, headers, body) ends within ``deadline_s``."""
    import http.client

    start = time.monotonic()
    bad = check_url(url)
    if bad:
        return Fetched(url, problem=bad)
    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname or "", parts.port, timeout=deadline_s)
    expired = threading.Event()

    def _expire() -> None:  # the watchdog: a dripping server's next recv returns at once
        expired.set()
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(deadline_s, _expire)
    timer.daemon = True
    timer.start()

    def took() -> float:
        return time.monotonic() - start

    def late() -> Fetched:
        return Fetched(url, problem=f"no complete answer within the {deadline_s:g} s deadline", seconds=took())

    try:
        conn.request("GET", path, headers={"Accept": accept, "Accept-Encoding": "identity",
                                            "User-Agent": "spec-check"})
        resp = conn.getresponse()
        status = resp.status
        ctype = resp.getheader("Content-Type") or ""
        if status != 200:
            where = resp.getheader("Location")
            why = f"HTTP {status} {resp.reason}" + (f" (redirect to {where}: not followed)" if where else "")
            return Fetched(url, status, ctype, problem=why, seconds=took())
        length = resp.getheader("Content-Length")
        if length and length.strip().isdigit() and int(length) > cap:
            return Fetched(url, status, ctype, problem=f"the answer is {int(length)} bytes, over the "
                           f"{cap} byte cap", seconds=took())
        parts_read: list[bytes] = []
        size = 0
        while True:
            if expired.is_set():
                return late()
            chunk = resp.read1(_CHUNK) if hasattr(resp, "read1") else resp.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > cap:
                return Fetched(url, status, ctype, problem=f"the answer goes past the {cap} byte cap "
                               "(stopped reading)", seconds=took())
            parts_read.append(chunk)
        if expired.is_set():  # the watchdog's shutdown reads as an end of stream
            return late()
        return Fetched(url, status, ctype, b"".join(parts_read), seconds=took())
    except (http.client.HTTPException, OSError, ValueError) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError | socket.timeout):
            return late()
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return Fetched(url, problem=f"{type(exc).__name__}: {reason}", seconds=took())
    finally:
        timer.cancel()
        conn.close()
