"""The library API (validator/api) gives the verdicts and exit codes the CLI gives for
the same inputs: each test calls the API directly, then the same command through
click's CliRunner, and compares. Inputs are the recorded node facts
(tests/fixtures/facts), the public corpus (tests/corpus) and a fleet probed over the
local transport with hosts that answer with those recordings."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cluster.helpers import fake_remote
from validator import api
from validator.cli import cli

ROOT = Path(__file__).resolve().parents[2]
FACTS = sorted((ROOT / "tests" / "fixtures" / "facts").glob("*.json"))
CORPUS = ROOT / "tests" / "corpus"
DS = CORPUS / "deepspeed_json"


def _cli(*args: str) -> tuple[int, dict, str]:
    """The command's exit code, JSON result (stdout) and stderr."""
    r = CliRunner().invoke(cli, [*args, "--format", "json"], catch_exceptions=False)
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr


def _verdicts_of_json(result: dict) -> list[tuple]:
    return sorted((f["rule"], f["subject"], f.get("item"), f["status"],
                   json.dumps(f.get("waiver"), sort_keys=True))
                  for f in result["findings"])


def _verdicts(report) -> list[tuple]:
    return sorted((f.rule, f.subject, f.item, f.status.value, json.dumps(f.waiver, sort_keys=True))
                  for f in report.findings)


@pytest.mark.parametrize("facts", FACTS, ids=[p.stem for p in FACTS])
def test_check_node_on_recorded_facts_is_the_cli_verdict(facts):
    outcome = api.check_node(api.CheckOptions(facts=(facts,)))
    code, result, err = _cli("check", "--facts", str(facts))
    assert isinstance(outcome, api.Outcome)
    assert outcome.exit_code == code
    assert outcome.report.summary.conformant == result["summary"]["conformant"]
    assert _verdicts(outcome.report) == _verdicts_of_json(result)
    assert list(outcome.notes) == [line for line in err.splitlines() if line.startswith("spec-check: note:")]


def test_the_exit_codes_differ_across_the_recordings():
    """The comparison above can fail: the recordings hold conformant and non-conformant nodes."""
    codes = {api.check_node(api.CheckOptions(facts=(f,))).exit_code for f in FACTS}
    assert codes == {0, 1}


def test_an_older_recording_is_a_note_in_the_outcome(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")  # after the recording (2026-11-23): no age note
    old = ROOT / "tests" / "fixtures" / "facts" / "recorded_vm_0.1.0.json"
    outcome = api.check_node(api.CheckOptions(facts=(old,)))
    assert len(outcome.notes) == 1 and outcome.notes[0].startswith("spec-check: note: ")
    _, _, err = _cli("check", "--facts", str(old))
    assert outcome.notes[0] in err.splitlines()


def test_fail_on_warn_select_and_waivers_as_the_cli(tmp_path):
    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100_ecc_off.json"
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - id: MEM-01\n    subject: \"*\"\n    justification: ECC off for a bandwidth test\n"
                       "    approver: ops@example.com\n    expires: 2099-12-31\n")
    for extra, report_opts in [
        ((), api.ReportOptions()),
        (("--fail-on", "warn"), api.ReportOptions(fail_on="warn")),
        (("--select", "MEM-01"), api.ReportOptions(select=("MEM-01",))),
        (("--waivers", str(waivers)), api.ReportOptions(waivers=waivers)),
    ]:
        outcome = api.check_node(api.CheckOptions(report=report_opts, facts=(facts,)))
        code, result, _ = _cli("check", "--facts", str(facts), *extra)
        assert (outcome.exit_code, _verdicts(outcome.report)) == (code, _verdicts_of_json(result)), extra
    unwaived = api.check_node(api.CheckOptions(facts=(facts,)))
    waived = api.check_node(api.CheckOptions(report=api.ReportOptions(waivers=waivers), facts=(facts,)))
    assert unwaived.exit_code == 1 and waived.exit_code == 0


def test_a_baseline_counts_only_new_problems_and_says_so(tmp_path):
    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100_ecc_off.json"
    saved = tmp_path / "base.json"
    code, result, _ = _cli("check", "--facts", str(facts))
    assert code == 1
    saved.write_text(json.dumps(result))
    outcome = api.check_node(api.CheckOptions(report=api.ReportOptions(baseline=saved), facts=(facts,)))
    code, result, err = _cli("check", "--facts", str(facts), "--baseline", str(saved))
    assert outcome.exit_code == code == 0
    assert outcome.notes[-1].startswith(f"spec-check: --baseline {saved}: ")
    assert outcome.notes[-1] in err.splitlines()


def test_options_that_cannot_go_together_are_the_cli_usage_error(tmp_path):
    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
    with pytest.raises(api.OptionsError) as raised:
        api.check_node(api.CheckOptions(facts=(facts,), since=facts))
    r = CliRunner().invoke(cli, ["check", "--facts", str(facts), "--since", str(facts)])
    assert r.exit_code == 2
    assert str(raised.value) in " ".join(r.stderr.split())


@pytest.mark.parametrize("paths", [
    (DS / "axolotl-ai-cloud__axolotl__deepspeed_configs__zero3.json",),
    (DS / "databrickslabs__dolly__config__a100_config.json",
     DS / "lm-sys__FastChat__playground__deepspeed_config_s2.json"),
    (CORPUS / "accelerate_yaml",),
], ids=["one-file", "two-files", "a-folder"])
def test_lint_jobs_on_the_corpus_is_the_cli_verdict(paths):
    outcome = api.lint_jobs(api.LintOptions(paths=paths))
    code, result, err = _cli("lint", *map(str, paths))
    assert outcome.exit_code == code
    assert _verdicts(outcome.report) == _verdicts_of_json(result)
    assert outcome.report.extra["jobs"] == result["extra"]["jobs"]
    assert [n for n in outcome.notes] == [line for line in err.splitlines() if "not linted" in line]


