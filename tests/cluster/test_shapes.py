"""A replayed fleet's repeated node files skip parsing and evaluation (validator/cluster/shapes.py).

The speed-up must never merge hosts wrongly: a faulty host in a fleet of identical nodes gets
exactly the findings it gets replayed alone (where no shape exists: the engine judges it from
its parsed document), and a file that differs from a known document anywhere but in its host's
own strings is not taken for it. What the replay keeps per host must not grow with the fleet.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cluster.helpers import run_cluster
from validator.cluster import shapes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
BASE = (FIXTURES / "dgx_h100.json").read_text()
FAULTY = ("ecc_off", "nvlink_inactive", "port_200g", "remap_pending", "hw_thermal", "no_peermem")
# the fleets below are copies of one image by construction (the shapes they test): their
# hosts share GPU UUIDs and a machine ID, which PLAT-02.facts-not-own rightly calls copies;
# a host is compared with itself replayed alone without it (tests/cluster/test_evidence.py
# tests that rule)
COPIES = ("--ignore", "PLAT-02.facts-not-own")
MACHINE_ID = json.loads(BASE)["facts"]["host.machine_id"]["value"]
SERIAL = json.loads(BASE)["facts"]["host.board_serial"]["value"]


def _named(text: str, name: str) -> str:
    return text.replace("dgx-h100-01", name)


def _odd_nodes() -> dict[str, str]:
    """Nodes that differ from the healthy image in ways a byte-level shortcut could get
    wrong: each is its own host, judged as if alone."""
    out = {f"bad-{k}": _named((FIXTURES / f"dgx_h100_{k}.json").read_text(), f"bad-{k}") for k in FAULTY}
    doc = json.loads(_named(BASE, "typed"))  # a boolean written as 1: not the same verdicts
    doc["facts"]["gpu.devices"]["items"][3]["fields"]["ecc_enabled"]["value"] = 1
    out["typed"] = json.dumps(doc, indent=1)
    # the same bytes but one number's spelling (1.0 is not 1 for a type check)
    out["spelled"] = _named(BASE, "spelled").replace('"value": 8,', '"value": 8.0,', 1)
    assert out["spelled"] != _named(BASE, "spelled")
    # named "nvidia": the name's token is also every GPU's vendor value (slots only at the
    # host's own places: the vendors must stay "nvidia" whatever the host is called)
    out["nvidia"] = _named(BASE, "nvidia")
    # hostname differs from the file's subject name; another probe time
    doc = json.loads(_named(BASE, "addr-10.0.0.7"))
    doc["facts"]["host.hostname"]["value"] = "gpu-node-7"
    doc["collected_at"] = "2026-11-23T01:02:03Z"
    out["addr-10.0.0.7"] = json.dumps(doc, indent=1)
    # an escaped quote: no shape is made from it, and it matches none
    out["quoted"] = _named(BASE, "quoted").replace('"Ubuntu 22.04.4 LTS"', '"Ubuntu \\"22.04\\""')
    # a collected_at that is not a host-string slot (a space in it): the same in every copy
    for name in ("spaced-1", "spaced-2"):
        out[name] = _named(BASE, name).replace("2026-11-18T00:00:00Z", "2026-11-18 00:00:00")
    return out


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    d = tmp_path_factory.mktemp("shapes") / "fleet"
    d.mkdir()
    # replayed in name order: "addr-" and "bad-" files before the healthy copies (which must
    # not take a faulty node's shape), the others after (which must not take theirs)
    for i in range(120):
        (d / f"n{i:03d}.json").write_text(_named(BASE, f"n{i:03d}"))
    odd = _odd_nodes()
    for k, text in odd.items():
        (d / f"{k}.json").write_text(text)
    return d, odd


def _own(result: dict[str, Any], host: str) -> list[tuple[Any, ...]]:
    return sorted((f["rule"], f["status"], f["item"], f["message"], f["observed"], f["expected"],
                   f["value"], f["unit"], f["source"]) for f in result["findings"]
                  if f["subject"] == host and f["status"] in ("fail", "warn", "error"))


def test_each_odd_host_gets_what_it_gets_alone(tmp_path, fleet):
    d, odd = fleet
    rc, result, err = run_cluster(tmp_path, "--facts", str(d), "--passes", "fold", *COPIES)
    assert result is not None and rc == 1, err
    hosts = {s["name"] for s in result["subjects"] if s["kind"] == "node"}
    assert len(hosts) == 120 + len(odd)
    folded = [f for f in result["findings"] if "folded" in f]
    for host in odd:
        (tmp_path / host).mkdir()
        _rc, alone, err = run_cluster(tmp_path / host, "--facts", str(d / f"{host}.json"), *COPIES)
        assert alone is not None, err
        assert _own(result, host) == _own(alone, host), host
        # each of its passes and skips is in a folded finding naming it, and only those
        from validator.cluster.hosts import parse_hosts

        want = {(f["rule"], f["status"]) for f in alone["findings"]
                if f["subject"] == host and f["status"] in ("pass", "skip")}
        got = {(f["rule"], f["status"]) for f in folded if host in parse_hosts(f["folded"]["names"])}
        assert got == want, host
    # the healthy image's hosts fail nothing
    assert not [f for f in result["findings"] if f["subject"].startswith("n0")
                and f["status"] in ("fail", "error")]
    typed = _own(result, "typed")
    assert any(f[0] == "MEM-01.ecc-disabled" and f[1] == "error" for f in typed), typed
    subject = {s["name"]: s for s in result["subjects"]}
    assert subject["addr-10.0.0.7"]["collected_at"] == "2026-11-23T01:02:03Z"
    assert subject["spaced-2"]["collected_at"] == "2026-11-18 00:00:00"


def _evaluator(select: tuple[str, ...] = ()) -> Any:
    from validator.cli.common import RunOptions, build
    from validator.cluster.fleet import FleetEvaluator

    built = build(RunOptions(), ("node", "cluster"))
    return FleetEvaluator(built.ctx, built.pack, select=select)


def test_repeated_files_are_not_evaluated_again(tmp_path, fleet):
    """The odd hosts are evaluated; the healthy copies match the first one's shape."""
    from validator.cluster.replay import _read_chunk

    d, odd = fleet
    files = sorted(d.glob("*.json"))
    ev = _evaluator()
    records, _, _, _ = _read_chunk(ev, files, 0)
    assert len(records) == len(files)
    assert ev.shapes.hits == 120 - 1 + 2  # every copy but the first, "nvidia" and "spaced-2"
    assert ev.evaluated < 2 * len(ev.rules) * (1 + len(odd))
    by_name = {r[1]: r for r in records}
    assert by_name["n007"][4][0] == "n007"  # PLAT-02's hostname is the host's own
    raw = (d / "n007.json").read_bytes()
    assert by_name["n007"][2] == hashlib.sha256(raw).digest()  # written as sha256-file:<hex>


