"""The bundled spec, fact catalogue and rule pack, compiled once and cached by digest.

Parsing ``spec/`` and ``rules/`` with the line-tracking YAML reader, validating every
rule and cross-checking it against the spec and the fact catalogue was the largest step
of ``spec-check check`` before the probe, on every run, for files that change only with a
release. Here that work is done once and its result kept as JSON in a per-user cache;
later runs read the JSON (a few ms; no YAML library, no pydantic).

The YAML stays the source of truth; the cache is trusted only when it is certainly the
compile of the files and code in hand:

* **Key**: SHA-256 over every file under the bundled ``spec/`` and ``rules/`` (relative
  path and bytes), the source of every module the compile runs (``COMPILER_MODULES``:
  a change to a check may reject a pack that once loaded), the tool and cache-format
  version, the data directories' paths (the rule files are named by path) and the
  requested spec and pack versions. Any change is a different key, so a stale entry is
  never found, only recompiled.
* **Integrity**: an entry's first line is the SHA-256 of the rest; a truncated, edited
  or unreadable entry is recompiled (and rewritten), never used. Objects are rebuilt
  from JSON, never unpickled, and a compile is cached only when its JSON round-trip
  gives back equal objects.
* **Errors keep file:line**: a pack that does not load is never cached, so every run
  reports it as the loader does, at file:line.
* **Location**: ``$SPEC_CHECK_CACHE_DIR`` if set (``off`` turns the cache off), else
  ``$XDG_CACHE_HOME/spec-check`` if that directory is the user's own, else
  ``~/.cache/spec-check`` of the effective user (from the password database, not
  ``$HOME``: ``sudo spec-check`` must not read or write the invoking user's cache). The
  directory is made 0700; it and every entry must belong to the effective user and be
  writable by no one else, or the cache is not used. Nothing is written anywhere else;
  at most 32 entries are kept, the least recently used go.
* **Read-only homes, installs and concurrent runs**: an entry is written to a temporary
  file in the cache directory and renamed into place, so a reader sees a whole entry or
  none; two runs that compile at once both write whole entries of the same content.
  Any failure to read or write is silent and costs only the compile.

A custom pack (``--rules DIR``) is compiled on every run as before (it is the file a
user is editing), against the cached spec and catalogue.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

try:  # CPython's own SHA-256: the same digest as hashlib's, without loading OpenSSL (start-up)
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.10, 3.11
    except ImportError:
        from hashlib import sha256

from validator import __version__
from validator.io.resources import rules_dir, spec_dir

if TYPE_CHECKING:  # types only: the compile stays light on the start path
    from validator.report.model import JSONValue
    from validator.rules.rulemodel import Condition, FactInfo, Rule, RulePack, Spec

    # (spec, fact catalogue, rule pack: None where not asked for)
    Compiled = tuple[Spec, dict[str, FactInfo], RulePack | None]


class _Digest(Protocol):
    """What ``_hash_file`` feeds: a hashlib object."""

    def update(self, data: bytes, /) -> None: ...

FORMAT = "1"  # bump when the entry layout changes
COMPILER_MODULES = (
    "__init__.py", "errors.py", "lazy.py",
    "io/__init__.py", "io/resources.py", "io/safeio.py", "io/source.py", "io/yamlfile.py",
    "values/__init__.py", "values/numbers.py", "values/units.py",
    "rules/__init__.py", "rules/compiled.py", "rules/formulas.py", "rules/loader.py", "rules/operators.py",
    "rules/rulemodel.py", "rules/spec.py", "rules/validation_models.py",
)
"""Modules (under validator/) whose code decides what a compile gives or rejects;
tests/test_compiled.py checks that a compile imports no other module of validator."""

_PKG = Path(__file__).resolve().parent.parent  # validator/ (this module is validator/rules/compiled.py)
_MAGIC = b"spec-check-compiled "


# ---- the entry point ----------------------------------------------------------------------


def load_bundled(spec_version: str, rules_version: str | None = None, *,
                 pack: bool = True) -> Compiled:
    """``(spec, fact catalogue, rule pack)`` for a run of the bundled pack, as
    ``load_spec``, ``load_fact_catalogue`` and ``load_pack`` give them (the pack is None
    with ``pack=False``). Raises what they raise, at file:line."""
    key = _key(spec_version, rules_version if pack else "-")
    entry = _read(key) if key is not None else None
    if entry is not None:
        try:
            return _rebuild(entry, pack)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # not what this code writes: recompile
    spec, catalogue, rule_pack = _compile(spec_version, rules_version, pack)
    if key is not None:
        body = _dump(spec, catalogue, rule_pack)
        if body is not None:
            _write(key, body)
    return spec, catalogue, rule_pack


def _compile(spec_version: str, rules_version: str | None, pack: bool) -> Compiled:
    from validator.rules.loader import load_pack
    from validator.rules.spec import load_fact_catalogue, load_spec

    spec = load_spec(spec_version)
    catalogue = load_fact_catalogue()
    rule_pack = load_pack(spec, catalogue, rules_version=rules_version) if pack else None
    return spec, catalogue, rule_pack


# ---- JSON, and the objects rebuilt from it ---------------------------------------------------


def _dump(spec: Spec, catalogue: dict[str, FactInfo], rule_pack: RulePack | None) -> bytes | None:
    """The compile as JSON, or None where JSON would not give the same objects back."""
    from validator.rules.rulemodel import plain

    data = {
        "spec": plain(spec),
        "catalogue": {name: plain(info) for name, info in catalogue.items()},
        "pack": None if rule_pack is None else {
            "id": rule_pack.id, "spec_version": rule_pack.spec_version, "digest": rule_pack.digest,
            "files": list(rule_pack.files), "rules": [plain(r) for r in rule_pack.rules],
        },
    }
    try:
        body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        again = _rebuild(json.loads(body), rule_pack is not None)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    if again != (spec, catalogue, rule_pack):
        return None
    return body


def _rebuild(data: dict[str, JSONValue], pack: bool) -> Compiled:
    from validator.rules.rulemodel import (
        Check,
        Condition,
        FactInfo,
        IfEmpty,
        Parameter,
        Requirement,
        Rule,
        RulePack,
        Spec,
    )

    s = data["spec"]
    spec = Spec(spec_version=s["spec_version"], title=s["title"], status=s["status"],
                requirements=[Requirement(**r) for r in s["requirements"]],
                parameters={k: Parameter(**p) for k, p in s["parameters"].items()})

    def fact(d: dict[str, JSONValue]) -> FactInfo:
        return FactInfo(d["name"], d["type"], d["unit"], d["label"],
                        {k: fact(v) for k, v in d["fields"].items()}, d["values"])

    catalogue = {k: fact(v) for k, v in data["catalogue"].items()}
    if not pack:
        return spec, catalogue, None

    def conditions(items: list[dict[str, JSONValue]] | None) -> list[Condition] | None:
        return None if items is None else [Condition(**c) for c in items]

    def rule(d: dict[str, JSONValue]) -> Rule:
        return Rule(**{**d, "check": Check(**d["check"]), "when": conditions(d["when"]),
                       "where": conditions(d["where"]), "filter": conditions(d["filter"]),
                       "if_empty": None if d["if_empty"] is None else IfEmpty(**d["if_empty"])})

    p = data["pack"]
    rule_pack = RulePack(p["id"], p["spec_version"], tuple(rule(r) for r in p["rules"]), p["digest"],
                         tuple(p["files"]))
    return spec, catalogue, rule_pack


# ---- the key --------------------------------------------------------------------------------


def _key(spec_version: str, rules_version: str | None) -> str | None:
    """The digest of everything the compile reads, or None when a file cannot be read
    (the compile then runs, and says what is wrong). Plain strings and os.scandir: this
    runs on every start-up."""
    h = sha256()
    h.update(f"{FORMAT}\0{__version__}\0{spec_version}\0{rules_version}\0".encode())
    pkg = str(_PKG)
    try:
        for name in COMPILER_MODULES:
            _hash_file(h, os.path.join(pkg, name), name)
        for root in (str(spec_dir()), str(rules_dir())):
            h.update(f"\0root\0{root}\0".encode("utf-8", "surrogateescape"))
            for rel in _files(root, ""):
                _hash_file(h, os.path.join(root, rel), rel)
    except OSError:
        return None
    return h.hexdigest()


def _files(root: str, rel: str) -> list[str]:
    """Every file under ``root/rel``, as sorted relative paths."""
    out: list[str] = []
    with os.scandir(os.path.join(root, rel) if rel else root) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        sub = f"{rel}/{e.name}" if rel else e.name
        if e.is_dir():
            if e.name != "__pycache__":
                out.extend(_files(root, sub))
        else:
            out.append(sub)
    return out


def _hash_file(h: _Digest, path: str, name: str) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        data = b"\0missing"
    h.update(f"\0file\0{name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
    h.update(data)


# ---- the cache directory ----------------------------------------------------------------------


def cache_dir() -> Path | None:
    """Where entries live, or None when the cache is off or no safe place is known."""
    env = os.environ.get("SPEC_CHECK_CACHE_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "no", "false") else Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg) and _own_dir(Path(xdg), private=False):
        return Path(xdg) / "spec-check"
    try:
        import pwd

        home = pwd.getpwuid(os.geteuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return None
    if not home or not os.path.isabs(home) or home == "/":
        return None
    return Path(home) / ".cache" / "spec-check"


def _own_dir(path: Path, *, private: bool = True) -> bool:
    """A real directory (no symlink) of the effective user that no one else can write to."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    writable_by_others = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not (private and writable_by_others))


