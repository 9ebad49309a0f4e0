"""Load a rule pack: index -> pack.yaml -> rule files, with ``extends`` and overrides.

After kube-bench's versioned folders plus a mapping file: ``rules/index.yaml`` maps each
spec version to a pack directory; a pack may ``extends`` another and override its rules
per ID (``level``, ``check``, ``when``, ``enabled``). Every file is validated at load,
and every error names the file and line. ``min_engine_version`` is checked before
anything else, so a pack written for a newer engine says so instead of failing oddly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias, overload

from validator import __version__
from validator.errors import RuleFileError, SpecCheckError, UnitError
from validator.io.resources import rules_dir
from validator.io.yamlfile import line_of, load_yaml
from validator.rules.operators import AGGREGATE_OPS
from validator.rules.rulemodel import (
    RULE_ID,
    Check,
    Condition,
    IfEmpty,
    Override,
    PackFile,
    Rule,
    RuleFile,
    RulePack,
)
from validator.rules.spec import FactInfo, Spec
from validator.values.units import parse_quantity

if TYPE_CHECKING:
    from validator.values import JSONValue
    from validator.values.units import Quantity

__all__ = ["RULE_ID", "Check", "Condition", "IfEmpty", "Override", "PackFile", "Rule", "RuleFile", "RulePack",
           "load_pack", "pack_dir_for", "pack_index", "pack_versions"]
# The rule format itself (Rule, Check, ... RulePack) is validator/rules/rulemodel.py; these names
# stay importable from here for the code and tests that know them by this module.


def _version_tuple(v: str) -> tuple[int, ...]:
    """The numbers of a version ("1.2.3" -> (1, 2, 3)); ``ValueError`` when one has more than
    9 digits or there are more than 8 (no release is numbered so)."""
    parts = re.findall(r"\d+", v)
    if not parts or len(parts) > 8 or any(len(p) > 9 for p in parts):
        raise ValueError(v)
    return tuple(int(p) for p in parts)


@overload
def _validate(model: Literal["PackFile"], data: JSONValue, path: Path) -> PackFile: ...


@overload
def _validate(model: Literal["RuleFile"], data: JSONValue, path: Path) -> RuleFile: ...


def _validate(model: str, data: JSONValue, path: Path) -> PackFile | RuleFile:
    """A rule or pack file as rulemodel objects, validated by pydantic (its error at
    file:line). Only a compile runs this: the bundled pack comes compiled (rules/bundled.json)."""
    from validator.rules import validation_models

    return validation_models.validate(model, data, str(path), RuleFileError)


def _index(root: Path) -> tuple[Path, dict[str, JSONValue], dict[str, JSONValue]]:
    """``rules/index.yaml``: ``versions`` (spec version -> the pack a run uses by default)
    and ``packs`` (pack version -> directory: every bundled pack, for --rules-version)."""
    index_path = root / "index.yaml"
    index = load_yaml(index_path)
    versions = index.get("versions") if isinstance(index, dict) else None
    if not isinstance(versions, dict):
        raise RuleFileError('expected "versions: {SPEC_VERSION: PACK_DIR}"', file=str(index_path))
    packs = index.get("packs", {}) if isinstance(index, dict) else {}
    if not isinstance(packs, dict):
        raise RuleFileError('expected "packs: {PACK_VERSION: PACK_DIR}"', file=str(index_path))
    return index_path, versions, packs


def pack_index(root: Path | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``rules/index.yaml``'s two tables: spec version -> default pack directory, and
    pack version -> directory."""
    _, versions, packs = _index(root or rules_dir())
    return {str(k): str(v) for k, v in versions.items()}, {str(k): str(v) for k, v in packs.items()}


def pack_versions(root: Path | None = None) -> dict[str, Path]:
    """Every bundled pack by version ("1.0" -> rules/v1.0)."""
    root = root or rules_dir()
    _, _, packs = _index(root)
    return {str(k): root / str(v) for k, v in packs.items()}


