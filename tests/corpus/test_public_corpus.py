"""The public corpus: real configs from public repositories, each linted as a user would.

``MANIFEST.tsv`` names each file's repository, pinned commit, path, licence and sha256;
``expectations/<file>.yaml`` says what a careful reviewer finds in it (the outcome, lint
or refuse, and requirement, status and line of the findings that matter, with why).
``expectations/shared/`` does the same for the shared corpus, which is referenced in
place, never copied. A file whose reader is still being written says so under
``pending``: while it does not meet its expectation it is an expected failure, so the
expectation is already on record and turns into a pass when the reader lands.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.jobs.util import CORPUS as SHARED

HERE = Path(__file__).parent
EXPECT = HERE / "expectations"


def _manifest() -> list[dict[str, str]]:
    with (HERE / "MANIFEST.tsv").open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _expectations() -> list[dict[str, Any]]:
    out = []
    for p in sorted(EXPECT.rglob("*.yaml")):
        with p.open() as fh:
            out.append(yaml.safe_load(fh))
    return out


def _path(file: str) -> Path:
    return SHARED / file.removeprefix("shared:") if file.startswith("shared:") else HERE / file


EXPECTATIONS = _expectations()


def test_manifest_is_complete_and_pinned() -> None:
    rows = _manifest()
    expected = {e["file"] for e in EXPECTATIONS}
    repos = set()
    for row in rows:
        data = (HERE / row["local_file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["sha256"], row["local_file"]
        assert len(data) == int(row["bytes"])
        assert len(row["commit"]) == 40 and row["licence"], row
        assert row["local_file"] in expected, f"no expectations for {row['local_file']}"
        repos.add(row["repo"])
    shared = [e for e in EXPECTATIONS if e["file"].startswith("shared:")]
    if SHARED.is_dir():
        with (SHARED / "MANIFEST.tsv").open(newline="") as fh:
            srows = list(csv.DictReader(fh, delimiter="\t"))
        assert {"shared:" + r["local_file"] for r in srows} == {e["file"] for e in shared}
        repos |= {r["repo"] for r in srows}
        # the floor: at least 100 real configs from at least 30 repositories
        assert len(rows) + len(srows) >= 100
        assert len(repos) >= 30
    local = {r["local_file"] for r in rows}
    assert {e["file"] for e in EXPECTATIONS if not e["file"].startswith("shared:")} == local


def _lint(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from validator.cli import main

    try:
        main(["lint", str(path), "--format", "json"])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _check(exp: dict[str, Any], code: int, out: str, err: str) -> list[str]:
    """What does not hold, in words (empty when the file meets its expectations)."""
    if exp["outcome"] == "refuse":
        if code != 2 or err.count("\n") != 1:
            return [f"expected refusal, got exit {code}"]
        # a refusal names what was seen (``says``: words the one line must hold)
        return [f"refusal does not say {w!r}: {err.strip()}" for w in exp.get("says", []) if w not in err]
    if code not in (0, 1):
        return [f"expected a lint verdict, got exit {code}: {err.strip()}"]
    findings = json.loads(out)["findings"]
    problems = []
    for want in exp.get("findings", []):
        req, status, line = want["requirement"], want["status"], want.get("line")
        mine = [f for f in findings if f["requirement"] == req]
        if status == "absent":
            bad = [f for f in mine if f["status"] in ("error", "fail")]
            if bad:
                problems.append(f"{req}: expected none, got {bad[0]['status']}: {bad[0]['message']}")
            continue
        allowed = status if isinstance(status, list) else [status]
        # ``evidence``: words the finding's message or source must hold (the mechanism that
        # decides it: ``--no-save-optim``, not a default it overrides)
        words = want.get("evidence", [])
        hits = [
            f
            for f in mine
            if f["status"] in allowed
            and (line is None or (f.get("location") or {}).get("line") == line)
            and all(w in f"{f['message']} {f.get('source') or ''}" for w in words)
        ]
        # a requirement's other rules may skip; none of them may contradict the status
        worse = [f for f in mine if f["status"] in ("fail", "error") and f["status"] not in allowed]
        if not hits or worse:
            got = sorted({(f["status"], (f.get("location") or {}).get("line")) for f in mine}, key=str)
            problems.append(f"{req}: expected {allowed} at line {line}, got {got} ({want['why']})")
    return problems


def _formats(path: Path) -> list[str]:
    from validator.jobs import read_job

    return list(read_job([path])[0]["facts"]["job.formats"]["value"])


@pytest.mark.parametrize("exp", EXPECTATIONS, ids=[e["file"].split("/")[-1][:80] for e in EXPECTATIONS])
def test_file_meets_its_expectations(exp: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(exp["file"])
    if exp["file"].startswith("shared:") and not path.is_file():
        pytest.skip("shared/corpus not present")
    code, out, err = _lint(path, capsys)
    assert "Traceback" not in err
    problems = _check(exp, code, out, err)
    if "formats" in exp and not problems:
        got = _formats(path)
        if got != exp["formats"]:
            problems.append(f"read as {got}, expected {exp['formats']}")
    if problems and exp.get("pending"):
        pytest.xfail(f"waiting for {exp['pending']}: " + "; ".join(problems))
    assert not problems, "; ".join(problems)


def test_readme_reports_the_share_linted_and_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's numbers are today's: configs, repositories, linted, refused."""
    import re

    if not SHARED.is_dir():
        pytest.skip("shared/corpus not present")
    text = (HERE.parent.parent / "README.md").read_text()
    m = re.search(
        r"<!-- corpus-share -->(\d+) real configs from (\d+) public repositories,\s+"
        r"of which (\d+) are linted and (\d+) refused with exit 2<!-- /corpus-share -->",
        text,
    )
    assert m, "README lacks the corpus-share sentence"
    codes = [_lint(_path(e["file"]), capsys)[0] for e in EXPECTATIONS]
    with (SHARED / "MANIFEST.tsv").open(newline="") as fh:
        repos = {r["repo"] for r in _manifest()} | {
            r["repo"] for r in csv.DictReader(fh, delimiter="\t")
        }
    got = (len(codes), len(repos), sum(c != 2 for c in codes), sum(c == 2 for c in codes))
    assert tuple(map(int, m.groups())) == got, f"README says {m.groups()}, today {got}"
