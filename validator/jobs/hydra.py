"""Hydra's composition: a config whose ``defaults:`` list names other configs.

A Hydra root config (``configs/train.yaml``) holds little itself: its ``defaults`` list
picks one option file per group (``trainer: default`` is ``configs/trainer/default.yaml``,
``callbacks: default`` is ``configs/callbacks/default.yaml``), which Hydra composes under
the group's key. Linting the root reads each picked file that exists, as part of the job,
each by its own format (a file in ``trainer/`` is read as the Lightning trainer, see
``Format.hydra_groups`` in registry.py). Entries that pick nothing (``logger: null``) are skipped;
``override``/``optional`` prefixes are dropped. A group path is relative to the config
that names it (``- default`` in ``trainer/ddp.yaml`` is ``trainer/default.yaml``, the base
the option builds on); a leading ``/`` makes it absolute, from the config root (an
``experiment/example.yaml`` naming ``override /trainer: default``).

**Composition order** (hydra.cc, "The Defaults List" and "Changes to default composition
order", Hydra 1.1 and later): the configs of a defaults list are merged in list order, a
later one overriding an earlier one, and ``_self_`` marks where the naming config's own
values go. Without ``_self_`` they go last: the config overrides everything its defaults
list names (``trainer/ddp.yaml``'s ``devices: 4`` over its base's ``devices: 1``); with
``_self_`` first, the list's configs override it. Each file followed gets a *layer* in
that order (``JobModel.layers``): a value set by a file of a higher layer wins over one of a
lower layer, in any read order, and only two files of the same layer that disagree are a
conflict. A nested list is ordered inside its entry's slot.

**Packages** (hydra.cc, "Packages"; Hydra 1.1 and later): ``GROUP@PACKAGE: OPTION``
(``optim@model.optim: adamw``, ``override /trainer@trainer: gpu``) and ``GROUP/NAME@PACKAGE``
pick the file ``GROUP/OPTION.yaml`` and place its keys at PACKAGE, relative to the package
of the config that names it (``_global_.x``: from the root). The final package is, in
Hydra's order of priority, the defaults list's, else the file's ``# @package`` header,
else its group. So a file of Trainer arguments picked as ``lightning@trainer: gpu`` is the
trainer, and one in ``trainer/`` picked as ``trainer@model.ref: x`` is not. An option list
(``db: [mysql, sqlite]``) picks each file.
"""

from __future__ import annotations

import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from validator.jobs.base import Ctx

if TYPE_CHECKING:
    from validator.report.model import JSONValue

MAX_ENTRIES = 100  # a real defaults list has a dozen; each entry costs a file lookup
MAX_UP = 6  # folders an absolute group path (``/trainer``) may climb to find the config root
# (experiment/generic/imagenette/ssl/byol.yaml is five below it)
SELF = (None, "_self_")
# the packages a defaults list gave the files of the job being read (real path -> dotted
# package, "" for the root): set per job by ``validator.jobs.read_job`` (``placing``)
PLACED: ContextVar[dict[str, str] | None] = ContextVar("hydra_placed", default=None)


def _items(data: JSONValue) -> list[tuple[int, str | None, str]]:
    """(index in the list, group or None for a config named directly, option) of each
    ``defaults`` entry that may pick a file, with ``_self_`` kept in its place. The index
    is the entry's own (an entry that picks nothing, ``logger: null``, still counts), so a
    finding about it points at its line. The ``@PACKAGE`` of an entry is dropped (it says
    where, not which file: ``_entries`` keeps it); an option list picks each option."""
    return [(i, g, o) for i, g, o, _ in _entries(data)]


def _entries(data: JSONValue) -> list[tuple[int, str | None, str, str | None]]:
    """``_items`` with each entry's ``@PACKAGE`` (None when it names none)."""
    out: list[tuple[int, str | None, str, str | None]] = []
    seq = data.get("defaults") if isinstance(data, dict) else None
    for i, e in enumerate(seq[:MAX_ENTRIES] if isinstance(seq, list) else []):
        if isinstance(e, str):
            if e == "_self_":
                out.append((i, *SELF, None))
            else:
                name, _, pkg = e.strip().removeprefix("optional ").strip().partition("@")
                out.append((i, None, name, pkg or None))
        elif isinstance(e, dict) and len(e) == 1:
            (group, option), = e.items()
            group = str(group).removeprefix("override ").removeprefix("optional ").strip()
            group, _, pkg = group.partition("@")  # group@package: the package is where, not which file
            if group == "_self_":
                out.append((i, *SELF, None))
            elif isinstance(option, str) and option:
                out.append((i, group, option, pkg or None))
            elif isinstance(option, list):  # CONFIG_NAMES: each option of the group, in order
                out += [(i, group, o, pkg or None) for o in option[:MAX_ENTRIES] if isinstance(o, str) and o]
    return out