def _entry_path(key: str) -> Path | None:
    d = cache_dir()
    return None if d is None else d / f"pack-{key}.json"


def _read(key: str) -> dict[str, JSONValue] | None:
    path = _entry_path(key)
    if path is None or not _own_dir(path.parent):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(64 << 20)
        if st.st_mtime < time.time() - 60:  # in use: the last entries pruned (see _prune)
            with contextlib.suppress(OSError):
                os.utime(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    head, _, body = raw.partition(b"\n")
    if head != _MAGIC + sha256(body).hexdigest().encode():
        return None  # truncated, edited or of another format: recompile
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _write(key: str, body: bytes) -> None:
    path = _entry_path(key)
    if path is None:
        return
    d = path.parent
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return
    if not _own_dir(d):
        return
    import tempfile

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".pack-", suffix=".tmp", dir=d)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _prune(d, keep=path)


def _prune(d: Path, keep: Path, limit: int = 32) -> None:
    """At most ``limit`` entries: those used longest ago go (a read marks an entry used;
    each data or code change, and each installation, makes a new key)."""
    try:
        entries = [p for p in d.iterdir() if p.name.startswith("pack-") and p.suffix == ".json" and p != keep]
        if len(entries) < limit:
            return
        entries.sort(key=lambda p: p.stat().st_mtime)
        for p in entries[: len(entries) - limit + 1]:
            p.unlink()
    except OSError:
        pass
