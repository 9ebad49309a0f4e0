"""Transports, the cluster facts builder and the probe-output reader, without hosts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from validator.cluster import facts as cfacts
from validator.cluster.gather import parse_probe
from validator.cluster.proc import Outcome, Registry, run
from validator.cluster.transports import LocalTransport, SlurmTransport, SshTransport
from validator.errors import SpecCheckError
from validator.facts import document

CATALOGUE = Path(__file__).resolve().parents[2] / "spec" / "facts" / "cluster.yaml"


def test_ssh_argv_batch_mode_timeout_and_private_control_dir(tmp_path):
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host *\n  User root\n")
    t = SshTransport(ssh_config=str(cfg), connect_timeout=7)
    try:
        argv = t.argv("node01", "spec-check probe --format json")
        joined = " ".join(argv)
        assert argv[-3:] == ["node01", "--", "spec-check probe --format json"]
        assert ["-F", str(cfg)] == argv[1:3]
        for opt in ("BatchMode=yes", "ConnectTimeout=7", "ControlMaster=auto", "ControlPersist="):
            assert opt in joined
        assert "StrictHostKeyChecking" not in joined and "UserKnownHostsFile" not in joined
        mode = stat.S_IMODE(os.stat(t.control_dir).st_mode)
        assert mode == 0o700 and f"ControlPath={t.control_dir}/%C" in joined
        assert "-tt" in t.argv("node01", "iperf3 -s", tty=True)
    finally:
        t.close()
    assert not os.path.exists(t.control_dir)


def test_missing_ssh_config_is_a_usage_error(tmp_path):
    with pytest.raises(SpecCheckError, match="no such ssh config"):
        SshTransport(ssh_config=str(tmp_path / "nope"))


def test_slurm_argv_pins_the_node_and_guards_placement(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda p: f"/usr/bin/{p}")
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    argv = SlurmTransport().argv("gpu07", "spec-check probe --format json")
    assert "--nodelist=gpu07" in argv and "--overlap" in argv and "--ntasks=1" in argv
    assert "SLURMD_NODENAME" in argv[-1] and argv[-1].endswith("spec-check probe --format json")


def test_local_transport_runs_and_labels():
    out = run(LocalTransport().argv("n7", 'echo "$SPEC_CHECK_HOST"'), 10)
    assert out.rc == 0 and out.stdout.strip() == "n7"


def test_run_kills_at_the_deadline_and_keeps_partial_output():
    out = run(["/bin/sh", "-c", "echo started; sleep 30"], 1.0, Registry())
    assert out.timed_out and out.stdout.strip() == "started" and out.seconds < 10


def test_run_does_not_wait_for_a_pipe_held_by_a_grandchild():
    # the child exits at once, a background grandchild keeps stdout open (as an ssh
    # ControlMaster does with a multiplexed client's pipes)
    out = run(["/bin/sh", "-c", "(sleep 20 &) ; echo done"], 15)
    assert out.rc == 0 and out.stdout.strip() == "done" and out.seconds < 5


def _outcome(stdout="", stderr="", rc=0):
    return Outcome(rc, stdout, stderr, 0.1)


@pytest.mark.parametrize(
    ("out", "reason"),
    [
        (_outcome(rc=None), "timed out after 9 s"),
        (
            _outcome(stderr="ssh: connect to host n1 port 22: Connection refused\n", rc=255),
            "ssh: connect",
        ),
        (_outcome(stdout='{"schema": "spec-check/facts/1", "sub'), "not JSON"),
        (_outcome(stdout='{"schema": "other/1"}'), "not a facts document"),
        (_outcome(stdout=""), "printed nothing"),
        (_outcome(rc=-9), "killed by signal 9"),
    ],
)
def test_probe_output_problems_become_reasons(out, reason):
    r = parse_probe("n1", out, 9, "ssh")
    assert r.document is None and reason in r.error


def _node(name: str, **facts) -> dict:
    base = {
        "gpu.vendor": {"value": "nvidia"},
        "gpu.count": {"value": 8},
        "gpu.models": {"value": ["NVIDIA H100 80GB HBM3"]},
        "gpu.driver_version": {"value": "550.54.15"},
        "gpu.cuda_version": {"value": "12.4"},
        "rdma.ports": {"items": []},
    }
    base.update(facts)
    return document.new_document("node", "clone", base, tool_version="t", collected_at="c")


def test_cluster_document_validates_and_matches_the_catalogue():
    docs = {h: cfacts.rekey(_node(h), h) for h in ("a", "b")}
    pairs = {
        ("a", "b"): {"direction": {"value": "a->b"}, "throughput": {"value": 9.1, "unit": "Gb/s"}}
    }
    doc = cfacts.build(
        ["a", "b", "c"],
        docs,
        {"c": "ssh: timed out"},
        name="cluster",
        tool_version="t",
        collected_at="c",
        pairs=pairs,
    )
    document.validate(doc, "built")
    catalogue = yaml.safe_load(CATALOGUE.read_text())["facts"]
    assert set(doc["facts"]) <= set(catalogue)
    for name, fact in doc["facts"].items():
        for m in fact.get("items", []):
            assert set(m["fields"]) <= set(catalogue[name]["fields"]), (name, m["fields"])
    probes = {m["id"]: m["fields"]["status"] for m in doc["facts"]["cluster.probes"]["items"]}
    assert probes["c"] == {"error": "ssh: timed out"}
    assert [m["id"] for m in doc["facts"]["cluster.hosts"]["items"]] == ["a", "b"]
    assert docs["a"]["subject"] == {
        "kind": "node",
        "name": "a",
        "address": "a",
        "hostname": "clone",
    }


def test_a_node_that_cannot_read_its_driver_keeps_the_error():
    doc = _node("x", **{"gpu.driver_version": {"error": "NVML Shared Library Not Found"}})
    fields = cfacts.host_fields(cfacts.rekey(doc, "x"))
    assert fields["driver_version"]["error"] == "NVML Shared Library Not Found"
    assert fields["gpu_vbios"]["error"]  # not reported by this probe: unknown, not "equal"


def test_measure_tools_help_names_the_real_defaults():
    from click.testing import CliRunner

    from validator.cli.cluster import DEFAULT_TOOLS, cluster

    text = " ".join(CliRunner().invoke(cluster, ["--help"], terminal_width=200).output.split())
    assert f"[default: {','.join(DEFAULT_TOOLS)};" in text
    assert "nccl" in DEFAULT_TOOLS


def test_docs_quote_the_no_gpu_reason_as_the_code_words_it():
    from validator.cluster.live import measure_status as _measure_status

    docs = (Path(__file__).parents[2] / "docs" / "cluster.md").read_text()
    doc = {"facts": {"gpu.vendor": {"value": "none"}}, "subject": {"name": "b"}}
    gpu = {"facts": {"gpu.vendor": {"value": "nvidia"}, "gpu.count": {"value": 8}},
           "subject": {"name": "a"}}
    status = _measure_status(("nccl",), ["a", "b"], {"a": gpu, "b": doc})
    assert f"`{status['collectives']}`" in " ".join(docs.split())


def test_on_signals_routes_sigterm_and_sighup_then_restores():
    import signal

    from validator.cluster.live import defer as _defer
    from validator.cluster.live import interrupt as _interrupt
    from validator.cluster.live import on_signals as _on_signals

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    state: dict = {}
    with _on_signals(_defer(state)):
        os.kill(os.getpid(), signal.SIGHUP)
    assert state == {"interrupted": True}
    registry = Registry()
    with pytest.raises(KeyboardInterrupt), _on_signals(_interrupt(registry)):
        os.kill(os.getpid(), signal.SIGTERM)
    assert registry.why == "SIGTERM"
    with pytest.raises(KeyboardInterrupt), _on_signals(_interrupt(registry)):  # Ctrl-C: the block's too
        os.kill(os.getpid(), signal.SIGINT)
    assert registry.why == "Ctrl-C"
    assert {s: signal.getsignal(s) for s in before} == before


def test_slurm_args_are_appended_to_every_srun(monkeypatch):
    from validator.cluster.measure import runner
    from validator.cluster.transports import make_transport

    monkeypatch.setattr("shutil.which", lambda p: f"/usr/bin/{p}")
    t = make_transport("slurm", slurm_args=("--partition=gpu", "--account=o ps"))
    argv = t.argv("n1", "true")
    assert argv[argv.index("--nodelist=n1") :].count("--partition=gpu") == 1
    assert "--account=o ps" in argv and argv.index("--account=o ps") < argv.index("/bin/sh")
    extra = runner.srun_extra(t)
    assert extra == "--partition=gpu '--account=o ps' "
    cmd = runner.nccl_command(["n1", "n2"], 8, "slurm", srun_args=extra)
    assert "--nodelist=n1,n2 --partition=gpu '--account=o ps' all_reduce_perf" in cmd


def test_slurm_args_need_the_slurm_transport(tmp_path):
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "validator", "cluster", "--transport", "local",
         "--slurm-args", "--partition=gpu"],
        capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 2 and "--slurm-args needs --transport slurm" in p.stderr
