"""Regular expressions on inputs of a megabyte: each of these took past 60 s on a few
hundred kilobytes before (quadratic backtracking); now each run ends well inside the
subprocess timeout, which is only a hang guard here (tests never assert times), and
within 1 GiB of address space.
``python scripts/regex_audit.py`` audits every pattern in validator/ by growth rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hardening.conftest import spec_check_within_1gib
from validator.report.model import Finding, Status
from validator.report.waivers import subject_matches

MB = 1_000_000
HANG_GUARD = 120  # seconds; the quadratic versions took hours at this size

SHELL_INPUTS = {
    "nested-arith.sh": "#!/bin/bash\n#SBATCH --nodes=2\nX=" + "$((" * (MB // 3) + "\nsrun python train.py\n",
    "open-default.sh": "#!/bin/bash\n#SBATCH --nodes=2\nX=" + "${a:-" * (MB // 5) + "\nsrun python train.py\n",
    "x-equals": "x=" * (MB // 2) + "\n",  # no extension: detection reads it
    "x-equals-shebang": "#!/bin/sh\n" + "x=" * (MB // 2) + " srun\n",
    "blank-lines": "#!/bin/sh\n" + "\n" * MB + "echo done\n",
    "spaces.sh": "#!/bin/sh\n" + " " * MB + "\n#SBATCH --nodes=1\n",
    "slash-run.sh": "#!/bin/sh\n" + "a" * MB + "/srun python t.py\n",
}


@pytest.mark.parametrize("name", sorted(SHELL_INPUTS))
def test_megabyte_shell_inputs_end(tmp_path: Path, name: str) -> None:
    p = tmp_path / name
    p.write_text(SHELL_INPUTS[name])
    r = spec_check_within_1gib("lint", "--format", "json", str(p), timeout=HANG_GUARD)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


def test_waiver_pattern_against_a_megabyte_item_id(tmp_path: Path) -> None:
    f = Finding(rule="NET-01.x", requirement="NET-01", level="MUST", status=Status.FAIL, subject="n1",
                expected="", message="m", remediation="", item="a" + " " * MB + "b")
    assert not subject_matches("n2*", f)  # returns at once (the pair regex backtracked per space)
    pair = Finding(rule="NET-01.x", requirement="NET-01", level="MUST", status=Status.FAIL, subject="c",
                   expected="", message="m", remediation="", item=" n1 -> n2 ")
    assert subject_matches("n2", pair) and subject_matches("n1", pair) and not subject_matches("n3", pair)


def test_waivers_over_a_result_with_a_long_item_id_through_the_cli(tmp_path: Path, lint_result: Path) -> None:
    doc = json.loads(lint_result.read_text())
    failing = next(f for f in doc["findings"] if f["status"] == "fail")
    failing["item"] = "a" + " " * MB + "b"
    result = tmp_path / "long.json"
    result.write_text(json.dumps(doc))
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(f'waivers:\n  - id: {failing["requirement"]}\n    subject: "zz*z"\n'
                       "    justification: x\n    approver: a@example.com\n    expires: 2099-01-01\n")
    r = spec_check_within_1gib("report", "--format", "json", "--waivers", str(waivers), str(result),
                               timeout=HANG_GUARD)
    assert r.returncode in (0, 1), r.stderr


def test_megabyte_of_blank_lines_in_a_broken_config_under_ignore_unknown(tmp_path: Path) -> None:
    """--ignore-unknown asks whether a file that does not parse looks like a config: the
    pattern's ``^\\s*\\[`` ran over every blank line after each line start."""
    p = tmp_path / "broken.yaml"
    p.write_text("\n" * MB + "a: [\n")
    r = spec_check_within_1gib("lint", "--ignore-unknown", "--format", "json", str(p), timeout=HANG_GUARD)
    assert r.returncode in (0, 1, 2) and "internal error" not in r.stderr, r.stderr
