"""The README's requirement table is generated from the rule files and must be current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- rules-table:start -->\n)(.*?)(<!-- rules-table:end -->)", re.S)


def generated_table() -> str:
    r = subprocess.run([sys.executable, "-m", "validator", "rules", "list", "--format", "markdown"],
                       capture_output=True, text=True, check=True)
    return r.stdout


def test_readme_rule_table_is_current() -> None:
    m = BLOCK.search(README.read_text())
    assert m, "README lacks the rules-table markers"
    assert m.group(2) == generated_table(), "run: python tests/test_readme.py  (regenerates the table)"


def test_readme_has_the_two_setup_commands() -> None:
    text = README.read_text()
    assert ".venv/bin/pip install . && .venv/bin/spec-check check" in text
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = re.search(r"^(bash scripts/install-system-deps\.sh .*pytest.*)$", text, re.M)
    assert test_cmd and test_cmd.group(1) in ci, "CI must run the README's test command verbatim"


def test_readme_and_contributing_name_the_parallel_run_and_the_quick_one() -> None:
    """The test command runs on every CPU and a quick run leaves the slow tests out (issue 34)."""
    quick = '.venv/bin/pytest -n auto --dist loadgroup -m "not slow"'
    for doc in ("README.md", "CONTRIBUTING.md"):
        text = " ".join((README.parent / doc).read_text(encoding="utf-8").split())
        assert quick in text.replace("`", ""), doc
    assert "pytest-xdist" in (README.parent / "pyproject.toml").read_text()


VARIANTS_BLOCK = re.compile(r"(<!-- dgx-variants:start -->\n)(.*?)(<!-- dgx-variants:end -->)", re.S)
FACTS = README.parent / "tests" / "fixtures" / "facts"
# what each synthesized fixture changes from the healthy one (tests/fixtures/nodes.py and
# nvml/); the outcome column beside it is what spec-check says today, generated
CHANGED = {
    "dgx_h100": "nothing: the healthy node",
    "dgx_h100_port_200g": "port mlx5_5 trained at HDR (200 Gb/s)",
    "dgx_h100_port_init": "port mlx5_9 stuck in INIT",
    "dgx_h100_nic_x8": "a NIC's PCIe link at x8 of x16",
    "dgx_h100_no_peermem": "no nvidia_peermem module",
    "dgx_h100_ecc_off": "ECC off on GPU3",
    "dgx_h100_remap_pending": "a pending row remap on GPU5",
    "dgx_h100_nvlink_inactive": "an inactive NVLink on GPU2",
    "dgx_h100_fabric_not_started": "fabric manager not started",
    "dgx_h100_hw_thermal": "a hardware thermal slowdown on GPU6",
}


def _outcome(fixture: str) -> tuple[str, int, int]:
    import json

    path = FACTS / f"{fixture}.json"
    r = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(path), "--format", "json"],
                       capture_output=True, text=True)
    strict = subprocess.run([sys.executable, "-m", "validator", "check", "--facts", str(path), "--fail-on",
                             "warn", "--format", "json"], capture_output=True, text=True)
    counts: dict[tuple[str, str], int] = {}
    for f in json.loads(r.stdout)["findings"]:
        if f["status"] not in ("pass", "skip"):
            counts[(f["status"], f["rule"])] = counts.get((f["status"], f["rule"]), 0) + 1
    words = "; ".join(f"{st} `{rule}` ({n} finding{'s' if n != 1 else ''})" for (st, rule), n in sorted(counts.items()))
    return words or "none", r.returncode, strict.returncode


def generated_variants() -> str:
    """The README's table of synthesized DGX fixtures and what each one gives."""
    lines = ["| fixture (synthesized) | what differs from the healthy node | findings besides pass and skip "
             "| exit code (with `--fail-on warn`) |", "|---|---|---|---|"]
    for fixture in sorted(CHANGED):
        words, code, strict = _outcome(fixture)
        lines.append(f"| `{fixture}.json` | {CHANGED[fixture]} | {words} | {code} ({strict}) |")
    return "\n".join(lines) + "\n"


def test_readme_dgx_variants_table_is_what_the_fixtures_give() -> None:
    m = VARIANTS_BLOCK.search(README.read_text())
    assert m, "README lacks the dgx-variants markers"
    assert sorted(CHANGED) == sorted(p.stem for p in FACTS.glob("dgx_h100*.json"))
    assert m.group(2) == generated_variants(), "run: python tests/test_readme.py  (regenerates the table)"


def test_readme_says_which_inputs_are_synthesized() -> None:
    """The DGX fixtures are made by tests/fixtures/make_facts.py, not recorded on a DGX: the
    README never calls them recorded."""
    from tests.fixtures.make_facts import SCENARIOS

    text = README.read_text()
    assert "dgx_h100" in SCENARIOS and "recorded_vm" not in SCENARIOS
    for bad in ("recorded DGX", "recorded variants", "other recorded", "each fail exactly one rule"):
        assert bad not in text, bad
    assert "synthesized DGX H100-class node" in text


if __name__ == "__main__":
    text = README.read_text()
    text = BLOCK.sub(lambda m: m.group(1) + generated_table() + m.group(3), text)
    text = VARIANTS_BLOCK.sub(lambda m: m.group(1) + generated_variants() + m.group(3), text)
    README.write_text(text)
