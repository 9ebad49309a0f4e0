"""A new user's first hour (issue 22): the small breakages a first try meets, each as a
user meets it through the command line."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "fixtures" / "facts"


def spec_check(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env={**base, "COLUMNS": "200", **(env or {})}, cwd=cwd or ROOT, timeout=120)


def on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """stdout of spec-check on a pseudo-terminal, as a user's shell gives it."""
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    p = subprocess.Popen([sys.executable, "-m", "validator", *args], stdout=follower, stderr=subprocess.DEVNULL,
                         env={**base, **env}, cwd=ROOT)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert p.wait(timeout=120) == 1
    return out


def test_no_color_is_honoured_on_a_terminal() -> None:
    args = ("check", "--facts", str(FACTS / "dgx_h100_port_200g.json"))
    styled = on_a_terminal(*args, env={})
    plain = on_a_terminal(*args, env={"NO_COLOR": "1"})
    assert b"\x1b[" in styled  # the check can fail: a terminal does get colour
    assert b"\x1b[" not in plain
    assert b"NET-01.fabric-port-slow" in plain and b"FAIL" in plain


@pytest.mark.parametrize(("verb", "listed"), [
    (["rules"], "NET-01.fabric-port-slow"),
    (["spec"], "NET-01"),
])
def test_rules_and_spec_alone_list(verb: list[str], listed: str) -> None:
    r = spec_check(*verb)
    assert r.returncode == 0, r.stderr
    assert listed in r.stdout and "Usage:" not in r.stdout
    assert r.stdout == spec_check(*verb, {"rules": "list", "spec": "show"}[verb[0]]).stdout


@pytest.mark.parametrize(("typed", "meant"), [
    ("NET-1", "NET-01"),
    ("net-1", "NET-01"),
    ("PLAT-2.gpu-model-mixed", "PLAT-02.gpu-model-mixed"),
    ("NET-01.fabric-port-slo", "NET-01.fabric-port-slow"),
])
def test_a_mistyped_rule_id_suggests_the_one_meant(typed: str, meant: str) -> None:
    r = spec_check("rules", "explain", typed)
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    assert f"did you mean {meant}" in line
    assert "PLAT-02" not in line or meant.startswith("PLAT-02")  # not the pack's first rules


def test_a_mistyped_parameter_suggests_the_one_meant_in_one_line() -> None:
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--set", "gpu_cnt=8")
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    assert "did you mean 'gpu_count'?" in line
    assert "step_time" not in line and "shm_min" not in line  # not a dump of every parameter
    far = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--set", "zzz=8")
    assert far.returncode == 2 and "`spec-check spec show` lists every parameter" in far.stderr


@pytest.mark.parametrize(("setting", "example", "not_example"), [
    ("step_time=fast", '"90 s"', "Gb/s"),
    ("fabric_port_rate=fast", '"400 Gb/s"', "GiB"),
    ("shm_min=lots", '"1 GiB"', "Gb/s"),
])
def test_a_value_that_is_no_quantity_gets_an_example_in_its_own_unit(setting: str, example: str,
                                                                    not_example: str) -> None:
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--set", setting)
    assert r.returncode == 2
    assert f"e.g. {example}" in r.stderr and not_example not in r.stderr


