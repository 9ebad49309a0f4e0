"""``record``: the project's way to declare a value class, a dataclass without the start-up cost.

On Python 3.10-3.12, ``@dataclass`` writes each generated method (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__`` and
``__delattr__``) as source text and compiles it with its own ``exec`` when the module is
imported, about a quarter of a millisecond each, and no bytecode cache keeps them: the
~210 of them on ``spec-check check --format json``'s path were 40-70 ms of every run. And
``import dataclasses`` imports ``inspect`` (with ast, dis, tokenize, linecache): another
15-20 ms. ``record`` gives the same class with neither:

* It reads the fields itself, as ``dataclasses`` reads them: the class's own annotations
  (``ClassVar`` ones, written or as strings under ``from __future__ import annotations``,
  are not fields), plain defaults, this module's ``field()`` (the same arguments as
  ``dataclasses.field``), the fields of the records it inherits from, ``kw_only`` and
  ``slots``. ``__dataclass_fields__`` and ``__dataclass_params__`` are made when first
  read: the real ``dataclasses.Field`` and parameter objects that
  ``dataclasses.dataclass(cls, init=False, repr=False, eq=False)`` would make, so
  ``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass`` and pydantic's
  ``TypeAdapter`` see a dataclass as before (and import ``dataclasses`` then, not at start).
* What it cannot read for sure (``InitVar``, ``KW_ONLY``, ``dataclasses.field()`` in the
  class body, a base made by plain ``@dataclass``, slots under a base class, anything
  ``dataclasses`` would refuse) goes through ``dataclasses.dataclass(cls, init=False,
  repr=False, eq=False)`` as before, which raises what it raises.
* ``__repr__``, ``__eq__``, ``__hash__``, frozen ``__setattr__``/``__delattr__`` and a frozen
  slots class's ``__getstate__``/``__setstate__`` are the functions below, written once,
  closed over the class's tuple of field names: the same results as the generated ones.
* ``__init__``: a class made many times per run (findings, locations, log records) writes
  its own in the class body, as a dataclass keeps one it is given; any other gets a generic
  one that binds arguments as the generated one does (positional and keyword-only
  parameters, defaults, ``default_factory``, ``__post_init__``, the same ``TypeError`` for a
  missing or unexpected argument). ``inspect.signature`` of it (and of the class) gives the
  generated one's signature, made when first asked for.
* ``replace`` and ``field_names`` here are ``dataclasses.replace`` and the names of
  ``dataclasses.fields`` for the start paths: the same results (anything unusual is handed
  to ``dataclasses`` itself) without importing it.

``typing.dataclass_transform`` tells type checkers that ``record`` makes dataclasses and
that ``field`` declares a field, so mypy synthesises ``__init__`` and checks every call. A
record without a docstring gets the one ``dataclasses`` writes (``Name(signature)``), made
when first read. tests/test_records.py rebuilds every record class of the package with
plain ``@dataclass`` and compares the two, field by field and on instances;
tests/test_startup_nodataclasses.py checks ``check`` imports neither module.
"""

from __future__ import annotations

import abc
import re
import sys
import types
from _thread import RLock, get_ident
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, overload

if TYPE_CHECKING:
    import dataclasses
    import inspect

    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: only type checkers read it
        def dataclass_transform(**_: Any) -> Callable[[object], Any]:
            return lambda f: f

_T = TypeVar("_T")
_Metadata = Mapping[Any, Any]  # dataclasses.field's metadata: any mapping, kept as given
_C = TypeVar("_C", bound=type)

_DECLARED: list[type] = []