def _doc_bytes(name: str, **changes: str) -> tuple[bytes, dict[str, Any]]:
    text = _named(BASE, name)
    for old, new in changes.items():
        text = text.replace(old, new)
    return text.encode(), json.loads(text)


def test_a_shape_matches_only_its_own_bytes_with_other_host_strings():
    raw, doc = _doc_bytes("h1")
    shape = shapes.make(raw, doc, hostname_read=False)
    assert shape is not None and len(shape.groups) == 3  # name, hostname fact, collected_at
    other, _ = _doc_bytes("host-2.example")
    got = shape.match(other)
    assert got is not None and shape.role(got[0], shapes.ROLE_NAME) == "host-2.example"
    assert shape.match(raw) is not None
    later = other.replace(b"2026-11-18T00:00:00Z", b"2026-11-23T10:00:00Z")
    got = shape.match(later)
    assert got is not None and shape.role(got[0], shapes.ROLE_COLLECTED) == "2026-11-23T10:00:00Z"
    # one byte elsewhere, a truncation, a byte more, a slot with a quote or a space: no match
    assert shape.match(other.replace(b'"LinkUp"', b'"Polling"', 1)) is None
    assert shape.match(other[:-1]) is None and shape.match(other + b" ") is None
    assert shape.match(raw.replace(b'"h1"', b'"h\\"1"')) is None
    assert shape.match(raw.replace(b'"h1"', b'"h 1"')) is None
    assert shape.match(raw.replace(b'"h1"', b'""')) is None
    # the subject and the hostname fact held one string: a file where they differ is another
    assert shape.match(raw.replace(b'"h1"', b'"h2"', 1)) is None


