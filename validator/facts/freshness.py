"""How old a facts document is when it is judged: the one reading of ``collected_at`` that
a fleet's ``PLAT-02.facts-stale`` (validator/cluster/evidence.py) and the single-node verbs'
refusal share.

A fleet judges each host's age (its own finding); ``check --facts FILE`` and ``health
--facts FILE`` say it in one line (``api.steps.stale_note``): a single node's verdict carries
its facts' collection time in every format, and a recording replayed for what it shows must
not turn into an error a month after it was made.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from validator.report.model import JSONValue

FUTURE_SKEW_S = 300  # clocks of NTP-synchronized hosts agree to far less; Kerberos allows 5 minutes


def age_seconds(collected_at: object, now: datetime) -> float:
    """Seconds from ``collected_at`` to ``now`` (negative: after it, within ``FUTURE_SKEW_S``
    too); ValueError saying why when there is none, it is not a time, or it is further ahead."""
    if collected_at is None or collected_at == "":
        raise ValueError("the facts document records no collected_at")
    if not isinstance(collected_at, str):
        raise ValueError(f"collected_at {str(collected_at)[:40]} is not an ISO 8601 time (a "
                         f"{type(collected_at).__name__}, not a string)")
    try:
        when = datetime.fromisoformat(collected_at)
    except ValueError:
        raise ValueError(f'collected_at "{collected_at[:40]}" is not an ISO 8601 time') from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    seconds = (now - when).total_seconds()
    if seconds < -FUTURE_SKEW_S:
        raise ValueError(f"collected_at {collected_at} is {span(-seconds)} after this run's clock "
                         f"({now.strftime('%Y-%m-%dT%H:%M:%SZ')}): future-dated facts (the clock of the host "
                         f"that wrote them, or of this machine, is wrong)")
    return seconds


def span(seconds: float) -> str:
    """A duration as a reader counts it: days, hours or minutes."""
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 7200:
        return f"{seconds / 3600:,.0f} hours"
    return f"{seconds / 60:,.0f} minutes"


def stale(doc: Mapping[str, JSONValue], max_age_s: float, bound: str, now: datetime) -> str | None:
    """Why a node document is not current (older than ``max_age_s``, ``bound`` as written with
    its origin; dated after the run; no time), or None when it is."""
    try:
        seconds = age_seconds(doc.get("collected_at"), now)
    except ValueError as exc:
        return f"{exc}: this verdict speaks of facts of an unknown time"
    if seconds > max_age_s:
        return (f"facts collected {doc.get('collected_at')} are {span(seconds)} old, older than facts_max_age "
                f"{bound}: this verdict speaks of the node as it was then (probe it again)")
    return None
