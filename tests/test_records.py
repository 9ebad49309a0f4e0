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


def _reference(cls: type, *, own_init: bool = False) -> type:
    """``cls`` rebuilt by @dataclass; its ``__init__`` generated, unless ``own_init`` (then
    the one its body writes, if any, as a @dataclass keeps it)."""
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
    if own_init and _own_code(cls.__dict__.get("__init__")):
        ns["__init__"] = cls.__dict__["__init__"]
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
    # no docstring: dataclasses' Name(signature), of the __init__ the class writes where it does
    assert cls.__doc__ == _reference(cls, own_init=True).__doc__
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


# ---- the dataclasses view, made when first read -------------------------------------------------
# records.py reads the fields itself and makes __dataclass_fields__ / __dataclass_params__ only
# when something reads them. Here the same class bodies are declared twice, with ``record`` and
# ``records.field`` and with ``@dataclass`` and ``dataclasses.field`` (executed as a real module,
# so string annotations are looked up as dataclasses looks them up), and the two views compared
# attribute by attribute.

_BODIES = '''
from __future__ import annotations

import typing
from typing import Any, ClassVar

COUNTER = 3


def _factory() -> list[int]:
    return [1]


class Descriptor:
    def __set_name__(self, owner, name):
        self.named = name

    def __get__(self, obj, owner=None):
        return self

    def __repr__(self):
        return "Descriptor()"


@record
class Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: Any = field(default=None, repr=False, compare=False, hash=True, metadata={"unit": "GB"})
    e: int = field(default=5, init=False)
    f: float = field(default=0.5, kw_only=True)
    g: dict[str, int] = field(default_factory=dict, kw_only=True, metadata={})
    h: ClassVar[int] = 7
    i: typing.ClassVar[dict[str, int]] = {"x": 1}
    j: ClassVar = COUNTER
    k: tuple[int, ...] = ()


@record(frozen=True, kw_only=True)
class FrozenBase:
    """documented"""

    x: int
    y: list[int] = field(default_factory=_factory)
    z: str = field(default="z", kw_only=False)


@record(frozen=True, kw_only=True)
class FrozenChild(FrozenBase):
    w: int = 0
    x: int = 1  # a base field given a default: it keeps its place
    y: list[int] = field(default_factory=list, compare=False)


@record(frozen=True, slots=True)
class Slotted:
    p: int
    q: str | None = None
    NAMES: ClassVar[tuple[str, ...]] = ("p", "q")


@record(frozen=True)
class Hashed:
    m: int
    n: int = field(default=0, hash=False)
    o: int = field(default=0, compare=False)


@record
class NotFrozen:
    u: int = 0

    def __post_init__(self) -> None:
        self.seen = True


@record
class Child(NotFrozen):
    v: str = "v"
    u: int = 9


@record
class Described:
    desc: Descriptor = field(default=Descriptor())


@record
class Empty:
    pass


@record(kw_only=True)
class KeywordOnly:
    r: int
    s: int = 1
'''


def _decorators(use_records: bool) -> tuple[Any, Any]:
    """``record`` and ``field``: records', or ``@dataclass`` with the same arguments and
    dataclasses' ``field``."""
    if use_records:
        return records.record, records.field

    def record(cls: Any = None, /, *, frozen: bool = False, kw_only: bool = False, slots: bool = False) -> Any:
        def wrap(c: Any) -> Any:
            return dataclasses.dataclass(c, frozen=frozen, kw_only=kw_only, slots=slots)
        return wrap if cls is None else wrap(cls)

    return record, dataclasses.field


def _module(name: str, use_records: bool, source: str = _BODIES) -> Any:
    """``source`` run as module ``name`` (in sys.modules while it runs, as a module is when
    its classes are declared), declaring with records or with @dataclass."""
    import sys
    import types

    module = types.ModuleType(name)
    module.record, module.field = _decorators(use_records)  # type: ignore[attr-defined]
    sys.modules[name] = module
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


_NAMES = ("Plain", "FrozenBase", "FrozenChild", "Slotted", "Hashed", "NotFrozen", "Child", "Described", "Empty",
          "KeywordOnly")