class _Missing:
    """No default (``dataclasses.MISSING`` for this module's fields: ``dataclasses`` is not
    imported to get it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


class _Factory:
    """The default a field made by ``default_factory`` shows in ``__init__``'s signature
    (``<factory>``, as a generated ``__init__`` shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


FACTORY = _Factory()

# what a field is, as dataclasses' Field._field_type says it (InitVar: dataclasses' path)
_FIELD = "field"
_CLASSVAR = "classvar"


class Field:
    """What ``field()`` puts in a class body, and what a record keeps of each of its fields:
    ``dataclasses.Field``'s attributes, ``MISSING`` being this module's."""

    __slots__ = ("compare", "default", "default_factory", "hash", "init", "kind", "kw_only", "metadata", "name",
                 "repr", "type")

    def __init__(self, default: object, default_factory: object, init: bool, repr: bool,
                 hash: bool | None, compare: bool, metadata: _Metadata | None, kw_only: object) -> None:
        self.name: str = ""
        self.type: object = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = metadata  # as given: dataclasses.field wraps it when the real one is made
        self.kw_only = kw_only
        self.kind = ""

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r},type={self.type!r},default={self.default!r},"
                f"default_factory={self.default_factory!r},init={self.init!r},repr={self.repr!r},"
                f"hash={self.hash!r},compare={self.compare!r},metadata={self.metadata!r},"
                f"kw_only={self.kw_only!r},kind={self.kind!r})")

    def __set_name__(self, owner: type, name: str) -> None:
        # as dataclasses.Field: a default that is a descriptor learns its name
        set_name = getattr(type(self.default), "__set_name__", None)
        if set_name:
            set_name(self.default, owner, name)

    def _copy(self) -> Field:
        return Field(self.default, self.default_factory, self.init, self.repr, self.hash, self.compare,
                     self.metadata, self.kw_only)

    def _real(self, dc: ModuleType) -> dataclasses.Field[object]:
        """The ``dataclasses.Field`` this is, without name, type and kind."""
        return dc.field(default=dc.MISSING if self.default is MISSING else self.default,
                        default_factory=dc.MISSING if self.default_factory is MISSING else self.default_factory,
                        init=self.init, repr=self.repr, hash=self.hash, compare=self.compare,
                        metadata=self.metadata, kw_only=dc.MISSING if self.kw_only is MISSING else self.kw_only)


@overload
def field(*, default: _T, init: bool = True, repr: bool = True, hash: bool | None = None,
          compare: bool = True, metadata: _Metadata | None = None, kw_only: bool = ...) -> _T: ...


@overload
def field(*, default_factory: Callable[[], _T], init: bool = True, repr: bool = True,
          hash: bool | None = None, compare: bool = True, metadata: _Metadata | None = None,
          kw_only: bool = ...) -> _T: ...


@overload
def field(*, init: bool = True, repr: bool = True, hash: bool | None = None, compare: bool = True,
          metadata: _Metadata | None = None, kw_only: bool = ...) -> Any: ...


