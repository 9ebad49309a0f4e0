"""Issue 12 end to end through the real CLI: scoped verdicts, problems first, fixes grouped
by rule, ``report`` merging several results, pipes and terminals.

The fleet is the 64-node replay of the acceptance: the repository's DGX H100 fixtures
(synthesized facts, see tests/fixtures/make_facts.py), 62 healthy hosts and two bad ones
(a 200 Gb/s port on dgx-017, ECC off on dgx-042).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import own_host

FACTS = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
JOBS = Path(__file__).resolve().parents[1] / "acceptance" / "jobs" / "positive"
UUID = re.compile(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
BAD = {"dgx-017": "dgx_h100_port_200g", "dgx-042": "dgx_h100_ecc_off"}


def run(*args: object, columns: int | None = 140, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["SOURCE_DATE_EPOCH"] = "1795000000"
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "validator", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def make_fleet(root: Path, n: int = 64, bad: dict[str, str] = BAD) -> Path:
    fleet = root / "fleet"
    fleet.mkdir()
    for i in range(n):
        name = f"dgx-{i:03d}"
        doc = own_host(json.loads((FACTS / f"{bad.get(name, 'dgx_h100')}.json").read_text()), name)
        (fleet / f"{name}.json").write_text(json.dumps(doc))
    return fleet


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fleet(tmp_path_factory.mktemp("replay"))


@pytest.fixture(scope="module")
def fleet_result(fleet: Path) -> Path:
    out = fleet.parent / "fleet.json"
    r = run("cluster", "--facts", fleet, "--format", "json", "-o", out)
    assert r.returncode == 1, r.stderr
    return out


# ---- problems first ------------------------------------------------------------------------


def test_replay_puts_the_bad_hosts_in_the_first_lines(fleet: Path) -> None:
    r = run("cluster", "--facts", fleet)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    head = "\n".join(lines[:5])
    assert "dgx-017" in head and "dgx-042" in head, head
    assert lines[1].startswith("NOT CONFORMANT to spec v1.0 (node and cluster scope evaluated")
    assert re.search(r"^FAIL +dgx-017: 2 fail: NET-01.fabric-port-slow, NET-01.gpu-nic-slow( \(facts [^)]*\))?$",
                     head, re.M)
    assert re.search(r"^FAIL +dgx-042: 1 fail: MEM-01.ecc-disabled( \(facts [^)]*\))?$", head, re.M)
    # passes are counted, not listed: no healthy host and no PASS row appears
    # the cluster's own NET-01 (measured pairs) got only skips: not judged, never clean
    assert re.search(r"^NOT JUDGED cluster: ", r.stdout, re.M)
    assert re.search(r"^PASS +62 subjects with no problems \(1\d,\d{3} passes; --show passes lists them\)$",
                     r.stdout, re.M)
    assert "dgx-000" not in r.stdout and "dgx-063" not in r.stdout
    assert not re.search(r"^ *PASS +[A-Z]+-\d\d\.", r.stdout, re.M)
    assert len(lines) < 60  # it was 3,385 lines


def test_show_passes_lists_every_host(fleet: Path) -> None:
    r = run("cluster", "--facts", fleet, "--show", "passes")
    assert r.returncode == 1
    for i in range(64):
        assert f"dgx-{i:03d}" in r.stdout
    # bad hosts still come first
    first = min(r.stdout.index(h) for h in BAD)
    assert first < r.stdout.index("dgx-000")


def test_a_fix_for_eight_gpus_is_one_fix() -> None:
    r = run("check", "--facts", FACTS / "dgx_h100_fabric_not_started.json")
    assert r.returncode == 1
    todo = r.stdout[r.stdout.index("What to do"):]
    assert todo.count("NET-03.fabric-manager-down") == 1
    assert "NET-03.fabric-manager-down (MUST): 8 findings on 1 subject" in todo
    assert todo.count("fix:") == 1
    # every GPU is named where the fix applies
    assert all(f"GPU{i}" in todo for i in range(8))


def test_fixes_are_ordered_must_fail_error_should_warn_then_waived() -> None:
    from tests.reports.conftest import make_report
    from validator.renderers.problems import fix_groups

    groups = fix_groups(make_report())
    ranks = [g.rank for g in groups]
    assert ranks == sorted(ranks) and ranks[-1] == 4 and ranks[0] == 0
    kinds = [("waived" if g.waived else g.status.value, g.level) for g in groups]
    assert kinds.index(("fail", "MUST")) < kinds.index(("error", "MUST")) < kinds.index(("warn", "SHOULD"))


def test_markdown_opens_with_the_subjects(fleet_result: Path) -> None:
    r = run("report", fleet_result, "--format", "markdown")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    start = lines.index("#### Subjects: 3 of 65 with problems")
    rows = lines[start + 4:start + 8]
    assert rows[0].startswith("| ❌ fail | dgx-017 | 2 fail |") and rows[1].startswith("| ❌ fail | dgx-042 |")
    assert rows[2].startswith("| ❔ not judged | cluster |")  # its NET-01 got only skips
    assert rows[3].startswith("| ✅ pass | 62 subjects with no problems |")
    listed = run("report", fleet_result, "--format", "markdown", "--show", "passes").stdout
    assert re.search(r"^\| ✅ pass \| dgx-000 \| \d+ pass, \d+ skip \| \| [^|]* \|$", listed, re.M)
    assert "| ✅ pass | dgx-063 |" in listed
    todo = r.stdout[r.stdout.index("#### What to do"):]
    todo = todo[:todo.index("\n\n", todo.index("|"))]
    assert todo.count("`MEM-01.ecc-disabled`") == 1 and "dgx-042 (GPU3 (GPU-e07f3a91" in todo


# ---- scoped verdicts and report merging ----------------------------------------------------


def test_lint_verdict_names_the_job_scope(tmp_path: Path) -> None:
    r = run("lint", JOBS / "megatron_sbatch", "--format", "json")
    doc = json.loads(r.stdout)
    cov = doc["summary"]["coverage"]
    assert cov["scopes"] == ["job"] and not cov["complete"]
    assert cov["requirements_total"] == 28 and len(cov["requirements_evaluated"]) < 28
    assert doc["summary"]["verdict"].endswith("; node and cluster scope not in this result)")


def test_merged_fleet_and_job_cover_every_scope_but_claim_only_what_was_judged(tmp_path: Path) -> None:
    """Issue 30: a clean fleet merged with a job read "CONFORMANT to spec v1.0" while NET-01's
    measured throughput never ran (a replay without pairwise measurements) and NET-04 had only
    skips. The merge covers all three scopes, and says what it did not judge: INCOMPLETE."""
    good = make_fleet(tmp_path, n=3, bad={})
    fleet_ok = tmp_path / "fleet-ok.json"
    alone = run("cluster", "--facts", good, "--format", "json", "-o", fleet_ok)
    assert alone.returncode == 1, alone.stderr  # NET-01's measured part not judged: INCOMPLETE
    job = tmp_path / "job.json"
    lint = run("lint", JOBS / "megatron_sbatch", "--set", "step_time=2s", "--format", "json", "-o", job)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fleet_summary = json.loads(run("report", fleet_ok, "--format", "json").stdout)["summary"]
    assert not fleet_summary["conformant"] and fleet_summary["verdict"].startswith("INCOMPLETE for node and cluster")
    job_summary = json.loads(run("report", job, "--format", "json").stdout)["summary"]
    assert job_summary["conformant"] and job_summary["verdict"].startswith("CONFORMANT for job scope")
    r = run("report", fleet_ok, job, "--format", "json")
    assert r.returncode == 0, r.stderr  # report exits 0 once written; the verdict is in it
    merged = json.loads(r.stdout)
    cover = merged["summary"]["coverage"]
    assert cover["complete"] is False and cover["scopes"] == ["node", "cluster", "job"]
    assert cover["requirements_not_judged"] == ["NET-04"] and merged["summary"]["not_judged"] == ["NET-01"]
    assert merged["summary"]["verdict"].startswith(
        "INCOMPLETE for node, cluster and job scope (27 of 28 requirements; not judged (only skips): "
        "NET-04, NET-01 (MUST, on some subjects))")
    assert {s["kind"] for s in merged["subjects"]} == {"node", "cluster", "job"}
    assert [m["file"] for m in merged["extra"]["merged_from"]] == [str(fleet_ok), str(job)]
    text = run("report", fleet_ok, job).stdout
    assert text.rstrip().splitlines()[-1].startswith("INCOMPLETE for node, cluster and job scope")
    html = run("report", fleet_ok, job, "--format", "html").stdout
    assert "every scope and requirement of the spec" not in html


def _edited(src: Path, dst: Path, **changes: object) -> Path:
    doc = json.loads(src.read_text())
    for dotted, value in changes.items():
        node = doc
        *path, last = dotted.split("__")
        for key in path:
            node = node[key]
        node[last] = value
    dst.write_text(json.dumps(doc))
    return dst


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"spec_version": "1.1"}, "cannot merge results of different spec versions"),
        ({"rule_pack__digest": "sha256:" + "0" * 64}, "cannot merge results of different rule packs"),
        ({"parameters__fabric_port_rate__value": "200 Gb/s"}, "judged under different thresholds: fabric_port_rate"),
    ],
)
def test_merge_refuses_results_judged_differently(tmp_path: Path, fleet_result: Path,
                                                   change: dict[str, object], message: str) -> None:
    job = tmp_path / "job.json"
    run("lint", JOBS / "megatron_sbatch", "--format", "json", "-o", job)
    other = _edited(job, tmp_path / "other.json", **change)
    r = run("report", fleet_result, other)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert str(fleet_result) in r.stderr and str(other) in r.stderr


def test_merge_keeps_subjects_of_the_same_name_apart(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("check", "--facts", FACTS / "dgx_h100.json", "--format", "json", "-o", a)
    run("check", "--facts", FACTS / "dgx_h100_ecc_off.json", "--format", "json", "-o", b)
    merged = json.loads(run("report", a, b, "--format", "json").stdout)
    names = [s["name"] for s in merged["subjects"]]
    assert names == ["dgx-h100-01 (a.json)", "dgx-h100-01 (b.json)"]
    bad = [f for f in merged["findings"] if f["status"] == "fail"]
    assert [f["subject"] for f in bad] == ["dgx-h100-01 (b.json)"]


# ---- pipes and terminals -------------------------------------------------------------------


def _head(args: list[object], nbytes: int | None = None) -> tuple[int, str, str]:
    """Run spec-check into a reader that stops early (``| head -1`` / ``| head -c N``)."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000"}
    with subprocess.Popen([sys.executable, "-m", "validator", *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        got = proc.stdout.read(nbytes) if nbytes else proc.stdout.readline()
        proc.stdout.close()  # the reader goes away
        err = proc.stderr.read().decode()
        return proc.wait(timeout=300), got.decode(errors="replace"), err


def test_check_into_head_keeps_the_verdicts_exit_code(tmp_path: Path) -> None:
    code, line, err = _head(["check", "--facts", FACTS / "dgx_h100.json"])
    assert (code, err) == (0, "") and line.startswith("spec-check ")
    code, line, err = _head(["check", "--facts", FACTS / "dgx_h100_ecc_off.json"])
    assert (code, err) == (1, "")


def test_large_json_into_head_c_keeps_the_verdicts_exit_code(fleet: Path) -> None:
    code, text, err = _head(["cluster", "--facts", fleet, "--format", "json"], nbytes=100)
    assert (code, err) == (1, "") and text.startswith("{")


def test_columns_is_honoured_when_piped_and_80_columns_read_well() -> None:
    r = run("check", "--facts", FACTS / "dgx_h100_port_200g.json", columns=80)
    lines = r.stdout.splitlines()
    # the verdict is one whole line (the terminal wraps it); every other line fits
    assert all(len(line) <= 80 for line in lines[:-1]), [ln for ln in lines if len(ln) > 80]
    assert lines[-1].startswith("NOT CONFORMANT to spec v1.0 (node scope evaluated: 12 of 28 requirements")
    # no identifier or UUID split across lines: every UUID of the fixture appears whole
    assert "GPU3 (GPU-e07f3a91-2c6b-4d8e-b514-73a9c0f2d837)" in r.stdout
    assert not re.search(r"GPU-[0-9a-f-]{0,35}$", r.stdout, re.M)  # no UUID cut at a line's end
    assert len(UUID.findall(r.stdout)) >= 2
    for rule in ("NET-01.fabric-port-slow", "NET-01.gpu-nic-slow", "TOPO-02.nic-link-narrow"):
        assert rule in r.stdout
    wide = run("check", "--facts", FACTS / "dgx_h100_port_200g.json", columns=200)
    assert max(len(line) for line in wide.stdout.splitlines()[:-1]) > 80


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "github"])
def test_no_trailing_whitespace(fmt: str, fleet_result: Path) -> None:
    r = run("report", fleet_result, "--format", fmt)
    assert r.returncode == 0
    bad = [line for line in r.stdout.splitlines() if line != line.rstrip()]
    assert not bad, bad[:3]