def test_no_shape_where_it_could_not_be_exact():
    raw, doc = _doc_bytes("h1", **{'"Ubuntu 22.04.4 LTS"': '"Ubuntu \\"22\\""'})
    assert shapes.make(raw, doc, hostname_read=False) is None  # an escaped quote
    raw, doc = _doc_bytes("nvidia")  # the name is also other values: not only the host's places
    assert shapes.make(raw, doc, hostname_read=False) is None
    raw, doc = _doc_bytes("h1")
    doc["subject"]["name"] = "h 1"
    assert shapes.make(raw, doc, hostname_read=False) is None  # not a host-name string
    # a rule reads host.hostname: its value is not a slot, so a host of another hostname differs
    raw, doc = _doc_bytes("h1")
    assert shapes.make(raw, doc, hostname_read=True) is None  # "h1" is in more places than masked
    raw2, doc2 = _doc_bytes("h1")
    doc2["facts"]["host.hostname"]["value"] = "x"
    raw2 = raw2.replace(b'"value": "h1"', b'"value": "x"', 1)
    shape = shapes.make(raw2, doc2, hostname_read=True)
    assert shape is not None and shape.match(raw2.replace(b'"x"', b'"y"', 1)) is None


def test_what_a_replay_keeps_per_host_does_not_grow_with_the_fleet(tmp_path):
    """Retained memory (tracemalloc) after reading 100 and 400 files: per host, the record
    the result lists (name, file digest, collected_at) and nothing that scales with the
    document (no facts, no findings, no per-host fold state)."""
    from validator.cluster.replay import _read_chunk

    d = tmp_path / "f"
    d.mkdir()
    text = (FIXTURES / "dgx_h100_ecc_off.json").read_text()
    (d / "a-bad.json").write_text(_named(text, "a-bad"))
    for i in range(400):
        (d / f"n{i:04d}.json").write_text(_named(BASE, f"n{i:04d}"))
    files = sorted(d.glob("*.json"))

    def retained(n: int) -> int:
        ev = _evaluator()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            kept = [_read_chunk(ev, files[i : i + 50], i) for i in range(0, n, 50)]
            size = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
        assert sum(len(k[0]) for k in kept) == n
        return size

    retained(50)  # imports and first-use caches
    small, large = retained(100), retained(400)
    per_host = (large - small) / 300
    # a 70 KB document, 170 verdicts a host; a record also carries its host's identity for the
    # copies check (evidence.py: 8-byte keys of its GPU UUIDs, machine ID, serial; ~130 bytes)
    assert per_host < 1200, (small, large, per_host)


def test_files_that_stop_repeating_are_not_all_made_shapes():
    """Each node its own GPU UUIDs: after 2 * KEEP misses, one file in RETRY is tried."""
    made = []
    cache = shapes.Shapes(hostname_read=False)
    for i in range(200):
        raw, doc = _doc_bytes(f"h{i}", **{"GPU-4a3f9c2e": f"GPU-{i:08x}"})
        assert cache.match(raw) is None
        made.append(cache.learn(raw, doc) is not None)
    tried = [i for i, m in enumerate(made) if m]
    every = shapes.Shapes.RETRY
    assert tried == [*range(2 * shapes.KEEP), *range(every - 1, 200, every)]
    # a repeated file after that is found again (once its shape is made)
    raw, doc = _doc_bytes("again")
    while cache.learn(raw, doc) is None:
        assert cache.match(raw) is None
    assert cache.match(_doc_bytes("again2")[0]) is not None


