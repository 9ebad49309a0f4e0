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
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from validator import __version__
from validator.errors import RuleFileError, SpecCheckError, UnitError, UnknownRuleError
from validator.operators import AGGREGATE_OPS, OPERATORS
from validator.resources import rules_dir
from validator.spec import FactInfo, Spec, _pydantic_error
from validator.units import parse_quantity
from validator.yamlfile import line_of, load_yaml

RULE_ID = re.compile(r"^[A-Z]{2,5}-\d{2}\.[a-z0-9]+(?:-[a-z0-9]+)*$")
_REF_KEYS = ("param", "field", "fact", "formula")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_value_form(value: Any) -> Any:
    """A value is a literal or exactly one of {param}, {field}, {fact}, {formula, args}."""
    if isinstance(value, dict):
        keys = set(value)
        refs = keys & set(_REF_KEYS)
        if len(refs) != 1 or (keys - refs - {"args"}) or ("args" in keys and "formula" not in keys):
            raise ValueError(
                "a value reference is one of {param: NAME}, {field: NAME}, {fact: NAME}, "
                f"{{formula: NAME, args: {{...}}}}; got keys {sorted(keys)}"
            )
        if "args" in value:
            if not isinstance(value["args"], dict):
                raise ValueError("formula args must be a mapping")
            for v in value["args"].values():
                _check_value_form(v)
    elif isinstance(value, list):
        for v in value:
            _check_value_form(v)
    elif isinstance(value, str) and value[:1].isdigit():
        try:
            parse_quantity(value)  # "400 Gb/s": a bad unit is a load error, not a run-time one
        except UnitError as exc:
            raise ValueError(exc.problem) from None
    return value


class Check(_Strict):
    op: str
    value: Any = None

    @field_validator("op")
    @classmethod
    def _known_op(cls, op: str) -> str:
        if op not in OPERATORS:
            raise ValueError(f'unknown operator "{op}" (known: {", ".join(OPERATORS)})')
        return op

    @field_validator("value")
    @classmethod
    def _value(cls, value: Any) -> Any:
        return _check_value_form(value)


class Condition(Check):
    fact: str | None = None
    field: str | None = None


class IfEmpty(_Strict):
    status: Literal["skip", "fail", "pass"] = "skip"
    message: str


class Rule(_Strict):
    id: str = Field(pattern=RULE_ID.pattern)
    requirement: str
    scope: Literal["node", "job", "cluster"]
    level: Literal["MUST", "SHOULD"] | None = None
    summary: str
    why: str
    remediation: str
    fact: str
    field: str | None = None
    check: Check
    when: list[Condition] = []
    where: list[Condition] = []
    if_empty: IfEmpty | None = None
    since: str = "1.0"
    status: Literal["stable", "preview", "deprecated"] = "stable"
    enabled: bool = True


class Override(_Strict):
    id: str
    level: Literal["MUST", "SHOULD"] | None = None
    check: Check | None = None
    when: list[Condition] | None = None
    enabled: bool | None = None
    summary: str | None = None
    remediation: str | None = None


class RuleFile(_Strict):
    rules: list[Rule] = []
    overrides: list[Override] = []


class PackFile(_Strict):
    id: str
    spec_version: str
    min_engine_version: str = "0.1"
    extends: str | None = None
    description: str = ""


