"""The JSON Schemas in spec/: the rule-file schema is generated from the loader's models
(so it cannot drift; a test compares), the facts and result schemas are written by hand
(they are contracts for outside tools)."""

from __future__ import annotations

import json
from typing import Any


def rulefile_schema() -> dict[str, Any]:
    from validator.loader import PackFile, RuleFile

    schema = RuleFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "spec-check rule file (rules/vX/*.yaml)"
    schema.setdefault("$defs", {})["PackFile"] = PackFile.model_json_schema()
    return schema


def rulefile_schema_text() -> str:
    return json.dumps(rulefile_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m validator.schemas > spec/rulefile.schema.json
    print(rulefile_schema_text(), end="")