def _distinct(text: str, i: int) -> str:
    """The node's GPUs their own UUIDs and energy counters, its slurmd its own pid (in
    memory.memlock_limit's source), its own machine ID and board serial, as recorded nodes have."""
    import re

    text = text.replace("pid 1650): /proc/1650/", f"pid {1000 + i}): /proc/{1000 + i}/")  # a source
    # the machine's own identity (machine-id(5), the board's serial), of the same lengths
    text = text.replace(MACHINE_ID, hashlib.md5(f"m{i}".encode()).hexdigest())
    text = text.replace(SERIAL, f"{SERIAL[:-6]}{i:06d}")
    text = re.sub(r'"GPU-[0-9a-f]{8}', f'"GPU-{i:08x}', text)
    return re.sub(r'("energy_total": \{\s*"value": )(\d+)', lambda m: f"{m.group(1)}{int(m.group(2)) + 37 * i}",
                  text)


def _replay_in_process(facts: Path, out: Path, monkeypatch, shapes_on: bool) -> dict[str, Any]:
    from click.testing import CliRunner

    from validator.cli.cluster import cluster

    with monkeypatch.context() as m:
        if not shapes_on:
            m.setattr(shapes.Shapes, "match", lambda self, raw: None)
        r = CliRunner().invoke(cluster, ["--facts", str(facts), "--passes", "fold", "--format", "json",
                                         "-o", str(out)])
    assert r.exit_code in (0, 1), r.output
    return json.loads(out.read_text())


def test_nodes_with_their_own_gpu_values_judged_as_if_parsed(tmp_path, monkeypatch):
    """Each node's GPU UUIDs and energy counters its own (value slots): the result is the
    one every file parsed and evaluated gives, odd nodes included."""
    d = tmp_path / "fleet"
    d.mkdir()
    for i in range(40):
        (d / f"n{i:03d}.json").write_text(_distinct(_named(BASE, f"n{i:03d}"), i))
    odd = {
        "m-ecc": _distinct(_named((FIXTURES / "dgx_h100_ecc_off.json").read_text(), "m-ecc"), 50),
        "m-nvlink": _distinct(_named((FIXTURES / "dgx_h100_nvlink_inactive.json").read_text(), "m-nvlink"), 51),
        # a counter one digit longer, a UUID with a non-ASCII letter, an escaped character
        "m-long": _distinct(_named(BASE, "m-long"), 52).replace('"value": 91', '"value": 1091', 1),
        "m-utf8": _distinct(_named(BASE, "m-utf8"), 53).replace('"GPU-00000035', '"GPU-ü0000035', 1),
        "m-escape": _distinct(_named(BASE, "m-escape"), 54).replace('"GPU-00000036', '"GPU-\\u00e90000036', 1),
        # a counter that is not a number, another GPU's source (a slot only where the first
        # two files differed), another unit
        "m-typed": _distinct(_named(BASE, "m-typed"), 55).replace(
            '"energy_total": {\n       "value": 9', '"energy_total": {\n       "value": "9', 1
        ).replace('.678,\n       "unit": "J"', '.678",\n       "unit": "J"', 1),
        "m-source": _distinct(_named(BASE, "m-source"), 56).replace("library): nvmlDeviceGetUUID", "library): other", 1),
        "m-unit": _distinct(_named(BASE, "m-unit"), 57).replace('"unit": "J"', '"unit": "kJ"', 1),
    }
    for name, text in odd.items():
        json.loads(text)
        (d / f"{name}.json").write_text(text)
    fast = _replay_in_process(d, tmp_path / "fast.json", monkeypatch, True)
    slow = _replay_in_process(d, tmp_path / "slow.json", monkeypatch, False)
    strip = lambda r: sorted(json.dumps(f, sort_keys=True) for f in r["findings"])  # noqa: E731
    assert strip(fast) == strip(slow)
    import threading

    if threading.active_count() == 1:  # forked workers, each learning its own shapes
        from validator.cluster import replay

        monkeypatch.setattr(replay, "PARALLEL_ABOVE", 2)
        monkeypatch.setattr(replay, "CHUNK", 7)
        assert strip(_replay_in_process(d, tmp_path / "par.json", monkeypatch, True)) == strip(slow)
    assert [s for s in fast["subjects"] if s["kind"] == "node"] == [
        s for s in slow["subjects"] if s["kind"] == "node"]
    energy = [f for f in fast["findings"] if f["rule"] == "ENER-01.gpu-energy-unreadable" and "folded" in f]
    assert energy and energy[0]["folded"]["range"][1] > energy[0]["folded"]["range"][0]
    assert any(f["subject"] == "m-typed" and f["status"] == "error" for f in fast["findings"])
    for host in ("m-ecc", "m-typed", "n007"):  # and as each is judged alone (the engine itself)
        (tmp_path / host).mkdir()
        _rc, alone, err = run_cluster(tmp_path / host, "--facts", str(d / f"{host}.json"))
        assert alone is not None, err
        assert _own(fast, host) == _own(alone, host), host
    # and the value slots were used: files read back as a shape's, not parsed
    from validator.cluster.replay import _read_chunk

    ev = _evaluator()
    _read_chunk(ev, sorted(d.glob("*.json")), 0)
    assert ev.shapes.hits >= 35 and any(s.kinds for s in ev.shapes.known)