def placed(parent: str, pkg: str) -> str:
    """The package an entry's ``@PKG`` gives, relative to the naming config's package
    ``parent`` ("" for the root); ``_global_`` starts from the root, ``_here_`` is the
    naming config's own package."""
    parts = [] if pkg.startswith("_global_") else [p for p in parent.split(".") if p]
    for p in pkg.split("."):
        if p in ("_global_", "_here_", ""):
            continue
        parts.append(p)
    return ".".join(parts)


def _optional(data: JSONValue, index: int) -> bool:
    seq = data.get("defaults") if isinstance(data, dict) else None
    e = seq[index] if isinstance(seq, list) and index < len(seq) else None
    return isinstance(e, dict) and any(str(k).strip().startswith("optional ") for k in e)


def entries(data: JSONValue) -> list[tuple[str | None, str]]:
    """(group or None for a sibling, option) of each ``defaults`` entry that picks a file."""
    return [(g, o) for _, g, o in _items(data) if (g, o) != SELF]


def package(path: Path, text: str) -> str | None:
    """Where a config's keys are composed (Hydra's ``# @package`` header, before any other
    line): None for ``_global_`` (at the root: an experiment file's ``trainer:`` is the
    trainer), the named package, or by default (``_group_``, Hydra 1.1 and later) the
    folder's group (``trainer`` for configs/trainer/ddp.yaml). A package the defaults list
    that picked the file gave it (``lightning@trainer: gpu``) comes first, as in Hydra."""
    given = PLACED.get()
    if given:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = ""
        if real in given:
            return given[real] or None
    for raw in text.splitlines()[:50]:
        ln = raw.strip()
        if not ln:
            continue
        if not ln.startswith("#"):
            break
        m = re.match(r"#\s*@package\s+(\S+)", ln)
        if m:
            pkg = m.group(1)
            if pkg == "_global_":
                return None
            if pkg != "_group_":
                return pkg.removeprefix("_global_.")
    return path.parent.name or None


def given(path: Path) -> str | None:
    """The package the job's defaults list gave ``path`` (``@PKG``; "" for the root), or
    None where no entry named one: then the header and the folder decide, and a file of
    Trainer arguments alone is the trainer wherever it lies."""
    placed_ = PLACED.get()
    return placed_.get(os.path.realpath(path)) if placed_ else None


def is_root(data: JSONValue, path: Path) -> bool:
    """Whether ``data`` is a Hydra config whose ``defaults`` name files that exist."""
    # a file that exists, or a group folder that does (an option missing from it is a
    # LINT-00 of the composition, not a reason to take the file for no config)
    return any(t.is_file() or (g is not None and t.parent.is_dir())
               for g, o in entries(data) for t in (_target(path, g, o),))


def _target(path: Path, group: str | None, option: str) -> Path:
    return resolve(path, group, option)[0]


def resolve(path: Path, group: str | None, option: str) -> tuple[Path, Path | None]:
    """The file an entry names, and the config root it was found from (for an absolute
    group path: the folder above that holds the group; for a relative one found in a
    folder above the naming config's, that folder; None for one beside it)."""
    name = option if option.endswith((".yaml", ".yml")) else f"{option}.yaml"
    if group is None and option.startswith("/"):  # - /trainer/default: absolute, named directly
        group, name = os.path.split(name.lstrip("/"))
        group = "/" + group
    if group is not None and group.startswith("/"):
        # absolute: from the config root, the nearest folder above that holds the group
        rel = Path(group.lstrip("/")) / name
        base = path.parent
        for _ in range(MAX_UP):
            if (base / rel).is_file() or (base / rel).parent.is_dir():
                return base / rel, base
            if base.parent == base:
                break
            base = base.parent
        return path.parent / rel, None
    rel = Path(name) if group is None else Path(group) / name
    if not (path.parent / rel).is_file():
        # a config picked as ``experiment=generic/ssl/byol`` is in group ``experiment``:
        # Hydra resolves its relative entries (``- base/ssl/byol``) from the group's folder,
        # not from the option's subfolder (hydra/core/default_element.py, get_group_path:
        # the parent's group path, hydra-core 1.3.2); the file alone does not say which
        # folder above is the group's, so the nearest one holding the entry is taken
        base = path.parent.parent
        for _ in range(MAX_UP - 1):
            if (base / rel).is_file():
                return base / rel, base  # the group's folder joins the job, as a root does
            if base.parent == base:
                break
            base = base.parent
    return path.parent / rel, None


