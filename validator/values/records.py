"""``record``: the project's way to declare a value class, a dataclass without the start-up cost.

On Python 3.10-3.12, ``@dataclass`` writes each generated method (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, a frozen class's ``__setattr__`` and
``__delattr__``) as source text and compiles it with its own ``exec`` when the module is
imported, about a quarter of a millisecond each, and no bytecode cache keeps them: the
~210 of them on ``spec-check check --format json``'s path were 40-70 ms of every run. ``record`` gives the
same class with none of that:

* ``dataclasses.dataclass(cls, init=False, repr=False, eq=False)`` collects the fields
  (defaults, ``field()``, ``kw_only``, ``slots``, ``__match_args__``): that part compiles
  nothing. ``fields``, ``replace``, ``asdict``, ``is_dataclass`` and pydantic's
  ``TypeAdapter`` (which builds instances itself) see a dataclass as before, and
  ``__dataclass_params__`` says what a ``@dataclass`` with the same arguments would.
* ``__repr__``, ``__eq__``, ``__hash__``, frozen ``__setattr__``/``__delattr__`` and a frozen
  slots class's ``__getstate__``/``__setstate__`` are the functions below, written once,
  closed over the class's tuple of field names: the same results as the generated ones.
* ``__init__``: a class made many times per run (findings, locations, log records) writes
  its own in the class body, as a dataclass keeps one it is given; any other gets a generic
  one that binds arguments as the generated one does (positional and keyword-only
  parameters, defaults, ``default_factory``, ``__post_init__``, the same ``TypeError`` for a
  missing or unexpected argument) and carries the generated one's ``__signature__``.

``typing.dataclass_transform`` tells type checkers that ``record`` makes dataclasses, so
mypy synthesises ``__init__`` and checks every call. A record without a docstring gets
the one ``dataclasses`` writes (``Name(signature)``), made when first read: dataclasses
makes it at import with ``inspect.signature``, slow on a start path.
tests/test_records.py rebuilds every record class of the package with plain
``@dataclass`` and compares the two on instances.
"""

from __future__ import annotations

import dataclasses
import inspect
from _thread import get_ident
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    try:
        from typing import dataclass_transform
    except ImportError:  # Python 3.10: only type checkers read it
        def dataclass_transform(**_: Any) -> Callable[[object], Any]:
            return lambda f: f

_T = TypeVar("_T", bound=type)

_DECLARED: list[type] = []


