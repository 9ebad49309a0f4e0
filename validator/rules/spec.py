"""The requirement catalogue, its parameters, and the fact catalogue, as loaded data.

``spec/vX/requirements.yaml`` is the spec as data: every requirement ID (a contract),
its level, statement and rationale, and the parameters whose defaults the spec names and
cites. A run resolves the parameters once (defaults, then ``--profile FILE``, then
``--set KEY=VALUE``) and echoes them, with where each value came from, in the result.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from validator.errors import RuleFileError, SpecCheckError, UnitError
from validator.io.resources import spec_dir
from validator.rules.rulemodel import (
    PLAIN_DIMENSIONS,
    QUANTITY_DIMENSIONS,
    REQ_ID,
    FactInfo,
    Parameter,
    Requirement,
    Spec,
    plain,
)
from validator.values.units import Quantity, parse_quantity

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["PLAIN_DIMENSIONS", "QUANTITY_DIMENSIONS", "REQ_ID", "FactInfo", "ParamValue", "Parameter", "Requirement",
           "Spec", "load_fact_catalogue", "load_spec", "plain", "resolve_parameters"]
# The spec and fact-catalogue formats are validator/rules/rulemodel.py; importable from here too.


def load_yaml(path: Path) -> Any:
    """validator.io.yamlfile's reader (and its JSON and TOML sources), imported when a YAML
    file is read: a check of the bundled pack reads none (start-up)."""
    from validator.io import yamlfile

    return yamlfile.load_yaml(path)


def line_of(data: Any, loc: tuple[Any, ...]) -> int | None:
    from validator.io import yamlfile

    return yamlfile.line_of(data, loc)


def load_spec(version: str) -> Spec:
    """The catalogue of one spec version; a broken file is an exit-2 error at file:line."""
    path = spec_dir() / f"v{version}" / "requirements.yaml"
    if not path.is_file():
        known = sorted(p.name[1:] for p in spec_dir().glob("v*") if (p / "requirements.yaml").is_file())
        raise SpecCheckError(f'no spec version "{version}" (known: {", ".join(known) or "none"})')
    data = load_yaml(path)
    from validator.rules import validation_models  # on the load path only: rules/bundled.json holds the bundled result

    spec: Spec = validation_models.validate("Spec", data, str(path), RuleFileError)
    for req in spec.requirements:
        for name in req.parameters:
            if name not in spec.parameters:
                raise RuleFileError(f'{req.id} uses undefined parameter "{name}"', file=str(path))
    for name, param in spec.parameters.items():
        if param.default is not None:
            try:
                parse_parameter(name, param, param.default)
            except UnitError as exc:
                raise RuleFileError(f"parameter {name}: {exc}", file=str(path)) from None
    return spec


# ---- parameters -------------------------------------------------------------------------


@dataclass(frozen=True)
class ParamValue:
    """A resolved parameter: ``value`` is a Quantity for quantities, else a plain value."""

    name: str
    value: Any  # Quantity | float | str | list | bool | None (unset)
    text: str  # as written
    origin: str  # "default" | "profile:FILE" | "--set"
    default: str = "unset"  # the spec's default, as text: a result shows what a profile changed

    @property
    def is_set(self) -> bool:
        return self.value is not None


MAX_COUNT = 10**15  # GPUs, steps, ratios: a bound no real run reaches


def parse_parameter(name: str, param: Parameter, raw: Any) -> Any:
    """Interpret ``raw`` in the parameter's dimension; UnitError says what was expected."""
    if raw is None:
        return None
    dim = param.dimension
    if dim in QUANTITY_DIMENSIONS:
        if not isinstance(raw, (str, int, float)):
            raise UnitError(f"parameter {name}: expected a quantity such as \"400 Gb/s\", got {_short(raw)}")
        if dim == "duration" and _is_number(raw):
            raw = f"{raw} s"  # a bare duration is seconds (--set step_time=2.5); sizes and rates need units
        q = parse_quantity(raw, dimension=dim)
        if math.isnan(q.base) or q.base < 0:
            raise UnitError(f"parameter {name}: expected a quantity >= 0, got {raw}")
        return q
    if dim in ("count", "ratio", "steps"):
        if isinstance(raw, str):
            raw = raw.strip().removesuffix(" steps").removesuffix("steps").strip()
            try:
                raw = float(raw) if "." in raw or "e" in raw.lower() else int(raw)
            except (ValueError, OverflowError):
                shown = raw[:40] + ("..." if len(raw) > 40 else "")
                raise UnitError(f'parameter {name}: "{shown}" is not a number') from None
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise UnitError(f"parameter {name}: expected a number, got {_short(raw)}")
        if isinstance(raw, int) and raw > MAX_COUNT:  # past the float range it crashed arithmetic
            raise UnitError(f"parameter {name}: {_short(raw)} is beyond any real count (at most {MAX_COUNT:.0e})")
        if not math.isfinite(raw) or raw < 0:
            raise UnitError(f"parameter {name}: expected a finite number >= 0, got {raw}")
        return raw
    if dim == "list":
        if isinstance(raw, str):
            text = raw.strip()
            if text.startswith("[") and text.find("]") == len(text) - 1:  # as `spec show` prints it: [48, 79]
                text = text[1:-1]
            items = [p.strip() for p in text.split(",") if p.strip()]
            bad = [p for p in items if p.count("[") != p.count("]") or len(p.split()) > 1]
            if bad:  # "[48" or "48 79" would be a value no fact ever has: the check silently off
                raise UnitError(f"parameter {name}: {_short(bad[0])} is not one value; "
                                "write the list as 48,79 or [48, 79]")
            return items
        if not isinstance(raw, list) or not all(isinstance(x, (str, int, float)) for x in raw):
            raise UnitError(f"parameter {name}: expected a flat list of values, got {_short(raw)}")
        return list(raw)
    if dim == "bool":
        if isinstance(raw, str) and raw.lower() in ("true", "false", "yes", "no", "1", "0"):
            return raw.lower() in ("true", "yes", "1")
        if not isinstance(raw, bool):
            raise UnitError(f"parameter {name}: expected true or false, got {_short(raw)}")
        return raw
    return str(raw)