def pack_dir_for(spec_version: str, root: Path | None = None, rules_version: str | None = None) -> Path:
    """The pack directory for a run: the one ``--rules-version`` names (``1.0`` or ``v1.0``),
    else the one ``rules/index.yaml`` maps the spec version to."""
    root = root or rules_dir()
    _, versions, packs = _index(root)
    if rules_version is not None:
        want = rules_version.strip().lower().removeprefix("v")
        if want not in packs:
            raise SpecCheckError(
                f'no rule pack "{rules_version}" (bundled: {", ".join(map(str, packs)) or "none"})'
            )
        return root / str(packs[want])
    if spec_version not in versions:
        raise SpecCheckError(
            f'no rule pack for spec version "{spec_version}" (known: {", ".join(map(str, versions))})'
        )
    return root / str(versions[spec_version])


Loc: TypeAlias = "tuple[str | int, ...]"  # where in a file's parsed data: keys and list positions
Origins: TypeAlias = "dict[str, tuple[str, JSONValue, Loc]]"  # rule id -> (file, parsed data, path in it)


def _rule_files(pack_path: Path) -> list[Path]:
    """A pack's rule files, ``*.yaml`` and ``*.yml`` alike, by name: a file the loader
    passed over would be rules the user believes are checked."""
    found = [p for p in pack_path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()]
    if (pack_path / "pack.yml").is_file():
        raise RuleFileError("the pack's own file is named pack.yaml, not pack.yml", file=str(pack_path / "pack.yml"))
    return sorted((p for p in found if p.name != "pack.yaml"), key=lambda p: p.name)


def _load_pack_rules(pack_path: Path, seen: tuple[Path, ...],
                     origins: Origins) -> tuple[PackFile, list[Rule], list[str]]:
    real = Path(os.path.realpath(pack_path))  # "extends: ../mine" is the same pack by another name
    if real in seen:
        chain = " -> ".join(p.name for p in (*seen, real))
        raise RuleFileError(f"extends loops back to itself ({chain})", file=str(pack_path / "pack.yaml"))
    meta_path = pack_path / "pack.yaml"
    if not meta_path.is_file():
        raise RuleFileError("missing pack.yaml", file=str(pack_path))
    raw_meta = load_yaml(meta_path)
    if isinstance(raw_meta, dict) and "min_engine_version" in raw_meta:
        need = str(raw_meta["min_engine_version"])
        try:
            needed = _version_tuple(need)
        except ValueError:
            shown = need if len(need) <= 40 else f"{need[:20]}... ({len(need):,} characters)"
            raise RuleFileError(f"min_engine_version {shown!r} is not a version such as 0.3 or 1.2.3 (at most "
                                "8 numbers of at most 9 digits)", file=str(meta_path),
                                line=line_of(raw_meta, ("min_engine_version",))) from None
        if needed > _version_tuple(__version__):
            raise RuleFileError(
                f"this pack needs spec-check >= {need} (this is {__version__})",
                file=str(meta_path), line=line_of(raw_meta, ("min_engine_version",)),
            )
    meta: PackFile = _validate("PackFile", raw_meta, meta_path)
    rules: list[Rule] = []
    files: list[str] = []
    if meta.extends:
        base = pack_path.parent / meta.extends
        if not (base / "pack.yaml").is_file() and (rules_dir() / meta.extends / "pack.yaml").is_file():
            base = rules_dir() / meta.extends  # a custom pack (--rules DIR) extending a bundled one
        _, rules, files = _load_pack_rules(base, (*seen, real), origins)
    by_id = {r.id: i for i, r in enumerate(rules)}
    for path in _rule_files(pack_path):
        data = load_yaml(path)
        rf: RuleFile = _validate("RuleFile", data, path)
        files.append(str(path))
        for i, rule in enumerate(rf.rules):
            if rule.id in by_id:
                raise RuleFileError(f'duplicate rule id "{rule.id}" (use overrides: to change an '
                                    "inherited rule)", file=str(path), line=line_of(data, ("rules", i, "id")))
            by_id[rule.id] = len(rules)
            rules.append(rule)
            origins[rule.id] = (str(path), data, ("rules", i))
        for i, ov in enumerate(rf.overrides):
            if ov.id not in by_id:
                raise RuleFileError(f'override of unknown rule "{ov.id}"', file=str(path),
                                    line=line_of(data, ("overrides", i, "id")))
            changes = {f.name: getattr(ov, f.name) for f in fields(ov)
                       if f.name != "id" and getattr(ov, f.name) is not None}
            rules[by_id[ov.id]] = replace(rules[by_id[ov.id]], **changes)
            origins[ov.id] = (str(path), data, ("overrides", i))
    return meta, rules, files


