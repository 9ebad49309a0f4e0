"""Every doc names only files that exist, and every spec-check command in a doc's code
blocks is run by a test (issue 22, item 6).

Local files: a path under one of the repository's folders (``docs/ci.md``,
``validator/cli/lint.py``; written in backticks or as a link), a relative link, and a
top-level document named in capitals (``CHANGELOG.md``, ``DESIGN.md``). A bare lower-case
file name (``ds_config.json``) is a user's file in an example, not one of ours;
placeholders (``NAME.json``, ``<dev>``, ``*.yaml``) are patterns.

Commands: each line of a ```sh / ```bash / ``` block that runs ``spec-check`` (at its start,
after ``.venv/bin/``, or after ``&&``, ``||``, ``|``, ``;``). It is run by a test when the
doc's blocks are executed by a test (``EXECUTED``), when its text appears in a test, or
when it is run below (``RUN_HERE``); the rest need hardware, a cluster or a service this
machine does not have, each listed in ``NEEDS`` with why.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = ("validator", "tests", "docs", "scripts", "spec", "rules", "deploy", "reports", "bench", ".github")
PATH = re.compile(r"`((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w./@+-]*)`")
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)#\s]+)")
CAPS = re.compile(r"`?\b([A-Z][A-Z_-]+\.md)\b")
PLACEHOLDER = re.compile(r"[*<>{}]|(^|/)[A-Z][A-Z_0-9]*(\.|/|$)|X\.Y")

# docs whose every sh block a test runs as written
EXECUTED = {"docs/first-conformant-job.md": "tests/test_guides.py"}

# commands that need what this machine does not have; each is exercised in its parts by
# the test named (the verb and options, on fixtures or fakes) but not as written
NEEDS = {
    # a real GPU node with NVML and RDMA (tests/facts/test_node_live.py runs check here, on a VM)
    "spec-check check": "tests/test_cli.py runs `check` on this machine (a VM: not conformant, exit 1)",
    "spec-check check --sysfs /host/sys --procfs /host/proc --rootfs /host/root --nvml":
        "the container's host paths: tests/ship/test_container.py runs it with the paths mapped",
    "spec-check lint configs/ds_config.json launch/train.sbatch --set step_time=4.2":
        "a user's job folder (configs/, launch/): tests/test_cli.py lints the same shapes",
    "spec-check lint configs/ --format sarif -o spec-check.sarif":
        "a user's configs/: tests/jobs/test_renderers.py writes SARIF from a lint",
    "spec-check cluster --hosts node[01-16] --measure": "16 hosts over SSH (tests/cluster/)",
    "spec-check cluster --hosts @hosts.txt --ssh-config fleet.conf -o result.json --format json":
        "a fleet over SSH (tests/cluster/test_ssh*.py use a host file and an ssh config)",
    "spec-check cluster --measure": "inside a Slurm allocation (tests/cluster/test_slurm*.py)",
    "spec-check cluster --hosts 'gpu[01-16]' --measure --format json -o fleet.json":
        "16 GPU hosts over SSH: tests/cluster/ runs --hosts and --measure over SSH on this machine",
    "spec-check probe --sysfs /host/sys --procfs /host/proc --rootfs /host/root --nvml -o /results/facts/$(hostname).json":
        "inside the pyxis container: tests/ship/test_container.py runs the recipe with the mounts mapped",
    "spec-check lint JOB --nodes FACTS [--nodes FACTS ...] [--run DIR-OR-LOG ...]":
        "the synopsis, not a command: tests/jobnodes/test_cli_nodes.py runs lint with --nodes and --run",
    "spec-check lint --run runs/hf_crash":
        "a user's run folder: tests/runs/test_recordings.py runs lint --run on the recorded hf_crash run",
    "spec-check lint train.yaml launch.sh --run runs/hf_crash":
        "a user's job and run: tests/runs/ lints jobs with --run on the recorded runs",
    "spec-check check --scrape http://127.0.0.1:9400/metrics --scrape http://127.0.0.1:9100/metrics":
        "live exporters: tests/test_scrape_cli.py runs check --scrape against prometheus_client servers on 127.0.0.1",
    "spec-check probe --scrape http://127.0.0.1:9400/metrics -o facts.json":
        "a live dcgm-exporter: tests/test_scrape_cli.py runs probe --scrape against a prometheus_client server",
    "spec-check cluster --hosts node[01-16] --scrape-port 9400":
        "16 hosts over SSH: tests/test_scrape_cli.py runs cluster --scrape-port on the local transport",
    "spec-check cluster --transport local": "tests/cluster/test_local.py runs the local transport",
    "spec-check cluster --facts saved/": "a --save-facts folder (tests/hardening/test_round_trip.py replays one)",
    "spec-check cluster --facts /results/facts --name \"$SLURM_JOB_ID\" --format json -o /results/result.json":
        "inside the pyxis container: tests/ship/test_container.py runs the recipe with the mounts mapped",
    "spec-check report fleet.json --format html -o fleet.html": "a fleet result: run below on a replayed fleet",
    "spec-check report fleet.json job-*.json --format html -o all.html": "a fleet and job results (below)",
    "spec-check verify fleet.signed.json --key provider.pub": "signed fleet result (below)",
    "spec-check diff last-week.json fleet.json": "two fleet results (below)",
    "spec-check keygen provider": "run below",
    "spec-check health": "a Slurm node with slurmctld: tests/cluster/test_health.py runs a real Slurm",
    "spec-check health --format prometheus -o /var/lib/node_exporter/textfile/spec_check.prom":
        "node_exporter's folder on a Slurm node (tests/cluster/test_health.py, tests/test_first_hour.py's wrapper)",
    "spec-check health --node gpu-017 --facts gpu-017.json": "a Slurm node gpu-017 (tests/cluster/test_health.py)",
    "spec-check health --no-drain": "a Slurm node (tests/cluster/test_health.py)",
}


def code_blocks(doc: Path) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w*)\n(.*?)^```$", doc.read_text(encoding="utf-8"), re.M | re.S)


CMD = re.compile(r"(?:^|(?<=[\s/'\"(]))(?<!-n )(?<!--namespace )"
                 r"(spec-check(?: +(?:\"[^\"]*\"|'[^']*'|\$\([^)]*\)|[^\s&|;>'\")#])+)*)")


def commands(doc: Path) -> list[str]:
    """The spec-check command lines of a doc's shell blocks; a line of output (the version
    banner, pre-commit's dotted line) is none."""
    out = []
    for lang, body in code_blocks(doc):
        if lang not in ("", "sh", "bash", "console", "shell"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if "·" in line or "...." in line or line.startswith("#"):
                continue
            for m in CMD.finditer(line.split(" #", 1)[0]):
                words = m.group(1).split()
                if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*|-\S+", words[1]):
                    out.append(" ".join(words))
    return out


def local_files(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    named = [m.rstrip(".") for m in PATH.findall(text)]
    named += [str((doc.parent / m).resolve().relative_to(ROOT)) if (doc.parent / m).resolve().is_relative_to(ROOT)
              else m for m in LINK.findall(text)]
    named += re.findall(r"https://github\.com/spec-check/spec-check/blob/main/([^)#\s`]+)", text)
    named = [n for n in named if not PLACEHOLDER.search(n)]
    named += [n for n in CAPS.findall(text) if n not in ("NAME.md",)]
    return list(dict.fromkeys(named))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_local_file_a_doc_names_exists(doc: Path) -> None:
    missing = [n for n in local_files(doc) if not (ROOT / n).exists()]
    assert missing == [], f"{doc.relative_to(ROOT)} names files that do not exist: {missing}"


def test_the_file_check_can_fail(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("See `docs/install.md`, [the design](../DESIGN.md) and DESIGN.md.\n")
    assert {"docs/install.md", "DESIGN.md"} <= set(local_files(doc))


def _tests_text() -> str:
    return " ".join(" ".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py")).split())


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_in_a_doc_is_run_by_a_test(doc: Path) -> None:
    rel = str(doc.relative_to(ROOT))
    if rel in EXECUTED:
        assert (ROOT / EXECUTED[rel]).exists() and rel in (ROOT / EXECUTED[rel]).read_text()
        return
    tests = _tests_text()
    unrun = [c for c in commands(doc) if c not in NEEDS and c not in RUN_HERE and c not in tests
             and _as_args(c) not in tests]
    assert unrun == [], f"{rel}: commands no test runs (run them in a test, or say in NEEDS why not): {unrun}"


def _as_args(cmd: str) -> str:
    """The command as a test writes it: ``spec_check("lint", "x", ...)``'s arguments."""
    try:
        return ", ".join(f'"{a}"' for a in shlex.split(cmd)[1:])
    except ValueError:
        return cmd


def command_lines(doc: Path) -> list[str]:
    """Every command line of a doc's ```sh blocks (continuations joined, heredoc bodies and
    comments left out)."""
    out = []
    for lang, body in code_blocks(doc):
        if lang not in ("sh", "bash", "console", "shell"):
            continue
        lines, end = body.replace("\\\n", " ").splitlines(), None
        for line in lines:
            line = line.strip()
            if end is not None:
                end = None if line == end else end
                continue
            if m := re.search(r"<<'(\w+)'", line):
                end = m.group(1)
            if line and not line.startswith("#"):
                out.append(" ".join(line.split(" #", 1)[0].split()))
    return out


# command lines a test runs from the doc itself (the test reads the doc's block)
RUN_FROM_DOC = {
    "README.md": ("tests/ship/test_setup.py", ("python3 -m venv .venv", "bash scripts/install-system-deps.sh")),
    # the DSSE verification without spec-check, run as written on a real envelope
    "docs/reports.md": ("tests/reports/test_dsse.py", (
        "type=$(jq", "jq -r", "printf 'DSSEv1", "cat payload.json", "openssl pkeyutl")),
    "docs/deploy.md": ("tests/ship/test_container.py", (
        "set -eu", "image=", "out=", 'mkdir -p "$out/facts"', "srun ")),
}
# tools this machine has no service for: each with the test that checks what it can
TOOLS = {
    "docker ": "no container engine here: tests/ship/test_container.py lints the Dockerfile with hadolint and "
               "builds and runs the image where an engine works",
    "kubectl ": "no Kubernetes cluster: tests/ship/test_kubernetes.py validates every manifest against the API schemas",
    '[ -f "$image" ] || enroot import': "no enroot here: tests/ship/test_container.py runs the recipe's spec-check lines",
    "git clone https://github.com/spec-check/spec-check": "the network: tests/ship/test_setup.py installs a copy of "
                                                          "the checkout the same way (pip install DIR)",
    'pip install "training-spec-check @ git+https://github.com/spec-check/spec-check@':
        "the network: tests/ship/test_github.py checks the commit is one of this repository's",
    "install -m 0755 deploy/slurm/spec-check-health": "writes /usr/local/sbin: tests/test_first_hour.py runs "
                                                      "the wrapper from the checkout",
    "python scripts/calibrate.py": "tests/test_calibration.py checks the table calibrate.py writes",
    "python scripts/fuzz.py": "an hour's fuzzing: tests/hardening/test_fuzz.py runs the fuzzer briefly",
}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_line_in_a_doc_is_run_by_a_test(doc: Path) -> None:
    """Not only spec-check: the install, build and deploy lines too."""
    rel = str(doc.relative_to(ROOT))
    if rel in EXECUTED:
        return
    runner, prefixes = RUN_FROM_DOC.get(rel, ("", ()))
    if runner:
        assert rel.split("/")[-1] in (ROOT / runner).read_text(encoding="utf-8")  # the test reads this doc
    spec_check_lines = set(commands(doc))
    unrun = []
    for line in command_lines(doc):
        if line.startswith(prefixes or ("\0",)) or any(line.startswith(t) for t in TOOLS):
            continue
        if any(c in line for c in spec_check_lines):  # its spec-check command is checked above
            continue
        unrun.append(line)
    assert unrun == [], f"{rel}: command lines no test runs: {unrun}"


def test_every_allowed_command_is_still_in_a_doc() -> None:
    shown = {c for d in DOCS for c in commands(d)}
    assert set(NEEDS) <= shown, set(NEEDS) - shown
    assert set(RUN_HERE) <= shown, set(RUN_HERE) - shown
    lines = {ln for d in DOCS for ln in command_lines(d)}
    assert all(any(ln.startswith(t) for ln in lines) for t in TOOLS), [t for t in TOOLS if not any(
        ln.startswith(t) for ln in lines)]


# ---- the doc commands that run on this machine, as written, on prepared inputs -------------

RUN_HERE: dict[str, int | None] = {
    "spec-check check --facts tests/fixtures/facts/dgx_h100_port_200g.json": 1,
    "spec-check spec sample-profile": 0,
    "spec-check sign fleet.json --key provider.key -o fleet.signed.json": None,  # below, on a replayed fleet
}


def _spec_check_on_path(tmp_path: Path) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "spec-check"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m validator "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.parametrize("cmd", sorted(c for c, code in RUN_HERE.items() if code is not None))
def test_doc_commands_run_as_written(cmd: str, tmp_path: Path) -> None:
    r = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=_spec_check_on_path(tmp_path), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == RUN_HERE[cmd], r.stderr[-2000:]


def test_readme_fleet_report_commands_run_on_a_replayed_fleet(tmp_path: Path) -> None:
    """README's report, keygen, sign, verify and diff lines, as written, on a fleet result made
    by replaying recorded facts (the fleet itself needs hosts: NEEDS)."""
    import json

    env = _spec_check_on_path(tmp_path)
    facts = tmp_path / "saved"
    facts.mkdir()
    for i, src in enumerate(("dgx_h100.json", "dgx_h100_port_200g.json")):
        doc = json.loads((ROOT / "tests" / "fixtures" / "facts" / src).read_text())
        doc["subject"]["name"] = f"gpu{i + 1:02d}"
        (facts / f"gpu{i + 1:02d}.json").write_text(json.dumps(doc))

    def run(cmd: str, code: int = 0) -> None:
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == code, (cmd, r.stderr[-2000:])

    run("spec-check cluster --facts saved/ --format json -o fleet.json", 1)
    run("cp fleet.json last-week.json && cp fleet.json job-1.json")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for cmd in ("spec-check report fleet.json --format html -o fleet.html",
                "spec-check report fleet.json job-*.json --format html -o all.html",
                "spec-check keygen provider"):
        assert cmd in readme
        run(cmd)
    assert "spec-check sign fleet.json --key provider.key -o fleet.signed.json" in readme
    run("spec-check sign fleet.json --key provider.key -o fleet.signed.json")
    for cmd, code in (("spec-check verify fleet.signed.json --key provider.pub", 0),
                      ("spec-check diff last-week.json fleet.json", 0)):
        assert cmd in readme
        run(cmd, code)


def test_the_command_check_can_fail(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("```sh\nsalloc -N 2 spec-check lint nowhere/ --frobnicate   # exit 1\nmake deploy\n```\n")
    assert commands(doc) == ["spec-check lint nowhere/ --frobnicate"]
    assert command_lines(doc) == ["salloc -N 2 spec-check lint nowhere/ --frobnicate", "make deploy"]