def _same(value: Any) -> Any:
    """``value``; a function or class by its name; an object of a class a module declared
    (each declaration has its own) by its class's name."""
    if callable(value) and hasattr(value, "__qualname__"):
        return "callable", value.__qualname__
    if type(value).__module__ in ("builtins", "dataclasses"):
        return value
    return "declared", type(value).__qualname__


def _view(f: Any) -> tuple[Any, ...]:
    """Everything a dataclasses.Field holds (its kind by name: _FIELD, _FIELD_CLASSVAR)."""
    return (f.name, f.type, _same(f.default), _same(f.default_factory), f.init, f.repr, f.hash, f.compare,
            type(f.metadata), dict(f.metadata), f.kw_only, repr(f._field_type))


@pytest.fixture(scope="module")
def bodies() -> tuple[Any, Any]:
    ours = _module("records_bodies", True)
    for name in _NAMES:  # declared, nothing read yet: both made when first read
        assert [type(getattr(ours, name).__dict__[n]).__name__
                for n in ("__dataclass_fields__", "__dataclass_params__")] == ["_Lazy", "_Lazy"], name
    return ours, _module("records_bodies", False)


@pytest.mark.parametrize("name", _NAMES)
def test_the_dataclasses_view_is_made_when_first_read(bodies: tuple[Any, Any], name: str) -> None:
    ours, theirs = getattr(bodies[0], name), getattr(bodies[1], name)
    lazy = [n for n in ("__dataclass_fields__", "__dataclass_params__")
            if type(ours.__dict__[n]).__name__ == "_Lazy"]
    assert lazy in ([], ["__dataclass_fields__", "__dataclass_params__"])  # made together (a base: already)
    # every entry of __dataclass_fields__ (ClassVar pseudo-fields too), attribute by attribute
    got = ours.__dataclass_fields__
    assert type(ours.__dict__["__dataclass_fields__"]) is dict and type(got) is dict
    assert all(type(f) is dataclasses.Field for f in got.values())
    assert [_view(f) for f in got.values()] == [_view(f) for f in theirs.__dataclass_fields__.values()]
    assert [_view(f) for f in dataclasses.fields(ours)] == [_view(f) for f in dataclasses.fields(theirs)]
    assert repr(ours.__dataclass_params__) == repr(theirs.__dataclass_params__)
    assert ours.__match_args__ == theirs.__match_args__
    assert ours.__dict__.get("__slots__") == theirs.__dict__.get("__slots__")
    assert ours.__doc__ == theirs.__doc__
    # the class attributes dataclasses leaves: defaults in place of field(), none for a factory
    for f in dataclasses.fields(theirs):
        assert (f.name in ours.__dict__) == (f.name in theirs.__dict__), f.name
        if f.name in theirs.__dict__ and not hasattr(theirs.__dict__[f.name], "__get__"):
            assert _same(ours.__dict__[f.name]) == _same(theirs.__dict__[f.name]), f.name
    assert [(n, k, _same(d)) for n, k, d in _params(ours)] == [(n, k, _same(d)) for n, k, d in _params(theirs)]
    assert records.field_names(ours) == tuple(f.name for f in dataclasses.fields(theirs))
    # the bases' Field objects are the child's, as dataclasses shares them
    for base in ours.__mro__[1:]:
        for n, f in getattr(base, "__dataclass_fields__", {}).items():
            if n not in ours.__dict__.get("__annotations__", {}):  # noqa: RUF063
                assert got[n] is f


