"""Words, not internals: every rule's texts, as findings carry them into every format.

Each rule case (tests/rules/cases) is evaluated, and every finding's expected sentence,
message and skip reason is read as a person reads it: values and their meaning. Rejected:
parameter and fact names (``fabric_port_rate``, ``job.gpu_count``), formula names and
their unexpanded form (``daly_steps_min``, ``product:``, ``a .. b``), and Python or YAML
reprs. Allowed: the one place a person types a parameter's name (``--set gpu_count=N``),
program names a person runs (``all_reduce_perf``), and values the finding observed (a
config key the user wrote, in the observed part of a message).

The static texts (``rules explain``; the expected sentence of skip and error findings)
are checked for every rule of the pack as well, so a rule without a skip case is covered.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import built, run_rules
from tests.rules.test_rule_cases import CASES
from validator.report.model import Finding, Status

# snake_case identifiers and dotted fact names; formula internals
IDENT = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
FACT_NAME = re.compile(r"\b(?:job|gpu|accel|rdma|net|nic|pcie|memory|host|os|cluster|telemetry|nvlink|xgmi|"
                       r"collectives|topology|probe)\.[a-z_][a-z0-9_.]*")
INTERNALS = re.compile(r"\bproduct:|\bdaly\w*|\s\.\.\s|\{'|\bparam=|\bformula\b|\bfact=")
ALLOWED = re.compile(r"--set [a-z_]+=\S+|\ball_reduce_perf\b|\bib_write_bw\b|\bib_write_lat\b|NCCL_[A-Z_]+")


def problems(text: str) -> list[str]:
    """The identifiers and internals a sentence shows a person."""
    text = ALLOWED.sub(" ", text)
    return IDENT.findall(text) + FACT_NAME.findall(text) + INTERNALS.findall(text)


def _without_observed(f: Finding) -> str:
    """The message minus what was observed (a config key the user wrote is a value)."""
    text = f.message
    if f.observed:
        text = text.replace(f.observed, " ")
    # a skip quotes the value it saw: "(observed ...)"
    return re.sub(r"\(observed [^()]*(?:\([^()]*\)[^()]*)*\)", " ", text)


def _case_findings() -> list[tuple[str, Finding]]:
    out = []
    for _file, rule_id, name, case in CASES:
        fs = run_rules(case["facts"], select=(rule_id,), sets=tuple(case.get("sets", ())), kind=case["kind"])
        out += [(f"{rule_id}-{name}", f) for f in fs if f.rule == rule_id]
    return out


FINDINGS = _case_findings()


def test_the_cases_cover_pass_fail_and_skip_texts() -> None:
    statuses = {f.status for _, f in FINDINGS}
    assert {Status.PASS, Status.FAIL, Status.WARN, Status.SKIP, Status.ERROR} <= statuses
    rules = {f.rule for _, f in FINDINGS}
    # a rule that compares two documents (against: nodes|run) has no facts case: its words are
    # its comparison's, tested with real jobs, nodes and runs in tests/jobnodes/
    assert rules == {r.id for r in built().pack.rules if r.against is None}


@pytest.mark.parametrize("status", ["pass", "fail", "warn", "skip"])
def test_every_rule_text_is_words_not_internals(status: str) -> None:
    bad = []
    for case, f in FINDINGS:
        if f.status.value != status:
            continue
        for kind, text in (("expected", f.expected), ("message", _without_observed(f))):
            found = problems(text)
            if found:
                bad.append(f"{case} {kind}: {found} in {text!r}")
    assert not bad, "\n".join(sorted(set(bad))[:40])


def test_static_texts_of_every_rule_are_words() -> None:
    from validator.evaluate.engine import describe_rule

    b = built()
    bad = []
    for rule in b.pack.rules:
        d = describe_rule(b.ctx, rule)
        texts = [d["expected"], *d["when"], *d["filter"], *(t for t, _ in d["where"]),
                 *(why for _, why in d["where"] if why), rule.summary]
        for text in texts:
            found = problems(text)
            if found:
                bad.append(f"{rule.id}: {found} in {text!r}")
    assert not bad, "\n".join(bad)


def test_the_words_test_rejects_what_it_should() -> None:
    """The control: the texts issue 12 quoted are rejected; their rewrites pass."""
    for old in (
        "Metrics are emitted less often than every metrics_interval_steps_max steps",
        "[18366 (daly_steps_min: 1 (job.gpu_count), gpu_mtbf, checkpoint_write_time)]",
        "applies only where framework batch rule = product (observed divisible)".replace("product", "divisible_accumulation"),
        "port rate >= 400 Gb/s (fabric_port_rate)",
        "host memory >= 160 GiB (product: 160 GiB x 1)",
        "checkpoint interval within Daly's optimum range (daly_interval_min .. daly_interval_max of x)",
    ):
        assert problems(old), old
    for new in (
        "checkpoint interval in steps within 569 to 2,276 (Daly's optimum for 1,024 GPUs, 50,000 GPU-h "
        "MTBF per GPU, 60 s per write, 4 s per step, within a factor of 2)",
        "cannot work out Daly's optimum checkpoint interval: the job's GPU count is unknown: pass --set gpu_count=N",
        "applies only where nccl-tests all_reduce_perf = run",
    ):
        assert not problems(new), new


def test_a_fleet_result_in_every_format_carries_no_parameter_names(tmp_path) -> None:
    """End to end: the texts of a real run, in the formats people read."""
    import subprocess
    import sys
    from pathlib import Path

    facts = Path(__file__).resolve().parents[1] / "fixtures" / "facts" / "dgx_h100_port_200g.json"
    for fmt in ("terminal", "markdown", "html", "github"):
        r = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(facts), "--format", fmt],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 1
        # the HTML lists every parameter by name in its inventories after the findings (the
        # coverage table's statements, the parameters table): that is the machine part; the
        # findings' texts, "What to fix" first, must not name them
        text = r.stdout
        if fmt == "html":
            text = text[text.index('id="to-fix"'):text.index('id="coverage"')]
        for name in ("fabric_port_rate", "memlock_min", "shm_min", "pcie_gen_max", "accel.pci_count",
                     "gpu_nic_distances", "host_memory_ratio_min"):
            assert name not in text, (fmt, name)