def field(*, default: object = MISSING, default_factory: object = MISSING, init: bool = True, repr: bool = True,
          hash: bool | None = None, compare: bool = True, metadata: _Metadata | None = None,
          kw_only: object = MISSING) -> Any:  # Any: it stands for a value of the field's type
    """``dataclasses.field`` for a record: the same arguments and meaning."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, hash, compare, metadata, kw_only)


class _Spec:
    """What a record class is: its fields (ClassVar ones too, in ``__dataclass_fields__``'
    order), its own (the ones its annotations declare) and its parameters."""

    __slots__ = ("cls", "fields", "frozen", "init_names", "kw_only", "names", "not_init", "own", "slots")

    def __init__(self, cls: type, fields: tuple[Field, ...], own: tuple[Field, ...], *, frozen: bool,
                 kw_only: bool, slots: bool) -> None:
        self.cls = cls
        self.fields = fields
        self.own = own
        self.frozen = frozen
        self.kw_only = kw_only
        self.slots = slots
        real = [f for f in fields if f.kind is _FIELD]
        self.names = tuple(f.name for f in real)  # dataclasses.fields(cls)'s names
        self.init_names = tuple(f.name for f in real if f.init)
        self.not_init = frozenset(f.name for f in real if not f.init)


def _spec(cls: type) -> _Spec | None:
    """The record spec ``cls`` itself was declared with (not one it inherits)."""
    spec = cls.__dict__.get("__record__")
    return spec if isinstance(spec, _Spec) and spec.cls is cls else None


def declared() -> tuple[type, ...]:
    """Every class declared with ``record`` so far (in the modules imported)."""
    return tuple(_DECLARED)


@overload
def record(cls: _C, /) -> _C: ...


@overload
def record(*, frozen: bool = False, kw_only: bool = False, slots: bool = False) -> Callable[[_C], _C]: ...


@dataclass_transform(field_specifiers=(field, Field))
def record(cls: Any = None, /, *, frozen: bool = False, kw_only: bool = False, slots: bool = False) -> Any:
    """``@record`` or ``@record(frozen=..., kw_only=..., slots=...)``: the class a
    ``@dataclass`` with the same arguments makes, built without compiling anything."""

    def wrap(c: Any) -> Any:
        return _declare(c, frozen=frozen, kw_only=kw_only, slots=slots)

    return wrap if cls is None else wrap(cls)


def _declare(cls: Any, *, frozen: bool, kw_only: bool, slots: bool) -> Any:
    documented = bool(cls.__dict__.get("__doc__"))
    for name in ("__setattr__", "__delattr__") if frozen else ():
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    # was this class defined with an explicit __hash__? (as dataclasses decides)
    class_hash = cls.__dict__.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in cls.__dict__))

    read = _read(cls, frozen=frozen, kw_only=kw_only, slots=slots)
    if read is None:
        cls, spec = _through_dataclasses(cls, documented, frozen=frozen, kw_only=kw_only, slots=slots)
    else:
        cls, spec = _apply(cls, *read, frozen=frozen, kw_only=kw_only, slots=slots)
    if not documented:
        cls.__doc__ = _SIGNATURE_DOC

    flds = tuple(f for f in spec.fields if f.kind is _FIELD)
    if "__init__" not in cls.__dict__:
        _set(cls, "__init__", _init(cls, flds, frozen, slots))
    _set(cls, "__repr__", _repr(tuple(f.name for f in flds if f.repr)))
    compared = _getter(tuple(f.name for f in flds if f.compare))
    _set(cls, "__eq__", _eq(compared))
    if frozen:
        names = frozenset(f.name for f in flds)
        _set(cls, "__setattr__", _setattr(cls, names))
        _set(cls, "__delattr__", _delattr(cls, names))
    if not explicit_hash:  # eq and frozen: hash the compared fields; eq alone: unhashable
        cls.__hash__ = _hash(cls, _getter(tuple(
            f.name for f in flds if (f.compare if f.hash is None else f.hash)))) if frozen else None
    if slots and frozen:  # pickling a frozen slots class
        names_t = tuple(f.name for f in flds)
        _set(cls, "__getstate__", _getstate(cls, names_t))
        _set(cls, "__setstate__", _setstate(cls, names_t))
    _DECLARED.append(cls)
    return cls


# ---- reading the fields as dataclasses reads them ------------------------------------------------

# dataclasses' _MODULE_IDENTIFIER_RE: "ClassVar[int]", "typing.ClassVar[int]"
_IDENTIFIER = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")
_CLASSVAR_ALIAS = type(ClassVar[int])


class _Unsure(Exception):
    """The class is one dataclasses itself must read (or refuse)."""


def _is_classvar(tp: object, typing: ModuleType) -> bool:
    return tp is typing.ClassVar or (type(tp) is _CLASSVAR_ALIAS and getattr(tp, "__origin__", None) is typing.ClassVar)


def _is_initvar(tp: object, dc: ModuleType) -> bool:
    return tp is dc.InitVar or type(tp) is dc.InitVar


def _is_kw_only(tp: object, dc: ModuleType) -> bool:
    return tp is dc.KW_ONLY


def _is_type(annotation: str, cls: type, module: ModuleType, wanted: object,
             predicate: Callable[[object, ModuleType], bool]) -> bool:
    """dataclasses' ``_is_type``: does the string annotation name ``wanted`` (looked up in
    the class's module, as dataclasses looks)?"""
    match = _IDENTIFIER.match(annotation)
    if match:
        ns = None
        module_name = match.group(1)
        home = sys.modules.get(cls.__module__)
        if not module_name:
            if home is None:  # dataclasses fails here (None.__dict__)
                raise _Unsure
            ns = home.__dict__
        elif home and home.__dict__.get(module_name) is module:
            ns = sys.modules[wanted.__module__].__dict__
        if ns and predicate(ns.get(match.group(2)), module):
            return True
    return False


def _mutable(value: object) -> bool:
    """A default dataclasses refuses (``use default_factory``)."""
    if sys.version_info >= (3, 11):
        return value.__class__.__hash__ is None
    return isinstance(value, (list, dict, set))