def test_output_file_is_announced_on_stderr(tmp_path: Path) -> None:
    out = tmp_path / "node.html"
    r = run("check", "--facts", FACTS / "dgx_h100.json", "--format", "html", "-o", out)
    assert r.returncode == 0 and r.stdout == ""
    size = out.stat().st_size
    assert r.stderr == f"spec-check: wrote html report to {out} ({size:,} bytes)\n"


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["chekc"], "No such command 'chekc'. Did you mean 'check'?"),
        (["reprot", "x.json"], "Did you mean 'report'"),
        (["check", "--formt", "json"], "Did you mean '--format'?"),
        (["rules", "lst"], "Did you mean 'list'?"),
    ],
)
def test_mistyped_verb_or_option_suggests_the_closest(args: list[str], hint: str) -> None:
    r = run(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and hint in r.stderr, r.stderr


def test_junit_and_sarif_carry_the_scoped_verdict(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    junit = run("check", "--facts", FACTS / "dgx_h100.json", "--format", "junit")
    props = ET.fromstring(junit.stdout).findall("./testsuite/properties/property[@name='spec-check.verdict']")
    assert props and props[0].get("value", "").startswith("CONFORMANT for node scope (12 of 28 requirements")
    sarif = json.loads(run("check", "--facts", FACTS / "dgx_h100.json", "--format", "sarif").stdout)
    run_props = sarif["runs"][0]["properties"]
    assert run_props["verdict"].startswith("CONFORMANT for node scope")
    assert run_props["coverage"]["scopes"] == ["node"] and run_props["coverage"]["complete"] is False


def test_merge_lists_job_inputs_per_result(tmp_path: Path) -> None:
    """step_time and gpu_count describe one job each: two lint results may differ on them."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("lint", JOBS / "megatron_sbatch", "--set", "step_time=4", "--format", "json", "-o", a)
    run("lint", JOBS / "megatron_sbatch", "--set", "step_time=2", "--format", "json", "-o", b)
    merged = json.loads(run("report", a, b, "--format", "json").stdout)
    p = merged["parameters"]["step_time"]
    assert p["origin"] == "per result" and p["value"] == "4 in a.json; 2 in b.json"
    assert [m["file"] for m in merged["extra"]["merged_from"]] == [str(a), str(b)]


def test_a_pass_on_nothing_to_judge_says_so_in_the_rules_words() -> None:
    """A log with no Xid passes PLAT-03.xid-warning; its PASS line once read "Xid one of 48,
    63, ...: none", as if an Xid had been seen. The real H200's facts, every format for people."""
    h200 = FACTS.parent / "h200_health" / "facts.json"
    said = "no Xid event in the kernel log within the look-back but the application's"
    r = run("check", "--facts", h200, "--select", "PLAT-03", columns=None)  # 80 columns: a line each
    assert r.returncode == 0, r.stderr
    assert f"PASS  {said} (PLAT-03.xid-warning)" in r.stdout
    wide = run("check", "--facts", h200, "--select", "PLAT-03.xid", columns=200).stdout  # a table
    assert said in wide and "Xid one of" not in wide + r.stdout
    md = run("check", "--facts", h200, "--select", "PLAT-03.xid", "--format", "markdown").stdout
    assert f"| {said} | `PLAT-03.xid-warning` |" in md
    html = run("check", "--facts", h200, "--select", "PLAT-03.xid", "--format", "html", "--show", "passes").stdout
    assert "holds: no Xid event in the kernel log within the look-back but the application&#x27;s<br>" in html
    folded = run("check", "--facts", h200, "--select", "PLAT-03.xid", "--format", "html").stdout  # one row a rule
    assert "<td>no Xid event in the kernel log within the look-back but the application&#x27;s</td>" in folded
    # a pass on a value keeps what holds beside what was seen
    assert "PASS  persistence mode is on: true (PLAT-03.persistence-off" in r.stdout
