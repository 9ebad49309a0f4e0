"""``document.digest`` takes a node's or a job's facts in one call of the encoder and a
cluster document's a part at a time: both give the SHA-256 of the same canonical text.

Why: the one-call path is the start-up's (a check digests the facts it judged); the part-
at-a-time path is what a 25,000-host fleet needs (tests/facts/test_digest.py). Both are
run here on the same facts: generated, every recorded fixture, the real H200's facts and
this machine's probe, and a fleet document of made items (which only the second takes).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.facts import document

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
H200 = Path("/work/shared/recordings/h200-node/facts.json")


def _whole(facts: Any) -> str:
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _both(facts: Any) -> None:
    want = _whole(facts)
    assert document.digest({"subject": {"kind": "node", "name": "n"}, "facts": facts}) == want
    assert document.digest({"subject": {"kind": "job", "name": "j"}, "facts": facts}) == want
    assert document.digest({"subject": {"kind": "cluster", "name": "c"}, "facts": facts}) == want  # in parts


_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=600), st.dictionaries(st.text(), inner)),
    max_leaves=800,
)


@settings(max_examples=100, deadline=None)
@given(_json)
def test_both_paths_on_generated_facts(facts: Any) -> None:
    _both(facts)


def test_both_paths_on_recorded_and_live_facts() -> None:
    paths = sorted(FIXTURES.glob("*.json")) + ([H200] if H200.is_file() else [])
    assert len(paths) > 5
    for path in paths:
        _both(json.loads(path.read_text()).get("facts", {}))
    from validator.api.node import probe_document

    _both(probe_document(Path("/sys"), Path("/proc"), Path("/"))["facts"])


def test_made_items_take_the_part_at_a_time_path_whatever_the_kind() -> None:
    made = document.MadeItems(700, lambda k: {"id": f"h{k}", "fields": {"ok": {"value": True}}})
    listed = [made[k] for k in range(700)]
    for kind in ("node", "cluster"):
        got = document.digest({"subject": {"kind": kind, "name": "x"}, "facts": {"cluster.hosts": {"items": made}}})
        assert got == _whole({"cluster.hosts": {"items": listed}})
