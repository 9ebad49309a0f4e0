"""Read only what you were given: no verb prints bytes of a file it was not given.

``report`` shows the source lines a result carries (captured when lint read the config)
and never opens the files a result names; ``lint`` follows a file a config names only
inside the job's folder, as a config file name, or when it is named on the command line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.jobs.util import spec_check

SECRET = "AWS_SECRET_ACCESS_KEY=do-not-print-me"
FORMATS = ["terminal", "json", "markdown", "html", "junit", "sarif", "github"]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    p = d / "credentials.json"  # a config-like name: the name alone must not let it be read
    p.write_text(SECRET + "\n")
    return p


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_never_opens_a_file_the_result_names(tmp_path: Path, lint_result: Path, secret: Path,
                                                     fmt: str) -> None:
    doc = json.loads(lint_result.read_text())
    located = [f for f in doc["findings"] if f.get("location")]
    assert located
    for f in located:
        f["location"] = {"file": str(secret), "line": 1}  # no "text": nothing to show
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))
    r = spec_check("report", "--format", fmt, str(tampered))
    assert r.returncode in (0, 1), r.stderr
    assert "do-not-print-me" not in r.stdout + r.stderr
    assert str(secret) in r.stdout or fmt in ("junit", "markdown")  # the path is named, its bytes are not


def test_lint_result_carries_its_source_lines_and_report_shows_them(lint_result: Path, tmp_path: Path) -> None:
    doc = json.loads(lint_result.read_text())
    texts = [f["location"].get("text") for f in doc["findings"] if f.get("location")]
    assert '  "train_batch_size": 1000,' in texts
    assert all(t is None or len(t) <= 200 for t in texts)
    failing = next(f for f in doc["findings"] if f["status"] == "fail")
    failing["location"] = {"file": "/nonexistent/train.json", "line": 3, "text": '  "zero_stage": 3,'}
    moved = tmp_path / "moved.json"  # the config is not here: the result still shows its line
    moved.write_text(json.dumps(doc))
    r = spec_check("report", str(moved))
    assert '3 |   "zero_stage": 3,' in r.stdout or '3 | "zero_stage": 3,' in r.stdout, r.stdout


def _accelerate(folder: Path, ds_ref: str) -> Path:
    folder.mkdir(exist_ok=True)
    acc = folder / "accelerate.yaml"
    acc.write_text(
        "distributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 16\nnum_machines: 2\n"
        f"deepspeed_config:\n  deepspeed_config_file: {ds_ref}\n"
    )
    return acc


@pytest.mark.parametrize("fmt", FORMATS)
def test_lint_does_not_follow_an_absolute_path_out_of_the_job(tmp_path: Path, secret: Path, fmt: str) -> None:
    acc = _accelerate(tmp_path / "job", str(secret))
    r = spec_check("lint", "--format", fmt, str(acc))
    assert r.returncode == 1, r.stderr
    assert "do-not-print-me" not in r.stdout + r.stderr
    if fmt == "json":
        errs = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
        assert len(errs) == 1 and errs[0]["location"]["file"] == str(acc) and errs[0]["location"]["line"] == 6
        assert str(secret) in errs[0]["message"] and "not read" in errs[0]["message"]


def test_lint_does_not_follow_a_symlink_out_of_the_job(tmp_path: Path, secret: Path) -> None:
    job = tmp_path / "job"
    acc = _accelerate(job, "ds.json")
    (job / "ds.json").symlink_to(secret)
    for target in (acc, job):  # the file alone, and the folder walked as one job
        r = spec_check("lint", "--format", "json", str(target))
        assert "do-not-print-me" not in r.stdout + r.stderr
        msgs = [f["message"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
        assert msgs and all("not read" in m for m in msgs), msgs


def test_lint_does_not_follow_a_non_config_name_inside_the_job(tmp_path: Path) -> None:
    job = tmp_path / "job"
    acc = _accelerate(job, "notes.txt")
    (job / "notes.txt").write_text(SECRET + "\n")
    r = spec_check("lint", "--format", "json", str(acc))
    assert "do-not-print-me" not in r.stdout
    msgs = [f["message"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert any("not a config file name" in m for m in msgs), msgs


def test_lint_follows_inside_the_job_and_what_the_command_line_names(tmp_path: Path) -> None:
    ds = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
          "bf16": {"enabled": True}}
    inside = _accelerate(tmp_path / "a", "ds.json")
    (tmp_path / "a" / "ds.json").write_text(json.dumps(ds))
    elsewhere = tmp_path / "shared" / "ds_shared.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text(json.dumps(ds))
    named = _accelerate(tmp_path / "b", str(elsewhere))
    for acc, extra in ((inside, ()), (named, (str(elsewhere),))):
        r = spec_check("lint", "--format", "json", str(acc), *extra)
        findings = json.loads(r.stdout)["findings"]
        assert not [f for f in findings if f["rule"] == "LINT-00.unreadable-config"], findings
        files = {(f.get("location") or {}).get("file") for f in findings}
        assert str(acc.parent / "ds.json") in files or str(elsewhere) in files


def test_renderers_do_not_open_files(monkeypatch: pytest.MonkeyPatch, lint_result: Path) -> None:
    """In-process: rendering every format opens no file at all."""
    import builtins
    import io

    from validator.renderers import available, get_renderer
    from validator.report.results import load_result

    _, rep = load_result(lint_result)
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy(path, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(path))
        return real_open(path, *a, **k)

    def spy_os(path, *a, **k):  # type: ignore[no-untyped-def]
        opened.append(str(path))
        return real_os_open(path, *a, **k)

    for name in sorted(available()):
        get_renderer(name).render(rep, io.StringIO())  # warm imports first
    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(os, "open", spy_os)
    for name in sorted(available()):
        get_renderer(name).render(rep, io.StringIO())
    assert [p for p in opened if "ds_batch_mismatch" in p or p.endswith(".json")] == []
