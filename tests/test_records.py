"""Every ``record`` class behaves as the ``@dataclass`` it replaced.

``validator/values/records.py`` declares value classes without compiling their methods
(``@dataclass`` compiles each with ``exec`` at import, 40-85 ms of every run). The claim is
"the same class": here, for EVERY class declared with ``record`` in the package (found by
importing each module that uses it, and counted against the decorators in the source), a
reference class is rebuilt with plain ``dataclasses.dataclass`` from the same parameters
and fields (its ``__init__`` generated even where the record writes its own), and the two
are compared on instances made from the same arguments: ``__init__``'s signature, repr,
==/!= against equal and different instances and other types, hash, frozen assignment and
deletion, ``replace``, ``asdict``, ``fields``, pickling state, ``__match_args__``, the
docstring, and the ``TypeError`` of a bad call.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import importlib
import inspect
import pickle
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from validator.values import records

ROOT = Path(__file__).resolve().parents[1]
DECORATOR = re.compile(r"^@record\b", re.M)


def _modules_using_record() -> dict[str, int]:
    """module name -> how many classes its source declares with ``@record``."""
    out = {}
    for path in sorted((ROOT / "validator").rglob("*.py")):
        n = len(DECORATOR.findall(path.read_text(encoding="utf-8")))
        if n:
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = n
    return out


MODULES = _modules_using_record()
for _name in MODULES:
    importlib.import_module(_name)
CLASSES = [c for c in records.declared() if c.__module__ in MODULES and "<locals>" not in c.__qualname__]


def test_every_record_in_the_source_is_found() -> None:
    found: dict[str, int] = {}
    for c in CLASSES:
        found[c.__module__] = found.get(c.__module__, 0) + 1
    assert found == MODULES
    assert len(CLASSES) >= 60  # the start paths' value classes


# ---- sample values, by annotation ---------------------------------------------------------


def _hints(cls: type) -> dict[str, Any]:
    module = importlib.import_module(cls.__module__)
    out = {}
    for f in dataclasses.fields(cls):
        tp = f.type
        if isinstance(tp, str):
            try:
                tp = eval(tp, {**vars(typing), **vars(module)})
            except Exception:
                tp = Any
        out[f.name] = tp
    return out


def _sample(tp: Any, k: int, depth: int = 0) -> Any:
    """A value of type ``tp``: ``k`` 0 and 1 give different values."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _sample(args[0], k, depth)
    if origin is typing.Union or type(tp).__name__ == "UnionType":
        real = [a for a in args if a is not type(None)]
        return _sample(real[0], k, depth) if real else None
    if origin is typing.Literal:
        return args[k % len(args)]
    if origin is typing.ClassVar:
        return None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        member = list(tp)[k % len(list(tp))]
        return member.value if isinstance(member, str) else member  # a __post_init__ converts it
    if tp is bool:
        return bool(k)
    if tp is int:
        return 7 + k
    if tp is float:
        return 0.5 + k
    if tp is str:
        return f"v{k}"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and depth < 3:
        return _instance(tp, k, depth + 1)
    if origin in (list, typing.List) or tp is list:  # noqa: UP006
        return [_sample(args[0], k, depth) if args else k]
    if origin in (tuple,) or tp is tuple:
        return (_sample(args[0], k, depth),) if args else (k,)
    if origin in (dict,) or tp is dict or origin is getattr(__import__("collections.abc").abc, "Mapping"):
        return {f"key{k}": _sample(args[1], k, depth) if len(args) == 2 else k}
    if origin in (set, frozenset):
        return origin({_sample(args[0], k, depth)}) if args else origin({k})
    if tp is Path or (isinstance(tp, type) and issubclass(tp, Path)):
        return Path(f"/p{k}")
    return f"any{k}"


def _kwargs(cls: type, k: int, depth: int = 0) -> dict[str, Any]:
    hints = _hints(cls)
    return {f.name: _sample(hints[f.name], k, depth) for f in dataclasses.fields(cls) if f.init}


def _instance(cls: type, k: int, depth: int = 0) -> Any:
    return cls(**_kwargs(cls, k, depth))


# ---- the reference: the same class made by @dataclass ---------------------------------------