class _Problem(Exception):
    """A rule that does not fit the spec or the fact catalogue; ``loc`` is where in the rule."""

    def __init__(self, message: str, loc: Loc = ()):
        super().__init__(message)
        self.problem, self.loc = message, loc


def _check_against(rules: list[Rule], spec: Spec, catalogue: dict[str, FactInfo], origins: Origins) -> None:
    """Cross-checks a schema cannot do: known requirement, fact, field and parameter, units of
    the fact's kind, and operators that suit the fact's type. A rule that would only fail at
    run time on every node (an ERROR finding each) fails here, naming file:line."""
    for rule in rules:
        try:
            _check_rule(rule, spec, catalogue)
        except (_Problem, RuleFileError) as exc:
            file, data, where = origins.get(rule.id, (None, None, ()))
            loc = getattr(exc, "loc", ())
            line = line_of(data, (*where, *loc)) if data is not None else None
            raise RuleFileError(f"{rule.id}: {exc.problem}" if isinstance(exc, _Problem) else exc.problem,
                                file=file, line=line) from None


_ORDERED = frozenset({"gt", "gte", "lt", "lte", "between", "divides"})
_OP_TYPES: dict[str, frozenset[str]] = {
    **{op: frozenset({"int", "number", "quantity", "collection"}) for op in _ORDERED},
    "is_true": frozenset({"bool"}), "is_false": frozenset({"bool"}),
    "empty": frozenset({"list", "collection"}), "not_empty": frozenset({"list", "collection"}),
    "contains_none": frozenset({"list"}),
    "contains_all": frozenset({"list"}),
}


