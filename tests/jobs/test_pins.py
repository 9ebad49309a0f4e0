"""Keys judged at the framework version the job pins (validator/jobs/pins.py): Lightning
1.x's ``Trainer(gpus=...)`` is valid where the repository pins pytorch-lightning 1.9.5, a
TypeError where it pins lightning 2.x, and no failure where no version is pinned (a key
some catalogued release has); the finding says which release it was judged at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobs.util import facts, value
from validator.jobs import pins
from validator.jobs.keys import catalogue, releases

CLI = "trainer:\n  gpus: 8\n  amp_backend: native\n  precision: 16\n  max_epochs: 3\n"


def _repo(tmp_path: Path, name: str, text: str | None) -> Path:
    (tmp_path / ".git").mkdir()
    if text is not None:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "configs").mkdir()
    p = tmp_path / "configs/cli.yaml"
    p.write_text(CLI)
    pins._find.cache_clear()
    return p


def _ignored(p: Path) -> tuple[list[str], str]:
    f = facts(p)["facts"]["job.config.ignored_keys"]
    return f["value"], f.get("source", "")


def test_the_older_release_is_catalogued_from_its_own_package() -> None:
    (old,) = releases("lightning")[1:]
    assert [c.label for c in releases("hf")] == ["transformers 5.23.0", "transformers 4.40.2"]
    assert [c.label for c in releases("deepspeed")] == ["deepspeed 0.19.8", "deepspeed 0.14.4"]
    assert (old.package, old.version) == ("pytorch-lightning", "1.9.5")
    new = catalogue("lightning")
    assert new is not None and "gpus" in old.sections["trainer"] and "gpus" not in new.sections["trainer"]


@pytest.mark.parametrize("name,text", [
    ("requirements.txt", "torch>=1.13\npytorch-lightning==1.9.5\n"),
    ("requirements/base.txt", "pytorch_lightning>=1.8,<2.0  # old API\n"),
    ("pyproject.toml", '[project]\ndependencies = ["torch", "pytorch-lightning~=1.9.0"]\n'),
    ("setup.py", 'setup(install_requires=["pytorch-lightning>=1.6, <2"])\n'),
    ("environment.yml", "dependencies:\n  - python=3.10\n  - pytorch-lightning=1.9\n"),
])
def test_a_pinned_1x_release_judges_1x_keys_valid(tmp_path: Path, name: str, text: str) -> None:
    keys, source = _ignored(_repo(tmp_path, name, text))
    assert keys == [], keys
    pin = pins.find("lightning", tmp_path / "configs/cli.yaml")
    assert pin is not None and pin.file == str(tmp_path / name)


def test_a_pinned_2x_release_reports_1x_keys_naming_the_release(tmp_path: Path) -> None:
    keys, source = _ignored(_repo(tmp_path, "requirements.txt", "lightning==2.2.1\n"))
    assert [k.split(" at ")[0] for k in keys] == ["trainer.gpus", "trainer.amp_backend"]
    assert "judged at lightning 2.6.6, the nearest catalogued release to the pinned lightning==2.2.1" in source


def test_with_no_pin_a_key_of_any_release_is_no_failure(tmp_path: Path) -> None:
    p = _repo(tmp_path, "requirements.txt", "torch\nlightning-bolts>=0.7\n")  # no lightning pin
    assert value(facts(p), "job.config.ignored_keys") == []
    # a key no release has is still reported, saying which release it was judged at
    p.write_text(CLI + "  precison: bf16-mixed\n")
    keys, source = _ignored(p)
    assert [k.split(" at ")[0] for k in keys] == ["trainer.precison"]
    assert "no pinned version found; keys of pytorch-lightning 1.9.5 accepted too" in source


def test_specifiers() -> None:
    assert pins._allows((("==", "1.9.5"),), "1.9.5") and not pins._allows((("==", "1.9.5"),), "2.6.6")
    assert pins._allows(((">=", "1.8"), ("<", "2.0")), "1.9.5")
    assert pins._allows((("~=", "1.9.0"),), "1.9.5") and not pins._allows((("~=", "1.9.0"),), "2.6.6")
    assert pins._allows((("==", "1.9.*"),), "1.9.5") and pins._allows((("=", "1.9"),), "1.9.5")


def test_older_catalogues_match_the_generators_releases() -> None:
    """Each ``<name>@<version>.json`` is a release scripts/gen_key_catalogues.py lists
    (RELEASES), generated from that package: none typed in by hand."""
    import importlib.util
    import json

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gen", root / "scripts/gen_key_catalogues.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = sorted((root / "validator/jobs/keys").glob("*@*.json"))
    want = {f"{fw}@{rel[1]}": rel for fw, rels in gen.RELEASES.items() for rel in rels}
    assert {p.stem for p in files} == set(want)
    for p in files:
        raw = json.loads(p.read_text())
        rel = want[p.stem]
        assert raw["package"] == rel[0] and raw["generated_by"] == "scripts/gen_key_catalogues.py"
        also = [f"{n}=={v}" for n, v in (rel[2] if len(rel) > 2 else [])]
        assert raw["also"] == also
        assert all(s.startswith(f"{raw['package']}=={raw['version']}:") or s.split(":")[0] in also
                   for s in raw["sources"])
        assert any(s.startswith(f"{raw['package']}=={raw['version']}:") for s in raw["sources"])


def test_a_lower_bound_accepts_every_release_it_allows(tmp_path: Path) -> None:
    p = _repo(tmp_path, "requirements.txt", "pytorch-lightning>=1.6.0\n")
    p.write_text(CLI + "  precison: bf16-mixed\n")
    keys, source = _ignored(p)
    assert [k.split(" at ")[0] for k in keys] == ["trainer.precison"]  # gpus, amp_backend: 1.x's
    assert "a lower bound: keys of pytorch-lightning 1.9.5 accepted too" in source