def follow(ctx: Ctx) -> None:
    """Follow the configs of ``ctx``'s defaults list, each in its composition layer.

    An absolute group (``override /trainer: default`` in configs/experiment/x.yaml) is
    searched from the config root, the nearest folder above that holds the group, as Hydra
    does; that root joins the job (``JobModel.hydra_roots``), so an experiment linted alone
    is composed with its bases. An option missing from a group folder that exists is a
    config Hydra cannot compose: LINT-00 at the entry's line (a group with no folder here
    may come from a search-path plugin, and is left alone)."""
    model = ctx.model
    data = ctx.tree.data if ctx.tree else None
    items = _items(data)
    if not items:
        return
    here = model.layers.get(os.path.realpath(ctx.path), (0.0, 1.0))
    slots = [(g, o) for _, g, o in items]
    own = slots.index(SELF) if SELF in slots else len(items)  # no _self_: the config goes last
    step = here[1] / (2 * (MAX_ENTRIES + 1))  # a nested list stays inside its entry's slot
    pkgs = [p for *_, p in _entries(data)]
    given = PLACED.get()
    overridden = model.hydra_overridden
    primary = model.hydra_primary.get(os.path.realpath(ctx.path))
    for i, (index, group, option) in enumerate(items):
        if (group, option) == SELF:
            continue
        if primary is not None and group is not None and (
                group.strip("/") in overridden or group.strip("/") == primary):
            # the primary config composed under an experiment: a group the experiment
            # overrides is the experiment's pick, and the experiment slot is the experiment
            continue
        if group is None and "/" in option.strip("/"):
            # CONFIG: group/name named directly (``- trainer/default``, ``- /trainer/gpu@trainer``)
            head, name = option.rsplit("/", 1)
            group, option = head or "/", name
        target, root = resolve(ctx.path, group, option)
        line = ctx.line("defaults", index) if ctx.tree else None
        if root is not None and not safe_root(root, ctx.path, group, option):
            # never opened: a pull request's config must not make a CI runner read a file
            # of its own (hidden folders, "..", above the repository)
            model.error(ctx.file, line, f"defaults names {group}: {option}, searched from {root}: not a config "
                        "root of this repository; not read")
            continue
        if root is not None:
            roots = getattr(model, "hydra_roots", None)
            if roots is not None:
                roots.add(os.path.realpath(root))
        if target.is_file():
            model.layers.setdefault(os.path.realpath(target), (here[0] + (i - own) * here[1], step))
            pkg = pkgs[i]
            if pkg is not None and given is not None:
                given.setdefault(os.path.realpath(target), placed(_own_package(ctx), pkg))
            ctx.ref(os.path.relpath(target, ctx.path.parent), None, line)
        elif group is not None and target.parent.is_dir() and not _optional(data, index) \
                and "${" not in option:
            at = f"@{pkgs[i]}" if pkgs[i] else ""
            model.error(ctx.file, line, f"defaults names {group.lstrip('/')}{at}: {option}, but "
                        f"{os.path.relpath(target, ctx.path.parent)} does not exist in that config group: "
                        "Hydra cannot compose this config, so its settings are unknown")
    _compose_primary(ctx, data, here)