def _read(cls: type, *, frozen: bool, kw_only: bool, slots: bool) -> tuple[dict[str, Field], list[Field]] | None:
    """The class's fields (all, and its own), read as ``dataclasses`` reads them, without
    changing the class; None for a class only dataclasses can say for sure."""
    try:
        return _read_or_raise(cls, frozen=frozen, kw_only=kw_only, slots=slots)
    except _Unsure:
        return None


def _read_or_raise(cls: type, *, frozen: bool, kw_only: bool, slots: bool) -> tuple[dict[str, Field], list[Field]]:
    dc = sys.modules.get("dataclasses")  # not imported: no annotation can be its InitVar or KW_ONLY
    typing = sys.modules["typing"]
    mro = cls.__mro__
    # the dataclass bases: only records (declared here), none reached through a plain class
    bases = [b for b in mro[1:] if "__dataclass_fields__" in b.__dict__]
    specs = [_spec(b) for b in bases]
    if any(s is None for s in specs):
        raise _Unsure
    for b in mro[1:]:
        if b not in bases and any(x in bases for x in b.__mro__[1:]):
            raise _Unsure
    frozen_bases = {s.frozen for s in specs if s is not None}
    if len(frozen_bases) > 1 or (frozen_bases and frozen_bases != {frozen}):
        raise _Unsure  # dataclasses refuses a mix
    if slots and ("__slots__" in cls.__dict__ or cls.__bases__ != (object,)):
        raise _Unsure  # dataclasses works out the inherited slots (differently in 3.10 and 3.13)
    fields: dict[str, Field] = {}
    for s in reversed(specs):
        for f in s.fields if s is not None else ():
            fields[f.name] = f

    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (dataclasses reads it so; no inspect)
    if not isinstance(annotations, dict):
        raise _Unsure
    for name, value in cls.__dict__.items():
        if dc is not None and isinstance(value, dc.Field):
            raise _Unsure
        if isinstance(value, Field) and name not in annotations:
            raise _Unsure  # "is a field but has no type annotation"

    own: list[Field] = []
    for name, tp in annotations.items():
        text = isinstance(tp, str)
        if dc is not None and (_is_kw_only(tp, dc) or (text and _is_type(tp, cls, dc, dc.KW_ONLY, _is_kw_only))):
            raise _Unsure
        default = getattr(cls, name, MISSING)
        if dc is not None and isinstance(default, dc.Field):
            raise _Unsure
        if isinstance(default, Field):
            f = default._copy()
        else:
            if isinstance(default, types.MemberDescriptorType):  # a slot: no default
                default = MISSING
            f = Field(default, MISSING, True, True, None, True, None, MISSING)
        f.name = name
        f.type = tp
        if _is_classvar(tp, typing) or (text and _is_type(tp, cls, typing, typing.ClassVar, _is_classvar)):
            if f.default_factory is not MISSING or f.kw_only is not MISSING:
                raise _Unsure  # dataclasses refuses it
            f.kind = _CLASSVAR
        else:
            if dc is not None and (_is_initvar(tp, dc) or (text and _is_type(tp, cls, dc, dc.InitVar, _is_initvar))):
                raise _Unsure
            if f.kw_only is MISSING:
                f.kw_only = kw_only
            if _mutable(f.default):
                raise _Unsure
            f.kind = _FIELD
        own.append(f)
    for f in own:
        fields[f.name] = f
    return fields, own