@dataclass(frozen=True)
class RulePack:
    id: str
    spec_version: str
    rules: tuple[Rule, ...]
    digest: str
    files: tuple[str, ...]

    def get(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        known = ", ".join(r.id for r in self.rules[:6])
        raise UnknownRuleError(f'no such rule: "{rule_id}" (known: {known}, ...; see `spec-check rules list`)')

    def level_of(self, rule: Rule, spec: Spec) -> str:
        if rule.level:
            return rule.level
        req = spec.requirement(rule.requirement)
        return req.level if req else "MUST"


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", v))


def _validate(model: type[BaseModel], data: Any, path: Path) -> Any:
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise _pydantic_error(exc, data, str(path), RuleFileError) from None


def pack_dir_for(spec_version: str, root: Path | None = None) -> Path:
    """The pack directory that ``rules/index.yaml`` maps a spec version to."""
    root = root or rules_dir()
    index_path = root / "index.yaml"
    index = load_yaml(index_path)
    versions = index.get("versions") if isinstance(index, dict) else None
    if not isinstance(versions, dict):
        raise RuleFileError('expected "versions: {SPEC_VERSION: PACK_DIR}"', file=str(index_path))
    if spec_version not in versions:
        raise SpecCheckError(
            f'no rule pack for spec version "{spec_version}" (known: {", ".join(map(str, versions))})'
        )
    return root / str(versions[spec_version])


Origins = dict[str, tuple[str, int | None]]  # rule id -> (file, line) where it is written


def _load_pack_rules(pack_path: Path, seen: tuple[Path, ...],
                     origins: Origins) -> tuple[PackFile, list[Rule], list[str]]:
    if pack_path in seen:
        raise RuleFileError("extends loops back to itself", file=str(pack_path / "pack.yaml"))
    meta_path = pack_path / "pack.yaml"
    if not meta_path.is_file():
        raise RuleFileError("missing pack.yaml", file=str(pack_path))
    raw_meta = load_yaml(meta_path)
    if isinstance(raw_meta, dict) and "min_engine_version" in raw_meta:
        need = str(raw_meta["min_engine_version"])
        if _version_tuple(need) > _version_tuple(__version__):
            raise RuleFileError(
                f"this pack needs spec-check >= {need} (this is {__version__})",
                file=str(meta_path), line=line_of(raw_meta, ("min_engine_version",)),
            )
    meta: PackFile = _validate(PackFile, raw_meta, meta_path)
    rules: list[Rule] = []
    files: list[str] = []
    if meta.extends:
        _, rules, files = _load_pack_rules(pack_path.parent / meta.extends, (*seen, pack_path), origins)
    by_id = {r.id: i for i, r in enumerate(rules)}
    for path in sorted(pack_path.glob("*.yaml")):
        if path.name == "pack.yaml":
            continue
        data = load_yaml(path)
        rf: RuleFile = _validate(RuleFile, data, path)
        files.append(str(path))
        for i, rule in enumerate(rf.rules):
            if rule.id in by_id:
                raise RuleFileError(f'duplicate rule id "{rule.id}" (use overrides: to change an '
                                    "inherited rule)", file=str(path), line=line_of(data, ("rules", i, "id")))
            by_id[rule.id] = len(rules)
            rules.append(rule)
            origins[rule.id] = (str(path), line_of(data, ("rules", i)))
        for i, ov in enumerate(rf.overrides):
            if ov.id not in by_id:
                raise RuleFileError(f'override of unknown rule "{ov.id}"', file=str(path),
                                    line=line_of(data, ("overrides", i, "id")))
            changes = {k: v for k, v in ov if k != "id" and v is not None}
            rules[by_id[ov.id]] = rules[by_id[ov.id]].model_copy(update=changes)
            origins[ov.id] = (str(path), line_of(data, ("overrides", i)))
    return meta, rules, files


def _check_against(rules: list[Rule], spec: Spec, catalogue: dict[str, FactInfo], origins: Origins) -> None:
    """Cross-checks a schema cannot do: known requirement, fact, field and parameter."""
    for rule in rules:
        try:
            _check_rule(rule, spec, catalogue)
        except RuleFileError as exc:
            file, line = origins.get(rule.id, (None, None))
            raise RuleFileError(exc.problem, file=file, line=line) from None


def _check_rule(rule: Rule, spec: Spec, catalogue: dict[str, FactInfo]) -> None:
    req = spec.requirement(rule.requirement)
    if req is None:
        raise RuleFileError(f'{rule.id}: unknown requirement "{rule.requirement}"')
    if not rule.id.startswith(rule.requirement + "."):
        raise RuleFileError(f'{rule.id}: a rule ID starts with its requirement ID "{rule.requirement}."')
    info = catalogue.get(rule.fact)
    if info is None:
        raise RuleFileError(f'{rule.id}: unknown fact "{rule.fact}" (not in spec/facts/)')
    if info.type == "collection":
        if not rule.field or rule.field not in info.fields:
            raise RuleFileError(f'{rule.id}: "{rule.fact}" is a collection; "field" must be one of '
                                f'{", ".join(info.fields)}')
    elif rule.field or rule.check.op in AGGREGATE_OPS:
        raise RuleFileError(f'{rule.id}: "{rule.fact}" is not a collection')
    _check_refs(rule, rule.check.value, spec, catalogue)
    for cond in (*rule.when, *rule.where):
        _check_refs(rule, cond.value, spec, catalogue)
        if cond.fact and cond.fact not in catalogue:
            raise RuleFileError(f'{rule.id}: unknown fact "{cond.fact}" in when/where')


def _check_refs(rule: Rule, value: Any, spec: Spec, catalogue: dict[str, FactInfo]) -> None:
    if isinstance(value, list):
        for v in value:
            _check_refs(rule, v, spec, catalogue)
    if not isinstance(value, dict):
        return
    if "param" in value and value["param"] not in spec.parameters:
        raise RuleFileError(f'{rule.id}: unknown parameter "{value["param"]}"')
    if "fact" in value and value["fact"] not in catalogue:
        raise RuleFileError(f'{rule.id}: unknown fact "{value["fact"]}"')
    if "formula" in value:
        from validator.formulas import FORMULAS

        if value["formula"] not in FORMULAS:
            raise RuleFileError(f'{rule.id}: unknown formula "{value["formula"]}" '
                                f'(known: {", ".join(FORMULAS)})')
        for v in value.get("args", {}).values():
            _check_refs(rule, v, spec, catalogue)


def load_pack(spec: Spec, catalogue: dict[str, FactInfo], *, root: Path | None = None,
              pack_path: Path | None = None) -> RulePack:
    """The rule pack for ``spec``'s version, validated against the spec and facts."""
    path = pack_path or pack_dir_for(spec.spec_version, root)
    origins: Origins = {}
    meta, rules, files = _load_pack_rules(path, (), origins)
    if meta.spec_version != spec.spec_version:
        raise RuleFileError(f'pack is for spec {meta.spec_version}, not {spec.spec_version}',
                            file=str(path / "pack.yaml"))
    _check_against(rules, spec, catalogue, origins)
    canon = json.dumps([r.model_dump(mode="json") for r in rules], sort_keys=True)
    digest = "sha256:" + hashlib.sha256(f"{meta.id}\n{canon}".encode()).hexdigest()
    return RulePack(meta.id, meta.spec_version, tuple(r for r in rules if r.enabled), digest, tuple(files))
