"""The CLI end to end, as a user runs it: exit codes, outputs, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import document
from tests.rules.test_rule_cases import CASES_DIR, _merge

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"
BASE = yaml.safe_load((CASES_DIR / "node.yaml").read_text())["base"]


def spec_check(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=60)


def write_facts(path: Path, overrides: dict[str, Any] | None = None, name: str = "n1") -> Path:
    path.write_text(json.dumps(document(_merge(BASE, overrides or {}), name=name)))
    return path


@pytest.fixture
def healthy(tmp_path: Path) -> Path:
    return write_facts(tmp_path / "healthy.json")


@pytest.fixture
def failing(tmp_path: Path) -> Path:
    return write_facts(tmp_path / "failing.json", {
        "rdma.ports": {"items": {"mlx5_0:1": {"rate": "200 Gb/s"},
                                 "mlx5_1:1": {"rate": "400 Gb/s", "state": "INIT", "phys_state": "LinkUp",
                                              "link_layer": "InfiniBand"}}},
        "rdma.port_count": 2,
        "memory.memlock_limit": "8 MiB",
        "telemetry.exporters": [],
        "gpu.devices": {"items": {"GPU0": {"ecc_enabled": False}, "GPU1": {"remapped_rows_pending": {"error": "NVML NotSupported"}}}},
    })


def assert_one_line_error(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("spec-check: error: ")
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_healthy_node_is_conformant(healthy: Path) -> None:
    r = spec_check("check", "--facts", str(healthy))
    assert r.returncode == 0, r.stdout + r.stderr
    # conformant for what a node check covers, never "to spec v1.0" (the job scope is not in it)
    assert r.stdout.rstrip().endswith(
        "CONFORMANT for node scope (12 of 28 requirements; cluster and job scope not in this result)")
    assert "NOT CONFORMANT" not in r.stdout and "CONFORMANT to spec" not in r.stdout


def test_failing_node_exits_1_with_evidence(failing: Path) -> None:
    r = spec_check("check", "--facts", str(failing))
    assert r.returncode == 1
    assert "NOT CONFORMANT" in r.stdout
    assert "200 Gb/s" in r.stdout and "port rate >= 400 Gb/s" in r.stdout
    assert "fabric_port_rate" not in r.stdout  # values, not parameter names
    assert "could not be read: NVML NotSupported" in r.stdout


def test_json_result_is_valid_and_matches_golden(failing: Path, tmp_path: Path,
                                                 request: pytest.FixtureRequest) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "result.json"
    r = spec_check("check", "--facts", str(failing), "--format", "json", "-o", str(out))
    assert r.returncode == 1 and r.stdout == ""
    result = json.loads(out.read_text())
    jsonschema.validate(result, json.loads((ROOT / "spec" / "result.schema.json").read_text()))
    assert result["summary"]["conformant"] is False
    assert result["summary"]["fail"] >= 4
    assert result["parameters"]["fabric_port_rate"] == {"value": "400 Gb/s", "origin": "default"}
    port = next(f for f in result["findings"] if f["rule"] == "NET-01.fabric-port-slow")
    assert port["observed"] == "200 Gb/s" and port["value"] == 200 and port["unit"] == "Gb/s"
    assert port["status"] == "fail" and port["severity"] == "error" and port["item"] == "mlx5_0:1"
    result["subjects"][0]["source"] = "failing.json"
    # the golden pins the findings and evidence; rule texts and the pack digest change with
    # every rule added elsewhere and are checked by their own tests
    for key in ("rules", "requirements"):
        result.pop(key)
    result["rule_pack"]["digest"] = "sha256:..."
    golden = GOLDEN / "check_failing.json"
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    regen = "regenerate with SPEC_CHECK_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_cli.py and review the diff"
    if request.config.getoption("--update-golden") or os.environ.get("SPEC_CHECK_UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    if not golden.exists():
        pytest.fail(f"golden file {golden} is missing: {regen}")
    assert text == golden.read_text(), f"golden changed: {regen}"


def test_fail_on_warn(healthy: Path, tmp_path: Path) -> None:
    warn = write_facts(tmp_path / "w.json", {"telemetry.exporters": []})
    assert spec_check("check", "--facts", str(warn)).returncode == 0
    assert spec_check("check", "--facts", str(warn), "--fail-on", "warn").returncode == 1


def test_set_and_profile_override_parameters(failing: Path, tmp_path: Path) -> None:
    r = spec_check("check", "--facts", str(failing), "--select", "NET-01.fabric", "--set",
                   "fabric_port_rate=200Gb/s", "--format", "json")
    result = json.loads(r.stdout)
    statuses = {f["item"]: f["status"] for f in result["findings"]}
    assert statuses == {"mlx5_0:1": "pass", "mlx5_1:1": "skip"}  # the INIT port is NET-02's business
    assert result["parameters"]["fabric_port_rate"] == {"value": "200Gb/s", "origin": "--set", "default": "400 Gb/s"}
    text = spec_check("check", "--facts", str(failing), "--select", "NET-01.fabric", "--set",
                      "fabric_port_rate=200Gb/s").stdout
    assert "non-default profile (fabric_port_rate = 200Gb/s (--set; spec default 400 Gb/s))" in " ".join(text.split())
    profile = tmp_path / "p.yaml"
    profile.write_text("name: hdr\nparameters:\n  fabric_port_rate: 200 Gb/s\n")
    r = spec_check("check", "--facts", str(failing), "--select", "NET-01.fabric", "--profile", str(profile),
                   "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["profile"] == str(profile)


def test_select_and_ignore(failing: Path) -> None:
    r = spec_check("check", "--facts", str(failing), "--select", "NET", "--ignore", "NET-02,NET-03",
                   "--format", "json")
    rules = {f["rule"] for f in json.loads(r.stdout)["findings"]}
    assert rules == {"NET-01.fabric-port-slow", "NET-01.gpu-nic-slow"}


def test_two_nodes_of_one_hostname_stay_apart(tmp_path: Path) -> None:
    a = write_facts(tmp_path / "a.json", name="dgx")
    b = write_facts(tmp_path / "b.json", {"memory.shm_size": "64 MB"}, name="dgx")
    r = spec_check("check", "--facts", str(a), "--facts", str(b), "--format", "json")
    result = json.loads(r.stdout)
    assert r.returncode == 1
    assert sorted(s["name"] for s in result["subjects"]) == [f"dgx ({a})", f"dgx ({b})"]


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "invalid JSON"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": ', "truncated"),
    ('{"schema": "spec-check/facts/9", "subject": {}, "facts": {}}', 'facts schema "spec-check/facts/9" was written by a newer spec-check'),
    ('{"hello": 1}', "not a spec-check facts document"),
    ("", "empty file"),
    ("[1, 2]", "not a facts document"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": {"value": 1, "error": "x"}}}',
     "exactly one of value, error, items"),
])
def test_bad_facts_files(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "facts.json"
    p.write_text(content)
    assert_one_line_error(spec_check("check", "--facts", str(p)), str(p), needle)


def test_binary_and_missing_facts_files(tmp_path: Path) -> None:
    p = tmp_path / "bin.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    assert_one_line_error(spec_check("check", "--facts", str(p)), "not UTF-8")
    assert_one_line_error(spec_check("check", "--facts", str(tmp_path / "nope.json")),
                          "no such file or directory (--facts)")
    (tmp_path / "empty").mkdir()  # a folder is one file per node (tests/test_facts_inputs.py); this one has none
    assert_one_line_error(spec_check("check", "--facts", str(tmp_path / "empty")),
                          "no *.json node facts in this directory (--facts)")


@pytest.mark.parametrize(("args", "needle"), [
    (["--set", "fabric_port_rate=fast"], "not a quantity"),
    (["--set", "fabric_port_rate=3 GB"], "is bytes, expected bitrate"),
    (["--set", "no_such=1"], 'unknown parameter "no_such"'),
    (["--set", "novalue"], "--set expects KEY=VALUE"),
    (["--select", "NTE"], "--select NTE: matches no rule"),
    (["--spec-version", "9.9"], 'no spec version "9.9"'),
])
def test_bad_options(healthy: Path, args: list[str], needle: str) -> None:
    assert_one_line_error(spec_check("check", "--facts", str(healthy), *args), needle)


def test_bad_profile_names_file_and_line(healthy: Path, tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("parameters:\n  fabric_port_rate: 400 Gb/s\n  shm_min: lots\n")
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--profile", str(profile)),
                          f"{profile}:3:", "not a quantity")


def test_output_is_written_atomically(failing: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    out.write_text("previous report\n")
    r = spec_check("check", "--facts", str(failing), "-o", str(out))
    assert r.returncode == 1 and "NOT CONFORMANT" in out.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []
    bad = spec_check("check", "--facts", str(failing), "-o", str(tmp_path / "missing-dir" / "r.txt"))
    assert_one_line_error(bad, "cannot write")


def test_rules_list_and_explain() -> None:
    r = spec_check("rules", "list")
    assert r.returncode == 0
    assert "NET-01.fabric-port-slow" in r.stdout and "NET-01" in r.stdout
    r = spec_check("rules", "explain", "NET-01.fabric-port-slow")
    assert r.returncode == 0 and "Why:" in r.stdout and "Fix:" in r.stdout and "reads each RDMA port's port rate (\"rdma.ports\" field \"rate\")" in r.stdout
    r = spec_check("rules", "explain", "MEM-02")
    assert "MEM-02.memlock-limited" in r.stdout and "memlock_min = unlimited" in r.stdout
    assert_one_line_error(spec_check("rules", "explain", "NET-01.nope"), 'no such rule: "NET-01.nope"')


def test_spec_show() -> None:
    r = spec_check("spec", "show", "--format", "json")
    data = json.loads(r.stdout)
    assert [q["id"] for q in data["requirements"]][:3] == ["NET-01", "NET-02", "NET-03"]
    assert len(data["requirements"]) == 28
    r = spec_check("spec", "show", "CKPT-02")
    assert "gpu_mtbf" in r.stdout and "50000 GPU-h" in r.stdout


def test_help_and_version() -> None:
    r = spec_check("--help")
    assert r.returncode == 0 and "check" in r.stdout and "Exit codes" in r.stdout
    from validator.build_info import build_version

    # the build, with its commit where known (tests/test_build_info.py)
    assert spec_check("--version").stdout.strip() == f"spec-check {build_version()} (training-spec-check)"
    assert spec_check("nonsense").returncode == 2


def test_probe_records_and_check_replays_the_real_node(tmp_path: Path) -> None:
    """Record this machine with `probe -o`, evaluate the recording: same verdicts as live."""
    jsonschema = pytest.importorskip("jsonschema")
    facts = tmp_path / "facts.json"
    r = spec_check("probe", "-o", str(facts))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    doc = json.loads(facts.read_text())
    jsonschema.validate(doc, json.loads((ROOT / "spec" / "facts.schema.json").read_text()))
    assert doc["subject"]["kind"] == "node"
    live = json.loads(spec_check("check", "--format", "json").stdout)
    replay = json.loads(spec_check("check", "--facts", str(facts), "--format", "json").stdout)
    key = lambda f: (f["rule"], f["item"], f["status"])  # noqa: E731
    assert sorted(map(key, live["findings"])) == sorted(map(key, replay["findings"]))
    assert live["summary"]["total"] >= 30


def test_live_check_exit_code_matches_the_verdict() -> None:
    r = spec_check("check", "--format", "json")
    result = json.loads(r.stdout)
    assert r.returncode == (0 if result["summary"]["conformant"] else 1)
    statuses = {f["rule"]: f["status"] for f in result["findings"] if f["item"] is None}
    # this test machine: the PCI bus is read for real; a GPU-less machine fails PLAT-01
    pci_gpus = json.loads(spec_check("probe").stdout)["facts"]["accel.pci_count"]["value"]
    assert statuses["PLAT-01.no-accelerator"] == ("pass" if pci_gpus else "fail")


def test_output_follows_symlinks_and_writes_through_devices(failing: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert spec_check("check", "--facts", str(failing), "-o", str(link)).returncode == 1
    assert link.is_symlink() and "NOT CONFORMANT" in real.read_text()
    assert oct(real.stat().st_mode & 0o777) != oct(0o600)  # the umask's mode, not mkstemp's
    r = spec_check("check", "--facts", str(failing), "-o", os.devnull)
    assert r.returncode == 1 and Path(os.devnull).is_char_device()


@pytest.mark.parametrize(("args", "needle"), [
    (["--select", "CKPT"], "--select CKPT: matches only job rules; use `spec-check lint`"),  # job rules only: check judges nodes
    (["--sysfs", "/nonexistent-sysfs"], "does not exist"),
])
def test_usage_errors_that_would_check_nothing(args: list[str], needle: str, healthy: Path) -> None:
    extra = [] if "--sysfs" in args else ["--facts", str(healthy)]
    r = spec_check("check", *extra, *args)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


def test_check_refuses_job_and_cluster_documents(tmp_path: Path) -> None:
    for kind in ("job", "cluster"):
        p = tmp_path / f"{kind}.json"
        p.write_text(json.dumps(document({}, kind=kind)))
        assert_one_line_error(spec_check("check", "--facts", str(p)), f"this document is a {kind}")


def test_the_same_facts_file_twice_is_refused(healthy: Path) -> None:
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--facts", str(healthy)),
                          "given twice")


@pytest.mark.parametrize(("content", "needle"), [
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": {"value": NaN}}}',
     "NaN is not a JSON number"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x\\ud800"}, "facts": {}}',
     "lone surrogate"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": {"value": 1, "source": 5}}}',
     "source must be a string"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": {"value": 1, "location": {"file": 7}}}}',
     "location must be"),
    ('{"schema": "spec-check/facts/1", "subject": {"kind": "node", "name": "x"}, "facts": {"a": {"value": ' + "9" * 5000 + "}}}",
     "facts.a.value: a 5000-digit integer is beyond any real value"),
])
def test_hostile_facts_are_one_line_errors(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "f.json"
    p.write_text(content)
    assert_one_line_error(spec_check("check", "--facts", str(p)), needle)


def test_hostile_profiles(healthy: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb.write_text("\n".join(levels).replace("a0:", "x0:", 1) + "\nparameters: {gpu_nic_distances: *a8}\n")
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--profile", str(bomb)))
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("1: a\nb: c\n")
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--profile", str(mixed)), "unknown key")
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"parameters:\x00\n")
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--profile", str(nul)), "invalid YAML")


def test_bad_source_date_epoch(healthy: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "abc"}
    r = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(healthy)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert_one_line_error(r, "SOURCE_DATE_EPOCH")


def test_markup_in_values_is_shown_literally(tmp_path: Path) -> None:
    p = write_facts(tmp_path / "m.json", name="[bold]host[/bold]")
    r = spec_check("check", "--facts", str(p), "--set", "gpu_nic_distances=[bold]PIX[/bold],PXB")
    assert r.returncode in (0, 1) and "[bold]host[/bold]" in r.stdout and "[bold]PIX[/bold]" in r.stdout


def test_probe_of_a_foreign_root_skips_nvml_unless_told(tmp_path: Path) -> None:
    from tests.fixtures import nodes

    tree = nodes.dgx_h100(tmp_path / "dgx")
    roots = ["--sysfs", str(tree.sysfs), "--procfs", str(tree.procfs), "--rootfs", str(tree.rootfs)]
    r = spec_check("probe", *roots)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)["facts"]
    assert facts["gpu.count"]["error"].startswith("NVML not queried: probing a foreign root (--sysfs ")
    assert "--nvml" in facts["gpu.count"]["error"]
    r = spec_check("probe", *roots, "--nvml")
    assert "not queried" not in json.loads(r.stdout)["facts"]["gpu.count"].get("error", "")
    assert "--nvml / --no-nvml" in spec_check("probe", "--help").stdout


@pytest.mark.parametrize(("args", "needles"), [
    (["check", "--format", "xml"], ["check: Invalid value for '--format': 'xml'"]),
    (["check", "--sysfs", "/nonexistent-sysfs"], ["'--sysfs'", "/nonexistent-sysfs"]),
    (["probe", "--procfs", "/nonexistent-procfs"], ["probe:", "'--procfs'"]),
    (["check", "--bogus"], ["No such option '--bogus'"]),
    (["rules", "explain"], ["rules explain: Missing argument"]),
    (["spec", "show", "--format", "xml"], ["spec show:", "'xml'"]),
    (["lint", "--format", "xml"], ["lint:", "'xml'"]),
    (["cluster", "--format", "xml"], ["cluster:", "'xml'"]),
    (["report"], ["report: Missing argument"]),
    (["nosuchverb"], ["No such command 'nosuchverb'"]),
    (["check", "--set", "shm_min=1G"], ['--set shm_min=1G: unknown unit "G" (did you mean GiB or GB?)']),
    (["check", "--set", "nope=1"], ['--set nope=1: unknown parameter "nope"']),
])
def test_every_usage_error_is_one_line(args: list[str], needles: list[str]) -> None:
    """Whatever the verb (lint, cluster and report included), a usage error is one line
    ``spec-check: error: ...`` and exit 2, never click's Usage/Try/Error block."""
    r = spec_check(*args)
    assert_one_line_error(r, *needles)
    assert "Usage:" not in r.stderr and "Try '" not in r.stderr


