"""How old a facts document is when it is judged: the one reading of ``collected_at`` that
a fleet's ``PLAT-02.facts-stale`` (validator/cluster/evidence.py) and the single-node verbs'
refusal share.

Why a single-node verb refuses where a fleet gets findings: a fleet's report must still say
what every other host is (one host's old file is that host's finding), while ``check
--facts FILE`` judges nothing else; a verdict on facts older than the bound, or dated after
the run, would speak of a node that may no longer be so. ``--set facts_max_age=...`` (or a
profile) says older facts are meant; a clock that is wrong has to be fixed.
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
    if not isinstance(collected_at, str) or not collected_at:
        raise ValueError("the facts document records no collected_at")
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


def check_fresh(doc: Mapping[str, JSONValue], file: str, max_age_s: float, bound: str, now: datetime) -> None:
    """Refuse (FactsFileError, exit 2, naming ``file``) a node document older than
    ``max_age_s`` (``bound``: the parameter as written, with its origin) or dated in the future."""
    from validator.errors import FactsFileError

    try:
        seconds = age_seconds(doc.get("collected_at"), now)
    except ValueError as exc:
        raise FactsFileError(str(exc), file=file) from None
    if seconds > max_age_s:
        raise FactsFileError(
            f"facts collected {doc.get('collected_at')} are {span(seconds)} old, older than facts_max_age "
            f"{bound}: probe the node again, or judge them anyway with a longer bound "
            f"(--set facts_max_age=... or a profile)", file=file)
