#!/usr/bin/env python3
"""Cut a release and keep every install line pinned to it (docs/release.md).

    python scripts/release.py version 0.3.0 [--date 2026-12-01]   # the release commit's edits
    python scripts/release.py pin COMMIT                            # every pin -> that release commit
    python scripts/release.py version 0.4.0.dev0                    # main moves on
    python scripts/release.py pins                                  # list the pins; exit 1 if one lags
    python scripts/release.py packs                                 # pack digests; exit 1 if a released one moved

``version X.Y.Z`` sets ``__version__`` in ``validator/__init__.py`` (hatch reads it from there,
``[tool.hatch.version]``), the lines that say the version of the checkout they sit in (the
``Dockerfile``'s label and build comment, the ``spec-check --version`` sentence of README.md and
docs/ci.md), and, for a release (no ``.dev`` part), moves CHANGELOG.md's ``[Unreleased]``
section under ``## [X.Y.Z] - DATE`` with its compare links, adds the facts and result shapes
to ``RELEASED_SHAPES`` and the rule pack versions it first ships to ``RELEASED_PACKS``
(``validator/rules/released.py``); it refuses when a released pack version's digest moved.

``packs`` lists every bundled rule pack version with its digest: released (in which release),
unreleased (the next release records it) or changed since its release (exit 1: make a new
pack version instead).

``pin COMMIT`` rewrites every install pin to COMMIT: the ``spec-check/spec-check@SHA`` lines
(README, docs/ci.md, action.yml), the pre-commit example's ``rev:``, the ``git checkout SHA``
of docs/release.md and docs/deploy.md, and the image tags (``registry.example.com/spec-check:V``,
the enroot ``.sqsh`` name, the manifests' ``app.kubernetes.io/version``) to the version that
COMMIT's ``validator/__init__.py`` holds. It refuses a commit that is not in this history, a
``.dev`` version, and a version that is not CHANGELOG.md's newest release.

``tests/test_release_pins.py`` holds the pins to the newest release with the same functions.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Where install lines live: every file a user reads or copies to install spec-check.
PIN_GLOBS = ("README.md", "CONTRIBUTING.md", "docs/*.md", "action.yml", ".pre-commit-hooks.yaml",
             "Dockerfile", "deploy/**/*", ".github/**/*.yml")

SHA = r"(?P<value>[0-9a-f]{40})\b"
VERSION = r"(?P<value>[0-9]+\.[0-9]+\.[0-9]+(?:\.dev[0-9]+)?)"
# A commit pin: the value is a full SHA of this repository.
COMMIT_PINS = (
    re.compile(r"spec-check/spec-check@" + SHA),          # pip's git URL, the action's `uses:`
    re.compile(r"^\s*rev: " + SHA, re.M),                   # the pre-commit example
    re.compile(r"\bgit (?:-C \S+ )?checkout " + SHA),       # building the image of a release
)
# A version pin: the release's version, as an image tag or in words.
VERSION_PINS = (
    re.compile(r"registry\.example\.com[/#]spec-check:" + VERSION),
    re.compile(r"/spec-check-" + VERSION + r"\.sqsh\b"),
    re.compile(r'app\.kubernetes\.io/version: "' + VERSION + '"'),
    re.compile(r"The newest release is \*\*" + VERSION + r"\*\*"),       # docs/release.md
)
# Lines that state the version of the checkout they are in (a build from this tree).
CHECKOUT_VERSION = (
    ("Dockerfile", re.compile(r'org\.opencontainers\.image\.version="' + VERSION + '"')),
    ("Dockerfile", re.compile(r"docker build -t spec-check:" + VERSION)),
    ("Dockerfile", re.compile(r"--gpus all spec-check:" + VERSION)),
    ("README.md", re.compile(r"`spec-check " + VERSION + r" \(training-spec-check\)`")),
    ("docs/ci.md", re.compile(r"`spec-check " + VERSION + r" \(training-spec-check\)`")),
)
ANY_SHA = re.compile(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")
RELEASE_HEADING = re.compile(r"^## \[(?P<version>[0-9]+\.[0-9]+\.[0-9]+)\] - (?P<date>\d{4}-\d{2}-\d{2})$", re.M)
INIT_VERSION = re.compile(r'^__version__ = "(?P<value>[^"]+)"$', re.M)


class ReleaseError(Exception):
    """A refusal, printed as one line."""


@dataclass(frozen=True)
class Pin:
    path: str  # relative to the repository root
    line: int
    kind: str  # "commit" or "version"
    value: str  # the SHA or the version

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind} {self.value}"


def git(*args: str, root: Path = ROOT) -> str:
    r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    if r.returncode:
        raise ReleaseError(f"git {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r.stdout


def pin_files(root: Path = ROOT) -> list[Path]:
    found = {p for pattern in PIN_GLOBS for p in root.glob(pattern) if p.is_file()}
    return sorted(found)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def find_pins(root: Path = ROOT) -> list[Pin]:
    """Every install pin in the files users read, in file order."""
    pins = []
    for path in pin_files(root):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        for kind, patterns in (("commit", COMMIT_PINS), ("version", VERSION_PINS)):
            for pattern in patterns:
                pins += [Pin(rel, _line(text, m.start("value")), kind, m.group("value"))
                         for m in pattern.finditer(text)]
    return sorted(pins, key=lambda p: (p.path, p.line, p.kind))


def unrecognised_shas(root: Path = ROOT) -> list[str]:
    """Full SHAs in the pinned files that no pin pattern reads (a new kind of install line
    that `pin` would not move): each as ``path:line: sha``."""
    known = {(p.path, p.line, p.value) for p in find_pins(root) if p.kind == "commit"}
    out = []
    for path in pin_files(root):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        for m in ANY_SHA.finditer(text):
            if (rel, _line(text, m.start()), m.group()) not in known:
                out.append(f"{rel}:{_line(text, m.start())}: {m.group()}")
    return out


def releases(root: Path = ROOT) -> list[str]:
    """The released versions CHANGELOG.md lists, newest first."""
    return [m.group("version") for m in RELEASE_HEADING.finditer((root / "CHANGELOG.md").read_text(encoding="utf-8"))]


def current_version(root: Path = ROOT) -> str:
    m = INIT_VERSION.search((root / "validator" / "__init__.py").read_text(encoding="utf-8"))
    if not m:
        raise ReleaseError("validator/__init__.py has no __version__ line")
    return m.group("value")


def version_at(commit: str, root: Path = ROOT) -> str:
    """The version the package built from ``commit`` has: the file its pyproject.toml tells
    hatch to read (``[tool.hatch.version] path``), as it is in that commit."""
    if subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=root,
                      capture_output=True, timeout=60).returncode:
        raise ReleaseError(f"commit {commit} is not in this repository's history (HEAD's ancestors)")
    pyproject = git("show", f"{commit}:pyproject.toml", root=root)
    m = re.search(r'^\[tool\.hatch\.version\]\s*\npath = "(?P<path>[^"]+)"', pyproject, re.M)
    if not m:
        raise ReleaseError(f"commit {commit}: pyproject.toml names no [tool.hatch.version] path")
    v = INIT_VERSION.search(git("show", f"{commit}:{m.group('path')}", root=root))
    if not v:
        raise ReleaseError(f"commit {commit}: {m.group('path')} has no __version__ line")
    return v.group("value")


def lagging_pins(root: Path = ROOT) -> list[str]:
    """The pins that do not name CHANGELOG.md's newest release, each as one line; none is
    the promise of docs/release.md. On the release commit itself (its own version is the
    newest release) the pins still name the release before it: the next commit moves them."""
    listed = releases(root)
    if not listed:
        return ["CHANGELOG.md lists no release"]
    wanted = listed[0]
    if current_version(root) == wanted and len(listed) > 1:
        allowed = {wanted, listed[1]}  # the release commit: pins move in the commit after it
    else:
        allowed = {wanted}
    pins = find_pins(root)
    out = [f"{s}: a full SHA that no install pattern reads (scripts/release.py would not move it)"
           for s in unrecognised_shas(root)]
    if not pins:
        out.append("no install pin found (README, docs/ci.md, action.yml, deploy/)")
    versions_at: dict[str, str] = {}
    for pin in pins:
        if pin.kind == "commit":
            if pin.value not in versions_at:
                try:
                    versions_at[pin.value] = version_at(pin.value, root)
                except ReleaseError as e:
                    versions_at[pin.value] = f"? ({e})"
            version = versions_at[pin.value]
        else:
            version = pin.value
        if version not in allowed:
            out.append(f"{pin}: is version {version}, not the newest release {wanted} (CHANGELOG.md)")
    named = {versions_at.get(p.value, p.value) if p.kind == "commit" else p.value for p in pins}
    if len(named) > 1:
        out.append(f"the pins name different versions: {', '.join(sorted(named))}")
    return out


def _sub_all(text: str, patterns: tuple[re.Pattern[str], ...], value: str) -> str:
    for pattern in patterns:
        text = pattern.sub(lambda m: m.group(0)[:m.start("value") - m.start()] + value
                           + m.group(0)[m.end("value") - m.start():], text)
    return text


def set_version(version: str, date: str, root: Path = ROOT, shapes: bool = True) -> list[str]:
    """The edits of ``version X``: returns the files changed (``shapes=False``: leave
    ``RELEASED_SHAPES`` alone, for a repository without validator/versions.py)."""
    if not re.fullmatch(VERSION, version):
        raise ReleaseError(f"version {version!r} is not X.Y.Z or X.Y.Z.devN")
    packs = (root / "validator" / "rules" / "released.py").is_file()
    if ".dev" not in version and packs:  # before any edit: a released pack that moved stops the cut
        r = _released_packs(root)
        if r.returncode:
            raise ReleaseError(f"python -m validator.rules.released: {r.stderr.strip()[-500:]}")
    changed = []
    init = root / "validator" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(INIT_VERSION.sub(f'__version__ = "{version}"', text), encoding="utf-8")
    changed.append("validator/__init__.py")
    for rel, pattern in CHECKOUT_VERSION:
        path = root / rel
        text = path.read_text(encoding="utf-8")
        if not pattern.search(text):
            raise ReleaseError(f"{rel}: no line matches {pattern.pattern} (update scripts/release.py)")
        path.write_text(_sub_all(text, (pattern,), version), encoding="utf-8")
        changed.append(rel)
    if ".dev" not in version:
        changed.append(_move_unreleased(version, date, root))
        changed += _record_shapes(root) if shapes else []
        changed += record_packs(root) if packs else []
    return sorted(set(changed))


def _record_shapes(root: Path) -> list[str]:
    """A release adds the facts and result shapes it writes to ``RELEASED_SHAPES`` (the lines
    ``python -m validator.versions`` prints) unless that schema version is listed already."""
    r = subprocess.run([sys.executable, "-m", "validator.versions"], cwd=root, capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PYTHONPATH": str(root)})
    if r.returncode:
        raise ReleaseError(f"python -m validator.versions: {r.stderr.strip()[-300:]}")
    path = root / "validator" / "versions.py"
    text = path.read_text(encoding="utf-8")
    start = re.search(r"^RELEASED_SHAPES\b", text, re.M).start()  # type: ignore[union-attr]
    end = text.index("\n}\n", start)
    listed = text[start:end]
    new = [line for line in r.stdout.splitlines()
           if line.strip().startswith('"') and f'"{line.strip().split(chr(34))[1]}"' not in listed]
    if not new:
        return []
    path.write_text(text[:end] + "\n" + "\n".join(new) + text[end:], encoding="utf-8")
    return ["validator/versions.py"]


def _released_packs(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator.rules.released", *args], cwd=root, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})


def record_packs(root: Path) -> list[str]:
    """A release adds the rule pack versions it first ships to ``RELEASED_PACKS`` (the lines
    ``python -m validator.rules.released --table`` prints, with this version); it refuses when
    a released pack version's digest has moved."""
    r = _released_packs(root, "--table")
    if r.returncode:
        raise ReleaseError(f"python -m validator.rules.released: {r.stderr.strip()[-500:]}")
    return add_released_packs(root, [line for line in r.stdout.splitlines() if line.strip()])