def test_custom_rule_pack_with_rules_dir(tmp_path: Path, healthy: Path) -> None:
    """--rules DIR: a pack of one's own that extends the bundled v1.0, for testing rule files."""
    pack = tmp_path / "site"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: site\nspec_version: "1.0"\nextends: v1.0\n')
    (pack / "site.yaml").write_text(
        "overrides:\n  - id: MEM-02.shm-small\n    check: {op: gte, value: \"128 GiB\"}\n"
        "rules:\n  - id: MEM-02.shm-huge\n    requirement: MEM-02\n    scope: node\n    summary: s\n"
        "    why: w\n    remediation: r\n    fact: memory.shm_size\n    check: {op: lte, value: \"1 TiB\"}\n")
    r = spec_check("check", "--facts", str(healthy), "--rules", str(pack), "--select", "MEM-02", "--format", "json")
    assert r.returncode == 1, r.stderr
    result = json.loads(r.stdout)
    status = {f["rule"]: f["status"] for f in result["findings"]}
    assert status["MEM-02.shm-small"] == "fail" and status["MEM-02.shm-huge"] == "pass"
    assert result["rule_pack"]["id"] == "site"
    listed = spec_check("rules", "list", "--rules", str(pack)).stdout
    assert "MEM-02.shm-huge" in listed and "NET-01.fabric-port-slow" in listed
    (pack / "site.yaml").write_text(
        "rules:\n  - id: MEM-02.shm-huge\n    requirement: MEM-02\n    scope: node\n    summary: s\n"
        "    why: w\n    remediation: r\n    fact: memory.shm_size\n    check: {op: lte, value: \"1 Gb/s\"}\n")
    assert_one_line_error(spec_check("rules", "list", "--rules", str(pack)),
                          f"{pack / 'site.yaml'}:9:", '"1 Gb/s" is a bitrate, but memory.shm_size is bytes')


def test_a_pack_with_nothing_to_check_is_a_usage_error(tmp_path: Path, healthy: Path) -> None:
    """An empty custom pack (or one whose rules are all of another scope) must not report
    CONFORMANT for a run that judged nothing."""
    pack = tmp_path / "empty"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: empty\nspec_version: "1.0"\n')
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--rules", str(pack)),
                          "has no node rules: nothing to check")


def test_an_impossible_date_in_any_yaml_file_is_a_one_line_error(tmp_path: Path, healthy: Path) -> None:
    """YAML resolves 2027-02-30 as a date and datetime refuses it: the loader every YAML file
    goes through (profiles here, waivers and rule packs too) names the file and line."""
    profile = tmp_path / "profile.yaml"
    profile.write_text("# site profile\nreviewed: 2027-02-30\nparameters:\n  shm_min: 2 GiB\n")
    assert_one_line_error(spec_check("check", "--facts", str(healthy), "--profile", str(profile)),
                          f"{profile}:2:", 'not a calendar date: "2027-02-30"')
