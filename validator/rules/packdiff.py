"""``spec-check rules diff A B``: what changed between two rule packs, rule by rule.

Two packs are compared on the rules as the engine reads them (after ``extends`` and
``overrides``): rules added, removed (or disabled), and for the others each field whose
value differs. Each changed rule also quotes the newer pack's ``CHANGELOG.md`` entry for
it (a ``### RULE-ID`` heading), and a rule changed without one is listed as such, so the
changelog cannot fall behind the rules (a test checks the bundled packs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HEADING = re.compile(r"^###\s+(\S+)\s*$")


def changelog_entries(pack_path: Path) -> dict[str, str]:
    """``### RULE-ID`` sections of a pack's CHANGELOG.md, as one paragraph of text each."""
    path = pack_path / "CHANGELOG.md"
    if not path.is_file():
        return {}
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _HEADING.match(line)
        if m:
            current = m.group(1)
            out[current] = []
        elif line.startswith("#"):
            current = None
        elif current is not None:
            out[current].append(line.strip())
    return {k: " ".join(x for x in v if x).strip() for k, v in out.items()}


@dataclass
class PackDiff:
    old: dict[str, str]
    new: dict[str, str]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, list[str]] = field(default_factory=dict)  # rule -> changed field names
    fields: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # rule -> CHANGELOG entry

    @property
    def undocumented(self) -> list[str]:
        return sorted(r for r in [*self.added, *self.removed, *self.changed] if r not in self.notes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old, "new": self.new, "added": self.added, "removed": self.removed,
            "changed": {r: {f: {"old": a, "new": b} for f, (a, b) in fs.items()}
                        for r, fs in self.fields.items()},
            "changelog": self.notes,
        }


def diff_packs(old: Any, new: Any, new_path: Path | None) -> PackDiff:
    """Rules of ``old`` and ``new`` (loader.RulePack), compared field by field."""
    a = {r.id: r.model_dump(mode="json") for r in old.rules}
    b = {r.id: r.model_dump(mode="json") for r in new.rules}
    d = PackDiff(old={"id": old.id, "digest": old.digest}, new={"id": new.id, "digest": new.digest})
    d.added = sorted(set(b) - set(a))
    d.removed = sorted(set(a) - set(b))
    for rid in sorted(set(a) & set(b)):
        fs = {k: (a[rid].get(k), b[rid].get(k)) for k in sorted(set(a[rid]) | set(b[rid]))
              if a[rid].get(k) != b[rid].get(k)}
        if fs:
            d.fields[rid] = fs
            d.changed[rid] = list(fs)
    notes = changelog_entries(new_path) if new_path is not None else {}
    d.notes = {r: notes[r] for r in [*d.added, *d.removed, *d.changed] if r in notes}
    return d


def render_text(d: PackDiff) -> str:
    lines = [f"rule pack {d.old['id']} ({d.old['digest'][:19]}) -> {d.new['id']} ({d.new['digest'][:19]}): "
             f"{len(d.added)} added, {len(d.removed)} removed or disabled, {len(d.changed)} changed"]

    def note(rid: str) -> None:
        if rid in d.notes:
            lines.append(f"    why: {d.notes[rid]}")

    for rid in d.added:
        lines.append(f"+ {rid}")
        note(rid)
    for rid in d.removed:
        lines.append(f"- {rid}")
        note(rid)
    for rid, fs in d.fields.items():
        lines.append(f"~ {rid}: {', '.join(fs)} changed")
        note(rid)
    if not (d.added or d.removed or d.changed):
        lines.append("no rule differs")
    return "\n".join(lines) + "\n"
