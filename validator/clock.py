"""The run's clock. One place reads SOURCE_DATE_EPOCH, so a pinned run (example reports,
golden tests, reproducible CI artefacts) has the same timestamp in every verb and every
waiver expiry check, not just in some of them."""

from __future__ import annotations

import os
from datetime import date, datetime, timezone

from validator.errors import SpecCheckError


def pinned() -> bool:
    """Whether SOURCE_DATE_EPOCH pins the run (its output is then reproducible: the same from
    every commit whose content is the same, see validator/build_info.py)."""
    return bool(os.environ.get("SOURCE_DATE_EPOCH"))


def now() -> datetime:
    """Now in UTC, or the instant SOURCE_DATE_EPOCH names."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    try:
        return datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now(timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise SpecCheckError(f'SOURCE_DATE_EPOCH="{epoch}" is not a Unix timestamp') from None


def now_utc() -> str:
    """The run's timestamp as written in results and facts documents."""
    return now().strftime("%Y-%m-%dT%H:%M:%SZ")


def today_utc() -> date:
    """Today (UTC), for waiver expiry."""
    return now().date()
