"""The one place that names the versions of what spec-check writes and reads back.

Three versions travel in every file spec-check writes, and each answers its own question:

- the tool version (``validator.__version__``, ``tool_version`` in every document): which
  build wrote it;
- ``FACTS_SCHEMA`` (``"schema"`` of a facts document, ``spec-check probe -o``): what a
  recording holds. Its shape is the document format (``spec/facts.schema.json``) *and* the
  fact catalogue (``spec/facts/*.yaml``: names, types, units, fields), because a recording
  made before a fact existed lacks it;
- ``RESULT_SCHEMA`` (``"schema"`` of a JSON result): the result format
  (``spec/result.schema.json``).

A schema version changes whenever its shape changes from the shape of a released version:
``RELEASED_SHAPES`` keeps the digest of each released shape, and ``tests/test_versions.py``
fails when the current shape differs from the one released under the same version (bump
it) and when the spec/ JSON schemas name another version than this module. Print the
current digests with ``python -m validator.versions``; a release adds them to the table.

Older documents stay readable: every version in ``*_READABLE`` is read (results and
recordings only gained fields since), and ``older_note`` gives the one line the CLI prints
when it reads an older one. A newer one is refused with a line that says to upgrade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# 4: the machine's identity (host.machine_id, host.board_serial); 3: GPU error events, error
# counters, DCGM, scraped telemetry
FACTS_SCHEMA = "spec-check/facts/4"
# 4: a node subject's probe_version, machine_id and board_serial; 3: each finding's stable "id";
# a job finding's fixes (edits) and no_fix; summary.not_judged, coverage.requirements_not_judged
# and ignored
RESULT_SCHEMA = "spec-check/result/4"
DIFF_SCHEMA = "spec-check/diff/1"

# schema version -> (the spec-check release that wrote it, digest of its shape). 0.1.0 is the
# state of 2026-11-22 (commit c10a22f), before the first version bump; 0.2.0's are those of
# commit 35f689e (tests/test_versions.py recomputes both from those commits' spec/).
RELEASED_SHAPES: dict[str, tuple[str, str]] = {
    "spec-check/facts/1": ("0.1.0", "sha256:f1d69eb655f8ea1b7c7f580010ad6808e91ea45ad8c8bf4be58bd81c280ae8b7"),
    "spec-check/result/1": ("0.1.0", "sha256:55b9cbdb543412a90dfe2972e6a76cecf479abd36b1d444126f703f4fce459b7"),
    "spec-check/facts/2": ("0.2.0", "sha256:a2778d48bfff5d736e418bdeeb510c1d5a8dc16edf127b1b751c51a6ae590da8"),
    "spec-check/result/2": ("0.2.0", "sha256:0ca052ce1f9581bd5ae243e805e6fb9398d224f5879d02d54f513b4fb0e6f873"),
    "spec-check/facts/3": ("0.3.0", "sha256:4cad20f2f3590569184896cd0e7b5c9a72c9c951be0391e806d64bb2222c71de"),
    "spec-check/result/3": ("0.3.0", "sha256:93d42d0b25b483588da0416a7504c7d4eb652a56f5f90068513cba67a13f22ea"),
}

FACTS_READABLE = ("spec-check/facts/1", "spec-check/facts/2", "spec-check/facts/3", FACTS_SCHEMA)
RESULT_READABLE = ("spec-check/result/1", "spec-check/result/2", "spec-check/result/3", RESULT_SCHEMA)

_WHAT = {"facts": ("facts", FACTS_SCHEMA, FACTS_READABLE), "result": ("result", RESULT_SCHEMA, RESULT_READABLE),
         "probe": ("facts", FACTS_SCHEMA, FACTS_READABLE)}  # probe: a live host's facts (cluster)


def number(schema: str) -> int | None:
    """3 for "spec-check/facts/3"; None when the tail is not a plain number."""
    tail = schema.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() and tail.isascii() else None


def unreadable(kind: str, schema: Any) -> str | None:
    """Why a document of this ``"schema"`` cannot be read (None when it can): a newer
    version says to upgrade, another document kind says what was expected."""
    noun, current, readable = _WHAT[kind]
    if schema in readable:
        return None
    prefix = f"spec-check/{noun}/"
    if isinstance(schema, str) and schema.startswith(prefix):
        n, mine = number(schema), number(current)
        if n is not None and mine is not None and n > mine:
            from validator import __version__

            return (f'{noun} schema "{schema}" was written by a newer spec-check; this is spec-check '
                    f'{__version__}, which reads {", ".join(readable)}: upgrade spec-check to read it')
        return f'{noun} schema "{schema}" is not supported by this version (reads {", ".join(readable)})'
    if kind == "result":
        hint = f'schema "{schema}"' if schema else 'no "schema" key'
        return f'not a spec-check result ({hint}; expected "{current}")'
    if isinstance(schema, str) and schema.startswith("spec-check/result/"):
        return ("a spec-check result holds verdicts, not facts: pass the node facts it was judged from "
                "(`spec-check probe -o FILE` files, or the folder `spec-check cluster --save-facts DIR` wrote)")
    return f'not a spec-check facts document (schema is {schema!r}, expected "{current}")'


def older_note(kind: str, doc: dict[str, Any], where: str) -> str | None:
    """One line for a readable document written by an older spec-check; None if current."""
    from validator import __version__

    _, current, _ = _WHAT[kind]
    schema = doc.get("schema")
    if schema == current:
        return None
    by = doc.get("tool_version")
    by = f"spec-check {by}" if isinstance(by, str) and by else "an older spec-check"
    if kind in ("facts", "probe"):
        until = ("spec-check on that host is upgraded" if kind == "probe" else
                 "it is re-recorded with this version (`spec-check probe -o FILE`)")
        what = f"facts added since are missing from it (a rule that needs one is an error, never a pass) until {until}"
    else:
        what = "read as it was written; fields added since are absent"
    return f"{where}: written by {by} ({schema}; spec-check {__version__} writes {current}): {what}"


def shape(kind: str, spec_dir: Path) -> dict[str, Any]:
    """The shape a schema version stands for, read from a spec/ directory: the JSON schema
    without its prose, identifiers and own version (``required`` lists sorted: the result
    schema is generated, validator/report/schemas.py, and lists them in field order), plus
    (for facts) the fact catalogue's names, types, units and fields without labels and notes."""
    import json

    import yaml

    def strip(node: Any) -> Any:
        if isinstance(node, dict):  # "required" is a set: its order is no part of the shape
            return {k: sorted(v) if k == "required" and isinstance(v, list) else strip(v)
                    for k, v in node.items() if k not in ("description", "title", "$id", "$comment", "examples")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema = strip(json.loads((spec_dir / f"{kind}.schema.json").read_text(encoding="utf-8")))
    schema.get("properties", {}).pop("schema", None)  # the version itself
    out: dict[str, Any] = {"schema": schema}
    if kind == "facts":

        def fact(info: dict[str, Any]) -> dict[str, Any]:
            return {"type": info.get("type"), "unit": info.get("unit"),
                    "fields": {k: fact(v) for k, v in sorted((info.get("fields") or {}).items())}}

        catalogue: dict[str, Any] = {}
        for path in sorted((spec_dir / "facts").glob("*.yaml")):
            for name, info in (yaml.safe_load(path.read_text(encoding="utf-8")).get("facts") or {}).items():
                catalogue[name] = fact(info)
        out["catalogue"] = dict(sorted(catalogue.items()))
    return out


def shape_digest(kind: str, spec_dir: Path) -> str:
    import hashlib
    import json

    canon = json.dumps(shape(kind, spec_dir), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canon.encode()).hexdigest()


def main() -> None:
    """Print the current shapes' digests (a release adds them to RELEASED_SHAPES)."""
    from validator import __version__
    from validator.io.resources import spec_dir

    for kind, current in (("facts", FACTS_SCHEMA), ("result", RESULT_SCHEMA)):
        print(f'    "{current}": ("{__version__}", "{shape_digest(kind, spec_dir())}"),')


if __name__ == "__main__":
    main()