def test_a_refusal_that_lists_kinds_lists_all_and_names_the_other_files(tmp_path: Path) -> None:
    from validator.jobs.format_detection import KINDS

    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(f"{name[0]}_unknown_key: 1\n")
    r = spec_check("lint", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"))
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    listed = line.split("use --kind to name its format: ", 1)[1].split(";", 1)[0]
    assert listed.split(", ") == list(KINDS)
    assert "more)" not in line and f"1 more file refused too: {tmp_path / 'b.yaml'}" in line


def test_probe_sign_and_diff_say_what_they_wrote(tmp_path: Path) -> None:
    facts = tmp_path / "facts.json"
    r = spec_check("probe", "-o", str(facts))
    assert r.returncode == 0, r.stderr
    assert f"spec-check: wrote facts to {facts} ({facts.stat().st_size:,} bytes)" in r.stderr
    result = tmp_path / "result.json"
    assert spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--format", "json", "-o",
                      str(result)).returncode == 0
    assert spec_check("keygen", str(tmp_path / "k")).returncode == 0
    signed = tmp_path / "signed.json"
    r = spec_check("sign", str(result), "--key", str(tmp_path / "k.key"), "-o", str(signed))
    assert r.returncode == 0, r.stderr
    assert f"spec-check: wrote signed result to {signed} ({signed.stat().st_size:,} bytes)" in r.stderr
    out = tmp_path / "diff.txt"
    r = spec_check("diff", str(result), str(result), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert f"spec-check: wrote terminal diff to {out}" in r.stderr


def test_diff_format_is_terminal_like_every_verb_and_text_still_works(tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--format", "json", "-o", str(result))
    terminal = spec_check("diff", str(result), str(result), "--format", "terminal")
    old = spec_check("diff", str(result), str(result), "--format", "text")
    assert terminal.returncode == old.returncode == 0 and terminal.stdout == old.stdout
    assert "is now --format terminal" in old.stderr
    helped = spec_check("diff", "--help").stdout
    assert "[terminal|json]" in helped and "text" not in helped.split("--format", 1)[1].split("\n", 1)[0]


def test_help_is_whole_and_in_a_users_words() -> None:
    rules = spec_check("rules", "--help", env={"COLUMNS": "80"}).stdout
    commands = rules.split("Commands:", 1)[1].split("Examples:", 1)[0]
    assert "..." not in commands and "(e.g." not in commands
    for line in commands.strip().splitlines():
        assert line.rstrip().endswith("."), line  # a sentence, not cut
    cluster = " ".join(spec_check("cluster", "--help").stdout.split())
    assert "lists each host's" in cluster and "number of hosts that passed" in cluster
    lint = " ".join(spec_check("lint", "--help").stdout.split())
    assert "--show passes" in lint and "[passes]" not in lint
    assert "rules/index.yaml" not in lint  # no internal file names in help


def test_health_wrapper_is_shipped_at_the_path_the_docs_give(tmp_path: Path) -> None:
    wrapper = ROOT / "deploy" / "slurm" / "spec-check-health"
    assert os.access(wrapper, os.X_OK)
    health_doc = (ROOT / "docs" / "health.md").read_text(encoding="utf-8")
    helped = spec_check("health", "--help").stdout
    for text in (health_doc, helped, wrapper.read_text()):
        assert "HealthCheckProgram=/usr/local/sbin/spec-check-health" in text or \
            "install -m 0755 deploy/slurm/spec-check-health /usr/local/sbin/spec-check-health" in text
    assert "deploy/slurm/spec-check-health" in helped
    assert "/usr/local/bin/spec-check-health" not in health_doc + helped  # one path only
    # run it with a stand-in spec-check that records its arguments
    fake = tmp_path / "spec-check"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_OUT"\n')
    fake.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "SPEC_CHECK": str(fake), "ARGS_OUT": str(tmp_path / "args"),
           "SPEC_CHECK_PROM": str(tmp_path / "g.prom")}
    r = subprocess.run([str(wrapper), "--profile", "p.yaml"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "args").read_text().split("\n")[:-1] == [
        "health", "--format", "prometheus", "-o", str(tmp_path / "g.prom"), "--profile", "p.yaml"]
    # and the real command takes those options
    assert "--format" in helped and "prometheus" in helped and "--profile" in helped


def test_docs_cite_no_design_or_install_doc_that_does_not_exist() -> None:
    for path in [ROOT / "README.md", ROOT / "pyproject.toml", *ROOT.glob("docs/*.md"), *ROOT.glob("validator/**/*.py"),
                 *ROOT.glob("spec/**/*.yaml")]:
        text = path.read_text(encoding="utf-8")
        for name in ("DESIGN.md", "docs/install.md"):
            assert name not in text or (ROOT / name).exists(), f"{path.relative_to(ROOT)} cites {name}"


def test_lint_doc_states_gpu_count_precedence_once_and_whole() -> None:
    text = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    bullets = [b for b in text.split("\n* ") if b.startswith("`--set gpu_count=N`")]
    assert len(bullets) == 1  # the old doc had two that contradicted each other
    assert "wins over the nodes x GPUs the files give" in bullets[0]
    assert "fills the world size when no file gives" not in text


def test_lint_is_quiet_by_default_problems_and_one_count_line(tmp_path: Path) -> None:
    job = ROOT / "tests" / "corpus" / "olmo_yaml" / "allenai__OLMo__configs__official-0724__OLMo-1B.yaml"
    quiet = spec_check("lint", str(job))
    assert quiet.returncode == 1
    lines = quiet.stdout.splitlines()
    assert not [ln for ln in lines if ln.lstrip().startswith(("PASS", "SKIP"))]  # no pass or skip lines
    assert "FAIL REC-02.hang-detection-too-slow" in quiet.stdout
    # CKPT-03 fails too since issue 30 (OLMo's try_load_latest_save defaults to False)
    [count] = [ln for ln in lines if ln.startswith("2 fail, 2 error, 2 warn")]
    assert count.endswith("(--show passes lists the passes and skips)")
    assert len(lines) < 40
    loud = spec_check("lint", str(job), "--show", "passes")
    assert loud.returncode == 1 and " PASS " in loud.stdout and "SKIP " in loud.stdout
    assert "(--show passes" not in loud.stdout


def test_a_folder_lint_names_the_files_it_did_not_lint_and_why(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(ROOT / "tests" / "acceptance" / "jobs" / "positive" / "lightning_slurm", job)
    (job / "values.yaml").write_text("replicas: 3\n")
    (job / "README.md").write_text("# the job\n")
    (job / "util.sh").write_text("#!/bin/bash\necho hello\n")
    r = spec_check("lint", "job", "--set", "step_time=1.5s", cwd=tmp_path)  # step time: CKPT-02 judged
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "spec-check: job: not linted (not a config file type): README.md" in r.stderr
    assert "spec-check: job: not linted (a script that launches no training job): util.sh" in r.stderr
    assert "not linted (no known format explains it: name it with --kind, or lint the folder as one job " \
           "with --job): values.yaml" in r.stderr
    assert "config.yaml" not in r.stderr and "submit.sbatch" not in r.stderr  # the job's own files were linted


@pytest.mark.parametrize("columns", ["80", "200"])
def test_a_pass_line_states_what_holds(columns: str) -> None:
    """`PASS MEM-01.ecc-disabled` read as a failure (rule IDs name the bad condition): a pass
    leads with what holds, the rule's expected value met, and names the rule after it."""
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), env={"COLUMNS": columns})
    assert r.returncode == 0, r.stderr
    passes = [ln for ln in r.stdout.splitlines() if ln.lstrip().startswith("PASS")]
    assert passes
    for line in passes:
        assert not re.match(r"\s*PASS\s+[A-Z]+-\d\d\.", line), line  # not led by the rule ID
    ecc = next(ln for ln in passes if "MEM-01.ecc-disabled" in ln)
    assert re.search(r"PASS\s+ECC mode \(current\) is on", ecc)
    assert ecc.index("ECC mode") < ecc.index("MEM-01.ecc-disabled")


def test_html_opens_with_verdict_scope_and_what_to_fix(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100_port_200g.json"), "--format", "html", "-o", str(out))
    assert r.returncode == 1, r.stderr
    page = out.read_text(encoding="utf-8")
    body = page.split("<main>", 1)[1]
    order = [body.index(marker) for marker in (
        'class="verdict bad"', "This report covers", '<h2 id="to-fix">What to fix',
        "NET-01.fabric-port-slow", "<strong>Fix:</strong> Run <code>ibstat</code>",
        '<h2 id="findings">', '<h2 id="coverage">', '<h2 id="run">', '<h2 id="subjects">', '<h2 id="parameters">')]
    assert order == sorted(order)
    assert 'class="counts"' in body.split('<h2 id="run">', 1)[1]  # the tiles are inventory, after the findings
    assert "sha256:" not in body.split('<h2 id="findings">', 1)[0]  # no digests before the first finding
