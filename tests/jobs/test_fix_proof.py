"""The proof that the advice works (issue 30): every fix a finding carries, applied alone to
a copy of its job and linted again, clears that finding (it passes, or no longer applies)
and makes no other finding worse; the job stays readable. Then all of a job's fixes
together: what still fails or errs must say why no edit of its files clears it.

Run over every job of the public corpus (``tests/corpus`` and ``shared/corpus``, as
``tests/corpus/test_public_corpus.py`` lints them) and the written fixtures of
``tests/jobs/fixes/`` (a DeepSpeed JSON + HF YAML + sbatch job written by hand, a Megatron
launch script, a LightningCLI config), linted in-process with one built pack; each lint is
cached by the bytes of the job's folder. ``python -m tests.jobs.test_fix_proof`` prints what
still fails after all fixes, and why.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.test_public_corpus import EXPECTATIONS, _path
from validator.api.lint import lint_jobs
from validator.api.report_options import ReportOptions
from validator.api.steps import build
from validator.api.verb_options import LintOptions
from validator.jobs import edits
from validator.report.model import Finding, Status

HERE = Path(__file__).parent
ACCEPTANCE = HERE.parent / "acceptance" / "jobs"
# the written fixtures: this test's own jobs, and the acceptance jobs (a folder is linted as
# the jobs it holds)
WRITTEN = [HERE / "fixes" / "newuser" / "train.sbatch", HERE / "fixes" / "megatron" / "pretrain.sh",
           HERE / "fixes" / "lightning" / "config.yaml", HERE / "fixes" / "hf_model_only" / "train.yaml",
           *sorted(p for d in ("negative", "positive") for p in (ACCEPTANCE / d).iterdir()
                   if not p.name.startswith("_"))]
RANK = {Status.PASS: 0, Status.SKIP: 0, Status.WARN: 1, Status.ERROR: 2, Status.FAIL: 2}
# with the run sizes CKPT-02 needs, so that its Daly fix is proven too
SIZES = ("step_time=2", "gpu_count=1024")


def _jobs() -> list[Path]:
    out = [_path(e["file"]) for e in EXPECTATIONS if e["outcome"] != "refuse"]
    return [p for p in out if p.exists()] + WRITTEN


JOBS = _jobs()
_BUILT: dict[tuple[str, ...], Any] = {}
_CACHE: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[Finding, ...] | str]] = {}


class Unreadable(Exception):
    """The lint of a job refused it whole (exit 2)."""


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _lint(job: Path, root: Path, sets: tuple[str, ...] = ()) -> tuple[tuple[Finding, ...], str]:
    """The findings of ``job`` (inside the copied folder ``root``), cached by the bytes of the
    folder: a hit made in another copy has its fixes' paths moved to this one."""
    from dataclasses import replace

    from validator.errors import SpecCheckError

    key = (_digest(root) + str(job.relative_to(root)), sets)
    if key not in _CACHE:
        opts = ReportOptions(sets=sets)
        if sets not in _BUILT:
            _BUILT[sets] = build(opts, ("job",))
        try:
            out = lint_jobs(LintOptions(report=opts, paths=(job,)), built=_BUILT[sets])
            _CACHE[key] = (str(root), out.report.findings)
        except SpecCheckError as exc:
            _CACHE[key] = (str(root), str(exc))
    was, got = _CACHE[key]
    if isinstance(got, str):
        raise Unreadable(got)
    if was == str(root):
        return got, was
    moved = tuple(replace(f, fixes=[{**fx, "file": str(root) + fx["file"][len(was):]} for fx in f.fixes])
                  if f.fixes else f for f in got)
    return moved, was


def _copy(job: Path, tmp: Path) -> tuple[Path, Path]:
    """A copy of the job's folder (its files name each other relatively; a corpus tree is
    copied whole, from its entry under tests/corpus/<format>/), and the job in it."""
    corpus = HERE.parent / "corpus"
    src = job if job.is_dir() else job.parent
    if corpus in job.parents:
        parts = job.relative_to(corpus).parts
        if len(parts) > 2:
            src = corpus / parts[0] / parts[1]
    root = tmp / "job"
    shutil.copytree(src, root, symlinks=True)
    return root, root / job.relative_to(src) if job != src else root


def _by_key(findings: tuple[Finding, ...]) -> dict[tuple[str, str | None], Finding]:
    """Findings by rule and item, and by job where a folder holds several (its subject's
    name, less the folder the copy is in)."""
    return {(f.rule, f.item) if len({g.subject for g in findings}) == 1 else
            (f"{Path(f.subject).name}:{f.rule}", f.item): f for f in findings}