class _Factory:
    """The default a field made by ``default_factory`` shows in ``__init__``'s signature
    (``<factory>``, as a generated ``__init__`` shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


FACTORY = _Factory()


class _SignatureDoc:
    """The docstring of a record whose class has none: ``Name(signature)``, as dataclasses
    writes it from its generated ``__init__``, made when first read rather than at import
    (``inspect.signature`` of a class is slow; pydantic's JSON Schema leaves such a
    docstring out)."""

    def __get__(self, obj: Any, owner: Any) -> str:
        text = str(_signature(owner, with_self=False)).replace(" -> None", "")
        return owner.__name__ + text


_SIGNATURE_DOC = _SignatureDoc()


class _LazySignature(inspect.Signature):
    """A generic ``__init__``'s signature (what ``inspect.signature`` of the class gives),
    made when first read: building ``Parameter`` objects for every record at import would
    cost more than declaring it. Its two slots are filled from ``build()`` on first use."""

    __slots__ = ("_build",)

    def __init__(self, *args: Any, build: Callable[[], inspect.Signature] | None = None, **kwargs: Any) -> None:
        if build is None:  # made by Signature's own methods (replace): an ordinary one
            super().__init__(*args, **kwargs)
        self._build = build

    def __getattr__(self, name: str) -> Any:  # an unset slot: _parameters, _return_annotation
        if name not in ("_parameters", "_return_annotation"):
            raise AttributeError(name)
        build = self._build
        if build is None:
            raise AttributeError(name)
        made = build()
        self._parameters = made.parameters
        self._return_annotation = made.return_annotation
        return getattr(self, name)

    def replace(self, **changes: Any) -> inspect.Signature:  # type: ignore[override]
        # inspect.signature(cls) replaces: it gets an ordinary Signature
        plain = inspect.Signature(list(self.parameters.values()), return_annotation=self.return_annotation)
        return plain.replace(**changes)

    def __repr__(self) -> str:
        return f"<Signature {self}>"


def declared() -> tuple[type, ...]:
    """Every class declared with ``record`` so far (in the modules imported)."""
    return tuple(_DECLARED)


@overload
def record(cls: _T, /) -> _T: ...


@overload
def record(*, frozen: bool = False, kw_only: bool = False, slots: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, frozen: bool = False, kw_only: bool = False, slots: bool = False) -> Any:
    """``@record`` or ``@record(frozen=..., kw_only=..., slots=...)``: the class a
    ``@dataclass`` with the same arguments makes, built without compiling anything."""

    def wrap(c: Any) -> Any:
        return _declare(c, frozen=frozen, kw_only=kw_only, slots=slots)

    return wrap if cls is None else wrap(cls)


def _declare(cls: Any, *, frozen: bool, kw_only: bool, slots: bool) -> Any:
    documented = bool(cls.__dict__.get("__doc__"))
    if not documented:  # not "" either: dataclasses would call inspect.signature
        cls.__doc__ = "record"
    for name in ("__setattr__", "__delattr__") if frozen else ():
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    # was this class defined with an explicit __hash__? (as dataclasses decides)
    class_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in cls.__dict__))

    # dataclasses refuses a non-frozen class over a frozen base: it is told frozen=False
    # (a frozen dataclass would compile its __setattr__), so the bases say so for the call
    bases = [b.__dict__["__dataclass_params__"] for b in cls.__mro__[1:]
             if "__dataclass_params__" in b.__dict__]
    any_frozen = any(p.frozen for p in bases)
    if bases and any_frozen != frozen:
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one" if any_frozen
                        else "cannot inherit frozen dataclass from a non-frozen one")
    was = [p.frozen for p in bases]
    try:
        for p in bases:
            p.frozen = False
        cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False,
                                    kw_only=kw_only, slots=slots)
    finally:
        for p, f in zip(bases, was, strict=True):
            p.frozen = f
    if not documented:
        cls.__doc__ = _SIGNATURE_DOC
    params = cls.__dataclass_params__
    params.init = params.repr = params.eq = True
    params.frozen = frozen

    flds = dataclasses.fields(cls)
    if len(cls.__dataclass_fields__) != len(flds) and any(
            repr(getattr(f, "_field_type", "")) == "_FIELD_INITVAR" for f in cls.__dataclass_fields__.values()):
        raise TypeError(f"record {cls.__qualname__}: an InitVar needs @dataclass")
    if "__init__" not in cls.__dict__:
        _set(cls, "__init__", _init(cls, flds, frozen))
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


def _set(cls: Any, name: str, fn: Any) -> None:
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


def _hash(cls: Any, values: Callable[[object], tuple[object, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
    return __hash__


def _setattr(cls: Any, names: frozenset[str]) -> Callable[[object, str, object], None]:
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _delattr(cls: Any, names: frozenset[str]) -> Callable[[object, str], None]:
    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


def _getstate(cls: Any, names: tuple[str, ...]) -> Callable[[object], list[object]]:
    def __getstate__(self: object) -> list[object]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(cls: Any, names: tuple[str, ...]) -> Callable[[object, list[object]], None]:
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


def _init(cls: Any, flds: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """A generic ``__init__`` for ``cls``: what its generated one does, without compiling it."""
    init_fields = [f for f in flds if f.init]
    positional = [f for f in init_fields if not f.kw_only]
    keyword = [f for f in init_fields if f.kw_only]
    seen_default = None
    for f in positional:
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if has_default:
            seen_default = f
        elif seen_default is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    pos_names = tuple(f.name for f in positional)
    accepted = frozenset(f.name for f in init_fields)
    npos = len(pos_names)
    required_pos = [f.name for f in positional
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    required_kw = [f.name for f in keyword
                   if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    put = object.__setattr__ if frozen else setattr
    post_init = hasattr(cls, "__post_init__")
    missing = dataclasses.MISSING
    qual = f"{cls.__qualname__}.__init__"
    with_defaults = npos - len(required_pos)

    def refuse(args: tuple[object, ...], kwargs: dict[str, Any]) -> None:
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
    # fields not given: set operations in C instead of a loop over the fields
    template = {f.name: None if f.default is missing else f.default for f in flds
                if f.init or f.default is not missing or f.default_factory is not missing}
    position = {name: i for i, name in enumerate(pos_names)}
    factories = tuple((f.name, f.default_factory, position.get(f.name, npos) if f.init else -1)
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

    __init__.__signature__ = _LazySignature(build=lambda: _signature(cls, with_self=True))  # type: ignore[attr-defined]
    __init__.__annotations__ = {**{f.name: f.type for f in init_fields}, "return": None}
    return __init__


def _signature(cls: Any, *, with_self: bool) -> inspect.Signature:
    """The signature of the ``__init__`` dataclasses would generate for ``cls``."""
    P = inspect.Parameter
    init = [f for f in dataclasses.fields(cls) if f.init]
    params = [P("self", P.POSITIONAL_OR_KEYWORD)] if with_self else []
    for f in [f for f in init if not f.kw_only] + [f for f in init if f.kw_only]:
        default = (FACTORY if f.default_factory is not dataclasses.MISSING
                   else P.empty if f.default is dataclasses.MISSING else f.default)
        params.append(P(f.name, P.KEYWORD_ONLY if f.kw_only else P.POSITIONAL_OR_KEYWORD,
                        default=default, annotation=f.type))
    return inspect.Signature(params, return_annotation=None)
