"""The framework version a job pins, and the key catalogue its keys are judged with.

A key is valid or not *in a release*: ``Trainer(gpus=8)`` is Lightning 1.x's, a
``TypeError`` in 2.x. A repository says which release it runs in its dependency files,
so before judging keys (PREC-02) the folders above the config are searched, up to the
repository root (a folder holding ``.git``) or ``MAX_UP`` levels, for:

* ``requirements*.txt`` (also under ``requirements/``), ``constraints*.txt``;
* ``pyproject.toml``, ``setup.py``, ``setup.cfg`` (dependency strings);
* ``environment.yml`` / ``environment.yaml`` (conda, pip sections);

and the first line that names one of the framework's packages with a version
(``pytorch-lightning==1.9.5``, ``lightning>=2.1,<2.3``) decides. The catalogue used is the
newest catalogued release the requirement allows, else the nearest one of the same major
version; the finding names it and the line that pinned it. With no pin found, the newest
catalogue is used and a key any catalogued release knows is not reported: the version is
unknown, and a key valid in the release the job may run is no failure (refuse rather than
guess).

Where no dependency file pins the framework, the container image the job's launcher runs
may: ``--container-image=nvcr.io/nvidia/nemo:24.07`` (Slurm's pyxis, also written
``nvcr.io#nvidia/nemo:24.07``), a Kubernetes ``image:``, a SkyPilot ``image_id:
docker:...``, or a variable holding it. Only images whose framework versions their
publisher states are used (``containers.json`` beside this module, each repository citing the page it
was read in); any other tag of those repositories is named as unknown and not used. A
dependency file wins over an image (it is what the repository installs, into the image
too).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from validator.lazy import Pattern

if TYPE_CHECKING:
    from typing import TypedDict

    from validator.jobs.keys import Catalogue
    from validator.jobs.model import JobModel

    class Container(TypedDict, total=False):
        """A repository of ``containers.json``."""

        name: str
        source: str
        packages: dict[str, str]  # framework -> its display name
        tags: dict[str, dict[str, str]]  # tag -> framework -> version

MAX_UP = 6  # folders above a config searched for dependency files
MAX_BYTES = 256 * 1024  # a dependency file larger than this is not read
_FILES = Pattern(r"^(?:requirements.*\.txt|constraints.*\.txt|pyproject\.toml|setup\.py|setup\.cfg"
                    r"|environment\.ya?ml)$")
_OP = r"(?:===|==|~=|>=|<=|!=|<|>|=)"  # a lone "=": conda's prefix match (environment.yml)


def _packages() -> dict[str, tuple[str, ...]]:
    """Catalogue -> the PyPI names its framework is installed as (``Format.packages``)."""
    from validator.jobs import registry

    return registry.packages()


@dataclass(frozen=True)
class Pin:
    package: str
    specs: tuple[tuple[str, str], ...]  # (operator, version)
    file: str
    line: int
    image: str = ""  # the container image it was read from ("": a dependency file)
    cited: str = ""  # where the image's versions are stated

    def text(self) -> str:
        if self.image:
            return f"{self.package} {self.specs[0][1]}"
        return self.package + ",".join(f"{op}{v}" for op, v in self.specs)

    def where(self) -> str:
        """``lightning==1.9.5 at requirements.txt:3``, or for an image the version and
        the image, its line, and the page its versions were read in."""
        if self.image:
            return (f"{self.text()}, the version in container image {self.image} at {self.file}:{self.line} "
                    f"(stated in {self.cited})")
        return f"{self.text()} at {self.file}:{self.line}"


def _candidates(start: Path) -> list[Path]:
    out: list[Path] = []
    d = start
    for _ in range(MAX_UP):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            names = []
        out += [d / n for n in names if _FILES.match(n)]
        if "requirements" in names and (d / "requirements").is_dir():
            try:
                out += [d / "requirements" / n for n in sorted(os.listdir(d / "requirements"))
                        if n.endswith(".txt")]
            except OSError:
                pass
        if ".git" in names or d.parent == d:
            break
        d = d.parent
    return out


def find(framework: str, start: Path) -> Pin | None:
    """The first requirement with a version of ``framework``'s packages in the dependency
    files above ``start`` (nearest folder first), or None."""
    try:
        folder = str(start.resolve().parent if start.is_file() else start.resolve())
    except OSError:
        return None
    return _find(framework, folder)


@lru_cache(maxsize=256)
def _find(framework: str, folder: str) -> Pin | None:
    """``find`` once per folder and framework: a lint of 1,000 files in one folder
    searches the folders above it once, not 1,000 times."""
    start = Path(folder)
    pkgs = _packages().get(framework)
    if not pkgs:
        return None
    names = "|".join("[-_]".join(re.escape(w) for w in re.split(r"[-_]", p)) for p in pkgs)
    rx = Pattern(rf"""(?:^|[\s"'\[,(])({names})\s*(?:\[[^\]]*\])?\s*((?:{_OP}\s*[\w.*+!-]+\s*,?\s*)+)""",
                 re.I)  # compiled at the first line read: most configs have no dependency file near
    for path in _candidates(start):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for i, ln in enumerate(text.splitlines(), 1):
            if ln.lstrip().startswith("#"):
                continue
            m = rx.search(ln)
            if m:
                specs = tuple(re.findall(rf"({_OP})\s*([\w.*+!-]+)", m.group(2)))
                if specs:
                    return Pin(m.group(1), specs, str(path), i)
    return None


def _allows(specs: tuple[tuple[str, str], ...], version: str) -> bool:
    from validator.jobs.keys import version_key

    v = version_key(version)
    for op, want in specs:
        w = version_key(want.rstrip(".*"))
        n = len(w)
        if op == "=":  # conda: 1.9 is any 1.9.x
            ok = v[:n] == w
        elif op in ("==", "==="):
            ok = v[:n] == w if want.endswith("*") else v == w or (v[:n] == w and all(x == 0 for x in v[n:]))
        elif op == "!=":
            ok = v[:n] != w
        elif op == ">=":
            ok = v >= w
        elif op == ">":
            ok = v > w
        elif op == "<=":
            ok = v[:n] <= w
        elif op == "<":
            ok = v < w
        elif op == "~=":
            ok = v >= w and v[: max(n - 1, 1)] == w[: max(n - 1, 1)]
        else:
            ok = True
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class Judged:
    """The catalogue a file's keys are judged with, and the others still accepted."""

    catalogue: Catalogue
    accepted: tuple[Catalogue, ...]  # catalogues whose keys are not reported either
    how: str  # "judged at lightning 2.6.6 (...)", for findings
    # the release the job runs is this catalogue's (the pin allows it): a key another
    # release has and this one has not is reported (``evaluation_strategy`` where the job
    # pins transformers 5.x)
    exact: bool = False


def choose(framework: str, start: Path | None, model: JobModel | None = None) -> Judged | None:
    from validator.jobs.keys import releases, version_key

    cats = releases(framework)
    if not cats:
        return None
    pin = find(framework, start) if start is not None else None
    note = ""
    if pin is None and model is not None:
        pin, note = from_image(framework, model)
    newest = cats[0]
    if pin is None:
        others = cats[1:]
        also = f"; keys of {', '.join(c.label for c in others)} accepted too" if others else ""
        return Judged(newest, others, f"judged at {newest.label}, the newest catalogued release "
                                      f"(no pinned version found{note}{also})")
    where = pin.where()
    pins_ = "runs" if pin.image else "pins"
    fits = [c for c in cats if _allows(pin.specs, c.version)]
    if len(fits) > 1 and all(op in (">=", ">", "!=") for op, _ in pin.specs):
        # a lower bound only: any later release may run, so the keys of every catalogued
        # release it allows are valid (pytorch-lightning>=1.6.0 in 2022 meant 1.x's gpus=)
        return Judged(fits[0], tuple(fits[1:]), f"judged at {fits[0].label} (the job pins {where}, a lower "
                                                f"bound: keys of {', '.join(c.label for c in fits[1:])} "
                                                "accepted too)")
    if fits:
        return Judged(fits[0], (), f"judged at {fits[0].label} (the job {pins_} {where})", exact=True)
    want = next((version_key(v) for op, v in pin.specs if op in ("==", "===", "~=", ">=", ">")), None)
    same = [c for c in cats if want and version_key(c.version)[:1] == want[:1]]
    if same and want:
        # the release the job runs lies between catalogued ones: judged at the nearest,
        # and the keys of the catalogued releases on either side of it (same major
        # version) accepted, since a key may have come or gone at either
        near = min(same, key=lambda c: _distance(version_key(c.version), want))
        below = [c for c in same if version_key(c.version) < want]
        above = [c for c in same if version_key(c.version) > want]
        side = tuple(c for c in (below[:1] + above[-1:]) if c is not near)
        also = f"; keys of {', '.join(c.label for c in side)} accepted too" if side else ""
        return Judged(near, side, f"judged at {near.label}, the nearest catalogued release to the "
                                  f"{'version' if pin.image else 'pinned'} {where}{also}")
    others = cats[1:]
    return Judged(newest, others, f"judged at {newest.label}: no catalogued release matches the "
                                  f"{'version' if pin.image else 'pinned'} {where}, so keys of every "
                                  "catalogued release are accepted")


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b), 3)
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return tuple(abs(x - y) for x, y in zip(a, b, strict=True))