def test_instances_of_the_bodies_behave_alike(bodies: tuple[Any, Any]) -> None:
    ours, theirs = bodies
    for make in (lambda m: m.Plain(1), lambda m: m.Plain(1, "x", [2], d=3, f=1.5),
                 lambda m: m.FrozenChild(), lambda m: m.FrozenChild(x=2, z="a"), lambda m: m.FrozenBase(x=1),
                 lambda m: m.Slotted(1), lambda m: m.Hashed(1, 2, 3), lambda m: m.Child(1),
                 lambda m: m.Child(), lambda m: m.Empty(), lambda m: m.KeywordOnly(r=1)):
        a, b = make(ours), make(theirs)
        assert repr(a) == repr(b)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert _outcome(lambda: hash(a)) == _outcome(lambda: hash(b))  # noqa: B023
        assert make(ours) == a and (make(theirs) == b)
        assert vars(a) == vars(b) if hasattr(a, "__dict__") else not hasattr(b, "__dict__")
    assert ours.Described().desc.named == theirs.Described().desc.named == "desc"
    # replace: the same result, and the same refusals
    for m in (ours, theirs):
        p = m.Plain(1)
        assert repr(records.replace(p, a=2, d=4)) == repr(dataclasses.replace(p, a=2, d=4))
        assert records.replace(p, a=2).c is p.c  # copied by reference, as dataclasses.replace does
        assert type(records.replace(m.Child(), v="w")) is m.Child
    plain_ours, plain_theirs = ours.Plain(1), theirs.Plain(1)
    for changes in ({"e": 1}, {"bogus": 1}, {"h": 1}):
        assert _outcome(lambda: records.replace(plain_ours, **changes)) == \
            _outcome(lambda: dataclasses.replace(plain_theirs, **changes))  # noqa: B023
    for not_a_dataclass in (object(), ours.Plain, 3):
        assert _outcome(lambda: records.replace(not_a_dataclass)) == \
            _outcome(lambda: dataclasses.replace(not_a_dataclass))  # noqa: B023
        assert _outcome(lambda: records.field_names(not_a_dataclass)) == \
            _outcome(lambda: tuple(f.name for f in dataclasses.fields(not_a_dataclass)))  # noqa: B023
    # pickling a frozen slots record made lazily
    s = ours.Slotted(1, "q")
    assert _state(s) == _state(theirs.Slotted(1, "q"))


def test_a_type_adapter_reads_the_view_made_when_first_read() -> None:
    """pydantic reads __dataclass_fields__ (first read here: made then) and validates into
    the record as into the @dataclass."""
    from pydantic import TypeAdapter

    ours, theirs = _module("records_bodies_pydantic", True), _module("records_bodies_pydantic", False)
    assert type(ours.FrozenChild.__dict__["__dataclass_fields__"]).__name__ == "_Lazy"
    for name, data in (("FrozenChild", {"x": 3, "y": [1], "z": "s", "w": 2}), ("Slotted", {"p": 1})):
        got = TypeAdapter(getattr(ours, name)).validate_python(data)
        want = TypeAdapter(getattr(theirs, name)).validate_python(data)
        assert repr(got) == repr(want)
        assert TypeAdapter(getattr(ours, name)).json_schema() == TypeAdapter(getattr(theirs, name)).json_schema()


_PRELUDE = ("from __future__ import annotations\nimport dataclasses\nfrom dataclasses import InitVar, KW_ONLY\n"
            "from typing import ClassVar\n")