def _apply(root: Path, fixes: list[dict[str, Any]]) -> None:
    for fx in fixes:
        p = Path(fx["file"])
        p.write_text(edits.apply(p.read_text(), fx))  # type: ignore[arg-type]


def _key(findings: tuple[Finding, ...], f: Finding) -> tuple[str, str | None]:
    return next(k for k, g in _by_key(findings).items() if g is f)


def _fixable(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.status in (Status.FAIL, Status.ERROR)
            and any(not fx.get("needs") for fx in f.fixes or ())]


def _worse(before: tuple[Finding, ...], after: tuple[Finding, ...], target: tuple[str, str | None]) -> list[str]:
    old = _by_key(before)
    out = []
    for key, f in _by_key(after).items():
        if key == target:
            continue
        was = old.get(key)
        if RANK[f.status] > (RANK[was.status] if was is not None else 0):
            out.append(f"{f.rule}: {was.status.value if was else 'absent'} -> {f.status.value}: {f.message}")
    return out


def _case_id(p: Path) -> str:
    return p.name[:70]


@pytest.mark.parametrize("sets", [(), SIZES], ids=["plain", "sized"])
@pytest.mark.parametrize("job", JOBS, ids=_case_id)
def test_each_fix_alone_clears_its_finding_and_worsens_nothing(job: Path, sets: tuple[str, ...],
                                                                tmp_path: Path) -> None:
    root, copy = _copy(job, tmp_path)
    try:
        before, _ = _lint(copy, root, sets)
    except Unreadable:
        pytest.skip("its copy is refused whole (a config read only with its repository's tree)")
    problems = []
    for f in _fixable(before):
        fixes = [dict(fx) for fx in f.fixes or () if not fx.get("needs")]
        case = tmp_path / f"fix-{len(problems)}-{f.rule}"
        shutil.copytree(root, case, symlinks=True)
        moved = [{**fx, "file": str(case / Path(fx["file"]).relative_to(root))} for fx in fixes]
        try:
            _apply(case, moved)
        except edits.EditError as exc:
            problems.append(f"{f.rule}: its fix cannot be applied: {exc}")
            continue
        shown = "; ".join(f"{fx['target']} = {fx['value']!r}" for fx in fixes)
        try:
            after, _ = _lint(case / copy.relative_to(root), case, sets)
        except Unreadable as exc:
            problems.append(f"{f.rule}: {shown} makes the job refused: {exc}")
            continue
        if any(a.rule.startswith("LINT-00") for a in after):
            problems.append(f"{f.rule}: {shown} makes the job unreadable")
            continue
        now = _by_key(after).get(_key(before, f))
        if now is not None and now.status not in (Status.PASS, Status.SKIP):
            problems.append(f"{f.rule}: {shown} leaves it {now.status.value}: {now.message}")
        problems += [f"{f.rule}: {shown} makes worse: {w}" for w in _worse(before, after, _key(before, f))]
    assert not problems, "\n".join(problems)


def remaining(job: Path, tmp: Path, sets: tuple[str, ...] = ()) -> tuple[list[Finding], list[Finding]]:
    """All of the job's fixes applied at once: (what still fails or errs, what was fixed)."""
    root, copy = _copy(job, tmp)
    before, _ = _lint(copy, root, sets)
    fixed = _fixable(before)
    seen = set()
    todo = []
    for f in fixed:
        for fx in f.fixes or ():
            key = (fx["file"], fx["target"], repr(fx["value"]))
            if not fx.get("needs") and key not in seen:
                seen.add(key)
                todo.append(dict(fx))
    _apply(root, todo)
    after, _ = _lint(copy, root, sets)
    return [f for f in after if f.status in (Status.FAIL, Status.ERROR) and not f.rule.startswith("LINT-00")], fixed


@pytest.mark.parametrize("job", JOBS, ids=_case_id)
def test_all_fixes_together_leave_only_findings_that_say_why(job: Path, tmp_path: Path) -> None:
    try:
        left, _fixed = remaining(job, tmp_path, SIZES)
    except Unreadable:
        pytest.skip("its copy is refused whole (a config read only with its repository's tree)")
    silent = [f"{f.rule} ({f.status.value}): {f.message}" for f in left
              if not f.no_fix and not any(fx.get("needs") for fx in f.fixes or ())]
    assert not silent, "failing after every fix, with neither an edit nor a reason why none:\n" + "\n".join(silent)