def add_released_packs(root: Path, lines: list[str]) -> list[str]:
    """``lines`` appended to ``RELEASED_PACKS`` in validator/rules/released.py."""
    if not lines:
        return []
    path = root / "validator" / "rules" / "released.py"
    text = path.read_text(encoding="utf-8")
    start = re.search(r"^RELEASED_PACKS\b", text, re.M)
    if start is None:
        raise ReleaseError("validator/rules/released.py has no RELEASED_PACKS table")
    end = text.index("\n}\n", start.start())
    path.write_text(text[:end] + "\n" + "\n".join(lines) + text[end:], encoding="utf-8")
    return ["validator/rules/released.py"]


def _move_unreleased(version: str, date: str, root: Path) -> str:
    path = root / "CHANGELOG.md"
    text = path.read_text(encoding="utf-8")
    listed = releases(root)
    if version in listed:
        raise ReleaseError(f"CHANGELOG.md already has a [{version}] section")
    if "\n## [Unreleased]\n" not in text:
        raise ReleaseError("CHANGELOG.md has no '## [Unreleased]' section")
    text = text.replace("\n## [Unreleased]\n", f"\n## [Unreleased]\n\n## [{version}] - {date}\n", 1)
    previous = listed[0] if listed else None
    unreleased_link = re.compile(r"^\[Unreleased\]: (?P<base>\S+)/compare/v\S+\.\.\.HEAD$", re.M)
    m = unreleased_link.search(text)
    if m:
        base = m.group("base")
        since = f"{base}/compare/v{previous}...v{version}" if previous else f"{base}/releases/tag/v{version}"
        links = f"[Unreleased]: {base}/compare/v{version}...HEAD\n[{version}]: {since}"
        text = text[:m.start()] + links + text[m.end():]
    path.write_text(text, encoding="utf-8")
    return "CHANGELOG.md"