def _own_code(fn: Any) -> bool:
    """Written in the class body (not made by records.py)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename != records.__file__


def _reference(cls: type) -> type:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    annotations: dict[str, Any] = {}
    ns: dict[str, Any] = {"__annotations__": annotations, "__module__": cls.__module__,
                          "__qualname__": cls.__qualname__}
    doc = cls.__dict__.get("__doc__")
    if isinstance(doc, str):
        ns["__doc__"] = doc
    for f in dataclasses.fields(cls):
        annotations[f.name] = f.type
        ns[f.name] = dataclasses.field(default=f.default, default_factory=f.default_factory, init=f.init,
                                       repr=f.repr, hash=f.hash, compare=f.compare, metadata=f.metadata,
                                       kw_only=f.kw_only)
    if hasattr(cls, "__post_init__"):
        ns["__post_init__"] = cls.__post_init__  # type: ignore[attr-defined]
    for name in ("__repr__", "__eq__", "__hash__"):
        for klass in cls.__mro__[:-1]:  # one written in a class body is kept by both
            if name in klass.__dict__ and _own_code(klass.__dict__[name]):
                ns[name] = klass.__dict__[name]
                break
    plain = type(cls.__name__, (), ns)
    return dataclasses.dataclass(plain, init=True, repr=True, eq=True, order=params.order,
                                 unsafe_hash=params.unsafe_hash, frozen=params.frozen,
                                 slots="__slots__" in cls.__dict__)


def _outcome(fn: Any) -> tuple[str, str]:
    try:
        return "ok", repr(fn())
    except Exception as e:
        return type(e).__name__, str(e)


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    out = []
    for p in inspect.signature(fn).parameters.values():
        d = p.default
        out.append((p.name, p.kind, "<factory>" if repr(d) == "<factory>" else d))
    return out


@pytest.fixture(params=CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def pair(request: pytest.FixtureRequest) -> tuple[type, type]:
    cls = request.param
    return cls, _reference(cls)


def test_declaration(pair: tuple[type, type]) -> None:
    cls, ref = pair
    assert repr(cls.__dataclass_params__) == repr(ref.__dataclass_params__)  # type: ignore[attr-defined]
    assert cls.__doc__ == ref.__doc__
    assert cls.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
            for f in dataclasses.fields(cls)] == [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
        for f in dataclasses.fields(ref)]
    assert dataclasses.is_dataclass(cls)
    assert (cls.__hash__ is None) == (ref.__hash__ is None)
    assert ("__slots__" in cls.__dict__) == ("__slots__" in ref.__dict__)
    if "__slots__" in cls.__dict__:
        assert cls.__slots__ == ref.__slots__  # type: ignore[attr-defined]
    # the generated __init__ against the record's (generic, or written in the class)
    assert _params(cls.__init__) == _params(ref.__init__)  # type: ignore[misc]
    assert _params(cls) == _params(ref)


def test_instances(pair: tuple[type, type]) -> None:
    cls, ref = pair
    kw0, kw1 = _kwargs(cls, 0), _kwargs(cls, 1)
    a, a2, r, r2 = cls(**kw0), cls(**kw0), ref(**kw0), ref(**kw0)
    assert repr(a) == repr(r)
    assert (a == a2) is (r == r2) is True
    assert (a != a2) is (r != r2) is False
    assert a.__eq__(object()) is NotImplemented and r.__eq__(object()) is NotImplemented
    assert a != r and (a == "text") is False
    assert _outcome(lambda: hash(a)) == _outcome(lambda: hash(r))
    assert _outcome(lambda: hash(a) == hash(a2)) == _outcome(lambda: hash(r) == hash(r2))
    assert dataclasses.asdict(a) == dataclasses.asdict(r)
    assert dataclasses.astuple(a) == dataclasses.astuple(r)
    for name in [f.name for f in dataclasses.fields(cls) if f.init]:
        b = cls(**{**kw0, name: kw1[name]})
        rb = ref(**{**kw0, name: kw1[name]})
        assert repr(b) == repr(rb)
        assert (a == b) is (r == rb), name
        assert (a != b) is (r != rb), name
        assert _outcome(lambda: hash(a) == hash(b)) == _outcome(lambda: hash(r) == hash(rb)), name  # noqa: B023
        assert repr(dataclasses.replace(a, **{name: kw1[name]})) == repr(dataclasses.replace(r, **{name: kw1[name]}))
        assert dataclasses.replace(a, **{name: kw1[name]}) == b
    # frozen (or not): assigning and deleting a field
    for f in dataclasses.fields(cls):
        value = kw1.get(f.name, "x")
        x, rx = cls(**kw0), ref(**kw0)
        assert _outcome(lambda: setattr(x, f.name, value)) == _outcome(lambda: setattr(rx, f.name, value))  # noqa: B023
        assert repr(x) == repr(rx)
        assert _outcome(lambda: delattr(x, f.name)) == _outcome(lambda: delattr(rx, f.name))  # noqa: B023
    if ref.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        assert _outcome(lambda: setattr(a, "not_a_field", 1))[0] != "ok"
    # pickling: the same state, and a round trip gives an equal record
    assert _state(a) == _state(r)
    back = pickle.loads(pickle.dumps(a))
    assert type(back) is cls and repr(back) == repr(a)
    assert back == a
    assert copy.copy(a) == a and repr(copy.deepcopy(a)) == repr(copy.deepcopy(r))


def _state(obj: Any) -> Any:
    reduced = obj.__reduce_ex__(2)
    return reduced[2] if len(reduced) > 2 else None


def test_bad_calls(pair: tuple[type, type]) -> None:
    cls, ref = pair
    kw0 = _kwargs(cls, 0)
    assert _outcome(lambda: cls()) == _outcome(lambda: ref())
    assert _outcome(lambda: cls(**kw0, bogus=1)) == _outcome(lambda: ref(**kw0, bogus=1))
    positional = [f.name for f in dataclasses.fields(cls) if f.init and not f.kw_only]
    too_many = [kw0[n] for n in positional] + [1]
    assert _outcome(lambda: cls(*too_many))[0] == _outcome(lambda: ref(*too_many))[0] == "TypeError"
    if positional:
        first = positional[0]
        assert (_outcome(lambda: cls(kw0[first], **kw0))
                == _outcome(lambda: ref(kw0[first], **kw0)))
    required = [f.name for f in dataclasses.fields(cls)
                if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    for name in required:
        less = {k: v for k, v in kw0.items() if k != name}
        assert _outcome(lambda: cls(**less)) == _outcome(lambda: ref(**less)), name  # noqa: B023


# ---- the decorator itself ----------------------------------------------------------------------


def test_inheritance_and_refusals_as_dataclasses() -> None:
    @records.record(frozen=True, kw_only=True)
    class Base:
        """b"""

        x: int
        y: list[int] = dataclasses.field(default_factory=list)

    @records.record(frozen=True, kw_only=True)
    class Child(Base):
        """c"""

        z: str = "q"

    c = Child(x=1)
    assert repr(c) == "test_inheritance_and_refusals_as_dataclasses.<locals>.Child(x=1, y=[], z='q')"
    assert Base.__dataclass_params__.frozen and Child.__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        @records.record
        class Thawed(Base):
            """t"""

    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @records.record
        class Order:
            """o"""

            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        @records.record(frozen=True)
        class Own:
            """o"""

            a: int

            def __setattr__(self, name: str, value: Any) -> None:
                pass


def test_a_pydantic_type_adapter_validates_into_records() -> None:
    """The load path: rules/validation_models.py hands these classes to pydantic."""
    from pydantic import TypeAdapter

    from validator.rules.rulemodel import Check, Condition, Rule

    rule = TypeAdapter(Rule).validate_python({
        "id": "GPU-01.count", "requirement": "GPU-01", "scope": "node", "summary": "s", "why": "w",
        "remediation": "r", "fact": "gpu.count", "check": {"op": "gte", "value": 8},
        "when": [{"op": "eq", "value": 1, "fact": "x"}]})
    assert rule == Rule(id="GPU-01.count", requirement="GPU-01", scope="node", summary="s", why="w",  # type: ignore[arg-type]
                        remediation="r", fact="gpu.count", check=Check(op="gte", value=8),
                        when=[Condition(op="eq", value=1, fact="x")])
    assert type(rule.scope).__name__ == "Scope"
