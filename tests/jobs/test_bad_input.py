"""Hostile and broken input: every case ends in an ``error`` finding at file:line or a
one-line exit-2 message, within seconds and bounded memory, and the job's other files
are still linted. Nothing in a YAML file is ever executed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.jobs.util import facts, spec_check, value

GOOD = (
    '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, '
    '"gradient_accumulation_steps": 2, '
    '"bf16": {"enabled": true}}'
)


def _one_line_error(r, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-check: error: "), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


BAD: list[tuple[str, bytes, str, int | None]] = [
    ("broken.json", b'{\n  "train_batch_size": 8,\n  "fp16": {\n}\n,,\n', "invalid JSON", 5),
    ("broken.yaml", b"trainer:\n  precision: [bf16\n  devices: 8\n", "invalid YAML", 3),
    ("broken.toml", b"[training]\nsteps = = 3\n", "invalid TOML", 2),
    ("empty.json", b"", "empty file", None),
    ("blank.yaml", b"   \n\n", "empty file", None),
    ("binary.json", b"\x00\x01\x02\xffELF" * 100, "binary data", None),
    ("latin1.yaml", b"trainer:\n  precision: bf16\n# caf\xe9\n", "not UTF-8", 3),
    (
        "python.yaml",
        b"trainer: !!python/object/apply:os.system ['touch /tmp/pwned-spec-check']\n",
        "unsupported tag",
        1,
    ),
    ("wrongtype.yaml", b"trainer: 5\nexp_manager: [1, 2]\n", "", None),
]


@pytest.mark.parametrize(("name", "content", "needle", "line"), BAD, ids=[b[0] for b in BAD])
def test_bad_file_alone_is_one_line_exit_2(
    tmp_path: Path, name: str, content: bytes, needle: str, line: int | None
) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    r = spec_check("lint", str(p))
    if name == "wrongtype.yaml":  # parses, but holds no job settings of the right types
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr
        return
    _one_line_error(r, str(p) + (f":{line}:" if line else ":"), needle)
    assert not Path("/tmp/pwned-spec-check").exists()


@pytest.mark.parametrize(
    ("name", "content", "needle", "line"), BAD[:8], ids=[b[0] for b in BAD[:8]]
)
def test_bad_file_in_a_job_is_an_error_finding_and_the_rest_is_linted(
    tmp_path: Path, name: str, content: bytes, needle: str, line: int | None
) -> None:
    (tmp_path / "ds.json").write_text(GOOD)
    (tmp_path / name).write_bytes(content)
    r = spec_check("lint", "--format", "json", str(tmp_path))
    assert r.returncode == 1, r.stderr
    result = json.loads(r.stdout)
    errs = [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert len(errs) == 1 and errs[0]["status"] == "error" and needle in errs[0]["message"]
    assert errs[0]["location"] == {"file": str(tmp_path / name), "line": line}
    prec = next(f for f in result["findings"] if f["rule"] == "PREC-01.full-precision-training")
    assert prec["status"] == "pass"  # the good file was still read


def test_python_tags_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    p = tmp_path / "evil.yaml"
    p.write_text(
        f"trainer: !!python/object/apply:os.system ['touch {marker}']\n"
        f"model: !!python/object/new:subprocess.Popen [['touch', '{marker}']]\n"
    )
    doc = facts(p)
    assert not marker.exists()
    assert "unsupported tag" in doc["errors"][0]["message"]


def test_billion_laughs_is_bounded(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    lines.append("trainer: {precision: bf16, x: *a9}")
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(lines) + "\n")
    doc = facts(p)
    assert "alias bomb" in doc["errors"][0]["message"]


@pytest.mark.parametrize("kind", ["json", "yaml", "toml"])
def test_very_deep_nesting(tmp_path: Path, kind: str) -> None:
    depth = 100_000
    if kind == "json":
        text = "[" * depth + "]" * depth
    elif kind == "yaml":
        text = "a: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "a = " + "[" * depth + "]" * depth + "\n"
    p = tmp_path / f"deep.{kind}"
    p.write_text(text)
    doc = facts(p)
    assert doc["errors"], doc["errors"]


def test_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    p = tmp_path / "huge.json"
    with p.open("wb") as fh:
        fh.write(b'{"train_batch_size": 8, "pad": "')
        fh.write(b"x" * (60 * 1024 * 1024))
        fh.write(b'"}')
    (tmp_path / "ds.json").write_text(GOOD)
    doc = facts(tmp_path)
    assert any("larger than" in e["message"] for e in doc["errors"])
    assert value(doc, "job.batch.global") == 64


def test_symlink_loop_and_dangling_link(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "ds.json").write_text(GOOD)
    (job / "loop").symlink_to(job, target_is_directory=True)
    (job / "self.yaml").symlink_to(job / "self.yaml")
    (job / "gone.json").symlink_to(tmp_path / "nowhere.json")
    doc = facts(job)
    assert value(doc, "job.batch.global") == 64
    msgs = " ".join(e["message"] for e in doc["errors"])
    assert "cannot read" in msgs


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "secret.json"
    p.write_text(GOOD)
    p.chmod(0)
    _one_line_error(spec_check("lint", str(p)), "cannot read")


def test_unreadable_file_as_root_is_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from validator.jobs import source

    p = tmp_path / "secret.json"
    p.write_text(GOOD)
    real_open = Path.open

    def deny(self: Path, *a, **k):  # type: ignore[no-untyped-def]
        if self == p:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *a, **k)

    monkeypatch.setattr(Path, "open", deny)
    with pytest.raises(source.ReadError, match="Permission denied"):
        source.read_text(p)


def test_missing_path_and_unknown_format(tmp_path: Path) -> None:
    _one_line_error(spec_check("lint", str(tmp_path / "nope.json")), "no such file")
    p = tmp_path / "notes.yaml"
    p.write_text("shopping: [eggs, milk]\n")
    _one_line_error(spec_check("lint", str(p)), "not a recognized training config", "--kind")
    (tmp_path / "empty_dir").mkdir()
    _one_line_error(spec_check("lint", str(tmp_path / "empty_dir")), "no training config found")


def test_wrong_value_types_do_not_crash(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(
        '{"train_batch_size": "lots", "train_micro_batch_size_per_gpu": [4], '
        '"fp16": "yes", "bf16": 3, "steps_per_print": {"a": 1}, "zero_optimization": null}'
    )
    r = spec_check("lint", "--format", "json", str(p))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr
    q = tmp_path / "t.toml"
    q.write_text(
        '[training]\nlocal_batch_size = "x"\nsteps = [1]\n[checkpoint]\nenable = "maybe"\n'
    )
    r = spec_check("lint", str(q))
    assert r.returncode in (0, 1), r.stderr