def _check_rule(rule: Rule, spec: Spec, catalogue: dict[str, FactInfo]) -> None:
    req = spec.requirement(rule.requirement)
    if req is None:
        raise _Problem(f'unknown requirement "{rule.requirement}"', ("requirement",))
    if not rule.id.startswith(rule.requirement + "."):
        raise _Problem(f'a rule ID starts with its requirement ID "{rule.requirement}."', ("id",))
    info = catalogue.get(rule.fact)
    if info is None:
        raise _Problem(f'unknown fact "{rule.fact}" (not in spec/facts/)', ("fact",))
    if info.type == "collection":
        if not rule.field or rule.field not in info.fields:
            raise _Problem(f'"{rule.fact}" is a collection; "field" must be one of {", ".join(info.fields)}',
                           ("field",))
        target = info.fields[rule.field]
    elif rule.field or rule.check.op in AGGREGATE_OPS:
        raise _Problem(f'"{rule.fact}" is not a collection', ("field",))
    else:
        target = info
        if rule.where or rule.filter:
            raise _Problem(f'"{rule.fact}" is not a collection: where/filter judge collection items',
                           ("where" if rule.where else "filter",))
    fields = info.fields
    _check_operation(rule.check, target, f"{rule.fact}.{rule.field}" if rule.field else rule.fact,
                     spec, catalogue, fields, ("check",))
    for key in ("when", "where", "filter"):
        for i, cond in enumerate(getattr(rule, key)):
            loc = (key, i)
            if cond.otherwise != "skip" and key != "when":
                raise _Problem(f'"otherwise" belongs to a "when" condition, not to {key}', (*loc, "otherwise"))
            if cond.cite and key != "when":
                raise _Problem(f'"cite" belongs to a "when" condition, not to {key}', (*loc, "cite"))
            if cond.param is not None:
                if key != "when" or cond.fact is not None or cond.field is not None:
                    raise _Problem('a condition on a parameter is a "when" with param and no fact or field',
                                   (*loc, "param"))
                if cond.param not in spec.parameters:
                    raise _Problem(f'unknown parameter "{cond.param}" in {key}', (*loc, "param"))
                continue
            if cond.field is not None:
                if key == "when":
                    raise _Problem(f'a "when" condition judges a fact, not a field ("{cond.field}"); '
                                   "use where or filter for item fields", (*loc, "field"))
                if cond.field not in fields:
                    raise _Problem(f'unknown field "{cond.field}" of {rule.fact} in {key} '
                                   f'(known: {", ".join(fields)})', (*loc, "field"))
                cinfo, what = fields[cond.field], f"{rule.fact}.{cond.field}"
            else:
                name = cond.fact or rule.fact
                if name not in catalogue:
                    raise _Problem(f'unknown fact "{name}" in {key}', (*loc, "fact"))
                if key != "when" and cond.fact is None:
                    raise _Problem(f"a {key} condition names a field of the item (or a fact)", loc)
                cinfo, what = catalogue[name], name
            _check_operation(cond, cinfo, what, spec, catalogue, fields, loc)


def _check_operation(check: Check, info: FactInfo, what: str, spec: Spec, catalogue: dict[str, FactInfo],
                     fields: dict[str, FactInfo], loc: Loc) -> None:
    """The operator suits the fact's type; every value reference exists; units are of the
    fact's dimension (400 Gb/s against a byte count is a load error, not a run-time ERROR)."""
    allowed = _OP_TYPES.get(check.op)
    if allowed is not None and info.type not in allowed:
        raise _Problem(f'operator "{check.op}" cannot judge {what}, a {info.type} '
                       f'(it suits {", ".join(sorted(allowed))})', (*loc, "op"))
    _check_value(check.value, info, what, spec, catalogue, fields, (*loc, "value"))


def _dimension(unit: str | None) -> str | None:
    if not unit:
        return None
    from validator.values.units import unit_of

    try:
        return unit_of(unit).dimension
    except SpecCheckError:
        return None


def _check_value(value: JSONValue, info: FactInfo, what: str, spec: Spec, catalogue: dict[str, FactInfo],
                 fields: dict[str, FactInfo], loc: Loc) -> None:
    if isinstance(value, list):
        for i, v in enumerate(value):
            _check_value(v, info, what, spec, catalogue, fields, (*loc, i))
        return
    want = _dimension(info.unit)
    if isinstance(value, dict):
        if "param" in value:
            param = spec.parameters.get(value["param"])
            if param is None:
                raise _Problem(f'unknown parameter "{value["param"]}"', loc)
            from validator.rules.spec import QUANTITY_DIMENSIONS

            if param.dimension in QUANTITY_DIMENSIONS and want and param.dimension != want:
                raise _Problem(f'parameter {value["param"]} is a {param.dimension}, but {what} is {want} '
                               f"({info.unit})", loc)
        elif "field" in value and value["field"] not in fields:
            raise _Problem(f'unknown field "{value["field"]}" (known: {", ".join(fields) or "none"})', loc)
        elif "fact" in value and value["fact"] not in catalogue:
            raise _Problem(f'unknown fact "{value["fact"]}"', loc)
        elif "formula" in value:
            from validator.rules.formulas import FORMULAS

            if value["formula"] not in FORMULAS:
                raise _Problem(f'unknown formula "{value["formula"]}" (known: {", ".join(FORMULAS)})', loc)
            for k, v in (value.get("args") or {}).items():
                if isinstance(v, dict):  # formulas work in base units: only the references matter
                    _check_refs_only(v, spec, catalogue, fields, (*loc, "args", k))
                else:
                    _quantity(v, (*loc, "args", k))
        return
    if info.type in _NUMERIC and isinstance(value, str) and value[:1].isdigit():
        q = _parsed(value, loc)
        if want is None:
            if q.dimension == "count" and value.strip().replace(".", "", 1).isdigit():
                raise _Problem(f'"{value}" is a quoted number, but {what} is a plain number: '
                               f"write {value.strip()} without quotes", loc)
            raise _Problem(f'"{value}" has a unit, but {what} has none', loc)
        if q.dimension != want:
            raise _Problem(f'"{value}" is a {q.dimension}, but {what} is {want} ({info.unit})', loc)