def _is_number(raw: Any) -> bool:
    if isinstance(raw, bool):
        return False
    if isinstance(raw, (int, float)):
        return True
    try:
        float(str(raw))
    except ValueError:
        return False
    return True


def _short(raw: Any) -> str:
    """A bounded repr: an alias-bomb profile must not take the error message down with it."""
    try:
        return reprlib.repr(raw)
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        return "an integer of more than 4,300 digits"


def _text(raw: Any) -> str:
    if raw is None:
        return "unset"
    if isinstance(raw, list):
        return ", ".join(str(x) for x in raw) or "none"
    return str(raw)


# the keys a profile may have (docs/profile.md documents each; a test checks)
PROFILE_KEYS = ("name", "description", "spec_version", "parameters")


def _did_you_mean(name: str, known: Any) -> str:
    """One line: the closest parameter names, or where the list is (not all 22 of them)."""
    import difflib

    close = difflib.get_close_matches(name, sorted(known), n=2, cutoff=0.75)
    if close:
        return f"; did you mean {' or '.join(repr(c) for c in close)}?"
    return " (`spec-check spec show` lists every parameter)"


def resolve_parameters(spec: Spec, *, profile: Path | None = None,
                       sets: tuple[str, ...] = ()) -> dict[str, ParamValue]:
    """Defaults, then the profile's ``parameters:``, then each ``--set KEY=VALUE``."""
    values = {
        name: ParamValue(name, parse_parameter(name, p, p.default), _text(p.default), "default")
        for name, p in spec.parameters.items()
    }

    def apply(name: str, raw: Any, origin: str, file: str | None, line: int | None) -> None:
        # a --set error names the option as typed; a profile error names its file:line
        shown = raw if len(str(raw)) <= 80 else f"{str(raw)[:60]}... ({len(str(raw))} characters)"
        said = f"--set {name}={shown}: " if origin == "--set" else ""
        if name not in spec.parameters:
            raise SpecCheckError(f'{said}unknown parameter "{name}"{_did_you_mean(name, spec.parameters)}',
                                 file=file, line=line)
        try:
            parsed = parse_parameter(name, spec.parameters[name], raw)
        except UnitError as exc:
            raise SpecCheckError(said + exc.problem, file=file, line=line) from None
        values[name] = ParamValue(name, parsed, _text(raw), origin, _text(spec.parameters[name].default))

    if profile is not None:
        data = load_yaml(profile)
        # `parameters:` with every entry commented out (the sample profile) is no parameters
        if not isinstance(data, dict) or not isinstance(data.get("parameters") or {}, dict):
            raise SpecCheckError('a profile is a mapping with "parameters: {NAME: VALUE}"', file=str(profile))
        unknown_top = set(data) - set(PROFILE_KEYS)
        if unknown_top:
            key = sorted(unknown_top, key=str)[0]
            raise SpecCheckError(f'unknown key "{key}" (expected name, description, parameters)',
                                 file=str(profile), line=line_of(data, (key,)))
        _check_profile_header(data, spec, profile)
        params = data.get("parameters") or {}
        for name, raw in params.items():
            apply(name, raw, f"profile:{profile}", str(profile), line_of(data, ("parameters", name)))
    for item in sets:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise SpecCheckError(f'--set expects KEY=VALUE, got "{item}"')
        apply(name.strip(), raw.strip(), "--set", None, None)
    return values


