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
    test_cmd = re.search(r"^(bash scripts/install-system-deps\.sh .*pytest)$", text, re.M)
    assert test_cmd and test_cmd.group(1) in ci, "CI must run the README's test command verbatim"


if __name__ == "__main__":
    text = README.read_text()
    README.write_text(BLOCK.sub(lambda m: m.group(1) + generated_table() + m.group(3), text))
