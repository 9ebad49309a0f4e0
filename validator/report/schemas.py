"""The JSON Schemas in spec/ that are generated, so that they cannot drift from the code
(tests compare the checked-in files): the rule-file schema from the rule model
(validator/rules/rulemodel.py, through pydantic), the result schema from the result model
(validator/report/model.py). The facts schema is written by hand (a contract for outside tools).

    python -m validator.report.schemas > spec/rulefile.schema.json
    python -m validator.report.schemas result > spec/result.schema.json
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def rulefile_schema() -> dict[str, JSONValue]:
    from validator.rules.validation_models import adapter

    schema = adapter("RuleFile").json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "spec-check rule file (rules/vX/*.yaml)"
    schema.setdefault("$defs", {})["PackFile"] = adapter("PackFile").json_schema()
    _factory_defaults(schema)
    return schema


def _factory_defaults(schema: dict[str, JSONValue]) -> None:
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





# ---- the result schema, from validator/report/model.py's annotations -------------------------------


def result_schema() -> dict[str, JSONValue]:
    """spec/result.schema.json, generated from the result model (``validator/report/model.py``).

    Written here rather than by pydantic's ``json_schema()``: the published result/2
    schema has a shape outside tools validate against (``"type": ["string", "null"]``,
    a ``finding`` definition, looser parts the model marks), which ``versions.py`` pins
    by digest; this walk says it from the annotations, and nothing in pydantic's output
    format can move it."""
    from validator.report import model
    from validator.versions import RESULT_SCHEMA, number

    gen = _ResultSchema()
    top = gen.object_of(model.Report)
    finding = top["properties"]["findings"]["items"]
    top["properties"]["findings"]["items"] = {"$ref": "#/$defs/finding"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://spec-check.dev/schemas/result-{number(RESULT_SCHEMA)}.json",
        "title": "spec-check result",
        "description": "One run of spec-check (check, lint, cluster): every finding with its evidence, "
                       "and whether the subjects conform.",
        **top,
        "$defs": {"finding": finding},
    }


class _ResultSchema:
    """JSON Schema of a type of the result model: dataclasses and TypedDicts are objects,
    ``X | None`` is nullable, enums and Literals are ``enum``/``const``, ``Any`` is open;
    ``Annotated`` metadata (``model.Form``, ``Keywords``, ``REQUIRED``, ``OMITTED_IF_NONE``)
    and ``Shape`` add what the type cannot say."""

    # Any below: a class of the model or a typing construct, as typing.get_type_hints
    # gives it (a TypedDict's keys, Annotated metadata, unions): read by introspection
    def object_of(self, cls: Any) -> dict[str, JSONValue]:
        import dataclasses
        import typing

        published = getattr(cls, "PUBLISHED_REQUIRED", None)
        if published is not None:
            return {"type": "object", "required": list(published)}
        hints = typing.get_type_hints(cls, include_extras=True)
        fields: dict[str, tuple[Any, bool]] = {}  # name -> (type, required unless marked)
        if dataclasses.is_dataclass(cls):
            if hasattr(cls, "JSON_FIELDS"):
                fields = {k: (t, False) for k, t in cls.JSON_FIELDS.items()}
            else:
                for f in dataclasses.fields(cls):
                    fields[f.name] = (hints[f.name], f.default is dataclasses.MISSING
                                      and f.default_factory is dataclasses.MISSING)
                fields.update({k: (t, False) for k, t in getattr(cls, "JSON_COMPUTED", {}).items()})
        else:  # a TypedDict
            fields = {k: (t, k in cls.__required_keys__) for k, t in hints.items()}
        props: dict[str, JSONValue] = {}
        required: list[str] = []
        for name, (tp, req) in fields.items():
            node, marks = self.of(tp)
            props[name] = node
            if req or "REQUIRED" in marks:
                required.append(name)
        out: dict[str, JSONValue] = {"type": "object", "required": required, "properties": props}
        if not required:
            del out["required"]
        if not dataclasses.is_dataclass(cls) and cls.__doc__:
            out["description"] = " ".join(cls.__doc__.split())
        return out

    def of(self, tp: Any) -> tuple[dict[str, JSONValue], set[str]]:
        """The schema of one annotation, and the markers it carried."""
        import enum
        import types
        import typing

        from validator.report import model

        marks: set[str] = set()
        extra: dict[str, JSONValue] = {}
        form: model.Form | None = None
        shape: type | None = None
        if typing.get_origin(tp) is typing.Annotated:
            tp, *meta = typing.get_args(tp)
            for m in meta:
                if isinstance(m, model.Form):
                    form = m
                elif isinstance(m, model.Shape):
                    shape = m.typed
                elif isinstance(m, model.Keywords):
                    extra.update(m.keywords)
                else:
                    marks.add(repr(m))
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        nullable = False
        if origin in (typing.Union, types.UnionType) and type(None) in args:
            rest = [a for a in args if a is not type(None)]
            if len(rest) != 1:
                raise TypeError(f"no JSON Schema for a union of several types: {tp!r}")
            tp = rest[0]
            origin, args = typing.get_origin(tp), typing.get_args(tp)
            nullable = "OMITTED_IF_NONE" not in marks
        if "published" in extra:
            return extra.pop("published"), marks
        props = extra.pop("properties", None)
        node: dict[str, JSONValue]
        if shape is not None:
            node = self.object_of(shape)
        elif tp is typing.Any:
            node = {}
        elif isinstance(tp, type) and issubclass(tp, enum.Enum):
            node = {"enum": [m.value for m in tp]}
        elif origin is typing.Literal:
            node = {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        elif tp in (str, int, bool, float):
            node = {"type": {str: "string", int: "integer", bool: "boolean", float: "number"}[tp]}
        elif origin in (list, tuple):
            node = {"type": "array"}
            if args and args[0] is not typing.Any:
                node["items"] = self.of(args[0])[0]
        elif origin is dict:
            node = {"type": "object"}
            if args[1] is not typing.Any:
                node["additionalProperties"] = self.of(args[1])[0]
        elif isinstance(tp, type) and (hasattr(tp, "__required_keys__") or hasattr(tp, "__dataclass_fields__")):
            node = self.object_of(tp)
        else:
            raise TypeError(f"no JSON Schema for {tp!r}")
        if form is not None and form.pattern:
            node["pattern"] = form.pattern
        if props:
            node["properties"] = {k: self.of(v)[0] for k, v in props.items()}
        node.update(extra)
        if nullable:
            if set(node) - {"type"} and node.get("type") != "array":
                node = {"oneOf": [{"type": "null"}, node]}
            else:
                node["type"] = [node["type"], "null"]
        return node, marks


def result_schema_text() -> str:
    return json.dumps(result_schema(), indent=2) + "\n"


if __name__ == "__main__":
    import sys

    print(result_schema_text() if sys.argv[1:] == ["result"] else rulefile_schema_text(), end="")