_NUMERIC = frozenset({"int", "number", "quantity", "collection"})
"""Types a string like "400 Gb/s" is a quantity for; for a string fact (gpu.driver_version
= "550") or a list of strings it is the string it reads as, whatever it looks like."""


def _quantity(value: JSONValue, loc: Loc) -> Quantity | None:
    """A string that starts with a digit, as a quantity: a bad unit ("1 Gibibyte") is a load
    error naming file:line, not an ERROR finding on every node."""
    if not (isinstance(value, str) and value[:1].isdigit()):
        return None
    return _parsed(value, loc)


def _parsed(value: str, loc: Loc) -> Quantity:
    """``value`` (a string that starts with a digit) as a quantity (see ``_quantity``)."""
    try:
        return parse_quantity(value)
    except UnitError as exc:
        raise _Problem(exc.problem, loc) from None


def _check_refs_only(value: dict[str, JSONValue], spec: Spec, catalogue: dict[str, FactInfo],
                     fields: dict[str, FactInfo], loc: Loc) -> None:
    if "param" in value and value["param"] not in spec.parameters:
        raise _Problem(f'unknown parameter "{value["param"]}"', loc)
    if "field" in value and value["field"] not in fields:
        raise _Problem(f'unknown field "{value["field"]}"', loc)
    if "fact" in value and value["fact"] not in catalogue:
        raise _Problem(f'unknown fact "{value["fact"]}"', loc)


_ADDED_IN_1_1 = {"cite_source": False, "param": None, "otherwise": "skip", "cite": False}
"""Rule-format fields added after pack v1.0, with their defaults: left out of the digest
where they hold the default, so an unchanged pack keeps the digest its results recorded."""


def _canonical(data: JSONValue) -> JSONValue:
    if isinstance(data, dict):
        return {k: _canonical(v) for k, v in data.items()
                if not (k in _ADDED_IN_1_1 and v == _ADDED_IN_1_1[k])}
    if isinstance(data, list):
        return [_canonical(v) for v in data]
    return data


def load_pack(spec: Spec, catalogue: dict[str, FactInfo], *, root: Path | None = None,
              pack_path: Path | None = None, rules_version: str | None = None) -> RulePack:
    """The rule pack for ``spec``'s version (or the bundled pack ``rules_version`` names),
    validated against the spec and facts."""
    path = pack_path or pack_dir_for(spec.spec_version, root, rules_version)
    origins: Origins = {}
    meta, rules, files = _load_pack_rules(path, (), origins)
    if meta.spec_version != spec.spec_version:
        raise RuleFileError(f'pack is for spec {meta.spec_version}, not {spec.spec_version}',
                            file=str(path / "pack.yaml"))
    _check_against(rules, spec, catalogue, origins)
    canon = json.dumps([_canonical(r.model_dump(mode="json")) for r in rules], sort_keys=True)
    digest = "sha256:" + hashlib.sha256(f"{meta.id}\n{canon}".encode()).hexdigest()
    return RulePack(meta.id, meta.spec_version, tuple(r for r in rules if r.enabled), digest, tuple(files))
