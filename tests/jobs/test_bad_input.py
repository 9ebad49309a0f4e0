"""Hostile and broken input: every case ends in an ``error`` finding at file:line or a
one-line exit-2 message, within seconds and bounded memory, and the job's other files
are still linted. Nothing in a YAML file is ever executed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jobs.util import ROOT, facts, spec_check, value

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


def _as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
    """``spec-check ARGS`` as uid/gid 65534, so permissions apply even when tests run as root."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not available")
    cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {**os.environ, "HOME": "/tmp", "SOURCE_DATE_EPOCH": "1795000000", "COLUMNS": "200"}
    return subprocess.run(
        [*cmd, sys.executable, "-m", "validator", *args],
        capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60,
    )


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A world-traversable temp dir (pytest's tmp_path sits under 0700 dirs when root)."""
    d = Path(tempfile.mkdtemp(prefix="spec-check-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreadable_file(open_dir: Path) -> None:
    p = open_dir / "secret.json"
    p.write_text(GOOD)
    p.chmod(0)
    _one_line_error(_as_nobody("lint", str(p)), str(p) + ":", "cannot read", "Permission denied")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreadable_file_beside_a_good_one_is_a_finding_and_the_good_one_is_linted(
    open_dir: Path,
) -> None:
    secret = open_dir / "secret.json"
    secret.write_text(GOOD)
    secret.chmod(0)
    good = open_dir / "good.json"
    good.write_text(GOOD)
    good.chmod(0o644)
    r = _as_nobody("lint", "--format", "json", str(secret), str(good))
    assert r.returncode == 1, (r.stdout[-500:], r.stderr)
    result = json.loads(r.stdout)
    errs = [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert len(errs) == 1 and "Permission denied" in errs[0]["message"], errs
    assert errs[0]["location"]["file"] == str(secret)
    prec = next(f for f in result["findings"] if f["rule"] == "PREC-01.full-precision-training")
    assert prec["status"] == "pass" and prec["location"]["file"] == str(good)


def test_unreadable_file_as_root_is_simulated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from validator.io import source

    p = tmp_path / "secret.json"
    p.write_text(GOOD)
    real_open = os.open

    def deny(path, *a, **k):  # type: ignore[no-untyped-def]
        if Path(path) == p:
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", deny)  # every input is opened by validator.io.safeio
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


# ---- pre-commit: jobs of files, shell scripts that are no job, templates -----------------

DS_ACC = ROOT / "tests" / "acceptance" / "jobs" / "positive" / "deepspeed_accelerate"


def test_jobs_of_files_lints_each_files_folder_once_as_one_job() -> None:
    # alone, the DeepSpeed JSON lacks what its launcher gives (MON-01, REC-02 fail) ...
    alone = spec_check("lint", "--ignore-unknown", "--format", "json", str(DS_ACC / "ds_config.json"))
    assert alone.returncode == 1
    # ... as pre-commit names it, with a sibling: one job, the folder, conformant
    # (--set step_time: CKPT-02's optimum needs it; without it the MUST is not judged, INCOMPLETE)
    r = spec_check(
        "lint", "--ignore-unknown", "--jobs-of-files", "--set", "step_time=3s", "--format", "json",
        str(DS_ACC / "ds_config.json"), str(DS_ACC / "accelerate.yaml"),
    )
    assert r.returncode == 0, r.stdout[-2000:]
    result = json.loads(r.stdout)
    # the job is named after its entry point, which names the two files pre-commit named
    assert [s["name"] for s in result["subjects"]] == [str(DS_ACC / "launch.slurm")]
    files = {f["location"]["file"] for f in result["findings"] if f.get("location")}
    assert str(DS_ACC / "launch.slurm") in files  # the sibling the commit did not touch


def test_jobs_of_files_is_not_recursive_and_keeps_folders_apart(tmp_path: Path) -> None:
    (tmp_path / "ds.json").write_text(GOOD)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "broken.json").write_text('{"train_batch_size": 8,,}')
    r = spec_check("lint", "--jobs-of-files", "--format", "json", str(tmp_path / "ds.json"))
    result = json.loads(r.stdout)
    assert [s["name"] for s in result["subjects"]] == [str(tmp_path / "ds.json")]
    assert not [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    r = spec_check(
        "lint", "--jobs-of-files", "--format", "json", str(tmp_path / "ds.json"), str(sub / "broken.json")
    )
    result = json.loads(r.stdout)
    assert r.returncode == 1
    errs = [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert [e["location"]["file"] for e in errs] == [str(sub / "broken.json")]


def test_plain_shell_script_is_no_job(tmp_path: Path) -> None:
    p = tmp_path / "build.sh"
    p.write_text("#!/bin/bash\nset -e\necho hello\npip install deepspeed\nmake all\n")
    r = spec_check("lint", "--ignore-unknown", "--format", "json", str(p))
    assert r.returncode == 0, r.stdout[-2000:]
    assert json.loads(r.stdout)["findings"] == []
    r = spec_check("lint", "--ignore-unknown", "--jobs-of-files", "--format", "json", str(p))
    assert r.returncode == 0 and json.loads(r.stdout)["findings"] == []
    _one_line_error(spec_check("lint", str(p)), "not a training job", "--kind")
    _one_line_error(spec_check("lint", str(tmp_path)), "no training config found")


@pytest.mark.parametrize(
    "text",
    [
        "#!/bin/bash\n#SBATCH --nodes=2\necho go\n",
        "#!/bin/bash\nsrun python train.py\n",
        "torchrun --nproc_per_node 8 train.py\n",
        "cd /x && exec torchrun train.py\n",
        'CMD="torchrun --nnodes 2 train.py"\n$CMD\n',
        "python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py\n",
        "python3 -u -m torch.distributed.launch $ARGS train.py\n",
        "accelerate launch --config_file a.yaml train.py\n",
        "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n",
        "mpirun -np 16 python train.py\n",
        "export NCCL_IB_HCA=mlx5\npython train.py\n",
        "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n",
    ],
)
def test_job_shell_scripts_are_recognized(text: str) -> None:
    from validator.jobs.format_detection import syntax_of

    assert syntax_of(Path("run.sh"), text) == "shell"


@pytest.mark.parametrize(
    "text",
    [
        "#!/bin/bash\necho hello\n",
        "pip install deepspeed torchrun-tools\n",
        "echo 'use torchrun to launch'\n",
        "export PATH=$PATH:/opt/bin\npython setup.py build\n",
    ],
)
def test_other_shell_scripts_are_not(text: str) -> None:
    from validator.jobs.format_detection import syntax_of

    assert syntax_of(Path("build.sh"), text) is None


HELM = (
    "{{- if .Values.enabled }}\n"
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"
    "  labels:\n    {{- include \"chart.labels\" . | nindent 4 }}\n{{- end }}\n"
)


def test_ignore_unknown_passes_over_templates_but_not_broken_configs(tmp_path: Path) -> None:
    helm = tmp_path / "configmap.yaml"
    helm.write_text(HELM)
    r = spec_check("lint", "--ignore-unknown", "--format", "json", str(helm))
    assert r.returncode == 0, r.stdout[-2000:]
    assert json.loads(r.stdout)["findings"] == []
    _one_line_error(spec_check("lint", str(helm)), "invalid YAML")  # named without the flag
    ds = tmp_path / "ds_config.json"
    ds.write_text('{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true},,\n}\n')
    for extra in ((), ("--jobs-of-files",)):
        r = spec_check("lint", "--ignore-unknown", *extra, "--format", "json", str(helm), str(ds))
        assert r.returncode == 1, r.stdout[-2000:]
        errs = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
        assert [(e["location"]["file"], e["location"]["line"]) for e in errs] == [(str(ds), 3)]


# ---- size cap and node budget ------------------------------------------------------------


def _yaml_of_size(n_bytes: int) -> str:
    head = "trainer:\n  precision: bf16\ndata:\n"
    rows, size, i = [], len(head), 0
    while True:
        row = f"  key_{i}: [value_{i}, {i}, {i}.5]\n"
        if size + len(row) > n_bytes:
            break
        rows.append(row)
        size += len(row)
        i += 1
    return head + "".join(rows)


def test_large_alias_free_yaml_under_the_cap_is_read(tmp_path: Path) -> None:
    from validator.io.source import MAX_BYTES, parse_yaml, read_text

    assert MAX_BYTES == 4 * 2**20
    p = tmp_path / "big.yaml"
    p.write_text(_yaml_of_size(MAX_BYTES - 100))
    tree = parse_yaml(read_text(p), str(p))
    assert tree.get("trainer", "precision") == "bf16"
    assert tree.line("trainer", "precision") == 2
    last = len(tree.data["data"]) - 1
    assert tree.get("data", f"key_{last}") == [f"value_{last}", last, last + 0.5]


def test_yaml_over_the_cap_is_refused_by_size(tmp_path: Path) -> None:
    from validator.io.source import MAX_BYTES

    p = tmp_path / "big.yaml"
    p.write_text(_yaml_of_size(MAX_BYTES + 100))
    _one_line_error(spec_check("lint", str(p)), str(p) + ":", "larger than 4 MiB")


def test_too_many_nodes_without_aliases_is_not_called_an_alias_bomb(tmp_path: Path) -> None:
    from validator.io.source import MAX_NODES, ReadError, parse_yaml

    text = "trainer:\n  x: [" + "1," * (MAX_NODES + 10) + "1]\n"
    with pytest.raises(ReadError) as exc:
        parse_yaml(text, "many.yaml")
    assert "too large for a training config" in exc.value.message
    assert "alias" not in exc.value.message


def test_few_aliases_are_fine(tmp_path: Path) -> None:
    from validator.io.source import parse_yaml

    tree = parse_yaml("base: &b {precision: bf16}\ntrainer:\n  <<: *b\n  devices: 8\nother: *b\n", "f")
    assert tree.data["trainer"] == {"precision": "bf16", "devices": 8}
    assert tree.data["other"] == {"precision": "bf16"}
    assert tree.line("trainer", "precision") == 1 and tree.line("trainer", "devices") == 4


# ---- things that are not regular files ------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_as_path_or_in_a_job_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    # a regression blocks in open(); the timeout turns that into a failure, not a hang
    _one_line_error(spec_check("lint", str(fifo), timeout=30), str(fifo) + ":", "not a regular file")
    (tmp_path / "ds.json").write_text(GOOD)
    r = spec_check("lint", "--format", "json", str(tmp_path), timeout=30)
    assert r.returncode == 1, r.stderr
    result = json.loads(r.stdout)
    errs = [f for f in result["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert [(e["location"]["file"], "not a regular file" in e["message"]) for e in errs] == [(str(fifo), True)]
    prec = next(f for f in result["findings"] if f["rule"] == "PREC-01.full-precision-training")
    assert prec["status"] == "pass"
    # pre-commit naming ds.json lints ds.json's job, which the FIFO is no part of ...
    r = spec_check("lint", "--jobs-of-files", "--format", "json", str(tmp_path / "ds.json"), timeout=30)
    assert r.returncode == 1 and "not a regular file" not in r.stdout
    # ... and naming the FIFO alone reports it (nothing readable: exit 2), without hanging
    r = spec_check("lint", "--jobs-of-files", "--format", "json", str(fifo), timeout=30)
    _one_line_error(r, str(fifo) + ":", "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_as_profile_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "profile.yaml"
    os.mkfifo(fifo)
    r = spec_check("lint", "--profile", str(fifo), str(DS_ACC), timeout=30)
    _one_line_error(r, str(fifo), "not a regular file")