def test_value_slots_only_where_fact_values_differ():
    a_raw, a_doc = _doc_bytes("h1")
    b_text = _distinct(_named(BASE, "h2"), 1)
    a = shapes.make(a_raw, a_doc, hostname_read=False)
    b_doc = json.loads(b_text)
    b = shapes.make(b_text.encode(), b_doc, hostname_read=False)
    assert a is not None and b is not None
    a.facts = a_doc["facts"]
    wide = shapes.widen(a, b, b_doc["facts"])
    # the machine's own ID and board serial, the slurmd pid in a source, each GPU's UUID and counter
    assert wide is not None and wide.kinds == ["s", "s", "s"] + ["s", "n"] * 8
    assert wide.paths[:5] == [("host.machine_id", "value"), ("host.board_serial", "value"),
                              ("memory.memlock_limit", "source"), ("gpu.devices", 0, "uuid", "value"),
                              ("gpu.devices", 0, "energy_total", "value")]
    before = json.dumps(a.facts, sort_keys=True)
    got = wide.match(_distinct(_named(BASE, "h3"), 7).encode())
    assert got is not None
    facts = wide.patched(*got)
    assert facts == json.loads(_distinct(_named(BASE, "h3"), 7))["facts"]
    assert json.dumps(a.facts, sort_keys=True) == before  # patched copies, never mutates
    # a number where a string was, a string with an escape, a quote: not this shape
    c = _distinct(_named(BASE, "h4"), 9)
    assert wide.match(c.replace('"GPU-00000009', '"GPU-\\"0000009', 1).encode()) is None
    assert wide.match(c.replace('"GPU-00000009-1b7d-5e80-9f21-6c0d8e3a7b11"', "12", 1).encode()) is None
    # differences that are not fact values of one kind give no value slots
    for change, slots in ((('"unit": "J"', '"unit": "K"'), False),  # a unit
                          (('"value": 912345.678', '"value": true      '), False),  # a number's kind
                          (('"id": "0000:18:00.0"', '"id": "0000:19:00.0"'), False),  # an item's id
                          (('"value": 912345.678', '"value": 9123456.78'), True),  # same length and kind
                          (("library): nvmlDeviceGetUUID", "library): nvmlDeviceGetUUIX"), True)):  # a source
        text = _named(BASE, "h5").replace(*change, 1)
        other = shapes.make(text.encode(), json.loads(text), hostname_read=False)
        assert other is not None
        got_wide = shapes.widen(a, other, json.loads(text)["facts"])
        assert (got_wide is not None) == slots, change
    longer = _named(BASE, "h6").replace('"value": 912345.678', '"value": 1912345.678', 1)
    other = shapes.make(longer.encode(), json.loads(longer), hostname_read=False)
    assert other is not None and shapes.widen(a, other, json.loads(longer)["facts"]) is None