# -- container images -------------------------------------------------------------------

MAX_IMAGE_SCAN = 1024 * 1024  # bytes of a job file searched for an image reference


@dataclass(frozen=True)
class Image:
    ref: str  # as written, normalized (``nvcr.io#nvidia/nemo`` -> ``nvcr.io/nvidia/nemo``)
    repo: str
    tag: str
    file: str
    line: int


def table() -> dict[str, Container]:
    """``containers.json``: repository -> name, source, packages, tags."""
    return dict(_table())


@lru_cache(maxsize=1)
def _table() -> dict[str, Container]:
    import json

    data = json.loads((Path(__file__).resolve().parent / "containers.json").read_text(encoding="utf-8"))
    return dict(data.get("repositories", {}))


@lru_cache(maxsize=1)
def _image_rx() -> re.Pattern[str]:
    alts = []
    for repo in _table():
        host, _, rest = repo.partition("/")
        alts.append(re.escape(host) + r"[/#]" + re.escape(rest))  # pyxis writes host#path
    # the tag: up to a quote, space or bracket; ``${VAR}`` whole (a tag the file does not say)
    return re.compile(rf"(?<![\w./-])(?:docker://)?({'|'.join(alts)}):((?:\$\{{[^}}\s]*\}}|[^\s\"'#,;)\]}}])+)")


