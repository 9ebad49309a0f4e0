"""The requirement catalogue as an OSCAL 1.0.6 catalog, generated from ``spec/``.

A GRC tool tracks controls from a catalog and assessment results against it; spec-check's
assessment results (``--format oscal``) name the spec's requirement IDs as control IDs,
so this catalog is what they resolve against. Every requirement is a control: its ID,
title, a ``statement`` part (the requirement's words), a ``guidance`` part (the
rationale), the level (MUST / SHOULD, RFC 2119) and scopes as properties, and each of its
thresholds as a parameter with the spec's default value, unit dimension and the source
that value came from. Version-5 UUIDs from the spec version keep the document the same
from run to run. Validated against NIST's published schema in tests/reports/test_oscal.py.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.report.model import JSONValue
    from validator.rules.rulemodel import Spec

# shared with the assessment results (renderers/oscal.py): one OSCAL version, one namespace
# for spec-check's properties, one UUIDv5 root
OSCAL_VERSION = "1.0.6"
NS = "https://github.com/spec-check/spec-check/ns/oscal"
ROOT_UUID = uuid.UUID("6f2c7a4e-9d1b-5c3a-8e2f-0b7d4a1c9e55")


def uid(*parts: object) -> str:
    """A version-5 UUID from ``parts``: the same content gives the same document."""
    return str(uuid.uuid5(ROOT_UUID, "\x1f".join(str(p) for p in parts)))


def text(value: object) -> str:
    """OSCAL text: no leading, trailing or repeated whitespace, never empty."""
    return " ".join(str(value).split()) or "-"


def _param_id(req: str, name: str) -> str:
    """An OSCAL token, unique per control: ``NET-01_fabric_port_rate``."""
    return f"{req}_{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"


def _value(default: JSONValue) -> list[str]:
    if default is None:
        return []
    if isinstance(default, list):
        return [text(v) for v in default] or []
    return [text(default)]


def catalog(spec: Spec, generated_at: str, tool_version: str) -> dict[str, JSONValue]:
    controls = []
    for r in spec.requirements:
        params = []
        for name in r.parameters:
            p = spec.parameters[name]
            entry: dict[str, JSONValue] = {
                "id": _param_id(r.id, name),
                "props": [{"name": "spec-parameter", "ns": NS, "value": name},
                          {"name": "dimension", "ns": NS, "value": text(p.dimension)}],
                "label": text(p.label or name),
                "usage": text(p.description),
                "remarks": text(f"default from: {p.source}"),
            }
            values = _value(p.default)
            if values:
                entry["values"] = values
            params.append(entry)
        control: dict[str, JSONValue] = {
            "id": r.id,
            "class": "requirement",
            "title": text(r.title),
            "props": [{"name": "level", "ns": NS, "value": str(r.level)},
                      *({"name": "scope", "ns": NS, "value": str(s)} for s in r.scopes)],
            "parts": [
                {"id": f"{r.id}_smt", "name": "statement", "prose": r.statement.strip()},
                {"id": f"{r.id}_gdn", "name": "guidance", "prose": " ".join(r.rationale.split())},
            ],
        }
        if params:
            control["params"] = params
        controls.append(control)
    return {"catalog": {
        "uuid": uid("catalog", spec.spec_version),
        "metadata": {
            "title": text(f"{spec.title} (spec v{spec.spec_version})"),
            "last-modified": generated_at,
            "version": spec.spec_version,
            "oscal-version": OSCAL_VERSION,
            "props": [{"name": "generator", "ns": NS, "value": text(f"spec-check {tool_version}")}],
            "remarks": text(spec.status),
        },
        "controls": controls,
    }}