def _both(source: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """The outcome of declaring ``source`` with records and with @dataclass (ok, or the
    exception raised)."""
    ours, theirs = (_outcome(lambda u=u: _module("records_refusals", u, _PRELUDE + source)) for u in (True, False))
    return ours, theirs


@pytest.mark.parametrize("source", [
    "@record\nclass A:\n    a: list[int] = []\n",  # a mutable default
    "@record\nclass A:\n    a: int = field(default=1)\n    b = field(default=2)\n",  # a field without annotation
    "@record\nclass A:\n    a: ClassVar[list[int]] = field(default_factory=list)\n",
    "@record\nclass A:\n    a: ClassVar[int] = field(default=1, kw_only=True)\n",
    "@record(frozen=True)\nclass A:\n    a: int = 0\n@record\nclass B(A):\n    b: int = 0\n",
    "@record\nclass A:\n    a: int = 0\n@record(frozen=True)\nclass B(A):\n    b: int = 0\n",
    "@record\nclass A:\n    a: int = 1\n    b: int\n",  # non-default after default
    "@record\nclass A:\n    a: int = field(default=1, default_factory=int)\n",
])
def test_what_dataclasses_refuses_is_refused_alike(source: str) -> None:
    ours, theirs = _both(source)
    assert ours[0] == theirs[0] != "ok", (ours, theirs)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("source", [
    "@record\nclass A:\n    a: int\n    _: KW_ONLY\n    b: int = 0\nx = A(1, b=2)\n",  # dataclasses' path
    "@record\nclass A:\n    a: int = dataclasses.field(default=1, repr=False)\nx = A()\n",  # dataclasses' path
    "@record\nclass A:\n    a: int = 0\n@record\nclass B(A):\n    b: int = dataclasses.field(default=1)\nx = B(2)\n",
    "@record\nclass A:\n    a: int = dataclasses.field(default=0)\n@record\nclass B(A):\n    b: int = 1\nx = B(2)\n",
    "@record(frozen=True, slots=True)\nclass A:\n    a: int = 0\n@record(frozen=True, slots=True)\n"
    "class B(A):\n    b: int = 1\nx = B(2, 3)\n",  # slots under a base: dataclasses' path
    "class P:\n    p: int = 5\n@record\nclass A(P):\n    a: int = 0\n    p: int\nx = A()\n",  # an inherited default
    "@record\nclass A:\n    a: int = 0\nclass M(A):\n    pass\n@record\nclass B(M):\n    b: int = 1\nx = B()\n",
])
def test_what_only_dataclasses_reads_for_sure_goes_through_it(source: str) -> None:
    outcomes = []
    for use_records in (True, False):
        x = _module("records_paths", use_records, _PRELUDE + source).x
        outcomes.append((repr(x), [_view(f) for f in type(x).__dataclass_fields__.values()],
                         repr(type(x).__dataclass_params__), type(x).__match_args__, _params(type(x)),
                         dataclasses.astuple(x), x == copy.copy(x)))
    assert outcomes[0] == outcomes[1]


def test_an_initvar_needs_dataclass() -> None:
    with pytest.raises(TypeError, match="an InitVar needs @dataclass"):
        @records.record
        class WithInitVar:
            a: int
            b: dataclasses.InitVar[int]


@pytest.mark.skipif(not hasattr(copy, "replace"), reason="copy.replace: Python 3.13")
def test_copy_replace_as_dataclasses_gives_it(bodies: tuple[Any, Any]) -> None:
    ours, theirs = bodies
    assert repr(copy.replace(ours.Plain(1), a=2)) == repr(copy.replace(theirs.Plain(1), a=2))  # type: ignore[attr-defined]


def test_signature_and_type_hints_of_a_generic_init(bodies: tuple[Any, Any]) -> None:
    ours, theirs = bodies
    assert str(inspect.signature(ours.Plain)) == str(inspect.signature(theirs.Plain))
    assert str(inspect.signature(ours.Plain.__init__)) == str(inspect.signature(theirs.Plain.__init__))
    module = _module("records_hints", True)
    import sys

    sys.modules["records_hints"] = module  # get_type_hints resolves in the class's module, as for @dataclass
    try:
        assert typing.get_type_hints(module.KeywordOnly.__init__) == {"r": int, "s": int, "return": type(None)}
    finally:
        del sys.modules["records_hints"]


# ---- every record of the package, against the @dataclass of the same body -----------------------

_DUMP = """
import dataclasses, importlib, json, re, sys
import validator.values.records as records
declared = []
if sys.argv[1] == "dataclass":  # before any module declares its classes, as tests/test_startup_records.py
    def record(cls=None, /, *, frozen=False, kw_only=False, slots=False):
        def wrap(c):
            c = dataclasses.dataclass(c, frozen=frozen, kw_only=kw_only, slots=slots)
            declared.append(c)
            return c
        return wrap if cls is None else wrap(cls)
    records.record, records.field = record, dataclasses.field
for name in sys.argv[2:]:
    importlib.import_module(name)
if sys.argv[1] == "record":
    declared = list(records.declared())
def same(v):
    if v is dataclasses.MISSING:
        return "MISSING"
    if callable(v) and hasattr(v, "__qualname__"):
        return "callable " + getattr(v, "__module__", "?") + "." + v.__qualname__
    return re.sub(" at 0x[0-9a-f]+", "", repr(v))  # an object's address: its own in each run
out = {}
before = {cls: type(cls.__dict__["__dataclass_fields__"]).__name__ for cls in declared}  # nothing read yet
for cls in declared:
    fields = [[f.name, repr(f.type), same(f.default), same(f.default_factory), f.init, f.repr, f.hash, f.compare,
               type(f.metadata).__name__, repr(dict(f.metadata)), same(f.kw_only), repr(f._field_type)]
              for f in cls.__dataclass_fields__.values()]
    out[cls.__module__ + "." + cls.__qualname__] = {
        "lazy": before[cls] == "_Lazy", "fields": fields, "params": repr(cls.__dataclass_params__),
        "match_args": list(cls.__match_args__), "slots": list(cls.__dict__.get("__slots__", ())),
        "names": [f.name for f in dataclasses.fields(cls)], "doc": cls.__doc__,
        "defaults": {f.name: same(cls.__dict__[f.name]) for f in dataclasses.fields(cls) if f.name in cls.__dict__}}
print(json.dumps(out))
"""


def test_every_record_of_the_package_shows_the_dataclass_view_of_its_body() -> None:
    """Each module declaring records imported in a fresh interpreter twice, with records and
    with plain @dataclass (records.record and records.field swapped before any import): the
    same __dataclass_fields__ (ClassVar entries too) field by field, parameters,
    __match_args__, slots, docstring and class attributes. And with records, each was made
    when first read (not at import): only a class whose body uses dataclasses.field (which
    records hands to dataclasses) was made at import."""
    import json
    import os
    import subprocess
    import sys

    runs = {}
    for how in ("record", "dataclass"):
        r = subprocess.run([sys.executable, "-c", _DUMP, how, *sorted(MODULES)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120, check=False)
        assert r.returncode == 0, r.stderr[-2000:]
        runs[how] = json.loads(r.stdout)
    ours, theirs = runs["record"], runs["dataclass"]
    assert sorted(ours) == sorted(theirs) and len(ours) >= 60
    for name in ours:
        lazy = ours[name].pop("lazy")
        theirs[name].pop("lazy")
        assert ours[name] == theirs[name], name
        if not lazy:  # made at import: only through dataclasses' own field()
            module = importlib.import_module(name.rsplit(".", 1)[0] if name.count(".") else name)
            assert "from dataclasses import field" in Path(module.__file__ or "").read_text(encoding="utf-8"), name
    assert sum(1 for v in ours.values() if v["fields"]) > 50


_TYPED = '''
from validator.values.records import field, field_names, record, replace


@record(frozen=True)
class C:
    a: int
    x: list[int] = field(default_factory=list)
    y: int = field(init=False, default=0)
    z: str = field(default="q", kw_only=True)


C(1, [2], z="s")
c: C = replace(C(1), a=2)
names: tuple[str, ...] = field_names(C)
C(1, y=3)  # line 16: y is not an __init__ parameter
C("no")  # line 17: a is an int
C()  # line 18: a is required
C(1, [2], "s")  # line 19: z is keyword-only
'''


def test_mypy_checks_the_calls_of_a_record_declared_with_records_field(tmp_path: Path) -> None:
    """``dataclass_transform`` names ``records.field``: mypy synthesises ``__init__`` from
    the fields as it does for a @dataclass (init=False, kw_only, defaults, types)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("mypy")
    (tmp_path / "typed.py").write_text(_TYPED, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
                        "--follow-imports", "silent", "typed.py"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "MYPYPATH": str(ROOT)}, timeout=300, check=False)
    lines = sorted({int(m.group(1)) for m in re.finditer(r"^typed\.py:(\d+): error", r.stdout, re.M)})
    assert lines == [16, 17, 18, 19], r.stdout + r.stderr
