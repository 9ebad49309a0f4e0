"""PREC-02's ignored and misplaced keys, from the frameworks' own key catalogues.

A key a framework does not read does nothing, and in review it looks like a setting.
Three kinds are reported, each at its line (``job.config.ignored_keys``):

* a key in the wrong section: DeepSpeed's ``loss_scale`` written in the ``bf16`` block
  or at the top level, where only the ``fp16`` block has it;
* a likely typo of a known key of that section (``hysterisis`` for ``hysteresis``);
* any other unknown key in a section the framework validates strictly (DeepSpeed's
  ``fp16``/``bf16``/``zero_optimization`` are pydantic models that forbid extra keys,
  Accelerate refuses a config file with unknown keys, Lightning's ``Trainer()`` takes no
  other arguments, Model Garden overrides with ``is_strict=True``, SkyPilot's task
  schema allows no other keys): the catalogue records which, and why, from the source.

Unknown keys elsewhere are left alone: a catalogue lists what the framework's source
reads, and a key it does not list in a non-strict section may still be read by a plugin
or by the user's own script. Refuse rather than guess.
"""

from __future__ import annotations

from validator.jobs.base import Ctx
from validator.jobs.keys import Catalogue, catalogue, close_match

MAX_REPORTED = 50  # entries per file: past that a file is not a config with typos
# flags only Megatron-DeepSpeed has: its own argument set, not upstream Megatron-LM's
FORKS = ("deepspeed", "deepspeed-config", "zero-stage", "@launcher:deepspeed")


def check(
    ctx: Ctx,
    framework: str,
    prefix: tuple[object, ...] = (),
    sections: tuple[str, ...] = (),
    *,
    misplaced: bool = True,
) -> None:
    """Report the misplaced / misspelled / rejected keys of the file (under ``prefix``:
    a DeepSpeed config nested in an HF file) against ``framework``'s catalogue.
    ``sections``: only these (default: the top level and every listed section).
    ``misplaced=False`` where keys moved between sections across releases (torchtitan's
    parallel degrees were once under ``[training]``): a key in another release's place
    is not reported as misplaced, since the file's release is unknown."""
    from validator.jobs import pins

    judged = pins.choose(framework, ctx.path, ctx.model)
    if judged is None or ctx.tree is None:
        return
    cat = judged.catalogue
    data = ctx.get(*prefix) if prefix else ctx.tree.data
    if not isinstance(data, dict):
        return
    names = sections or ("", *sorted(s for s in cat.sections if s and "." not in s))
    found: list[tuple[int, str]] = []
    more = 0  # unknown keys past MAX_REPORTED, counted but not matched (a hostile file)
    for section in names:
        block = data if section == "" else data.get(section)
        known = cat.known(section)
        if not isinstance(block, dict) or known is None:
            continue
        # the version is unknown (or no catalogued release matches it): a key some
        # catalogued release has is valid in a release the job may run, so not reported
        also = frozenset().union(*(c.known(section) or frozenset() for c in judged.accepted))
        for key in block:
            if not isinstance(key, str) or key in known or key in also:
                continue
            if len(found) >= MAX_REPORTED:
                more += 1
                continue
            where = (*prefix, key) if section == "" else (*prefix, section, key)
            why = _why(cat, section, key, known, misplaced)
            if why is None and judged.exact:
                why = _other_release(framework, cat, section, key)
            if why:
                line = ctx.line(*where) or 0
                name = key if section == "" else f"{section}.{key}"
                found.append((line, f"{name} at line {line}: {why}"))
    if not found and not more and "no pinned version found" not in judged.how:
        # nothing to report at a pinned release: the pass still says which it was judged at
        judged_at = ctx.model.__dict__.setdefault("keys_judged", {})
        judged_at.setdefault(cat.framework, f"{cat.framework}: keys of {cat.label}; {judged.how}")
    for line, text in sorted(found):  # in file order: the finding points at the first
        ctx.model.add("job.config.ignored_keys", text, ctx.file, line or None,
                      f"{cat.framework}: keys of {cat.label}; {judged.how}")
    if more:
        ctx.model.add("job.config.ignored_keys",
                      f"and {more} more keys {cat.label} does not have (not checked one by one)",
                      ctx.file, None, f"{cat.framework}: keys of {cat.label}")


def flags(ctx: Ctx, framework: str, found: dict[str, tuple[str, int]]) -> None:
    """Command-line flags a framework does not have (Megatron-LM's ``pretrain_gpt.py``):
    only likely typos of its flags, since a script may add flags of its own
    (``extra_args_provider``) and launcher flags share the line."""
    import re

    cat = catalogue(framework)
    if cat is None:
        return
    if framework == "megatron" and any(k in found for k in FORKS):
        return  # Megatron-DeepSpeed: a fork with flags of its own (--moe-loss-coeff)
    known = cat.top()
    tried = 0
    for key, (_value, line) in sorted(found.items(), key=lambda kv: kv[1][1] or 0):
        if key in known or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", key):
            continue
        tried += 1
        if tried > MAX_REPORTED:
            break
        guess = close_match(key, known)
        if guess:
            why = cat.strict.get("")
            fate = f"{cat.label} refuses it ({why})" if why else f"{cat.label} does not read it"
            ctx.model.add(
                "job.config.ignored_keys",
                f"--{key} at line {line}: not a {framework} flag (did you mean --{guess}?); {fate}",
                ctx.file,
                line,
                f"{cat.framework}: flags of {cat.label}",
            )


def _other_release(framework: str, cat: Catalogue, section: str, key: str) -> str | None:
    """A key of another catalogued release that the release the job runs does not have
    (``evaluation_strategy``, gone from TrainingArguments before transformers 5, where
    the job pins 5.x; ``eval_strategy``, new in 4.41, where it pins 4.40): the framework's
    own key, written for another release, so not the user's own."""
    from validator.jobs.keys import releases

    for other in releases(framework):
        if other is not cat and key in (other.known(section) or ()):
            strict = cat.strict.get(section)
            fate = f"{cat.label} rejects it ({strict})" if strict else f"{cat.label} does not read it"
            here = f"the {section} block" if section else "the top level"
            return f"a key of {here} in {other.label}, not in {cat.label}, the release the job runs; {fate}"
    return None


def _why(cat: Catalogue, section: str, key: str, known: frozenset[str], misplaced: bool) -> str | None:
    homes = [h for h in cat.home_of(key) if h != section and not h.startswith(f"{section}.")]
    if not misplaced:
        if homes:
            return None
    elif section == "" and homes and not cat.strict.get(""):
        # a top-level key some block also has (``enabled``) is no evidence of a mistake
        # where the top level is not checked strictly
        return None
    here = f"the {section} block" if section else "the top level"
    strict = cat.strict.get(section)
    fate = (
        f"{cat.package} {cat.version} rejects it ({strict})"
        if strict
        else f"{cat.package} {cat.version} does not read it there"
    )
    if section in ("bf16", "bfloat16") and "fp16" in homes:
        return (
            "an fp16 loss-scaling key in the bf16 block (bf16 trains without loss scaling): "
            f"older releases ignore it; {fate}"
        )
    if homes:
        place = ", ".join(f"{h}" if h else "the top level" for h in homes[:3])
        return f"not a key of {here} but of {place}; {fate}"
    guess = close_match(key, known)
    if guess:
        return f"not a key of {here} (did you mean {guess}?); {fate}"
    if strict:
        return f"not a key of {here}; {fate}"
    return None