def images_in(text: str, file: str) -> list[Image]:
    """References to a catalogued image repository in ``text``, each with its line: a
    launcher flag, a manifest's ``image:``, a variable set to it. Comment lines are no
    reference (``#SBATCH`` lines are)."""
    rx = _image_rx()
    out: list[Image] = []
    for i, ln in enumerate(text.splitlines(), 1):
        body = ln.lstrip()
        if body.startswith("#") and not body.startswith("#SBATCH"):
            continue
        for m in rx.finditer(ln):
            repo = m.group(1).replace("#", "/", 1)
            tag = m.group(2).rstrip(".")
            out.append(Image(f"{repo}:{tag}", repo, tag, file, i))
    return out


def images(model: JobModel) -> list[Image]:
    """The catalogued container images the job's files name: the files read so far and
    the files the job was given (a launcher read after the config it names)."""
    done: dict[str, list[Image]] = model.__dict__.setdefault("_images", {})
    texts: dict[str, str] = getattr(model, "texts", {}) or {}
    for f, text in list(texts.items()):
        if f not in done:
            done[f] = images_in(text, f)
    for f in getattr(model, "job_paths", ()):
        if f in done:
            continue
        try:
            with open(f, "rb") as fh:
                raw = fh.read(MAX_IMAGE_SCAN)
        except OSError:
            done[f] = []
            continue
        done[f] = [] if b"\0" in raw else images_in(raw.decode("utf-8", "replace"), f)
    return [img for found in done.values() for img in found]


def from_image(framework: str, model: JobModel) -> tuple[Pin | None, str]:
    """The version of ``framework`` in the container image the job runs, as a pin, or
    None and a note naming the images whose versions are not known here."""
    tab = _table()
    seen = [img for img in images(model) if framework in tab.get(img.repo, {}).get("packages", {})]
    if not seen:
        return None, ""
    known = [(img, tab[img.repo]["tags"][img.tag][framework]) for img in seen
             if framework in tab[img.repo].get("tags", {}).get(img.tag, {})]
    unknown = [img for img in seen if img not in [k for k, _ in known]]
    if known and len({v for _, v in known}) == 1 and not unknown:
        img, version = known[0]
        repo = tab[img.repo]
        return Pin(repo["packages"][framework], (("==", version),), img.file, img.line,
                   image=img.ref, cited=repo.get("source", "validator/jobs/containers.json")), ""
    if known and not unknown:
        both = ", ".join(f"{img.ref} at {img.file}:{img.line} ({v})" for img, v in known)
        return None, f"; the job's container images hold different versions: {both}"
    img = unknown[0]  # with another image of known versions beside it, which runs is unknown too
    listed = ", ".join(sorted(tab[img.repo].get("tags", {})))
    return None, (f"; container image {img.ref} at {img.file}:{img.line}: its framework versions are not "
                  f"known here (validator/jobs/containers.json lists tags {listed}), so not used")
