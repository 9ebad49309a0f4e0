"""Whether a Hydra root is a job spec-check can judge: claimed by the framework its configs
name (issue 33). A root config (``train.yaml`` with a ``defaults:`` list) holds little of its
own; what it runs is in the configs it composes. It is read as a ``hydra`` job only when one
of them is a config of a framework spec-check reads (a ``trainer/default.yaml`` naming
``lightning.pytorch.Trainer``), or read as the claimed framework its own decisive evidence
names; the Hydra application of another framework is refused with what was seen, never
linted as a job with nothing to judge (exit 1 under ``--ignore-unknown``, MON-01 errors).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from validator.jobs import evidence as ev
from validator.jobs import hydra, registry

if TYPE_CHECKING:
    from validator.report.model import JSONValue


def judge(kind: str, data: dict[str, JSONValue], path: Path, group: str | None,
          classify: Callable[[JSONValue, Path], str | None]) -> ev.Judgement:
    """A Hydra root (``kind``: a format that ``composes``) is claimed only by the framework
    its configs name. Its own decisive evidence first: a claimed framework's (an
    experiment's ``trainer:`` of Lightning Trainer arguments) makes the file that
    framework's, read by its reader with its defaults list composed beneath; an unclaimed
    framework's refuses it. Otherwise it is a root only when a config its defaults list
    composes is of a framework spec-check reads (``configs/trainer/default.yaml`` naming
    ``lightning.pytorch.Trainer``); a Hydra application of another framework (its own
    ``experiment:``/``system:`` sections, groups of its own classes) is refused with what
    was seen, not read as a job with nothing to judge. ``classify``: the claimed format of
    a config judged alone (``format_detection.claimed_kind``), or None."""
    fmt = registry.BY_NAME[kind]
    found = ev.targets(data)
    rivals = sorted((s for s in (ev.evidence(f, data, group, found) for f in registry.FORMATS
                                 if f.name != kind and f.decisive) if s.score >= ev.BAR),
                    key=lambda s: -s.score)
    if rivals:
        named = ev.named_by_targets(ev.Seen(fmt, [], 0.0), rivals, sections=True)
        if named is not None:
            return ev.Judgement(named, "")
        return ev.Judgement(None, ev.describe(fmt, ev.Seen(fmt, [], 0.0), rivals, data))
    composed = composed_files(data, path, classify)
    if composed is None or any(k is not None for _, k, _ in composed):
        return ev.Judgement(kind, "")
    foreign = sorted((s for _, _, seen in composed for s in seen), key=lambda s: -s.score)
    names = ", ".join(os.path.relpath(p, path.parent) for p, _, _ in composed[:4])
    more = f" and {len(composed) - 4} more" if len(composed) > 4 else ""
    text = ("a Hydra config whose defaults list composes no config of a framework spec-check reads"
            + (f" ({names}{more})" if composed else " (none of the files it names is here)"))
    if foreign:
        s0 = foreign[0]
        text += (f"; seen instead: {s0.fmt.display}"
                 f"{'' if s0.fmt.claimed else ' (a format spec-check does not read)'}: {', '.join(s0.items)}")
    else:
        text += "; no _target_ class or key of a framework spec-check reads in any of them"
    return ev.Judgement(None, text)


MAX_COMPOSED = 40  # configs a root's composition is looked at for whose framework it is


def composed_files(data: JSONValue, path: Path, classify: Callable[[JSONValue, Path], str | None]
                   ) -> list[tuple[Path, str | None, list[ev.Seen]]] | None:
    """The configs ``data``'s defaults list composes (its bases' lists too, a few levels
    deep), each with the claimed format it is of alone (None: no format spec-check reads)
    and the decisive evidence of unclaimed frameworks seen in it: whether a Hydra root is a
    job spec-check can judge (``judge``). None when Hydra could not
    compose it (an option missing from its group, a root ``follow`` does not read): then
    what it is stays unknown, and reading it says why at the entry's line."""
    from validator.io.source import ReadError, parse_yaml, read_text

    out: list[tuple[Path, str | None, list[ev.Seen]]] = []
    seen: set[str] = {os.path.realpath(path)}
    top = os.path.realpath(path.parent).rstrip(os.sep) + os.sep
    roots: set[str] = set()  # config roots found for absolute groups (safe_root-checked)
    todo: list[tuple[Path, JSONValue, int]] = [(path, data, 0)]
    while todo and len(out) < MAX_COMPOSED:
        here, d, depth = todo.pop(0)
        for group, option in hydra.entries(d):
            if group is None and "/" in option.strip("/"):
                head, option = option.rsplit("/", 1)
                group = head or "/"
            target, root = hydra.resolve(here, group, option)
            key = os.path.realpath(target)
            if root is not None and not hydra.safe_root(root, here, group, option):
                return None  # a composition ``follow`` refuses to read: its LINT-00 says so
            if root is not None:
                roots.add(os.path.realpath(root).rstrip(os.sep) + os.sep)
            elif not key.startswith((top, *roots)):
                # never opened: only configs of the root's folder or a config root above it
                # (``- ../../x`` names a file this run was not given)
                continue
            if key in seen:
                continue
            if not target.is_file():
                if group is not None and target.parent.is_dir() and "${" not in option:
                    return None  # an option its group lacks: Hydra cannot compose it (LINT-00)
                continue
            seen.add(key)
            try:
                sub = parse_yaml(read_text(target), str(target)).data
            except (ReadError, RecursionError, ValueError, TypeError):
                continue
            if not isinstance(sub, dict):
                continue
            kind = classify(sub, target)
            foreign = [] if kind else [
                s for s in (ev.evidence(f, sub, target.parent.name) for f in registry.FORMATS
                            if not f.claimed and f.decisive) if s.score >= ev.BAR]
            out.append((target, kind, foreign))
            if kind is None and depth < 2 and isinstance(sub.get("defaults"), list):
                todo.append((target, sub, depth + 1))
            if len(out) >= MAX_COMPOSED:
                break
    return out