def test_an_unreadable_config_is_a_lint00_error_in_the_library(tmp_path):
    good = DS / "axolotl-ai-cloud__axolotl__deepspeed_configs__zero1.json"
    broken = tmp_path / "zero1_cut.json"
    broken.write_text(good.read_text()[: len(good.read_text()) // 2])  # cut in half: no longer parses
    outcome = api.lint_jobs(api.LintOptions(paths=(good, broken)))
    lint00 = [f for f in outcome.report.findings if f.rule == "LINT-00.unreadable-config"]
    assert [(f.status.value, f.location.file) for f in lint00] == [("error", str(broken))]
    assert any(r.id == "LINT-00.unreadable-config" for r in outcome.report.rules)
    code, result, _ = _cli("lint", str(good), str(broken))
    assert outcome.exit_code == code == 1
    assert _verdicts(outcome.report) == _verdicts_of_json(result)


def test_lint_without_a_path_is_an_options_error():
    with pytest.raises(api.OptionsError, match="give at least one PATH"):
        api.lint_jobs(api.LintOptions())


def _fleet_modes(tmp_path: Path) -> tuple[dict[str, str], str]:
    modes = {"a": f"doc:{FACTS[0]}", "b": f"doc:{ROOT / 'tests/fixtures/facts/dgx_h100_ecc_off.json'}"}
    return modes, fake_remote(tmp_path, modes)


def test_live_and_replay_return_the_same_type_and_verdicts(tmp_path):
    modes, remote = _fleet_modes(tmp_path)
    saved = tmp_path / "saved"
    live = api.run_cluster(api.ClusterOptions(hosts=tuple(modes), transport="local", remote_command=remote,
                                              save_facts=saved))
    assert type(live) is api.FleetOutcome and not live.interrupted
    assert {d["subject"]["name"] for d in live.node_docs} == {"a", "b"}
    assert not saved.joinpath("cluster.json").exists()  # saved only when the caller asks
    api.save_fleet_facts(live)
    assert sorted(p.name for p in saved.iterdir()) == ["a.json", "b.json", "cluster.json"]

    replayed = api.replay_cluster(api.ReplayOptions(facts=(saved,)))
    assert type(replayed) is type(live)
    assert replayed.exit_code == live.exit_code == 1  # b has ECC off
    # the same verdicts, but for the subjects' sources (local:a against the replay's file)
    assert _verdicts(replayed.report) == _verdicts(live.report)

    code, result, _ = _cli("cluster", "--facts", str(saved))
    assert replayed.exit_code == code
    assert _verdicts(replayed.report) == _verdicts_of_json(result)


def test_live_run_is_the_cli_verdict(tmp_path):
    modes, remote = _fleet_modes(tmp_path)
    live = api.run_cluster(api.ClusterOptions(hosts=tuple(modes), transport="local", remote_command=remote))
    code, result, _ = _cli("cluster", "--transport", "local", "--hosts", "a,b", "--remote-command", remote)
    assert live.exit_code == code
    assert _verdicts(live.report) == _verdicts_of_json(result)


@pytest.mark.parametrize("passes", ["itemize", "fold"])
def test_replay_of_recorded_node_facts_is_the_cli_verdict(tmp_path, passes):
    files = [ROOT / "tests/fixtures/facts" / n for n in ("dgx_h100.json", "dgx_h100_nic_x8.json")]
    for f in files:  # one folder: two recordings of one hostname, named by their files
        shutil.copy(f, tmp_path / f.name)
    outcome = api.replay_cluster(api.ReplayOptions(facts=(tmp_path,), passes=passes))
    code, result, _ = _cli("cluster", "--facts", str(tmp_path), "--passes", passes)
    assert isinstance(outcome, api.FleetOutcome) and not outcome.interrupted
    assert outcome.exit_code == code
    assert _verdicts(outcome.report) == _verdicts_of_json(result)


def test_an_interrupted_fleet_exits_2_whatever_its_verdict():
    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
    report = api.check_node(api.CheckOptions(facts=(facts,))).report
    assert api.FleetOutcome(report).exit_code == 0
    assert api.FleetOutcome(report, interrupted=True).exit_code == 2


def test_the_api_loads_nothing_heavy_on_import():
    import subprocess

    code = ("import sys, validator.api as a; a.CheckOptions(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('yaml', 'pydantic', 'rich') "
            "or m.startswith('validator.cluster') or m.startswith('validator.cli')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == "[]"


def test_the_docstring_names_every_public_name():
    for name in api.__all__:
        assert name in (api.__doc__ or ""), name
        assert getattr(api, name) is not None


@pytest.mark.parametrize("name", ["dgx_h100", "dgx_h100_port_200g"])
def test_a_health_verdict_is_checks_verdict_for_its_own_node(name):
    """health judges the node it acts on as check does (the Slurm action is the caller's)."""
    facts = ROOT / "tests" / "fixtures" / "facts" / f"{name}.json"
    node = json.loads(facts.read_text())["subject"]["name"]
    health = api.judge_node_health(api.HealthOptions(node, facts=facts))
    check = api.check_node(api.CheckOptions(facts=(facts,)))
    assert health.exit_code == check.exit_code
    assert _verdicts(health.report) == _verdicts(check.report)


def test_a_health_verdict_refuses_another_hosts_recording():
    from validator.errors import SpecCheckError

    facts = ROOT / "tests" / "fixtures" / "facts" / "dgx_h100.json"
    with pytest.raises(SpecCheckError, match=r"of host \"dgx-h100-01\", not of node \"some-other-node\""):
        api.judge_node_health(api.HealthOptions("some-other-node", facts=facts))
