"""docs/inputs.md states numbers the code holds: each is read from the code here."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.jobs.util import ROOT
from validator.io import safeio, source
from validator.jobs import model, recovery_log
from validator.report import results
from validator.report.model import MAX_SOURCE_TEXT

DOC = (ROOT / "docs" / "inputs.md").read_text()


def _mib(text: str) -> int:
    n, unit = text.split()
    return int(n) * (1024 * 1024 if unit == "MiB" else 1024)


def test_the_caps_table_is_the_code() -> None:
    rows = dict(re.findall(r"^\| ([^|]+?) \| (\d+ [MK]iB) \|$", DOC, re.M))
    code = {
        "training config": safeio.CAPS["training config"],
        "YAML file (profile, waivers, rule file)": safeio.CAPS["YAML file"],
        "facts document": safeio.CAPS["facts document"],
        "training log (`--recovery-log`)": recovery_log.MAX_LOG_BYTES,
        "key file": safeio.CAPS["key"],
        "host file (`--hosts @FILE`)": safeio.CAPS["host file"],
        "JSON result (`report`, `diff`, `sign`, `verify`)": results.MAX_RESULT_BYTES,
        "node file (a sysfs/procfs file the probe reads, under `--sysfs`/`--procfs`/`--rootfs`)":
            safeio.CAPS["node file"],
    }
    assert {k: _mib(v) for k, v in rows.items()} == code
    assert safeio.CAPS["training config"] == source.MAX_BYTES


def test_the_stated_budgets_are_the_code() -> None:
    assert f"{source.MAX_NODES:,} nodes" in DOC
    assert f"{source.MAX_EXPANDED_BYTES // 2**20} MiB of scalar text" in DOC
    assert f"at most {MAX_SOURCE_TEXT} characters" in DOC
    assert model.MAX_NUMBER == 10**15 and "beyond 10^15" in DOC
    assert f"at most {recovery_log.MAX_INCIDENTS} failures" in DOC


def test_the_numbers_rule_is_the_code() -> None:
    from validator.values import numbers

    assert numbers.LIMIT == 2**64 and "larger in magnitude than 2^64" in DOC
    assert numbers.beyond(2**64 + 1) and not numbers.beyond(2**64) and numbers.beyond(float("inf"))


def test_the_documented_commands_run() -> None:
    for script in ("fuzz.py", "regex_audit.py"):
        r = subprocess.run([sys.executable, str(ROOT / "scripts" / script), "--help"], capture_output=True,
                           text=True, cwd=ROOT)
        assert (r.returncode == 0 and "--seconds" in r.stdout) or "--size" in r.stdout, r.stderr