def test_bounded_memory_gives_the_same_result(tmp_path, monkeypatch):
    """Remembered verdicts start over past MEMO_MAX, and a fold merges its value sets past
    SPANS_MAX (nodes each with their own counters): the result is the same."""
    from validator.cluster import fleet

    d = tmp_path / "fleet"
    d.mkdir()
    for i in range(30):
        text = _distinct(_named(BASE, f"n{i:03d}"), i)
        if i % 7 == 3:  # not read back by a shape: evaluated with the memo
            text = text.replace('"/proc/cpuinfo"', f'"/proc/cpuinfo#{i}"')
        (d / f"n{i:03d}.json").write_text(text)
    (d / "bad.json").write_text(_distinct(_named((FIXTURES / "dgx_h100_ecc_off.json").read_text(), "bad"), 99))
    usual = _replay_in_process(d, tmp_path / "usual.json", monkeypatch, True)
    monkeypatch.setattr(fleet, "MEMO_MAX", 3)
    monkeypatch.setattr(fleet, "SPANS_MAX", 2)
    small = _replay_in_process(d, tmp_path / "small.json", monkeypatch, True)
    strip = lambda r: sorted(json.dumps(f, sort_keys=True) for f in r["findings"])  # noqa: E731
    assert strip(small) == strip(usual)
    energy = [f for f in small["findings"] if f["rule"] == "ENER-01.gpu-energy-unreadable" and "folded" in f]
    assert energy and energy[0]["folded"]["verdicts"] == 8 * 31


def _wide_shape() -> tuple[shapes.Shape, bytes]:
    a_raw, a_doc = _doc_bytes("h1")
    b_text = _distinct(_named(BASE, "h2"), 1)
    a = shapes.make(a_raw, a_doc, hostname_read=False)
    b = shapes.make(b_text.encode(), json.loads(b_text), hostname_read=False)
    assert a is not None and b is not None
    a.facts = a_doc["facts"]
    wide = shapes.widen(a, b, json.loads(b_text)["facts"])
    assert wide is not None
    return wide, _distinct(_named(BASE, "h3"), 3).encode()


_WIDE = _wide_shape()
_BYTES = st.sampled_from([b'"', b"\\", b"0", b"9", b".", b"e", b"-", b"+", b" ", b"x", b"\xc3\xbc", b"\xff",
                          b"\n", b"\x01", b"true", b"{", b"}", b",", b":", b"1.5", b"\\u0041"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.lists(_BYTES, max_size=3)), min_size=1, max_size=3))
