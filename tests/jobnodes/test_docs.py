"""docs/job-nodes.md: its rule table is the code's, and every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from validator.jobnodes.rules import RULES

DOC = Path(__file__).resolve().parents[2] / "docs/job-nodes.md"
HERE = Path(__file__).parent


def test_rule_table_matches_the_code() -> None:
    block = re.search(r"<!-- jobnodes-rules:start -->\n(.*?)<!-- jobnodes-rules:end -->", DOC.read_text(), re.S)
    assert block
    ids = re.findall(r"^\| `([A-Z]+-\d+\.[a-z0-9-]+)`", block.group(1), re.M)
    assert sorted(ids) == sorted(RULES)


def test_every_test_the_doc_names_exists() -> None:
    named = set(re.findall(r"`(test_\w+\.py)::(test_\w+)`", DOC.read_text()))
    assert len(named) >= 15
    for file, name in named:
        tree = ast.parse((HERE / file).read_text())
        defs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in defs, f"{file}::{name} named by docs/job-nodes.md does not exist"