def _apply(cls: type, fields: dict[str, Field], own: list[Field], *, frozen: bool, kw_only: bool,
           slots: bool) -> tuple[type, _Spec]:
    """Make ``cls`` the class dataclasses would (its methods aside): defaults in place of
    ``field()``, ``__match_args__``, slots; ``__dataclass_fields__`` and
    ``__dataclass_params__`` made when first read."""
    for f in own:
        if isinstance(getattr(cls, f.name, None), Field):
            if f.default is MISSING:
                delattr(cls, f.name)
            else:
                setattr(cls, f.name, f.default)
    if "__match_args__" not in cls.__dict__:
        setattr(cls, "__match_args__",  # noqa: B010 (mypy refuses the assignment)
                tuple(f.name for f in fields.values() if f.kind is _FIELD and f.init and not f.kw_only))
    if sys.version_info >= (3, 13) and "__replace__" not in cls.__dict__:
        setattr(cls, "__replace__", _replace_method)  # noqa: B010
    if slots:
        cls = _with_slots(cls, tuple(f.name for f in fields.values() if f.kind is _FIELD))
    spec = _Spec(cls, tuple(fields.values()), tuple(own), frozen=frozen, kw_only=kw_only, slots=slots)
    for name, value in (("__record__", spec), ("__dataclass_params__", _Lazy(spec, "__dataclass_params__")),
                        ("__dataclass_fields__", _Lazy(spec, "__dataclass_fields__"))):
        setattr(cls, name, value)
    abc.update_abstractmethods(cls)
    return cls, spec


def _with_slots(cls: type, names: tuple[str, ...]) -> type:
    """dataclasses' ``_add_slots`` for a class whose only base is object: a new class."""
    ns = dict(cls.__dict__)
    ns["__slots__"] = names
    for name in names:
        ns.pop(name, None)
    ns.pop("__dict__", None)
    if sys.version_info >= (3, 11):
        ns.pop("__weakref__", None)  # gh-102069
    qualname = getattr(cls, "__qualname__", None)
    cls = type(cls)(cls.__name__, cls.__bases__, ns)
    if qualname is not None:
        cls.__qualname__ = qualname
    return cls


def _replace_method(self: object, /, **changes: Any) -> object:
    """``__replace__`` (``copy.replace``, Python 3.13), as dataclasses adds it."""
    return replace(self, **changes)


def _through_dataclasses(cls: Any, documented: bool, *, frozen: bool, kw_only: bool,
                         slots: bool) -> tuple[type, _Spec]:
    """The class dataclasses reads (and refuses what it refuses): the path for what
    ``_read`` cannot be sure of. (``cls``: Any, any class, with the attributes dataclasses
    gives it.)"""
    dc = _dataclasses()

    for name, value in list(cls.__dict__.items()):  # this module's field(): dataclasses' own
        if isinstance(value, Field):
            setattr(cls, name, value._real(dc))
    if not documented:  # not "" either: dataclasses would call inspect.signature
        cls.__doc__ = "record"
    # dataclasses refuses a non-frozen class over a frozen base: it is told frozen=False
    # (a frozen dataclass would compile its __setattr__), so the bases say so for the call
    bases = [b.__dataclass_params__ for b in cls.__mro__[1:]
             if "__dataclass_params__" in b.__dict__]
    any_frozen = any(p.frozen for p in bases)
    if bases and any_frozen != frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one" if any_frozen
                        else "cannot inherit frozen dataclass from a non-frozen one")
    was = [p.frozen for p in bases]
    try:
        for p in bases:
            p.frozen = False
        cls = dc.dataclass(cls, init=False, repr=False, eq=False, frozen=False, kw_only=kw_only, slots=slots)
    finally:
        for p, f in zip(bases, was, strict=True):
            p.frozen = f
    params = cls.__dataclass_params__
    params.init = params.repr = params.eq = True
    params.frozen = frozen

    kinds = {v: k for k, v in _kinds(dc).items()}
    real = cls.__dataclass_fields__
    if any(f._field_type not in kinds for f in real.values()):
        raise TypeError(f"record {cls.__qualname__}: an InitVar needs @dataclass")
    fields = tuple(_from_real(f, kinds[f._field_type], dc) for f in real.values())
    own = tuple(f for f in fields if f.name in cls.__dict__.get("__annotations__", {}))  # noqa: RUF063
    spec = _Spec(cls, fields, own, frozen=frozen, kw_only=kw_only, slots=slots)
    cls.__record__ = spec
    return cls, spec


def _from_real(real: dataclasses.Field[object], kind: str, dc: ModuleType) -> Field:
    f = Field(MISSING if real.default is dc.MISSING else real.default,
              MISSING if real.default_factory is dc.MISSING else real.default_factory,
              real.init, real.repr, real.hash, real.compare, real.metadata,
              MISSING if real.kw_only is dc.MISSING else real.kw_only)
    f.name, f.type, f.kind = real.name, real.type, kind
    return f


