"""Decisive evidence: whether a file is the format the key counts picked, or another
framework's that happens to use the same section names.

Each format's evidence is part of its descriptor (``registry.FORMATS``); this module
looks for it and judges.

Frameworks share section names: ``trainer:`` is Lightning's, but also verl's, Levanter's
and Model Garden's; ``task:`` is Model Garden's and fairseq's; ``model:`` is everyone's.
A section name alone therefore decides nothing. What does is evidence only one framework
leaves (``registry.Format``):

* ``targets``: the classes a Hydra ``_target_`` / LightningCLI ``class_path`` names, by
  package (``lightning.pytorch.Trainer`` is Lightning, ``composer.Trainer`` Composer,
  ``verl.trainer.config.AlgoConfig`` verl). A class states outright which program reads
  the file, so it outweighs any count of key names;
* ``keys``: top-level keys no other framework has (NeMo's ``exp_manager``, llm-foundry's
  ``train_loader``);
* ``sections``: inside a shared section, keys only this framework has there (Lightning's
  ``trainer.accelerator``/``devices``/``precision``, Model Garden's
  ``trainer.steps_per_loop``); the section counts when at least two of them are there and
  most of the section is the framework's.

Frameworks spec-check does not read (``claimed=False``: verl, fairseq, a plain Composer
trainer) are described the same way, so that their evidence can be *seen* and named in a
refusal rather than the file being misread as the claimed format whose section names it
happens to use. ``judge`` scores a candidate format against the alternatives; below the
bar the file is refused (passed over with ``--ignore-unknown``) with what was seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.jobs import registry
from validator.jobs.keys import close_match
from validator.jobs.registry import Format

if TYPE_CHECKING:
    from validator.report.model import JSONValue

MAX_NODES = 5000  # nodes walked looking for _target_ / class_path (a hostile file is cut short)
BAR = 1.0  # decisive evidence a format needs, and by which it must beat every alternative
TARGET_WEIGHT = 3.0  # a class named outright outweighs key names


@dataclass
class Seen:
    """The decisive evidence of one format found in a file: what, and its weight."""

    fmt: Format
    items: list[str]
    score: float


def targets(data: JSONValue) -> list[tuple[str, tuple[object, ...]]]:
    """Every ``_target_`` / ``class_path`` string in ``data``, with its key path."""
    out: list[tuple[str, tuple[object, ...]]] = []
    stack: list[tuple[JSONValue, tuple[object, ...]]] = [(data, ())]
    seen = 0
    while stack and seen < MAX_NODES:
        node, path = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("_target_", "class_path") and isinstance(v, str):
                    out.append((v, (*path, k)))
                elif isinstance(v, (dict, list)):
                    stack.append((v, (*path, k)))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    stack.append((v, (*path, i)))
    return sorted(out, key=lambda t: str(t[1]))


def _fairseq_choices(data: dict[str, JSONValue]) -> list[str]:
    """fairseq's dataclass choice (``task: {_name: audio_pretraining}``) in its sections."""
    return [f"{k}._name" for k, v in data.items() if isinstance(v, dict) and "_name" in v][:3]


def evidence(fmt: Format, data: dict[str, JSONValue], group: str | None = None,
             found: list[tuple[str, tuple[object, ...]]] | None = None) -> Seen:
    """``fmt``'s decisive evidence in ``data``. ``group``: the Hydra config group the file
    is composed under (``trainer`` for ``configs/trainer/ddp.yaml``), whose keys are then
    that section's."""
    items: list[str] = []
    score = 0.0
    found = targets(data) if found is None else found
    if fmt.targets:
        rx = re.compile(fmt.targets)
        mine = sorted({t for t, _ in found if rx.match(t)})
        if mine:
            score += TARGET_WEIGHT
            items.append("_target_ " + ", ".join(mine[:3]) + (" ..." if len(mine) > 3 else ""))
    keys = [k for k in data if isinstance(k, str)]
    top = [k for k in keys if k in fmt.keys]
    if top:
        score += len(top)
        items.append("keys " + ", ".join(top[:4]))
    for sect, own in fmt.sections.items():
        # a config-group file (configs/trainer/ddp.yaml), or a file of Lightning Trainer
        # arguments copied out of its folder: its keys are the section's
        alone = sect not in data and (group == sect or sect in fmt.hydra_groups)
        block = data if alone else data.get(sect)
        if not isinstance(block, dict) or not block:
            continue
        # a likely typo of a key only it has counts (``precison``), inside a real section
        hit = [k for k in block if isinstance(k, str)
               and (k in own or (block is not data and len(block) <= 200 and close_match(k, own)))]
        # at least two, and a quarter of the section (a verl ``trainer:`` with a ``logger``
        # is no Lightning Trainer); or one, in a section all of whose keys the format has
        if (len(hit) >= 2 and len(hit) * 4 >= len(block)) or (hit and _all_known(fmt, sect, block)):
            score += 1.0
            name = f"{sect} keys at the top level" if block is data else f"{sect}:"
            items.append(f"{name} {', '.join(hit[:4])}")
    if fmt.class_path_beside and fmt.class_path_beside in data and any(p[-1] == "class_path" for _, p in found):
        # LightningCLI's syntax (jsonargparse, which LitGPT's CLI uses too: only beside a
        # ``trainer:``), whatever class it names
        score += 1.0
        items.append("class_path (LightningCLI)")
    if fmt.dataclass_choices:
        choices = _fairseq_choices(data)
        if choices:
            score += len(choices)
            items.append("dataclass choices " + ", ".join(choices))
    return Seen(fmt, items, score)