def test_a_match_is_always_the_file_as_parsed(edits):
    """Edited bytes (anywhere, or inside the slots where a match is likely): whenever the
    shape matches, the file is valid JSON and the facts it gives are the file's own, type
    for type, with the host's name read from its place."""
    import marshal
    import re

    from validator.facts import document

    wide, raw = _WIDE
    slots = [m.start() for m in re.finditer(rb'"value": [0-9"]', raw)]
    for where, cut, insert in edits:
        # half the edits land just inside a value token (a slot or not), the rest anywhere
        at = slots[int(where * (len(slots) - 1))] + 10 if cut % 2 else int(where * len(raw))
        raw = raw[:at] + b"".join(insert) + raw[at + cut // 2 :]
    got = wide.match(raw)
    if got is None:
        return
    facts = wide.patched(*got)
    if facts is None:  # a slot that is not UTF-8: the file takes the parser's path
        return
    doc = document.parse(raw, "edited.json")  # raises if the bytes were not a valid document
    assert marshal.dumps(facts, 2) == marshal.dumps(doc["facts"], 2)
    assert wide.role(got[0], shapes.ROLE_NAME) == doc["subject"]["name"]
    assert wide.role(got[0], shapes.ROLE_COLLECTED) == doc["collected_at"]


def test_healthy_copies_after_faulty_nodes_evaluate_nothing(tmp_path):
    """A faulty node and a healthy one make a shape with value slots that healthy nodes
    match too; a healthy copy holds the healthy document's values in them, and gets its
    verdicts repeated (no rule keyed or evaluated)."""
    from validator.cluster.replay import _read_chunk

    d = tmp_path / "f"
    d.mkdir()
    files = []
    for i, kind in enumerate(("", "", "port_200g")):  # the last: a 200G port (a value slot)
        text = (FIXTURES / (f"dgx_h100_{kind}.json" if kind else "dgx_h100.json")).read_text()
        files.append(d / f"a{i}.json")
        files[-1].write_text(_named(text, f"a{i}"))
    for i in range(20):
        files.append(d / f"n{i:02d}.json")
        files[-1].write_text(_named(BASE, f"n{i:02d}"))
    ev = _evaluator()
    _read_chunk(ev, files[:3], 0)
    assert ev.shapes.known[0].kinds  # a faulty and a healthy node: value slots, tried first
    before, hits = ev.evaluated, ev.shapes.hits
    keyed = []
    node = ev.node
    ev.node = lambda *a, **k: keyed.append(a[1]) or node(*a, **k)
    _read_chunk(ev, files[3:], 3)
    assert ev.evaluated == before and ev.shapes.hits - hits == 20
    assert keyed == []  # each copy's verdicts repeated, no rule keyed


def test_what_the_whole_replay_keeps_per_host_does_not_grow_with_the_fleet(tmp_path, monkeypatch):
    """The whole replay (``cluster --facts DIR --format json -o FILE``, passes folded),
    traced by tracemalloc at 600 and 1,800 hosts in one process: what is retained when the
    result is written (a host's name, its file's name and digest) and the peak, per host
    added. The result's bytes do not depend on what is kept."""
    import validator.cli.finish as common  # where every verb's report is rendered
    from validator.cli import main

    d = tmp_path / "fleet"
    d.mkdir()
    bad = (FIXTURES / "dgx_h100_ecc_off.json").read_text()

    def run(n: int) -> tuple[int, int, str]:
        for p in d.glob("*.json"):
            p.unlink()
        (d / "a-bad.json").write_text(_named(bad, "a-bad"))
        for i in range(n - 1):
            (d / f"n{i:04d}.json").write_text(_named(BASE, f"n{i:04d}"))
        at_render: list[int] = []
        render = common.render

        def traced(report: Any, *a: Any, **k: Any) -> Any:
            at_render.append(tracemalloc.get_traced_memory()[0])
            return render(report, *a, **k)

        monkeypatch.setattr(common, "render", traced)
        out = tmp_path / f"r{n}.json"
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            with pytest.raises(SystemExit):
                main(["cluster", "--facts", str(d), "--format", "json", "-o", str(out), *COPIES])
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        return at_render[0] - base, peak, out.read_text()

    run(120)  # imports and first-use caches
    # both past the 512 items the cluster document's digest encodes at a time
    (small, small_peak, _), (large, large_peak, text) = run(600), run(1800)
    kept, peak = (large - small) / 1200, (large_peak - small_peak) / 1200
    doc = json.loads(text)
    assert len(doc["subjects"]) == 1801 and any("folded" in f for f in doc["findings"])
    # 15 to 100 (as buffers grow in steps): a host's name, file name and digest, packed
    # (500 before rows.HostTable, 1,790 before HostSubjects and FactsFiles)
    assert kept < 150, (small, large, kept)
    # ~210 before each node subject recorded its identity (issue 35: probe_version, machine_id,
    # board_serial, about 70 bytes kept a host and 100 bytes of JSON written), 350 to 410 since
    # (five runs, 2026-12-02); 1.5 KB a host before the cluster rules ran on value groups
    assert peak < 500, (small_peak, large_peak, peak)