def _check_profile_header(data: Any, spec: Spec, profile: Path) -> None:
    """A profile written for another spec version is refused, not applied: its thresholds
    (a lower port rate for "9.9") would silently judge this version. ``name`` and
    ``description`` are text."""
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            raise SpecCheckError(f'"{key}" must be text, got {_short(data[key])}',
                                 file=str(profile), line=line_of(data, (key,)))
    if "spec_version" not in data:
        return
    raw = data["spec_version"]
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise SpecCheckError(f'"spec_version" must be a version such as "1.0", got {_short(raw)}',
                             file=str(profile), line=line_of(data, ("spec_version",)))
    if str(raw).strip() != spec.spec_version:
        raise SpecCheckError(
            f'spec_version "{str(raw)[:20]}" does not match the spec checked against ({spec.spec_version}); '
            f"use --spec-version {str(raw)[:20]} or a profile written for {spec.spec_version}",
            file=str(profile), line=line_of(data, ("spec_version",)))


def describe_parameters(values: Mapping[str, ParamValue]) -> dict[str, dict[str, Any]]:
    """The parameters as echoed in a result; one a profile or ``--set`` changed also names the
    spec's default, so a report (and an auditor) sees what was relaxed without the spec."""
    return {
        n: {"value": v.text, "origin": v.origin} if v.origin == "default"
        else {"value": v.text, "origin": v.origin, "default": v.default}
        for n, v in sorted(values.items())
    }


def quantity_or_none(p: ParamValue) -> Quantity | None:
    return p.value if isinstance(p.value, Quantity) else None


# ---- fact catalogue ---------------------------------------------------------------------


def load_fact_catalogue() -> dict[str, FactInfo]:
    """Every fact any source may produce: its type, unit and label (spec/facts/*.yaml)."""
    out: dict[str, FactInfo] = {}
    for path in sorted((spec_dir() / "facts").glob("*.yaml")):
        data = load_yaml(path)
        facts = data.get("facts") if isinstance(data, dict) else None
        if not isinstance(facts, dict):
            raise RuleFileError('expected a mapping "facts: {NAME: {...}}"', file=str(path))
        for name, info in facts.items():
            out[name] = _fact_info(name, info, str(path), data)
    return out


def _fact_info(name: str, info: Any, where: str, data: Any) -> FactInfo:
    if not isinstance(info, dict) or "type" not in info:
        raise RuleFileError(f'fact "{name}" needs a type', file=where, line=line_of(data, ("facts", name)))
    fields = {
        fname: _fact_info(f"{name}.{fname}", finfo, where, data)
        for fname, finfo in (info.get("fields") or {}).items()
    }
    unit = info.get("unit")
    values = info.get("values") or {}
    if not isinstance(values, dict):
        raise RuleFileError(f'fact "{name}": values must map each coded value to words', file=where,
                            line=line_of(data, ("facts", name)))
    return FactInfo(name, str(info["type"]), str(unit) if unit is not None else None,
                    str(info.get("label") or name), fields, {str(k): str(v) for k, v in values.items()})
