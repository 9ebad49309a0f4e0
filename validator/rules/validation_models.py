"""Validation of rule files, pack files and the spec catalogue, by pydantic, into the
dataclasses of ``rulemodel.py``: the error that names the problem
(``rules.3.check.op: unknown operator ...`` at file:line).

The formats are defined once, in ``rulemodel.py``; here pydantic's ``TypeAdapter`` reads
those dataclasses (their annotations, and the ``Pattern``/``Checked`` metadata) and both
validates a file into them and gives the JSON Schema of ``spec/rulefile.schema.json``.

Imported only on the load path: the bundled pack comes compiled (``rules/bundled.json``),
so a run of it never imports pydantic (about 150 ms of start-up).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from validator.errors import SpecCheckError
from validator.io.yamlfile import line_of
from validator.rules.rulemodel import FILE_MODELS


@cache
def adapter(model: str) -> TypeAdapter[Any]:
    """The TypeAdapter of one file format (``RuleFile``, ``PackFile``, ``Spec``)."""
    return TypeAdapter(FILE_MODELS[model])


def pydantic_error(exc: ValidationError, data: Any, where: str, kind: type[SpecCheckError]) -> SpecCheckError:
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    path = ".".join(str(p) for p in loc) or "(top level)"
    msg = err["msg"]
    if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        msg = f'unknown key "{loc[-1]}"'
    elif err["type"] == "missing_argument":
        msg = "Field required"
    elif err["type"] == "dataclass_type":
        name = err.get("ctx", {}).get("class_name") or err.get("ctx", {}).get("dataclass_name") or ""
        msg = f"Input should be a valid dictionary or instance of {name}"
    return kind(f"{path}: {msg}", file=where, line=line_of(data, loc))


def validate(model: str, data: Any, where: str, kind: type[SpecCheckError]) -> Any:
    """Validate ``data`` as ``model`` (raising ``kind`` at file:line), as rulemodel objects.
    An empty rule or pack file is an empty mapping; an empty spec file is an error."""
    try:
        return adapter(model).validate_python(data if data is not None or model == "Spec" else {})
    except ValidationError as exc:
        raise pydantic_error(exc, data, where, kind) from None