def pin(commit: str, root: Path = ROOT) -> list[str]:
    """The edits of ``pin COMMIT``: returns the files changed."""
    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}", root=root).strip()
    version = version_at(sha, root)
    if ".dev" in version:
        raise ReleaseError(f"commit {sha[:12]} is version {version}, not a release (set its version first)")
    listed = releases(root)
    if not listed or listed[0] != version:
        newest = listed[0] if listed else "none"
        raise ReleaseError(f"commit {sha[:12]} is version {version}; CHANGELOG.md's newest release is {newest}")
    changed = []
    for path in pin_files(root):
        text = path.read_text(encoding="utf-8")
        new = _sub_all(_sub_all(text, COMMIT_PINS, sha), VERSION_PINS, version)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path.relative_to(root).as_posix())
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/release.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    v = sub.add_parser("version", help="set the version (a release moves CHANGELOG's [Unreleased] under it)")
    v.add_argument("version")
    v.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).date().isoformat())
    p = sub.add_parser("pin", help="point every install pin at a release commit")
    p.add_argument("commit")
    sub.add_parser("pins", help="list the install pins; exit 1 if one does not name the newest release")
    sub.add_parser("packs", help="list the rule pack versions and digests; exit 1 if a released one changed")
    args = parser.parse_args(argv)
    try:
        if args.step == "version":
            changed = set_version(args.version, args.date)
        elif args.step == "pin":
            changed = pin(args.commit)
        elif args.step == "packs":
            r = _released_packs(ROOT)
            print(r.stdout, end="")
            print(r.stderr, end="", file=sys.stderr)
            return 1 if r.returncode else 0
        else:
            for p_ in find_pins():
                print(p_)
            problems = lagging_pins()
            for line in problems:
                print(f"lagging: {line}")
            return 1 if problems else 0
    except ReleaseError as e:
        print(f"release: error: {e}", file=sys.stderr)
        return 2
    for rel in changed:
        print(f"changed {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