def _all_known(fmt: Format, sect: str, block: dict[str, JSONValue]) -> bool:
    from validator.jobs.keys import catalogue

    cat = catalogue(fmt.catalogue) if fmt.catalogue and fmt.whole_sections else None
    known = cat.known(sect) if cat is not None else None
    return known is not None and bool(known) and all(k in known or k == "_target_" for k in block)


@dataclass
class Judgement:
    kind: str | None
    why: str  # what was seen, in words (for a refusal)


def judge(kind: str, data: dict[str, JSONValue], group: str | None = None) -> Judgement:
    """Keep ``kind`` (the format the markers and key counts picked) only when its evidence
    holds against every alternative: no other format's decisive evidence at least as
    strong, and, for a format recognized by shared section names, evidence of its own."""
    fmt = registry.BY_NAME.get(kind)
    if fmt is None or not isinstance(data, dict):
        return Judgement(kind, "")
    found = targets(data)
    mine = evidence(fmt, data, group, found)
    rivals = [s for s in (evidence(f, data, group, found) for f in registry.FORMATS
                          if f.name != kind and f.decisive and not (fmt.family and f.family == fmt.family))
              if s.score >= BAR]
    rivals.sort(key=lambda s: -s.score)
    strongest = rivals[0] if rivals else None
    refused = (fmt.needs_evidence and mine.score < BAR) or (
        strongest is not None and strongest.score >= mine.score
    )
    if not refused:
        return Judgement(kind, "")
    # a Hydra config (a ``defaults:`` list) names its framework by sections too: an
    # experiment's ``trainer:`` of Lightning arguments beside ``task: {_target_: mylab...}``
    named = named_by_targets(mine, rivals, sections=isinstance(data.get("defaults"), list))
    if named is not None:
        return Judgement(named, "")
    return Judgement(None, describe(fmt, mine, rivals, data))


def named_by_targets(mine: Seen, rivals: list[Seen], sections: bool = False) -> str | None:
    """The format a refused candidate's file really is, when its ``_target_`` classes say
    so outright: a Hydra experiment's ``task: {_target_: ...}`` made Model Garden the
    candidate by its section name, while ``_target_: pytorch_lightning.Trainer`` names the
    program that reads the file. Kept only when one claimed format's evidence includes a
    class it names (or, with ``sections``, for a Hydra config, a section of keys only it
    has) and beats every other format's (the candidate's too); an unclaimed framework's
    evidence (verl, Composer) as strong or stronger still refuses the file."""
    if not rivals:
        return None
    best = rivals[0]
    if not (best.fmt.claimed and best.fmt.reader and not best.fmt.composes
            and (sections or (best.score >= TARGET_WEIGHT and any(i.startswith("_target_ ") for i in best.items)))):
        return None
    if best.score <= mine.score or any(s.score >= best.score for s in rivals[1:]):
        return None
    return best.fmt.name


def describe(fmt: Format, mine: Seen, rivals: list[Seen], data: dict[str, JSONValue]) -> str:
    """A refusal in words: what was seen of each format, and why that is not enough."""
    shared = [k for k in ("trainer", "task", "model", "data", "optimizer") if k in data]
    parts = []
    if rivals:
        parts.append("; ".join(
            f"{s.fmt.display}{'' if s.fmt.claimed else ' (a format spec-check does not read)'}: "
            + ", ".join(s.items) for s in rivals[:3]))
    own = ", ".join(mine.items) if mine.items else "nothing decisive"
    names = ", ".join(s + ":" for s in shared)
    text = (f"it looks like {fmt.display} only by names frameworks share ({names}); "
            if shared else f"it looks like {fmt.display} only by key names; ")
    text += f"{fmt.display} evidence: {own}"
    if parts:
        text += "; seen instead: " + parts[0]
    return text
