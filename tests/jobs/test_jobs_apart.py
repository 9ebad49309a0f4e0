"""Jobs kept apart: ``lint DIR`` finds each job (an entry point plus the files it names),
gives each its own verdict, and no job's findings depend on another job's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.jobs.util import ROOT, spec_check

POS = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "deepspeed_accelerate"
NEG = ROOT / "tests" / "acceptance" / "jobs" / "negative"


def _lint(*args: str) -> tuple[int, dict]:
    r = spec_check("lint", "--format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def _problems(result: dict, subject: str) -> list[tuple[str, str, int | None]]:
    return sorted(
        (f["rule"], f["status"], (f.get("location") or {}).get("line"))
        for f in result["findings"]
        if f["subject"] == subject and f["status"] in ("fail", "error", "warn")
    )


def _mixed(tmp_path: Path) -> Path:
    """A good job (a launcher naming an Accelerate config naming a DeepSpeed JSON) and a
    bad one (a torchrun script) side by side in one folder."""
    d = tmp_path / "configs"
    shutil.copytree(POS, d)
    shutil.copy(NEG / "torchrun_no_restarts.sh", d / "bad.sh")
    return d


STEP = ("--set", "step_time=3s")  # CKPT-02 judged: without a step time it is not (INCOMPLETE)


def test_a_folder_of_two_jobs_gives_each_its_own_findings(tmp_path: Path) -> None:
    d = _mixed(tmp_path)
    code, result = _lint(*STEP, str(d))
    assert code == 1
    import jsonschema

    jsonschema.validate(result, json.loads((ROOT / "spec" / "result.schema.json").read_text()))
    jobs = {j["name"]: j for j in result["extra"]["jobs"]}
    good, bad = str(d / "launch.slurm"), str(d / "bad.sh")
    assert set(jobs) == {good, bad}
    assert jobs[good]["files"] == [good, str(d / "accelerate.yaml"), str(d / "ds_config.json")]
    assert jobs[good]["conformant"] is True and jobs[bad]["conformant"] is False
    assert jobs[bad]["files"] == [bad]
    # the bad job's findings are exactly those it has alone: the good job's launcher does
    # not satisfy its restart or metrics rules
    _, alone = _lint(*STEP, str(d / "bad.sh"))
    assert _problems(result, bad) == _problems(alone, str(d / "bad.sh"))
    assert ("REC-01.no-automatic-restart", "fail", None) in _problems(result, bad)
    _, good_alone = _lint(*STEP, str(d / "launch.slurm"))
    assert _problems(result, good) == _problems(good_alone, good)
    # each finding names its job, in every machine format
    assert {f["subject"] for f in result["findings"]} == {good, bad}
    sarif = json.loads(spec_check("lint", "--format", "sarif", str(d)).stdout)
    assert {r["properties"]["job"] for r in sarif["runs"][0]["results"]} == {good, bad}
    junit = spec_check("lint", "--format", "junit", str(d)).stdout
    assert f'name="{good}"' in junit and f'name="{bad}"' in junit


def test_terminal_lists_each_job_with_its_verdict(tmp_path: Path) -> None:
    d = _mixed(tmp_path)
    out = spec_check("lint", *STEP, str(d)).stdout
    assert "Jobs (2, 1 not conformant)" in out
    assert f"conformant {d / 'launch.slurm'} + {d / 'accelerate.yaml'}, {d / 'ds_config.json'}" in out
    assert f"NOT CONFORMANT {d / 'bad.sh'}" in out
    # without a step time the good job's CKPT-02 is not judged: INCOMPLETE, not failing
    out = spec_check("lint", str(d)).stdout
    assert "Jobs (2, 2 not conformant)" in out and f"INCOMPLETE {d / 'launch.slurm'}" in out


def test_job_option_reads_a_folder_as_one_job(tmp_path: Path) -> None:
    d = _mixed(tmp_path)
    _, result = _lint("--job", str(d))
    assert [j["name"] for j in result["extra"]["jobs"]] == [str(d)]
    assert {f["subject"] for f in result["findings"]} == {str(d)}


def test_twenty_recipes_in_one_folder_are_twenty_jobs(tmp_path: Path) -> None:
    for i in range(20):
        bf16 = "bf16: true\n" if i % 2 else ""
        (tmp_path / f"recipe_{i:02}.yaml").write_text(
            f"output_dir: out{i}\nper_device_train_batch_size: 4\n{bf16}save_strategy: steps\n"
        )
    _, result = _lint(str(tmp_path))
    jobs = result["extra"]["jobs"]
    assert len(jobs) == 20
    prec = {
        f["subject"]: f["status"]
        for f in result["findings"]
        if f["rule"] == "PREC-01.full-precision-training"
    }
    # each recipe's own precision decides its verdict, not its neighbour's
    assert [prec[str(tmp_path / f"recipe_{i:02}.yaml")] for i in range(4)] == [
        "fail", "pass", "fail", "pass"
    ]


def test_unnamed_env_file_joins_the_jobs_of_its_folder(tmp_path: Path) -> None:
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=32\n#SBATCH --gpus-per-node=8\n"
        "srun torchrun --nnodes 32 --nproc-per-node 8 --max-restarts 1 train.py\n"
    )
    (tmp_path / "nccl.env").write_text("NCCL_ALGO=Ring\n")
    _, result = _lint(str(tmp_path))
    (job,) = result["extra"]["jobs"]
    assert job["files"] == [str(tmp_path / "job.sbatch"), str(tmp_path / "nccl.env")]
    assert any(f["rule"] == "COMM-01.nccl-algo-ring-pinned-at-scale" and f["status"] == "warn"
               for f in result["findings"])


def test_sourced_file_is_named_by_the_script(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "cluster.env").write_text("export NCCL_DEBUG=INFO\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\nsource env/cluster.env\ntorchrun train.py\n")
    (tmp_path / "other.sh").write_text("#!/bin/bash\ntorchrun --max-restarts 3 other.py\n")
    _, result = _lint(str(tmp_path))
    jobs = {j["name"]: j["files"] for j in result["extra"]["jobs"]}
    assert jobs == {
        str(tmp_path / "other.sh"): [str(tmp_path / "other.sh")],
        str(tmp_path / "run.sh"): [str(tmp_path / "run.sh"), str(tmp_path / "env" / "cluster.env")],
    }
    debug = [f["subject"] for f in result["findings"]
             if f["rule"] == "COMM-01.nccl-debug-settings-in-production" and f["status"] == "warn"]
    assert debug == [str(tmp_path / "run.sh")]


def test_files_naming_each_other_are_one_job(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("#!/bin/bash\nsource b.sh\ntorchrun train.py\n")
    (tmp_path / "b.sh").write_text("#!/bin/bash\nsource a.sh\nexport NCCL_DEBUG=WARN\n")
    _, result = _lint(str(tmp_path))
    assert [j["name"] for j in result["extra"]["jobs"]] == [str(tmp_path / "a.sh")]
    assert result["extra"]["jobs"][0]["files"] == [str(tmp_path / "a.sh"), str(tmp_path / "b.sh")]


def test_pre_commit_lints_the_job_a_changed_file_belongs_to(tmp_path: Path) -> None:
    d = _mixed(tmp_path)
    # the DeepSpeed JSON changed: its job is the launcher's, not the folder's other job
    r = spec_check("lint", *STEP, "--jobs-of-files", "--format", "json", str(d / "ds_config.json"))
    assert r.returncode == 0, r.stdout[-2000:]
    assert [s["name"] for s in json.loads(r.stdout)["subjects"]] == [str(d / "launch.slurm")]
    r = spec_check("lint", "--jobs-of-files", "--format", "json", str(d / "bad.sh"),
                   str(d / "accelerate.yaml"))
    assert r.returncode == 1
    assert [s["name"] for s in json.loads(r.stdout)["subjects"]] == [
        str(d / "bad.sh"), str(d / "launch.slurm")
    ]


def test_env_file_with_no_job_beside_it_is_a_job_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "run.sh").write_text("#!/bin/bash\ntorchrun --max-restarts 2 train.py\n")
    (tmp_path / "b" / "nccl.env").write_text("NCCL_DEBUG=INFO\n")
    _, result = _lint(str(tmp_path))
    jobs = {j["name"]: j["files"] for j in result["extra"]["jobs"]}
    assert jobs == {
        str(tmp_path / "a" / "run.sh"): [str(tmp_path / "a" / "run.sh")],
        str(tmp_path / "b" / "nccl.env"): [str(tmp_path / "b" / "nccl.env")],
    }


def test_many_jobs_resolve_each_name_once_not_once_per_job(tmp_path: Path, monkeypatch: Any) -> None:
    """Which files a job may read is worked out once per run: 1,000 files are 1,000 jobs,
    and resolving every named path again for each job was a million ``realpath`` calls, 9 in
    10 of the run's time (bench/lint_bench.py). Counted, not timed: the calls grow linearly."""
    import os

    from tests.helpers import built
    from validator.cli.lint import lint_documents

    params = built().ctx.params
    calls = {"n": 0}
    real = os.path.realpath

    def counting(p: Any, *a: Any, **k: Any) -> str:
        calls["n"] += 1
        return real(p, *a, **k)

    def run(n: int) -> int:
        d = tmp_path / f"n{n}"
        d.mkdir()
        for i in range(n):
            shutil.copy(POS / "ds_config.json", d / f"ds{i:03d}.json")
        calls["n"] = 0
        monkeypatch.setattr(os.path, "realpath", counting)
        try:
            files = tuple(sorted(d.iterdir()))
            assert len(lint_documents(files, None, params)) == n  # one job each
            named = calls["n"]
            calls["n"] = 0
            assert len(lint_documents((d,), None, params)) == n  # the folder, split into jobs
            return max(named, calls["n"])
        finally:
            monkeypatch.setattr(os.path, "realpath", real)

    small, large = run(40), run(160)
    assert large <= 5 * small, (small, large)  # 4x the files: about 4x the calls, not 16x