# ---- the dataclasses view, made when first read -------------------------------------------------


def _dataclasses() -> ModuleType:
    """The dataclasses module, imported when first needed: never on the start paths."""
    import dataclasses

    return dataclasses


_KINDS: dict[str, object] = {}
_MAKING = RLock()


def _kinds(dc: ModuleType) -> dict[str, object]:
    """``Field._field_type`` of a field and of a ClassVar, as this Python's dataclasses
    marks them (read off a class it makes, rather than its private names)."""
    if not _KINDS:
        probe = type("_Probe", (), {"__annotations__": {"a": int, "b": ClassVar[int]}, "__doc__": "probe",
                                     "__module__": __name__})
        made = dc.dataclass(probe, init=False, repr=False, eq=False).__dataclass_fields__
        _KINDS.update({_FIELD: made["a"]._field_type, _CLASSVAR: made["b"]._field_type})
    return _KINDS


class _Lazy:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of a record, until first read:
    then both are made (importing dataclasses) and put in the class in its place."""

    __slots__ = ("name", "spec")

    def __init__(self, spec: _Spec, name: str) -> None:
        self.spec = spec
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> object:
        _make(self.spec)
        return self.spec.cls.__dict__[self.name]


def _make(spec: _Spec) -> None:
    """The class's ``__dataclass_fields__`` and ``__dataclass_params__``, as
    ``dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=..., slots=...)``
    makes them, with the parameters a ``@dataclass`` with the record's arguments shows."""
    dc = _dataclasses()

    cls = spec.cls
    with _MAKING:
        if not isinstance(cls.__dict__.get("__dataclass_fields__"), _Lazy):
            return  # made meanwhile
        kinds = _kinds(dc)
        fields: dict[str, object] = {}
        for b in cls.__mro__[-1:0:-1]:  # the bases' fields, the same objects (as dataclasses)
            base_fields = getattr(b, "__dataclass_fields__", None)
            if base_fields is not None:
                for f in base_fields.values():
                    fields[f.name] = f
        for f in spec.own:
            real = f._real(dc)
            real.name = f.name
            real.type = f.type  # type: ignore[assignment, unused-ignore]  # the annotation as written
            setattr(real, "_field_type", kinds[f.kind])  # noqa: B010 (dataclasses' own, not in its stubs)
            if f.kind is _FIELD:
                real.kw_only = f.kw_only  # type: ignore[assignment]  # a bool: MISSING was resolved
            fields[f.name] = real
        # the parameters: dataclasses' own object, from a class with nothing to read
        empty = type(cls.__name__, (), {"__doc__": "empty", "__module__": __name__})
        params = dc.dataclass(empty, init=False, repr=False, eq=False, frozen=False, kw_only=spec.kw_only,
                              slots=spec.slots).__dataclass_params__
        params.init = params.repr = params.eq = True
        params.frozen = spec.frozen
        type.__setattr__(cls, "__dataclass_params__", params)
        type.__setattr__(cls, "__dataclass_fields__", fields)


# ---- dataclasses' functions for the start paths -------------------------------------------------


def replace(obj: _T, /, **changes: Any) -> _T:
    """``dataclasses.replace``: a new instance with ``changes``, the other ``__init__``
    fields copied. Anything but a record's own instance, or a change dataclasses refuses
    (a field with ``init=False``), is dataclasses' own call."""
    cls = type(obj)
    spec = _spec(cls)
    if spec is None or (spec.not_init and not spec.not_init.isdisjoint(changes)):
        made: _T = _dataclasses().replace(obj, **changes)
        return made
    for name in spec.init_names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return cls(**changes)


def field_names(class_or_instance: object) -> tuple[str, ...]:
    """The names of ``dataclasses.fields(class_or_instance)``, in order."""
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    spec = _spec(cls)
    if spec is None:
        return tuple(f.name for f in _dataclasses().fields(class_or_instance))
    return spec.names


# ---- the methods ---------------------------------------------------------------------------------