def test_the_proof_can_fail(tmp_path: Path) -> None:
    """A fix that names a key no reader counts is caught: the HF job's finding stays failing
    when the fix sets the key the issue found ignored before (skip_memory_metrics)."""
    job = HERE / "fixes" / "newuser" / "train.sbatch"
    root, copy = _copy(job, tmp_path)
    before, _ = _lint(copy, root)
    mem = next(f for f in before if f.rule == "MON-01.memory-not-emitted")
    _apply(root, [{"file": str(root / "train.yaml"), "kind": "key", "target": "skip_memory_metrics",
                   "value": False, "why": ""}])
    after, _ = _lint(copy, root)
    assert _by_key(after)[(mem.rule, mem.item)].status in (Status.FAIL, Status.ERROR)


def test_the_written_job_gets_the_issues_fixes() -> None:
    """The new user's job of issue 30: each fix names the setting the reader counts, in the
    file of its framework."""
    job = HERE / "fixes" / "newuser" / "train.sbatch"
    findings, _ = _lint(job, job.parent)
    got = {(f.rule, Path(fx["file"]).name, fx["target"], fx["value"]) for f in findings for fx in f.fixes or ()}
    assert ("MON-01.gpu-utilization-not-emitted", "train.yaml", "include_num_input_tokens_seen", True) in got
    assert ("MON-01.memory-not-emitted", "ds_config.json", "steps_per_print", 100) in got
    assert ("PREC-01.full-precision-training", "train.yaml", "bf16", True) in got
    nofix = {f.rule: f.no_fix for f in findings if f.no_fix}
    assert "recovery log" in nofix["REC-02.hang-detection-too-slow"]
    assert "train.sbatch" in nofix["MON-01.collective-latency-not-emitted"]


def test_the_fix_names_the_cause_not_a_neighbouring_key() -> None:
    """HF checkpoints of the model only cannot resume training: the fix turns
    save_only_model off, at its line, rather than naming save_strategy (issue 30)."""
    job = HERE / "fixes" / "hf_model_only" / "train.yaml"
    findings, _ = _lint(job, job.parent)
    ckpt = _by_key(findings)[("CKPT-01.checkpointing-disabled", None)]
    assert [(fx["target"], fx["value"], fx.get("line")) for fx in ckpt.fixes or ()] == [("save_only_model", False, 11)]


def test_rec02_advice_as_written_keeps_the_job_readable(tmp_path: Path) -> None:
    """REC-02's remediation, followed as written (NVRx ft_launcher with a rank heartbeat in
    place of torchrun), leaves a job spec-check reads, and clears the hang finding: it was
    refused as "not a training job" (issue 30)."""
    job = HERE / "fixes" / "megatron" / "pretrain.sh"
    root, copy = _copy(job, tmp_path)
    before, _ = _lint(copy, root)
    assert _by_key(before)[("REC-02.hang-detection-too-slow", None)].status is Status.FAIL
    copy.write_text(copy.read_text().replace("\ntorchrun ", "\nft_launcher --ft-rank-heartbeat-timeout 30 "))
    after, _ = _lint(copy, root)
    assert _by_key(after)[("REC-02.hang-detection-too-slow", None)].status is Status.PASS


def test_a_resume_setting_that_breaks_a_fresh_run_is_no_resume(tmp_path: Path) -> None:
    """torchtune's resume_from_checkpoint: True raises on a fresh run (the recipe state is
    missing): it is not counted as automatic resume, and no fix proposes it (issue 30)."""
    src = HERE.parent / "corpus" / "torchtune_yaml" / "pytorch__torchtune__recipes__configs__llama3_1__8B_full.yaml"
    root = tmp_path / "job"
    root.mkdir()
    job = root / "8B_full.yaml"
    job.write_text(src.read_text().replace("resume_from_checkpoint: False", "resume_from_checkpoint: True"))
    assert "resume_from_checkpoint: True" in job.read_text()
    findings, _ = _lint(job, root)
    ckpt3 = [f for f in findings if f.rule == "CKPT-03.resume-not-automatic"]
    assert ckpt3 and ckpt3[0].status is Status.FAIL and "raises on a fresh run" in str(ckpt3[0].source)
    assert not any(fx["target"].endswith("resume_from_checkpoint") for f in findings for fx in f.fixes or ())


if __name__ == "__main__":
    import sys
    import tempfile

    for job in JOBS:
        with tempfile.TemporaryDirectory() as d:
            left, fixed = remaining(job, Path(d), SIZES)
        print(f"{job}: {len(fixed)} fixed, {len(left)} left")
        for f in left:
            why = f.no_fix or "; ".join(str(fx.get("needs")) for fx in f.fixes or ()) or "(no reason given)"
            print(f"  {f.status.value} {f.rule}: {why}")
    sys.exit(0)
