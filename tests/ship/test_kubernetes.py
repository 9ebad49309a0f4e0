"""The Kubernetes manifests in deploy/kubernetes/.

Every document is validated offline against the Kubernetes API's own schemas (the OpenAPI
definitions that kubernetes-validate bundles, strict: unknown fields are errors) for the
oldest Kubernetes these manifests support (1.28, the first release with the kubectl image
the labeler uses) and the newest bundled. Then the scripts the containers run are run
here against this machine's real /sys and /proc, with the host paths mapped to where
they are on this machine, a temporary directory for the volumes, and a stand-in for
kubectl that records its calls (no API server here).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ship.util import ROOT
from validator.versions import RESULT_SCHEMA

kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a test extra: pip install -e '.[test]'")

DEPLOY = ROOT / "deploy" / "kubernetes"
MANIFESTS = sorted(DEPLOY.glob("*.yaml"))
VERSIONS = ["1.28.0", kv.latest_version()]


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_there_are_manifests_for_each_job() -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for p in MANIFESTS for d in documents(p)}
    assert {("DaemonSet", "spec-check-node"), ("Job", "spec-check-pool-probe"),
            ("Job", "spec-check-pool-evaluate")} <= kinds
    from validator import __version__

    images = {c["image"] for p in MANIFESTS for d in documents(p) if d["kind"] in ("DaemonSet", "Job")
              for c in d["spec"]["template"]["spec"]["containers"] if "spec-check" in c["image"]}
    assert images == {f"registry.example.com/spec-check:{__version__}"}  # this release's image


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=[p.name for p in MANIFESTS])
def test_manifests_are_valid_kubernetes(path: Path, version: str) -> None:
    for doc in documents(path):
        kv.validate(doc, version, strict=True)  # raises ValidationError naming the field


def test_the_schema_check_can_fail() -> None:
    [ds] = [d for d in documents(DEPLOY / "daemonset.yaml") if d["kind"] == "DaemonSet"]
    ds["spec"]["template"]["spec"]["hostNetwork"] = "yes"
    with pytest.raises(kv.ValidationError):
        kv.validate(ds, VERSIONS[-1], strict=True)
    ds["spec"]["template"]["spec"]["hostNetwork"] = True
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = []  # a typo: unknown field
    with pytest.raises(kv.ValidationError):
        kv.validate(ds, VERSIONS[-1], strict=True)


def _pod(path: Path, kind: str) -> dict[str, Any]:
    [obj] = [d for d in documents(path) if d["kind"] == kind]
    return obj["spec"]["template"]["spec"]


def _container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    [c] = [c for c in pod["containers"] if c["name"] == name]
    return c


def test_node_pods_see_the_host_and_the_driver() -> None:
    for path, kind, name in [(DEPLOY / "daemonset.yaml", "DaemonSet", "check"),
                             (DEPLOY / "pool-job.yaml", "Job", "probe")]:
        pod = _pod(path, kind)
        assert pod["hostNetwork"] is True and pod["hostPID"] is True
        host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
        mounts = {m["mountPath"]: host.get(m["name"]) for m in _container(pod, name)["volumeMounts"]}
        assert mounts["/host/sys"] == "/sys" and mounts["/host/proc"] == "/proc" and mounts["/host/root"] == "/"
        script = _container(pod, name)["args"][0]
        assert "--sysfs /host/sys --procfs /host/proc --rootfs /host/root --nvml" in script
        env = {e["name"]: e.get("value") for e in _container(pod, name)["env"]}
        assert env["NVIDIA_VISIBLE_DEVICES"] == "all" and env["NVIDIA_DRIVER_CAPABILITIES"] == "utility"
    for path in (DEPLOY / "daemonset.yaml", DEPLOY / "pool-job.yaml"):  # host namespaces need it
        [ns] = [d for d in documents(path) if d["kind"] == "Namespace"]
        assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    tolerated = {t["key"] for t in _pod(DEPLOY / "daemonset.yaml", "DaemonSet")["tolerations"]}
    assert "spec-check.dev/not-conformant" in tolerated  # it must keep running where it tainted


def run_script(script: str, env: dict[str, str], paths: dict[str, str], cwd: Path,
               shell: str = "/bin/sh") -> subprocess.CompletedProcess[str]:
    for host, here in paths.items():
        script = script.replace(host, here)
    full_env = {**os.environ, **env, "PATH": f"{cwd}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
                f"{os.environ['PATH']}", "COLUMNS": "120"}
    return subprocess.run([shell, "-c", script], env=full_env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


HOST_PATHS = {"--rootfs /host/root": "--rootfs /", "/host/sys": "/sys", "/host/proc": "/proc"}


def test_daemonset_check_writes_result_gauges_and_verdict(tmp_path: Path) -> None:
    pod = _pod(DEPLOY / "daemonset.yaml", "DaemonSet")
    state, textfile = tmp_path / "state", tmp_path / "textfile"
    state.mkdir()
    textfile.mkdir()
    paths = {**HOST_PATHS, "/host/textfile": str(textfile), "/var/run/spec-check": str(state)}
    r = run_script(_container(pod, "check")["args"][0], {"INTERVAL": "0"}, paths, tmp_path)
    assert r.returncode in (0, 1), r.stderr  # this machine may or may not conform; never 2
    assert (state / "verdict").read_text() == f"{r.returncode}\n"
    result = json.loads((state / "result.json").read_text())
    assert result["command"] == "check" and result["summary"]["conformant"] == (r.returncode == 0)
    prom = (textfile / "spec_check.prom").read_text()
    assert f"spec_check_conformant {int(r.returncode == 0)}\n" in prom
    assert not list(state.glob("*.tmp*")) and not list(textfile.glob(".*"))  # atomic writes left nothing


FAKE_KUBECTL = """#!/bin/sh
echo "kubectl $*" >> "$KUBECTL_LOG"
case "$*" in *"NoSchedule-"*) [ -f "$TAINTED" ] && rm -f "$TAINTED" && exit 0; echo 'taint "x" not found' >&2; exit 1;; esac
case "$*" in *"=true:NoSchedule"*) touch "$TAINTED";; esac
"""


@pytest.mark.parametrize(("verdict", "calls", "tainted"), [
    ("1", ["label node gpu-7 spec-check.dev/conformant=false --overwrite",
           "taint node gpu-7 spec-check.dev/not-conformant=true:NoSchedule --overwrite"], True),
    ("0", ["label node gpu-7 spec-check.dev/conformant=true --overwrite",
           "taint node gpu-7 spec-check.dev/not-conformant:NoSchedule-"], False),
    ("2", ["label node gpu-7 spec-check.dev/conformant=unknown --overwrite"], None),
])
def test_labeler_labels_and_taints_by_verdict(tmp_path: Path, verdict: str, calls: list[str],
                                              tainted: bool | None) -> None:
    pod = _pod(DEPLOY / "daemonset.yaml", "DaemonSet")
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "state"
    state.mkdir()
    (state / "verdict").write_text(verdict + "\n")
    marker = tmp_path / "tainted"
    if tainted is None:
        marker.touch()  # unknown leaves an existing taint alone
    env = {"NODE_NAME": "gpu-7", "TAINT": "true", "POLL": "0", "KUBECTL_LOG": str(tmp_path / "log"),
           "TAINTED": str(marker)}
    r = run_script(_container(pod, "labeler")["args"][0], env, {"/var/run/spec-check": str(state)}, tmp_path,
                   shell="bash")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "log").read_text().splitlines() == [f"kubectl {c}" for c in calls]
    assert marker.exists() == (tainted is not False)


def test_labeler_untaints_a_node_that_conforms_again(tmp_path: Path) -> None:
    pod = _pod(DEPLOY / "daemonset.yaml", "DaemonSet")
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "state"
    state.mkdir()
    marker = tmp_path / "tainted"
    env = {"NODE_NAME": "gpu-7", "TAINT": "true", "POLL": "0", "KUBECTL_LOG": str(tmp_path / "log"),
           "TAINTED": str(marker)}
    for verdict, expect in (("1", True), ("0", False)):
        (state / "verdict").write_text(verdict + "\n")
        r = run_script(_container(pod, "labeler")["args"][0], env, {"/var/run/spec-check": str(state)},
                       tmp_path, shell="bash")
        assert r.returncode == 0 and marker.exists() == expect, r.stderr


def test_pool_jobs_probe_then_evaluate_and_keep_the_json_result(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    probe = _container(_pod(DEPLOY / "pool-job.yaml", "Job"), "probe")["args"][0]
    for node in ("gpu-a01", "gpu-a02"):
        r = run_script(probe, {"NODE_NAME": node}, {**HOST_PATHS, "/results": str(results)}, tmp_path)
        assert r.returncode == 0, r.stderr  # a non-conformant node is a finding, not a failed pod
        assert json.loads((results / "nodes" / f"{node}.json").read_text())["command"] == "check"
    evaluate = _container(_pod(DEPLOY / "pool-evaluate-job.yaml", "Job"), "evaluate")
    env = {e["name"]: e["value"] for e in evaluate["env"]}
    r = run_script(evaluate["args"][0], env, {"/results": str(results)}, tmp_path)
    assert r.returncode == 0, r.stderr
    result = json.loads((results / "result.json").read_text())
    assert result["command"] == "cluster" and result["schema"] == RESULT_SCHEMA
    # hosts are named by rule (docs/cluster.md): by subject name, or, where the recordings
    # share one (both pods probed this machine), each by its file name
    recorded = [json.loads((results / "facts" / f"{n}.json").read_text())["subject"]["name"]
                for n in ("gpu-a01", "gpu-a02")]
    hosts = set(recorded) if len(set(recorded)) == 2 else {"gpu-a01", "gpu-a02"}
    assert {s["name"] for s in result["subjects"]} >= {"gpu-a", *hosts}
    assert (results / "result.html").read_text().startswith("<!DOCTYPE html>")
    assert "spec v1.0" in r.stdout  # the terminal summary in the Job's log


# --- node-problem-detector (npd-spec-check.yaml) ----------------------------------------------

NPD = DEPLOY / "npd-spec-check.yaml"


def _npd_config() -> dict[str, Any]:
    [cm] = [d for d in documents(NPD) if d["kind"] == "ConfigMap"]
    return json.loads(cm["data"]["spec-check-monitor.json"])


def test_npd_config_follows_the_custom_plugin_contract() -> None:
    """What NPD's CustomPluginConfig.Validate and ApplyConfiguration check
    (kubernetes/node-problem-detector pkg/custompluginmonitor/types/config.go)."""
    cfg = _npd_config()
    assert cfg["plugin"] == "custom"
    glob = cfg["pluginConfig"]
    assert glob["max_output_length"] == 80 and glob["timeout"] == "5s"
    conditions = {c["type"] for c in cfg["conditions"]}
    [rule] = cfg["rules"]
    assert rule["type"] == "permanent" and rule["condition"] in conditions  # a preset default
    assert float(rule["timeout"].removesuffix("s")) <= float(glob["timeout"].removesuffix("s"))
    assert rule["args"][:2] == ["health", "--npd"]
    # the plugin path is where the spec-check image installs the command
    [ds] = [d for d in documents(NPD) if d["kind"] == "DaemonSet"]
    c = ds["spec"]["template"]["spec"]["containers"][0]
    assert c["image"].startswith("registry.example.com/spec-check:")
    assert "--config.custom-plugin-monitor=/config/spec-check-monitor.json" in c["args"]
    assert rule["path"] == "/usr/local/bin/spec-check"


def test_npd_plugin_command_answers_within_the_contract(tmp_path: Path) -> None:
    """The rule's command, with the host paths mapped to this machine's: one line of at most
    80 characters, exit 0, 1 or 2, inside NPD's timeout."""
    import time

    [rule] = _npd_config()["rules"]
    args = [a.replace("/host/sys", "/sys").replace("/host/proc", "/proc").replace("/host/root", "/")
            for a in rule["args"]]
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                       timeout=30, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    elapsed = time.monotonic() - t0
    assert r.returncode in (0, 1, 2), r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 80 and lines[0].startswith("spec-check "), r.stdout
    assert r.stderr == ""
    assert elapsed < 30  # a bound on a shared runner, not a timing claim (NPD's is 5 s; see docs)
