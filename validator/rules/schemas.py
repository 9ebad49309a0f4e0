"""The JSON Schemas in spec/: the rule-file schema is generated from the rule model
(validator/rules/rulemodel.py, through pydantic)
(so it cannot drift; a test compares), the facts and result schemas are written by hand
(they are contracts for outside tools)."""

from __future__ import annotations

import json
from typing import Any


def rulefile_schema() -> dict[str, Any]:
    from validator.rules.validation_models import adapter

    schema = adapter("RuleFile").json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "spec-check rule file (rules/vX/*.yaml)"
    schema.setdefault("$defs", {})["PackFile"] = adapter("PackFile").json_schema()
    _factory_defaults(schema)
    return schema


def _factory_defaults(schema: dict[str, Any]) -> None:
    """pydantic leaves out the default of a dataclass field made by a factory (``when:
    []``); the schema states it, as it did when the models were pydantic's own."""
    import dataclasses

    from validator.rules import rulemodel

    for name, d in schema["$defs"].items():
        cls = getattr(rulemodel, name, None)
        if not dataclasses.is_dataclass(cls):
            continue
        for f in dataclasses.fields(cls):
            if f.default_factory is not dataclasses.MISSING and f.name in d.get("properties", {}):
                d["properties"][f.name]["default"] = f.default_factory()


def rulefile_schema_text() -> str:
    return json.dumps(rulefile_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m validator.rules.schemas > spec/rulefile.schema.json
    print(rulefile_schema_text(), end="")
