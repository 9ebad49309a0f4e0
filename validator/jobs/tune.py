"""``tune run``: torchtune's launcher, read the way torchtune 0.6.1 runs it.

``tune run [TORCHRUN-OPTIONS] RECIPE --config CONFIG [key=value ...]``
(``torchtune/_cli/run.py``) copies every option of torchrun's own argument parser, so
the options before the recipe are torchrun's (``--nnodes``, ``--nproc_per_node``,
``--max_restarts``, ``--rdzv_endpoint``, ...). With any of them the recipe is started
through ``torch.distributed.run``, exactly as torchrun starts a script; with none it
runs in the ``tune`` process itself: one process, one GPU, nothing restarts it.

``RECIPE`` is a built-in recipe name (``full_finetune_distributed``) or the user's own
recipe file or module. ``--config`` names a built-in config when it equals one of
torchtune's registered config names (``llama3_1/8B_full``), which is then the YAML
shipped inside the torchtune package, not a file of the job; any other value is a
path handed to ``OmegaConf.load``. The ``key=value`` words after it override the
config's keys (OmegaConf dot-list), so they win over the file, as on the command line.

The registered names come from the torchtune key catalogue
(``validator/jobs/keys/torchtune.json``, ``builtin``), which
``scripts/gen_key_catalogues.py`` reads from ``torchtune/_recipe_registry.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from validator.jobs.base import Ctx
    from validator.jobs.shellvars import Vars, Word
    from validator.report.model import JSONValue

Flags = dict[str, tuple[str, int]]
# torchrun's options that take no value (torch/distributed/run.py: action=check_env)
_TORCHRUN_SWITCHES = {"standalone", "module", "no-python", "run-path", "virtual-local-rank"}
_TORCHRUN_SHORT = {"m": "module", "r": "redirects", "t": "tee"}
_OVERRIDE = re.compile(r"~?([A-Za-z_][\w.]*)=(.*)", re.S)
_STOP = re.compile(r"^\d*[<>]")  # a redirection ends the recipe's arguments


def is_tune_run(words: list[Word], i: int) -> bool:
    t = words[i].text
    return (t == "tune" or t.endswith("/tune")) and i + 1 < len(words) and words[i + 1].text == "run"


def harvest(words: list[Word], i: int, v: Vars, flags: Flags) -> int:
    """Read ``tune run ...`` starting at ``words[i]`` (``tune``) into ``flags``; returns
    the index after the last word it read. torchrun options are recorded under their
    normalized names (as torchrun's are), and ``@tune:*`` keys hold the recipe, the
    config and the overrides, each with its line."""
    line = words[i].line
    flags.setdefault("@launcher:tune", ("tune run", line))
    i += 2
    distributed = False
    while i < len(words):
        t = words[i].text
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t[2:].partition("=")
        elif re.fullmatch(r"-[A-Za-z]\S*", t):
            name, eq, val = _TORCHRUN_SHORT.get(t[1], t[1]), ("=" if len(t) > 2 else ""), t[2:]
        else:
            break
        key = name.replace("_", "-")
        at = words[i].line
        if not eq and key not in _TORCHRUN_SWITCHES and i + 1 < len(words):
            i += 1
            val = words[i].text
        distributed = True
        resolved = v.expand(val or "true")
        if resolved is not None:
            flags.setdefault(key, (resolved, at))
        else:
            flags.setdefault(key + "?unresolved", (val, at))
        i += 1
    if distributed:
        # tune run hands these options to torch.distributed.run: the job is torchrun's
        flags.setdefault("@launcher:torchrun", ("tune run", line))
        flags.setdefault("@tune:distributed", ("true", line))
    if i >= len(words):
        return i
    recipe = v.expand(words[i].text)
    flags.setdefault("@tune:recipe", (recipe if recipe is not None else words[i].text, words[i].line))
    i += 1
    while i < len(words) and not _STOP.match(words[i].text):
        t, at = words[i].text, words[i].line
        if (t == "--config" and i + 1 < len(words)) or t.startswith("--config="):
            raw = t.partition("=")[2] if "=" in t else words[i + 1].text
            i += 0 if "=" in t else 1
            cfg = v.expand(raw)
            if cfg is None:
                flags.setdefault("@tune:config?unresolved", (raw, at))
            else:
                flags.setdefault("@tune:config", (cfg, at))
        else:
            m = _OVERRIDE.fullmatch(t)
            if m and not t.startswith("~"):
                given = v.expand(m.group(2))
                if given is not None:
                    flags.setdefault("@tune:set:" + m.group(1), (given, at))
        i += 1
    return i


def apply(ctx: Ctx, flags: Flags) -> None:
    """The job facts a ``tune run`` line sets: how many nodes and GPUs (torchrun's options,
    read by ``launch._torchrun``; or one process on one GPU), the config it names (read
    when it is a file of the job; said to be torchtune's own when it is a built-in name),
    and the ``key=value`` overrides, read as torchtune config keys that beat the file."""
    from validator.jobs.keys import catalogue

    m = ctx.model
    m.formats.append("tune_run")
    m.torch = True
    at = flags["@launcher:tune"][1]
    recipes: dict[str, JSONValue] = {}
    cat = catalogue("torchtune")
    if cat is not None:
        recipes = cat.builtin.get("recipes", {})
    label = f"torchtune {cat.version}" if cat else "torchtune"
    recipe = flags.get("@tune:recipe")
    if "@tune:distributed" not in flags:
        why = "tune run without torchrun options: the recipe runs in the tune process (one process, one GPU)"
        m.set("job.resources.nodes", 1, ctx.file, at, why)
        m.set("job.resources.gpus_per_node", 1, ctx.file, at, why)
        m.set("job.recovery.max_restarts", 0, ctx.file, at,
              "tune run without torchrun options: no launcher restarts the process")
    else:
        if recipe and recipe[0] in recipes and not recipes[recipe[0]].get("distributed", True):
            m.error(ctx.file, recipe[1], f"tune run: recipe {recipe[0]} does not support distributed "
                    f"training ({label}); tune run refuses it with torchrun options")
        _standalone(ctx, flags, label)
    if recipe is None:
        m.error(ctx.file, at, "tune run: no recipe named; nothing is launched")
        return
    _config(ctx, flags, recipe, recipes, label)
    _overrides(ctx, flags)


def _standalone(ctx: Ctx, flags: Flags, label: str) -> None:
    """Without ``--rdzv_endpoint`` tune run starts torchrun ``--standalone`` (a rendezvous on
    the node itself, ``torchtune/_cli/run.py``), which ignores ``--rdzv_backend`` and
    ``--rdzv_id``: with ``--nnodes`` above one, each node waits for the others at its own
    localhost and the nodes never meet."""
    from validator.jobs import common as c

    if any(k.startswith("rdzv-endpoint") for k in flags):
        return
    nn = flags.get("nnodes")
    top = c.as_int(nn[0].split(":")[-1]) if nn else None
    if nn and top and top > 1:
        ctx.model.add("job.config.ignored_keys",
                      f"tune run --nnodes {nn[0]} without --rdzv_endpoint: tune run then starts torchrun "
                      "--standalone, a rendezvous on each node's localhost, so the nodes never meet "
                      f"(--rdzv_backend and --rdzv_id are ignored; {label} _cli/run.py)",
                      ctx.file, nn[1], "tune run: --rdzv_endpoint missing")


def _config(ctx: Ctx, flags: Flags, recipe: tuple[str, int], recipes: dict[str, JSONValue], label: str) -> None:
    m = ctx.model
    hit = flags.get("@tune:config")
    if hit is None:
        unresolved = flags.get("@tune:config?unresolved")
        if unresolved:
            m.error(ctx.file, unresolved[1], f"tune run --config {unresolved[0]}: the name depends on "
                    "a variable the script does not set before this line; the config is not read")
        else:
            m.error(ctx.file, recipe[1], "tune run: no --config (tune run requires one); "
                    "the recipe's settings are not known")
        return
    name, line = hit
    for cand in (ctx.path.parent / name, Path(name)):
        if cand.is_file():
            ctx.ref(name, "torchtune", line)
            return
    own = recipes.get(recipe[0], {}).get("configs", {})
    builtin = own.get(name) or next(
        (cfgs[name] for r in recipes.values() if name in (cfgs := r.get("configs", {}))), None)
    if builtin:
        m.error(ctx.file, line, f"tune run --config {name}: a built-in config of {label} ({builtin} "
                "inside the package), not a file of this job, so its settings are not read; "
                f"copy it with `tune cp {name} FILE.yaml`, name the copy, and lint it")
    else:
        m.error(ctx.file, line, f"tune run --config {name}: not a file of this job, nor a built-in "
                f"config name of {label}; the config is not read")


def _overrides(ctx: Ctx, flags: Flags) -> None:
    """``key=value`` after the config: a torchtune config of their own, read as command-line
    values (they override the config file, in any read order)."""
    from validator.io.source import Tree
    from validator.jobs import recipes
    from validator.jobs.base import Ctx as _Ctx
    from validator.jobs.coerce import typed_value

    data: dict[str, JSONValue] = {}
    lines: dict[tuple[object, ...], int] = {}
    for k, (val, line) in flags.items():
        if not k.startswith("@tune:set:"):
            continue
        path = tuple(k.removeprefix("@tune:set:").split("."))
        node = data
        for part in path[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                break
            node = nxt
        else:
            node[path[-1]] = typed_value(val)
            for n in range(1, len(path) + 1):
                lines.setdefault(path[:n], line)
    if not data:
        return
    sub = _Ctx(ctx.path, ctx.file, ctx.text, ctx.model, ctx.follow, Tree(ctx.file, data, lines))
    ctx.model.overriding = True
    try:
        recipes.read_torchtune(sub, overrides=True)
    finally:
        ctx.model.overriding = False
