"""``spec-check health`` against a real Slurm (slurmctld + slurmd + munged): a failing node
is drained with a marked reason, resumed when it passes, a node drained by someone else is
never touched, and an unreachable slurmctld is exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from validator.cluster.health import MARK, REASON_MAX, NodeState, named_in, reason_for

pytestmark = [pytest.mark.slow]

FACTS = Path(__file__).resolve().parents[1] / "fixtures" / "facts"


def _as_localhost(name: str, out: Path) -> Path:
    """A recorded DGX H100 document with its subject renamed to the Slurm node "localhost"
    (health refuses facts of another host)."""
    doc = json.loads((FACTS / name).read_text())
    doc["subject"]["name"] = "localhost"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc))
    return out


_TMP = Path(__import__("tempfile").mkdtemp(prefix="health-facts-"))
FAILING = _as_localhost("dgx_h100_ecc_off.json", _TMP / "ecc_off.json")  # MEM-01 fails: ECC off on a GPU
PASSING = _as_localhost("dgx_h100.json", _TMP / "passing.json")
NET_FAILING = _as_localhost("dgx_h100_port_init.json", _TMP / "port_init.json")  # NET-02 fails
OTHER_HOST = FACTS / "dgx_h100.json"  # subject "dgx-h100-01", not "localhost"


def _health(env: dict[str, str], facts: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "validator", "health", "--node", "localhost", "--facts", str(facts),
         "--format", "json", *args],
        capture_output=True, text=True, env=env, timeout=120,
    )


def _node(env: dict[str, str]) -> tuple[str, str]:
    """(State=..., Reason=...) of ``scontrol show node localhost``."""
    out = subprocess.run(["scontrol", "show", "node", "localhost"], capture_output=True, text=True,
                         env=env, check=True, timeout=30).stdout
    state = re.search(r"\bState=(\S+)", out)
    reason = re.search(r"\bReason=(.*?)(?: \[[^\]]*\])?\s*$", out, re.M)
    return (state.group(1) if state else "", reason.group(1).strip() if reason else "")


def _wait_idle(env: dict[str, str]) -> None:
    """Until the node is plainly IDLE three polls in a row (a node resumed from DOWN is
    IDLE+NOT_RESPONDING until slurmd answers the controller's next ping)."""
    deadline, ok = time.monotonic() + 90, 0
    while time.monotonic() < deadline and ok < 3:
        ok = ok + 1 if _node(env)[0] == "IDLE" else 0
        time.sleep(0.5)


@pytest.fixture
def slurm(local_slurm):
    _wait_idle(local_slurm.env)
    yield local_slurm
    subprocess.run(["scontrol", "update", "NodeName=localhost", "State=RESUME"], env=local_slurm.env,
                   capture_output=True, timeout=30)
    _wait_idle(local_slurm.env)


def _set(env: dict[str, str], *args: str) -> None:
    subprocess.run(["scontrol", "update", "NodeName=localhost", *args], env=env, check=True, timeout=30)


def test_drain_on_failure_then_resume_on_pass(slurm):
    p = _health(slurm.env, FAILING)
    assert p.returncode == 1, p.stderr
    state, reason = _node(slurm.env)
    assert "DRAIN" in state, (state, reason)
    assert reason.startswith(MARK) and "MEM-01.ecc-disabled" in reason, reason
    assert "drained localhost: spec-check: MEM-01.ecc-disabled" in p.stderr
    again = _health(slurm.env, FAILING)  # still failing: left drained, reason unchanged
    assert again.returncode == 1 and "stays drained" in again.stderr
    p = _health(slurm.env, PASSING)
    assert p.returncode == 0, p.stderr
    state, _ = _node(slurm.env)
    assert "DRAIN" not in state and state.startswith("IDLE"), state
    assert "resumed localhost" in p.stderr


def test_a_node_drained_by_someone_else_is_never_touched(slurm):
    subprocess.run(["scontrol", "update", "NodeName=localhost", "State=DRAIN", "Reason=admin: fan 3 noisy"],
                   env=slurm.env, check=True, timeout=30)
    for facts, rc in ((PASSING, 0), (FAILING, 1)):
        p = _health(slurm.env, facts)
        assert p.returncode == rc, p.stderr
        state, reason = _node(slurm.env)
        assert "DRAIN" in state and reason == "admin: fan 3 noisy", (state, reason)
        assert "someone else (admin: fan 3 noisy)" in p.stderr


def test_no_drain_reports_only_and_feeds_node_exporter(slurm, tmp_path):
    prom = tmp_path / "spec_check.prom"  # node_exporter's textfile collector reads this
    p = _health(slurm.env, FAILING, "--no-drain", "--format", "prometheus", "-o", str(prom))
    assert p.returncode == 1 and "not drained" in p.stderr
    assert "DRAIN" not in _node(slurm.env)[0]
    assert "spec_check_conformant 0" in prom.read_text()


def test_unreachable_slurmctld_is_exit_2(tmp_path, local_slurm):
    conf = Path(local_slurm.env["SLURM_CONF"]).read_text()
    port = int(re.search(r"^SlurmctldPort=(\d+)", conf, re.M).group(1))
    dead = tmp_path / "slurm.conf"
    dead.write_text(conf.replace(f"SlurmctldPort={port}", f"SlurmctldPort={port + 7}"))
    p = _health({**local_slurm.env, "SLURM_CONF": str(dead)}, PASSING)
    assert p.returncode == 2, p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert line.startswith("spec-check: error: cannot read node localhost's state:") and "slurmctld" in line


def test_reason_stays_within_slurms_length():
    rules = [f"NET-0{i % 4 + 1}.some-long-rule-name-{i}" for i in range(40)]
    text = reason_for(rules)
    assert len(text) <= REASON_MAX and text.startswith(f"{MARK} NET-01.")
    assert re.search(r"\(\+\d+ more\)$", text)
    assert reason_for(["MEM-02.memlock-limited"]) == "spec-check: MEM-02.memlock-limited"



@pytest.mark.parametrize("state", ["DOWN", "FAIL"])
def test_a_node_an_administrator_took_down_is_never_touched(slurm, state):
    """Issue 24: health drained a down node and overwrote "RMA ticket 42"; a later passing
    run would then resume it."""
    _set(slurm.env, f"State={state}", "Reason=RMA ticket 42")
    before = _node(slurm.env)
    for facts, rc in ((FAILING, 1), (PASSING, 0)):
        p = _health(slurm.env, facts)
        assert p.returncode == rc, p.stderr
        assert _node(slurm.env) == before and before[1] == "RMA ticket 42", (before, _node(slurm.env))
        assert "localhost" in p.stderr and "left as it is" in p.stderr and "RMA ticket 42" in p.stderr


@pytest.mark.parametrize("narrowed", [["--select", "NET"], ["--ignore", "MEM-01"]])
def test_a_partial_run_cannot_resume_a_drain_it_did_not_recheck(slurm, narrowed):
    """Issue 24: drained for MEM-01.ecc-disabled, a run of NET rules only (or one ignoring
    MEM-01) passed and resumed the node although its facts still fail MEM-01."""
    assert _health(slurm.env, FAILING).returncode == 1
    drained = _node(slurm.env)
    assert "DRAIN" in drained[0] and "MEM-01.ecc-disabled" in drained[1]
    p = _health(slurm.env, FAILING, *narrowed)  # MEM-01 not evaluated: the run passes
    assert p.returncode == 0, p.stderr
    assert _node(slurm.env) == drained
    assert "stays drained: MEM-01.ecc-disabled" in p.stderr and "not re-checked" in p.stderr
    p = _health(slurm.env, PASSING, "--select", "MEM")  # the drain's rule passes now: resumed
    assert p.returncode == 0 and "resumed localhost" in p.stderr, p.stderr
    assert "DRAIN" not in _node(slurm.env)[0]


def test_a_partial_failing_run_keeps_the_rules_it_did_not_look_at(slurm):
    assert _health(slurm.env, FAILING).returncode == 1
    p = _health(slurm.env, NET_FAILING, "--select", "NET")
    assert p.returncode == 1, p.stderr
    _, reason = _node(slurm.env)
    assert "MEM-01.ecc-disabled" in reason and "NET-02." in reason, reason
    assert _health(slurm.env, PASSING, "--select", "NET").returncode == 0
    assert "DRAIN" in _node(slurm.env)[0]  # MEM-01 still named, not re-checked


def test_facts_of_another_host_are_refused(slurm):
    """Issue 24: --node gpu-017 --facts <another host's recording> drained gpu-017."""
    p = subprocess.run(
        [sys.executable, "-m", "validator", "health", "--node", "localhost", "--facts",
         str(FACTS / "dgx_h100_ecc_off.json"), "--format", "json"],
        capture_output=True, text=True, env=slurm.env, timeout=120,
    )
    assert p.returncode == 2, p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert 'host "dgx-h100-01", not of node "localhost"' in line and "dgx_h100_ecc_off.json" in line
    assert p.stdout == ""
    assert "DRAIN" not in _node(slurm.env)[0]


@pytest.mark.parametrize(("state", "in_service", "drained"), [
    ("idle", True, False), ("mixed+drain", True, True), ("allocated+drain", True, True),
    ("drained", True, True), ("down+drain", False, True), ("down", False, False),
    ("idle+fail+not_responding", False, False), ("idle*", False, False), ("idle+maint", False, False),
    ("future", False, False), ("idle+power_down", False, False),
])
def test_node_states(state, in_service, drained):
    s = NodeState(state, "none")
    assert (s.in_service, s.drained) == (in_service, drained)


def test_reason_round_trip():
    rules = [f"NET-0{i % 4 + 1}.some-long-rule-name-{i}" for i in range(40)]
    named, unnamed = named_in(reason_for(rules))
    assert len(named) + unnamed == 40 and set(named) <= set(rules)
    assert named_in(reason_for(["MEM-01.ecc-disabled"], 3)) == (["MEM-01.ecc-disabled"], 3)
    assert named_in("RMA ticket 42") == ([], 0)