class _SignatureDoc:
    """The docstring of a record whose class has none: ``Name(signature)``, as dataclasses
    writes it from ``inspect.signature`` of the class (its generated ``__init__``'s, or the
    one the class writes), made when first read rather than at import (``inspect`` is slow
    to import and ``inspect.signature`` slow to run; pydantic's JSON Schema leaves such a
    docstring out), then kept in the class in this one's place."""

    def __get__(self, obj: object, owner: type) -> str:
        import inspect

        try:
            text = str(inspect.signature(owner)).replace(" -> None", "")
        except (TypeError, ValueError):  # as dataclasses: no signature, no text
            text = ""
        doc: str = owner.__name__ + text
        type.__setattr__(owner, "__doc__", doc)
        return doc


_SIGNATURE_DOC = _SignatureDoc()


class _InitSignature:
    """``__wrapped__`` of a generic ``__init__``: ``inspect.signature`` of the ``__init__``
    (or of the class) follows it and reads ``__signature__`` here, the generated one's,
    made when first asked for (building ``Parameter`` objects for every record at import
    would cost more than declaring it, and would import inspect). ``__globals__`` is the
    class's module's, where ``typing.get_type_hints`` resolves the annotations."""

    __slots__ = ("_cls", "_init", "_made")

    def __init__(self, cls: type, init: Callable[..., None]) -> None:
        self._cls = cls
        self._init = init
        self._made: inspect.Signature | None = None

    def __call__(self, *args: object, **kwargs: object) -> None:
        self._init(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        if self._made is None:
            self._made = _signature(self._cls, with_self=True)
        return self._made

    @property
    def __globals__(self) -> dict[str, object]:
        module = sys.modules.get(self._cls.__module__)
        return module.__dict__ if module is not None else {}


def _set(cls: type, name: str, fn: Any) -> None:  # Any: a function or a class's own method
    """Add ``fn`` unless the class body defines ``name`` (as dataclasses does)."""
    if name in cls.__dict__:
        return
    fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    setattr(cls, name, fn)


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[object, ...]]:
    """The tuple of the named attributes, as the generated methods' ``(self.a, self.b)``."""
    if len(names) >= 2:
        from operator import attrgetter

        return attrgetter(*names)
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return lambda obj: ()


def _repr(names: tuple[str, ...]) -> Callable[[object], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: object) -> str:
        key = id(self), get_ident()
        if key in running:  # a record that contains itself
            return "..."
        running.add(key)
        try:
            return self.__class__.__qualname__ + "(" + ", ".join(
                [f"{name}={getattr(self, name)!r}" for name in names]) + ")"
        finally:
            running.discard(key)

    return __repr__


