"""Merge several results into one report (``spec-check report A.json B.json ...``).

A provider hands a customer one page for a fleet and the jobs that run on it: the fleet
result covers the node and cluster scopes, each lint result the job scope, and the merged
report's coverage spans them all (so it may claim conformance to the whole spec when
every requirement was evaluated).

Results are merged only when they were judged by the same rules: the same spec version,
the same rule pack (ID and digest) and the same thresholds. Anything else is refused in
one line naming the two files and what differs; nothing is guessed. Parameters the spec
leaves unset (job inputs such as ``step_time`` or ``gpu_count``, whose default is
``unset``) describe one job, not a threshold, and may differ between lint results: the
merged report lists each value with the result it came from.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from validator import build_info
from validator.errors import SpecCheckError
from validator.report.model import Finding, Report, Subject

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def _label(path: str) -> str:
    from pathlib import Path

    return Path(path).name


def merge_reports(items: list[tuple[str, Report]], *, generated_at: str) -> Report:
    """One Report from ``(file, report)`` pairs; SpecCheckError when they cannot be merged."""
    if len(items) == 1:
        return items[0][1]
    first_file, first = items[0]
    for file, rep in items[1:]:
        if rep.spec_version != first.spec_version:
            raise SpecCheckError(
                f"cannot merge results of different spec versions: {first_file} is spec "
                f"v{first.spec_version}, {file} is spec v{rep.spec_version}")
        a, b = first.rule_pack, rep.rule_pack
        if (a.get("id"), a.get("digest")) != (b.get("id"), b.get("digest")):
            raise SpecCheckError(
                f"cannot merge results of different rule packs: {first_file} used {a.get('id')} "
                f"({str(a.get('digest'))[:19]}), {file} used {b.get('id')} ({str(b.get('digest'))[:19]}); "
                "re-run both with one spec-check")
    parameters = _parameters(items)
    names: dict[str, int] = {}
    for _, rep in items:
        for s in rep.subjects:
            names[s.name] = names.get(s.name, 0) + 1
    subjects: list[Subject] = []
    findings = []
    for file, rep in items:
        rename = {s.name: f"{s.name} ({_label(file)})" for s in rep.subjects if names[s.name] > 1}
        subjects += [replace(s, name=rename.get(s.name, s.name)) for s in rep.subjects]
        findings += [f if f.subject not in rename else _renamed(f, rename[f.subject]) for f in rep.findings]
    rules: dict[str, JSONValue] = {}
    reqs: dict[str, JSONValue] = {}
    selection: dict[str, list[str]] = {}
    extra: dict[str, JSONValue] = {}
    for _, rep in items:
        for r in rep.rules:
            rules.setdefault(r.id, r)
        for q in rep.requirements:
            reqs.setdefault(q.id, q)
        for k, v in rep.selection.items():
            selection.setdefault(k, [])
            selection[k] += [x for x in v if x not in selection[k]]
        for k, v in rep.extra.items():
            if k in ("merged_from", "waivers"):  # each input's own waiver record: in merged_from
                continue
            if isinstance(v, list) and isinstance(extra.get(k), list):
                extra[k] = [*extra[k], *v]  # e.g. the jobs of two lint results
            else:
                extra.setdefault(k, v)
    extra["merged_from"] = [
        {"file": file, "command": rep.command, "tool_version": rep.tool_version, "generated_at": rep.generated_at,
         "subjects": len(rep.subjects), "conformant": rep.summary.conformant,
         **({"waivers": rep.extra["waivers"]} if "waivers" in rep.extra else {})}
        for file, rep in items
    ]
    commands = list(dict.fromkeys(rep.command for _, rep in items))
    profiles = list(dict.fromkeys(rep.profile for _, rep in items if rep.profile))
    return Report(
        command="report",
        spec_version=first.spec_version,
        # results of several builds: the one that merged them (each input's is in merged_from)
        tool_version=first.tool_version if all(r.tool_version == first.tool_version for _, r in items)
        else build_info.tool_version(),
        rule_pack=dict(first.rule_pack),
        generated_at=generated_at,
        parameters=parameters,
        subjects=tuple(subjects),
        findings=tuple(sorted(findings, key=lambda f: f.sort_key())),
        rules=tuple(rules.values()),
        requirements=tuple(reqs.values()),
        profile="; ".join(profiles) or None,
        selection=selection,
        extra={**extra, "merged_commands": commands},
    )


def _renamed(f: Finding, name: str) -> Finding:
    return replace(f, subject=name)


def _parameters(items: list[tuple[str, Report]]) -> dict[str, dict[str, JSONValue]]:
    """The thresholds must agree; job inputs (default ``unset``) may differ per result."""
    out: dict[str, dict[str, JSONValue]] = {}
    seen_in: dict[str, str] = {}
    for file, rep in items:
        for name, p in rep.parameters.items():
            if name not in out:
                out[name], seen_in[name] = dict(p), file
                continue
            if out[name].get("value") == p.get("value"):
                continue
            if p.get("default") == "unset" or out[name].get("default") == "unset":
                old = out[name]
                values = old.get("_values") or [f"{old.get('value')} in {_label(seen_in[name])}"]
                values.append(f"{p.get('value')} in {_label(file)}")
                out[name] = {**old, "_values": values}
                continue
            raise SpecCheckError(
                f"cannot merge results judged under different thresholds: {name} is "
                f"{out[name].get('value')} ({out[name].get('origin')}) in {seen_in[name]} and "
                f"{p.get('value')} ({p.get('origin')}) in {file}")
    for p in out.values():
        values = p.pop("_values", None)
        if values:
            p["value"] = "; ".join(values)
            p["origin"] = "per result"
    return out