def _compose_primary(ctx: Ctx, data: JSONValue, here: tuple[float, float]) -> None:
    """An experiment (``# @package _global_``, ``override /group: option`` entries) runs
    only inside its primary config: ``python train.py experiment=x`` composes the root's
    defaults list, each group the experiment overrides replaced by its pick, then the
    experiment last (hydra.cc, "Configuring Experiments"). The primary config is the YAML
    file of the config root whose defaults list has the experiment's group (``experiment:
    null``); it is read beneath the experiment (a lower layer), its overridden groups
    left out (``primary`` and ``overridden`` tell ``follow``)."""
    model = ctx.model
    if _own_package(ctx) != "" or not _overrides(data):
        return
    model.hydra_overridden.update(_overrides(data))
    real = os.path.realpath(ctx.path)
    model.hydra_composed.add(real)  # an experiment another one builds on runs alone too
    for root in sorted(model.hydra_roots, key=len):
        if not real.startswith(root.rstrip(os.sep) + os.sep):
            continue
        group = os.path.relpath(real, root).split(os.sep)[0]
        found = _primary_of(Path(root), group)
        if found is None:
            continue
        key = os.path.realpath(found)
        if key in model.layers or key == real:
            return
        model.hydra_primary[key] = group
        model.hydra_composed.add(key)
        model.layers[key] = (here[0] - (2 * MAX_ENTRIES + 2) * here[1], here[1])
        ctx.ref(os.path.relpath(found, ctx.path.parent), None, None)
        return


def _overrides(data: JSONValue) -> set[str]:
    """The groups a config's ``override /group: option`` entries replace."""
    seq = data.get("defaults") if isinstance(data, dict) else None
    out: set[str] = set()
    for e in seq[:MAX_ENTRIES] if isinstance(seq, list) else []:
        if isinstance(e, dict) and len(e) == 1:
            (k, _), = e.items()
            k = str(k).strip()
            if k.startswith("override "):
                out.add(k.removeprefix("override ").strip().strip("/").partition("@")[0])
    return out


_HOOK = re.compile(r"^[ \t]*-[ \t]*(?:optional[ \t]+)?/?([\w/.-]+)[ \t]*:[ \t]*(?:null|~)?[ \t]*(?:#.*)?$", re.M)


def _primary_of(root: Path, group: str) -> Path | None:
    """The primary config in ``root`` whose defaults list has ``group`` (``- experiment:
    null``): the one named like a training entry (``train.yaml``, ``config.yaml``) when
    several have it."""
    from validator.io.source import ReadError, read_text

    found: list[Path] = []
    try:
        names = sorted(os.listdir(root))[:200]
    except OSError:
        return None
    for n in names:
        p = root / n
        if not n.endswith((".yaml", ".yml")) or not p.is_file():
            continue
        try:
            text = read_text(p)
        except (ReadError, OSError):
            continue
        if "defaults" in text and any(m.group(1) == group for m in _HOOK.finditer(text)):
            found.append(p)
    for pref in ("train", "config", "main"):
        for p in found:
            if p.stem.startswith(pref):
                return p
    return found[0] if len(found) == 1 else None


def _own_package(ctx: Ctx) -> str:
    """The package of the config whose defaults list is read, for its entries' relative
    ``@PKG``: the one its own naming entry gave it, else its ``# @package`` header, else
    the root ("" : the primary config a run starts from, or an experiment's ``_global_``)."""
    given = PLACED.get() or {}
    real = os.path.realpath(ctx.path)
    if real in given:
        return given[real]
    for raw in ctx.text.splitlines()[:50]:
        ln = raw.strip()
        if ln and not ln.startswith("#"):
            break
        m = re.match(r"#\s*@package\s+(\S+)", ln)
        if m:
            pkg = m.group(1)
            if pkg == "_group_":
                return ctx.path.parent.name
            return "" if pkg == "_global_" else pkg.removeprefix("_global_.")
    return ""


def safe_root(root: Path, path: Path, group: str | None, option: str) -> bool:
    """Whether an absolute group's config root may join the job: the names hold no
    hidden folder and no ``..``, and the root is not above the repository the config is
    in (the nearest folder above holding ``.git``, where there is one)."""
    parts = [*(group or "").strip("/").split("/"), *option.split("/")]
    if any(p == ".." or p.startswith(".") for p in parts if p):
        return False
    real = os.path.realpath(root)
    d = os.path.realpath(path.parent)
    for _ in range(MAX_UP + 4):
        if os.path.exists(os.path.join(d, ".git")):
            return real == d or real.startswith(d.rstrip(os.sep) + os.sep)
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return True


def read(ctx: Ctx) -> None:
    """A Hydra root config: what it composes (its own keys are read by the group readers)."""
    if os.path.realpath(ctx.path) not in ctx.model.hydra_primary:
        # (the primary config composed under an experiment is the experiment's: no format
        # of its own in the job)
        ctx.model.formats.append("hydra")
    follow(ctx)

