"""``spec-check health --npd``: node-problem-detector's custom plugin contract
(kubernetes/node-problem-detector pkg/custompluginmonitor/types: exit 0 OK, 1 NonOK,
2 Unknown; stdout cut to max_output_length, 80 by default; killed after 5 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "tests" / "fixtures" / "facts"
H200 = ROOT / "tests" / "fixtures" / "h200" / "facts.json"


def npd(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", "health", "--npd", *args], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def contract(r: subprocess.CompletedProcess[str]) -> str:
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 80, r.stdout
    assert r.stderr == "" and r.returncode in (0, 1, 2)
    return lines[0]


def test_a_conformant_node_is_ok():
    r = npd("--facts", str(FACTS / "dgx_h100.json"))
    # 196: MEM-01.amd-uncorrectable-error-event is not applicable on an NVIDIA node (issue 30)
    assert (r.returncode, contract(r)) == (0, "spec-check OK: 196 pass")


def test_a_failing_node_is_a_problem_naming_the_rules():
    r = npd("--facts", str(FACTS / "dgx_h100_ecc_off.json"))
    assert r.returncode == 1 and contract(r) == "spec-check FAIL: MEM-01.ecc-disabled"


def test_a_node_whose_state_could_not_be_read_is_unknown_never_ok(tmp_path):
    doc = json.loads((FACTS / "dgx_h100.json").read_text())
    doc["facts"]["gpu.xid_events"] = {"error": "kernel log unreadable: cannot open /dev/kmsg: Operation not permitted"}
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(doc))
    r = npd("--facts", str(p))
    assert r.returncode == 2 and contract(r) == "spec-check UNKNOWN: PLAT-01.xid-node-fault"


def test_the_real_h200_fails_on_its_missing_fabric():
    r = npd("--facts", str(H200))
    assert r.returncode == 1 and contract(r) == "spec-check FAIL: NET-02.no-rdma-fabric"


@pytest.mark.parametrize("args", [("--facts", "/nonexistent.json"), ("--set", "xid_lookback=soon")])
def test_bad_input_is_unknown_in_one_line(args):
    r = npd(*args)
    line = contract(r)
    assert r.returncode == 2 and line.startswith("spec-check UNKNOWN: ")


def test_a_long_list_of_rules_fits_in_80_characters():
    from validator.cluster.npd import verdict
    from validator.report.model import Status

    class F:  # the two attributes verdict() reads
        def __init__(self, rule):
            self.rule, self.status, self.against_verdict = rule, Status.FAIL, True

    class R:
        def __init__(self):
            self.findings = [F(f"NET-02.rule-with-a-long-name-{i}") for i in range(9)]

    code, line = verdict(R())
    assert code == 1 and len(line) <= 80 and line == "spec-check FAIL: NET-02.rule-with-a-long-name-0 (+8)"


def test_a_hanging_check_is_unknown_within_the_deadline(monkeypatch, capsys):
    from validator.cli import npd as cli_npd

    monkeypatch.setattr(cli_npd, "_judge", lambda *a: time.sleep(30))
    monkeypatch.setattr(os, "_exit", lambda code: (_ for _ in ()).throw(SystemExit(code)))
    t0 = time.monotonic()
    with pytest.raises(SystemExit) as exc:
        cli_npd.run(None, Path("/sys"), Path("/proc"), Path("/"), None, None, {}, deadline=0.3)
    assert exc.value.code == 2 and time.monotonic() - t0 < 5
    assert capsys.readouterr().out == "spec-check UNKNOWN: node check did not finish in 0.3 s\n"


def test_npd_mode_never_touches_slurm(tmp_path):
    """No sinfo/scontrol on PATH, and none is looked for: the Slurm path is not taken."""
    r = npd("--facts", str(FACTS / "dgx_h100.json"), env={"PATH": str(Path(sys.executable).parent)})
    assert r.returncode == 0, r.stdout


def test_a_kernel_log_given_with_recorded_facts_is_refused_not_ignored(tmp_path):
    """--facts holds the events its probe read; a --kernel-log next to it would be silently
    unjudged (check refuses the same pair), so it is bad input: Unknown, in one line."""
    log = tmp_path / "dmesg.txt"
    log.write_text("[  12.345678] NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
    r = npd("--facts", str(FACTS / "dgx_h100.json"), "--kernel-log", str(log))
    line = contract(r)
    assert r.returncode == 2 and line.startswith("spec-check UNKNOWN:") and "--kernel-log" in line


def test_a_baseline_is_honoured_as_by_the_slurm_health_check(tmp_path):
    base = tmp_path / "base.json"
    subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(FACTS / "dgx_h100_ecc_off.json"),
                    "--format", "json", "-o", str(base)], capture_output=True, timeout=60, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    r = npd("--facts", str(FACTS / "dgx_h100_ecc_off.json"), "--baseline", str(base))
    assert r.returncode == 0 and contract(r).startswith("spec-check OK:")


def test_fail_on_warn_makes_a_warning_a_problem_as_its_help_says():
    r = npd("--facts", str(FACTS / "dgx_h100_hw_thermal.json"), "--fail-on", "warn")
    line = contract(r)
    assert r.returncode == 1 and line.startswith("spec-check WARN: "), line
    r = npd("--facts", str(FACTS / "dgx_h100_hw_thermal.json"))
    assert r.returncode == 0 and contract(r) == "spec-check OK: 195 pass, 1 warn"


@pytest.mark.parametrize("args", [("--sysfs", "/nonexistent"), ("--kernel-log", "/"), ("--no-such-option",)])
def test_an_option_the_parser_refuses_is_still_one_unknown_line_on_stdout(args):
    """A DaemonSet with a wrong mount or flag: NPD shows stdout as the condition's message,
    so the parser's refusal is the status line too, not an empty message and stderr."""
    r = npd("--facts", str(FACTS / "dgx_h100.json"), *args)
    assert r.returncode == 2 and contract(r).startswith("spec-check UNKNOWN: ")