def _eq(values: Callable[[object], tuple[object, ...]]) -> Callable[[object, object], object]:
    def __eq__(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(cls: type, values: Callable[[object], tuple[object, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


def _frozen_error(text: str) -> Exception:
    error: Exception = _dataclasses().FrozenInstanceError(text)
    return error


def _setattr(cls: type, names: frozenset[str]) -> Callable[[object, str, object], None]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise _frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]  # mypy: a bare type is no class

    return __setattr__


def _delattr(cls: type, names: frozenset[str]) -> Callable[[object, str], None]:
    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise _frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]  # mypy: a bare type is no class

    return __delattr__


def _getstate(cls: type, names: tuple[str, ...]) -> Callable[[object], list[object]]:
    def __getstate__(self: object) -> list[object]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(cls: type, names: tuple[str, ...]) -> Callable[[object, list[object]], None]:
    def __setstate__(self: object, state: list[object]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __setstate__


def _plural(kind: str, names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    return f"missing {len(names)} required {kind} argument{'s' if len(names) > 1 else ''}: {listed}"


def _init(cls: type, flds: tuple[Field, ...], frozen: bool, slots: bool) -> Callable[..., None]:
    """A generic ``__init__`` for ``cls``: what its generated one does, without compiling it."""
    init_fields = [f for f in flds if f.init]
    positional = [f for f in init_fields if not f.kw_only]
    keyword = [f for f in init_fields if f.kw_only]
    seen_default = None
    for f in positional:
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if has_default:
            seen_default = f
        elif seen_default is not None:
            after = f" {seen_default.name!r}" if sys.version_info >= (3, 13) else ""  # as this Python's says
            raise TypeError(f"non-default argument {f.name!r} follows default argument{after}")
    pos_names = tuple(f.name for f in positional)
    accepted = frozenset(f.name for f in init_fields)
    npos = len(pos_names)
    required_pos = [f.name for f in positional if f.default is MISSING and f.default_factory is MISSING]
    required_kw = [f.name for f in keyword if f.default is MISSING and f.default_factory is MISSING]
    put = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")
    missing = MISSING
    qual = f"{cls.__qualname__}.__init__"
    with_defaults = npos - len(required_pos)

    def refuse(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
        """The TypeError a generated __init__ raises for this call."""
        if len(args) > npos:
            took = (f"from {npos - with_defaults + 1} to {npos + 1}" if with_defaults else str(npos + 1))
            raise TypeError(f"{qual}() takes {took} positional argument{'' if took == '1' else 's'} "
                            f"but {len(args) + 1} were given")
        given = dict(zip(pos_names, args, strict=False))
        for k in kwargs:
            if k not in accepted:
                raise TypeError(f"{qual}() got an unexpected keyword argument {k!r}")
            if k in given:
                raise TypeError(f"{qual}() got multiple values for argument {k!r}")
            given[k] = None
        lacking = [n for n in required_pos if n not in given]
        if lacking:
            raise TypeError(f"{qual}() {_plural('positional', lacking)}")
        lacking = [n for n in required_kw if n not in given]
        raise TypeError(f"{qual}() {_plural('keyword-only', lacking)}")

    # the call binds into a copy of ``template`` (every field set, in field order, with its
    # default; a required one's value is always given), then default factories run for the
    # fields not given: set operations in C instead of a loop over the fields. A field
    # outside __init__ with a plain default is left to the class attribute, as the generated
    # __init__ leaves it (but in a slots class, which has no such attribute).
    template = {f.name: None if f.default is missing else f.default for f in flds
                if f.init or f.default_factory is not missing or (slots and f.default is not missing)}
    position = {name: i for i, name in enumerate(pos_names)}
    factories = tuple((f.name, cast("Callable[[], object]", f.default_factory),
                       position.get(f.name, npos) if f.init else -1)
                      for f in flds if f.default_factory is not missing)
    # per number of positional arguments: the required names still to come by keyword,
    # and the names already given by position
    still_required = tuple(frozenset(required_pos[n:] + required_kw) if n <= len(required_pos)
                           else frozenset(required_kw) for n in range(npos + 1))
    by_position = tuple(frozenset(pos_names[:n]) for n in range(npos + 1))
    slotted = "__slots__" in cls.__dict__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # Any: any record class
        n = len(args)
        keys = kwargs.keys()
        if n > npos or not (keys <= accepted and still_required[n] <= keys and by_position[n].isdisjoint(keys)):
            refuse(args, kwargs)
        values = template.copy()
        if n:
            values.update(zip(pos_names, args, strict=False))
        if kwargs:
            values.update(kwargs)
        for name, factory, at in factories:
            if at < 0 or (at >= n and name not in keys):
                values[name] = factory()
        if slotted:
            for name, value in values.items():
                put(self, name, value)
        else:
            self.__dict__.update(values)
        if post_init:
            self.__post_init__()

    __init__.__wrapped__ = _InitSignature(cls, __init__)  # type: ignore[attr-defined]
    __init__.__annotations__ = {**{f.name: f.type for f in init_fields}, "return": None}
    return __init__


def _signature(cls: type, *, with_self: bool) -> inspect.Signature:
    """The signature of the ``__init__`` dataclasses would generate for ``cls``."""
    import inspect

    P = inspect.Parameter
    spec: _Spec = getattr(cls, "__record__")  # noqa: B009 (set by record, unknown to mypy)
    init = [f for f in spec.fields if f.kind is _FIELD and f.init]
    params = [P("self", P.POSITIONAL_OR_KEYWORD)] if with_self else []
    for f in [f for f in init if not f.kw_only] + [f for f in init if f.kw_only]:
        default = (FACTORY if f.default_factory is not MISSING
                   else P.empty if f.default is MISSING else f.default)
        params.append(P(f.name, P.KEYWORD_ONLY if f.kw_only else P.POSITIONAL_OR_KEYWORD,
                        default=default, annotation=f.type))
    return inspect.Signature(params, return_annotation=None)
