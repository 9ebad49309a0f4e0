"""The rule pack versions spec-check has released, each with the digest it shipped with.

Every result records ``rule_pack: {id, digest}``, and ``diff``, baselines and an auditor read
"rule pack v1.1" as one set of rules: once a release ships a pack version, its content (its
rules as the loader's digest sees them, ``validator/rules/loader.py``) never changes. A change
is a new pack version: ``rules/vX.Y/`` with ``extends:`` the last one, its ``CHANGELOG.md`` and
its line in ``rules/index.yaml`` (CONTRIBUTING.md, "A revised pack"), never an edit of a
released one. ``tests/test_pack_versions.py`` fails when a version listed here compiles to
another digest, and recomputes each listed digest from its release commit's own ``rules/``
where the git history is at hand.

A pack version not listed is unreleased and may still change; the release that first ships
it adds it (``python scripts/release.py version X.Y.Z``, from the lines ``python -m
validator.rules.released --table`` prints). ``python -m validator.rules.released`` lists every
bundled pack version, its digest and whether it is released, unreleased or changed (exit 1).
"""

from __future__ import annotations

import sys

# pack version -> (the first spec-check release that shipped this content, its digest)
RELEASED_PACKS: dict[str, tuple[str, str]] = {
    # v1.0 first shipped in 0.1.0 with other rules (CHANGED_IN_PLACE below): 0.2.0 changed them
    # without a new pack version, before this table existed, and history cannot change. Held
    # here is v1.0 as 0.2.0 shipped it, unchanged in 0.3.0.
    "1.0": ("0.2.0", "sha256:a7e26766a6f3da7828de545c4bfd1dc66e16def12f223f81b7f5cd48a18e5a1d"),
    "1.1": ("0.3.0", "sha256:582b7652a234f73f9f9edebd49f1b62175a7213b566f33fb4bc1812947ca1b60"),
}

# What a released pack version held before a later release changed it in place (the mistake
# the table now prevents): pack version -> ((release, digest), ...). Results recording these
# digests were judged by rules that version no longer holds. 0.1.0's is what 0.1.0's own code
# records (commit c10a22f installed: `spec-check probe -o`, then `check --facts`; also
# tests/fixtures/results/check_vm_0.1.0.json).
CHANGED_IN_PLACE: dict[str, tuple[tuple[str, str], ...]] = {
    "1.0": (("0.1.0", "sha256:f193b11c0424b841a22e51724080751291c649b9f24ffc113aec362a9fcacd3e"),),
}

EDIT_HINT = "make a new pack version (rules/vX.Y with a CHANGELOG) instead of editing a released one"


def current() -> dict[str, str]:
    """Every bundled pack version -> its digest, compiled from rules/ and spec/ in hand."""
    import json

    from validator.rules.bundled import build

    data = json.loads(build())
    by_dir = {key.split(" ", 1)[1]: pack["digest"] for key, pack in data["packs"].items()}  # "SPEC PACKDIR"
    return {version: by_dir[d] for version, d in data["index"]["packs"].items() if d in by_dir}


def problems(digests: dict[str, str], released: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """One line per released pack version that is missing or has another digest now."""
    released = RELEASED_PACKS if released is None else released
    out = []
    for version, (release, digest) in released.items():
        now = digests.get(version)
        if now is None:
            out.append(f"rule pack v{version} (released in {release}) is no longer bundled: a released "
                       f"version stays in rules/ and rules/index.yaml")
        elif now != digest:
            out.append(f"rule pack v{version} was released in {release} as {digest} and is now {now}: {EDIT_HINT}")
    return out


def status_lines(digests: dict[str, str], released: dict[str, tuple[str, str]] | None = None) -> list[str]:
    released = RELEASED_PACKS if released is None else released
    out = []
    for version, digest in sorted(digests.items(), key=lambda kv: _key(kv[0])):
        if version not in released:
            out.append(f"v{version} {digest} unreleased (the next release records it)")
        elif released[version][1] == digest:
            out.append(f"v{version} {digest} released in {released[version][0]}")
        else:
            out.append(f"v{version} {digest} CHANGED since its release in {released[version][0]} "
                       f"({released[version][1]})")
    return out


def table_lines(digests: dict[str, str], release: str,
                released: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """The RELEASED_PACKS lines a release ``release`` adds: its pack versions not listed yet."""
    released = RELEASED_PACKS if released is None else released
    return [f'    "{v}": ("{release}", "{d}"),' for v, d in sorted(digests.items(), key=lambda kv: _key(kv[0]))
            if v not in released]


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))


def main(argv: list[str]) -> int:
    from validator import __version__

    digests = current()
    for line in table_lines(digests, __version__) if argv == ["--table"] else status_lines(digests):
        print(line)
    for line in problems(digests):
        print(f"error: {line}", file=sys.stderr)
    return 1 if problems(digests) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
