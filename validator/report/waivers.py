"""Waivers: approved, expiring exceptions to findings (``--waivers FILE``).

A waiver does not change what was observed: the finding keeps its status and carries the
waiver, so every report shows what was waived, by whom, why and until when. Only an
*active* waiver takes the finding out of the conformance verdict (``model.summarize``); an
expired one is still shown, with ``active: false``, and the finding counts again. That
keeps a forgotten waiver from hiding a problem forever. Only ``fail`` and ``warn`` can be
waived: an ``error`` is an unknown, and no waiver turns an unknown into an accepted result.

The file (YAML; a top-level list, or a mapping with ``waivers:``)::

    waivers:
      - id: NET-01.fabric-port-slow      # a rule ID or a requirement ID (exact, no prefixes)
        subject: "gpu-a-*"               # host name or glob, GPU UUID, or config file path
        justification: 200G fabric until the Q3 upgrade (TICKET-1234)
        approver: jane.doe@example.com
        expires: 2026-12-31              # inclusive, UTC
        granted: 2026-06-30              # optional: when it was approved
        waiver_id: WVR-0042              # optional: its own ID (default: derived from id and subject)

A result records what judged its waivers: the file's SHA-256, each waiver's ID and granted
date, the day expiry was judged on and when (``extra["waivers"]``), so rendering it later
shows the same waivers active (``report --waivers`` judges them as of the result's own date
unless ``--as-of`` says otherwise).

IDs are exact, not prefixes: a waiver is an audited exception, and ``NET`` would silently
waive rules added later. An ID the rule pack does not know is an error at file:line (a
typo must not leave a finding unwaived, or a renamed rule waived by accident).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from validator.clock import today_utc
from validator.errors import RuleFileError
from validator.report.model import Finding, Report, Status

if TYPE_CHECKING:
    from validator.report.model import JSONValue

GPU_UUID = re.compile(r"^(GPU|MIG)-[0-9A-Fa-f][0-9A-Fa-f-]{7,}$")
# fail and warn: a known verdict someone accepts. An error is an unknown, and unknown is never
# pass: a waiver cannot make a fact that could not be read count as judged.
_WAIVABLE = (Status.FAIL, Status.WARN)
_KEYS = ("id", "subject", "justification", "approver", "expires")
_OPTIONAL = ("granted", "waiver_id")
_OPTIONAL = ("granted", "waiver_id")


class WaiverFileError(RuleFileError):
    """A waiver file that does not load or names an unknown rule or requirement."""


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


class _PackLike(Protocol):
    @property
    def rules(self) -> Iterable[_HasId]: ...


class _SpecLike(Protocol):
    @property
    def requirements(self) -> Iterable[_HasId]: ...


@dataclass(frozen=True)
class Waiver:
    id: str
    subject: str
    justification: str
    approver: str
    expires: date
    file: str = ""
    line: int | None = None
    granted: date | None = None
    waiver_id: str = ""
    file_sha256: str = ""  # of the waiver file's bytes, recorded in the result

    @property
    def key(self) -> str:
        """The waiver's own ID: as written, or ``W-`` + 12 hex of the SHA-256 of its rule or
        requirement, subject and expiry (stable while those stay; a renewal is a new grant)."""
        if self.waiver_id:
            return self.waiver_id
        import hashlib

        return "W-" + hashlib.sha256(f"{self.id}\x1f{self.subject}\x1f{self.expires}".encode()).hexdigest()[:12]

    def active_on(self, today: date) -> bool:
        return today <= self.expires

    def matches(self, f: Finding) -> bool:
        return self.id in (f.rule, f.requirement) and subject_matches(self.subject, f)

    def record(self, today: date) -> dict[str, JSONValue]:
        """What a waived finding carries (``Finding.waiver``)."""
        return {
            "id": self.id,
            "subject": self.subject,
            "justification": self.justification,
            "approver": self.approver,
            "expires": self.expires.isoformat(),
            "active": self.active_on(today),
            "waiver_id": self.key,
            "granted": self.granted.isoformat() if self.granted else None,
            "as_of": today.isoformat(),
        }


def subject_matches(pattern: str, f: Finding) -> bool:
    """Does a waiver's ``subject`` name this finding's node, GPU or file?

    * a GPU UUID (``GPU-…``/``MIG-…``) matches a finding whose item label or source holds
      that UUID (findings name GPUs by index, ``GPU0``; the UUID is matched only where the
      engine puts it in the label, e.g. ``GPU0 (GPU-8f…)``);
    * otherwise a shell glob (or plain name) against the subject; against either end of
      a cluster finding's measured pair ``a->b`` (a waived host's slow link is waived on
      both of its pairs); or against the config file of a lint finding (whole path, or its
      trailing components: ``conf/ds.json``).
    """
    if GPU_UUID.match(pattern):
        needle = pattern.lower()
        return any(needle in (text or "").lower() for text in (f.item, f.source))
    if fnmatchcase(f.subject, pattern):
        return True
    pair = _pair(f.item or "")
    if pair and (fnmatchcase(pair[0], pattern) or fnmatchcase(pair[1], pattern)):
        return True  # a host's waiver covers the cluster's measurements of its pairs
    if f.location is not None:
        path = PurePosixPath(f.location.file.replace("\\", "/"))
        parts = path.parts
        want = PurePosixPath(pattern.replace("\\", "/"))
        n = len(want.parts)
        if fnmatchcase(str(path), str(want)):
            return True
        return n > 0 and n <= len(parts) and fnmatchcase(str(PurePosixPath(*parts[-n:])), str(want))
    return False




def _pair(item: str) -> tuple[str, str] | None:
    """``a -> b`` of a measured pair, split by hand: the regex it replaces
    (``\\s*(.+?)\\s*->``) backtracked quadratically on a long item id of spaces."""
    if "\n" in item:
        return None
    a, sep, b = item.partition("->")
    a, b = a.strip(), b.strip()
    return (a, b) if sep and a and b else None


def _line(node: object, key: object = None) -> int | None:
    if key is not None:
        lines = getattr(node, "key_lines", None) or {}
        if key in lines:
            return int(lines[key])
    return getattr(node, "line", None) or None


def _date(raw: object) -> date | None:
    if isinstance(raw, datetime):
        return raw.date()
    if isinstance(raw, date):
        return raw
    if isinstance(raw, str):
        try:
            return date.fromisoformat(raw.strip())
        except ValueError:
            return None
    return None


def _entry(raw: object, index: int, where: str, fallback: int | None, known: set[str]) -> Waiver:
    line = _line(raw) or fallback
    if not isinstance(raw, dict):
        raise WaiverFileError(
            f"waivers[{index}]: expected a mapping with {', '.join(_KEYS)}", file=where, line=line
        )
    for key in raw:
        if key not in _KEYS + _OPTIONAL:
            raise WaiverFileError(
                f'waivers[{index}]: unknown key "{key}" (allowed: {", ".join(_KEYS + _OPTIONAL)})',
                file=where,
                line=_line(raw, key),
            )
    for key in _KEYS:
        if key not in raw:
            raise WaiverFileError(f'waivers[{index}]: missing "{key}"', file=where, line=line)
    for key in ("id", "subject", "justification", "approver"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise WaiverFileError(
                f"waivers[{index}].{key}: must be a non-empty string",
                file=where,
                line=_line(raw, key),
            )
    expires = _date(raw["expires"])
    if expires is None:
        raise WaiverFileError(
            f"waivers[{index}].expires: not a date (write YYYY-MM-DD)",
            file=where,
            line=_line(raw, "expires"),
        )
    granted = None
    if raw.get("granted") is not None:
        granted = _date(raw["granted"])
        if granted is None or granted > expires:
            raise WaiverFileError(
                f"waivers[{index}].granted: " + ("not a date (write YYYY-MM-DD)" if granted is None
                                                 else "after its expiry"),
                file=where, line=_line(raw, "granted"))
    own = raw.get("waiver_id")
    if own is not None and (not isinstance(own, str) or not own.strip()):
        raise WaiverFileError(f"waivers[{index}].waiver_id: must be a non-empty string",
                              file=where, line=_line(raw, "waiver_id"))
    wid = raw["id"].strip()
    if wid not in known:
        close = difflib.get_close_matches(wid, sorted(known), n=4, cutoff=0.6)
        hint = (
            f" (did you mean: {', '.join(close)}?)" if close else " (see `spec-check rules list`)"
        )
        raise WaiverFileError(
            f'waivers[{index}].id: no rule or requirement "{wid}"{hint}',
            file=where,
            line=_line(raw, "id"),
        )
    return Waiver(
        wid,
        raw["subject"].strip(),
        raw["justification"].strip(),
        raw["approver"].strip(),
        expires,
        where,
        line,
        granted,
        own.strip() if isinstance(own, str) else "",
    )


def load_waivers(path: Path, pack: _PackLike, spec: _SpecLike) -> tuple[Waiver, ...]:
    """Read and validate a waiver file against the rule pack's rule and requirement IDs.

    ``pack`` and ``spec`` need only ``.rules`` / ``.requirements`` with ``.id``, so
    ``spec-check report`` can pass the rule docs a result carries.
    """
    from validator.io.yamlfile import load_yaml

    where = str(path)
    data = load_yaml(Path(path), error=WaiverFileError)
    entries = data
    if isinstance(data, dict):
        extra = [k for k in data if k != "waivers"]
        if extra:
            raise WaiverFileError(
                f'unknown top-level key "{extra[0]}" (expected "waivers:")',
                file=where,
                line=_line(data, extra[0]),
            )
        entries = data.get("waivers")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise WaiverFileError(
            "expected a list of waivers (or a mapping with `waivers:`)",
            file=where,
            line=_line(entries) or _line(data),
        )
    known = {r.id for r in pack.rules} | {q.id for q in spec.requirements}
    item_lines = getattr(entries, "item_lines", [])
    loaded = tuple(
        _entry(raw, i, where, item_lines[i] if i < len(item_lines) else None, known)
        for i, raw in enumerate(entries)
    )
    seen: dict[str, int] = {}
    for i, w in enumerate(loaded):
        if w.waiver_id and w.key in seen:
            raise WaiverFileError(f"waivers[{i}]: waiver_id {w.key} is also waivers[{seen[w.key]}]'s "
                                  "(give each waiver its own waiver_id)", file=where, line=w.line)
        if w.waiver_id:
            seen[w.key] = i
    digest = _file_sha256(Path(path))
    return tuple(replace(w, file_sha256=digest) for w in loaded)


def _file_sha256(path: Path) -> str:
    import hashlib

    from validator.io.safeio import CAPS, read_bytes

    return "sha256:" + hashlib.sha256(read_bytes(path, cap=CAPS["YAML file"], what="waiver file")).hexdigest()


def _stderr(message: str) -> None:
    import sys

    sys.stderr.write(f"spec-check: warning: {message}\n")


def apply_waivers(
    report: Report,
    waivers: Iterable[Waiver],
    *,
    today: date | None = None,
    warn: Callable[[str], None] | None = _stderr,
) -> Report:
    """The report with each waivable finding (fail, warn, error) carrying its waiver.

    Where several waivers match, an active one wins over an expired one, and a rule's
    own waiver over its requirement's; then the first in the file. Passing and skipped
    findings need no waiver and get none. Waivers already on findings are replaced.

    A waiver that matches no finding of the run at all (its subject names no host, GPU
    or file that its rule was evaluated on) is most likely a typo in the subject, so
    that it waives nothing: it is listed in ``extra["unmatched_waivers"]`` and reported
    through ``warn`` (stderr), but it is not an error (the host may simply be drained).
    """
    waivers = tuple(waivers)
    day = today or today_utc()
    matched: set[int] = set()
    from validator.clock import now_utc

    files = sorted({(w.file, w.file_sha256) for w in waivers})
    record: dict[str, JSONValue] = {
        "files": [{"file": f, "sha256": d or None} for f, d in files],
        "as_of": day.isoformat(),
        "evaluated_at": now_utc(),
        "waivers": [{"waiver_id": w.key, "id": w.id, "subject": w.subject,
                     "granted": w.granted.isoformat() if w.granted else None,
                     "expires": w.expires.isoformat(), "active": w.active_on(day)} for w in waivers],
    }

    def pick(f: Finding) -> dict[str, JSONValue] | None:
        hits = [
            (not w.active_on(day), w.id != f.rule, i, w)
            for i, w in enumerate(waivers)
            if w.matches(f)
        ]
        matched.update(h[2] for h in hits)
        if not hits or f.status not in _WAIVABLE:
            return None
        return min(hits, key=lambda h: h[:3])[3].record(day)

    findings = tuple(replace(f, waiver=pick(f)) for f in report.findings)  # one pass over waivers x findings
    unmatched = [w for i, w in enumerate(waivers) if i not in matched]
    if unmatched:
        for w in unmatched:
            if warn is not None:
                at = f"{w.file}:{w.line}: " if w.file and w.line else f"{w.file}: " if w.file else ""
                warn(f'{at}waiver {w.id} for subject "{w.subject}" matches no finding in this run')
        extra = {
            **report.extra,
            "unmatched_waivers": [
                {"id": w.id, "subject": w.subject, "file": w.file, "line": w.line} for w in unmatched
            ],
        }
        report = replace(report, extra=extra)
    report = replace(report, extra={**report.extra, "waivers": record})
    return report.with_findings(findings)
