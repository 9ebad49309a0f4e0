"""A hostile second read of the fleet replay's short-cut (validator/cluster/shapes.py).

Each test builds a fleet on disk from the real DGX H100 fixture (as bench/cluster_bench.py
does: the healthy document under other host names, GPU values of each node's own) plus
crafted files, replays it as a user does (``python -m validator cluster --facts DIR
--passes fold``), and holds each crafted host to what replaying its file ALONE gives: the
same failures, warnings and errors, the same passes and skips (in the folded findings that
name it), the same subject; a file that cannot be read alone (exit 2) refuses the fleet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.helpers import run_cluster
from validator.cluster import shapes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "facts"
BASE = (FIXTURES / "dgx_h100.json").read_text()


def _named(text: str, name: str) -> str:
    return text.replace("dgx-h100-01", name)


def _distinct(text: str, i: int) -> str:
    """Each node its own GPU UUIDs, energy counters and slurmd pid (value slots)."""
    text = text.replace("pid 1650): /proc/1650/", f"pid {1000 + i}): /proc/{1000 + i}/")
    text = re.sub(r'"GPU-[0-9a-f]{8}', f'"GPU-{i:08x}', text)
    return re.sub(r'("energy_total": \{\s*"value": )(\d+)',
                  lambda m: f"{m.group(1)}{int(m.group(2)) + 37 * i}", text)


def _own(result: dict[str, Any], host: str) -> list[tuple[Any, ...]]:
    return sorted((f["rule"], f["status"], f["item"], f["message"], f["observed"], f["expected"],
                   f["value"], f["unit"], f["source"]) for f in result["findings"]
                  if f["subject"] == host and f["status"] in ("fail", "warn", "error"))


def _write(d: Path, files: dict[str, str | bytes]) -> None:
    d.mkdir(parents=True)
    for name, text in files.items():
        data = text if isinstance(text, bytes) else text.encode()
        (d / f"{name}.json").write_bytes(data)


def _as_alone(tmp: Path, fleet: dict[str, str | bytes], crafted: list[str]) -> dict[str, Any]:
    """Replay ``fleet`` folded; each crafted file's host must get what its file alone gets.
    Returns the fleet's result (None when the fleet was refused, as one file alone was)."""
    from validator.cluster.hosts import parse_hosts

    d = tmp / "fleet"
    _write(d, fleet)
    # copies of one image by construction (tests/cluster/test_shapes.py, COPIES)
    copies = ("--ignore", "PLAT-02.facts-not-own")
    rc, result, err = run_cluster(tmp, "--facts", str(d), "--passes", "fold", *copies)
    alones = {}
    for name in crafted:
        (tmp / f"alone-{name}").mkdir()
        alones[name] = run_cluster(tmp / f"alone-{name}", "--facts", str(d / f"{name}.json"), *copies)
    if any(arc == 2 for arc, _, _ in alones.values()):
        # a file that is not a readable document: the fleet is refused too, naming one
        assert rc == 2 and result is None, (rc, err)
        assert any(f"{name}.json" in err for name, (arc, _, _) in alones.items() if arc == 2), err
        return {}
    assert rc in (0, 1) and result is not None, (rc, err)
    for name, (_arc, alone, aerr) in alones.items():
        assert alone is not None, aerr
        host = next(s["name"] for s in alone["subjects"] if s["kind"] == "node")
        assert host in {s["name"] for s in result["subjects"] if s["kind"] == "node"}, (name, host)
        assert _own(result, host) == _own(alone, host), name
        want = {(f["rule"], f["status"]) for f in alone["findings"]
                if f["subject"] == host and f["status"] in ("pass", "skip")}
        got = {(f["rule"], f["status"]) for f in result["findings"]
               if "folded" in f and host in parse_hosts(f["folded"]["names"])}
        assert got == want, name
        subject = next(s for s in result["subjects"] if s["name"] == host)
        assert subject["collected_at"] == next(s for s in alone["subjects"] if s["name"] == host)["collected_at"]
    return result


def _healthy(n: int, distinct: bool = False) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {}
    for i in range(n):
        text = _named(BASE, f"n{i:03d}")
        out[f"n{i:03d}"] = _distinct(text, i) if distinct else text
    return out


# --- host slots -------------------------------------------------------------------------


def test_a_colon_host_string_is_not_a_slot_at_a_key_separator(tmp_path):
    """``"collected_at":":"``: a search for the token ``":"`` that skips overlaps finds the
    key's closing quote, the separator and the value's opening quote (not the value), so the
    slot was the separator. A later file with another string there is not JSON at all, and
    must refuse the replay as it does alone (exit 2), never take the first file's verdicts."""
    first = _named(BASE, "z-a0").replace('"collected_at": "2026-11-18T00:00:00Z"', '"collected_at":":"')
    broken = _named(BASE, "z-a1").replace('"collected_at": "2026-11-18T00:00:00Z"', '"collected_at"x":"')
    json.loads(first)
    with pytest.raises(ValueError):
        json.loads(broken)
    raw = first.encode()
    shape = shapes.make(raw, json.loads(first), hostname_read=False)
    assert shape is None or shape.match(broken.encode()) is None
    fleet = {**_healthy(4), "z-a0": first, "z-a1": broken}
    _as_alone(tmp_path, fleet, ["z-a0", "z-a1"])


def test_a_host_string_written_with_an_escape_is_not_found_elsewhere(tmp_path):
    """The subject name written ``\\u``-escaped and the same text as a literal fact value
    (the kernel release): counting ``"text"`` finds the kernel's token, not the name's. A
    later file with another kernel must not be taken for the first file named after it."""
    kernel = "5.15.0-1042-nvidia"
    def doc(name: str, kernel_value: str) -> str:
        text = _named(BASE, name).replace(f'"name": "{name}"', '"name": "5.15.0-1042-nvidi\\u0061"', 1)
        return text.replace(f'"value": "{kernel}"', f'"value": "{kernel_value}"', 1)

    first, other = doc("z-e0", kernel), doc("z-e1", "4.4.0-old-kernel")
    assert json.loads(first)["subject"]["name"] == kernel
    shape = shapes.make(first.encode(), json.loads(first), hostname_read=False)
    assert shape is None or shape.match(other.encode()) is None
    # both files name the same subject: each host is named by its file
    result = _as_alone(tmp_path, {**_healthy(3), "z-e0": first, "z-e1": other}, [])
    names = {s["name"] for s in result["subjects"] if s["kind"] == "node"}
    assert names == {"n000", "n001", "n002", "z-e0", "z-e1"}, names


@pytest.mark.parametrize("host", ["true", "null", "8", "1e5", "-0", "nvidia", "H100", "unlimited", "B",
                                  "2026-11-18T00:00:00Z", "0000:18:00.0", "LinkUp"])
def test_host_strings_that_are_other_tokens_or_values(host):
    """A host named like a keyword, a number, or a value the document holds elsewhere: a
    file that matches a shape is that file, as parsed (shape level, all slots)."""
    from validator.facts import document

    raw, doc = _named(BASE, "h1").encode(), json.loads(_named(BASE, "h1"))
    shape = shapes.make(raw, doc, hostname_read=False)
    assert shape is not None
    shape.facts = doc["facts"]
    text = _named(BASE, host)
    got = shape.match(text.encode())
    parsed = document.parse(text.encode(), "x.json")
    if got is not None:
        assert shape.role(got[0], shapes.ROLE_NAME) == parsed["subject"]["name"] == host
        assert shape.patched(*got) == parsed["facts"]
    # a file written under such a name makes no shape that takes the others' values
    other = shapes.make(text.encode(), parsed, hostname_read=False)
    if other is not None:
        back = other.match(raw)
        assert back is None or other.role(back[0], shapes.ROLE_NAME) == "h1"


def test_odd_but_valid_host_files_in_a_fleet(tmp_path):
    """Valid crafted files among healthy copies (before and after them by name)."""
    odd: dict[str, str | bytes] = {}
    # names that are also other values of the document, or keywords, or numbers
    for k, name in enumerate(("nvidia", "true", "8", "unlimited")):
        odd[f"a-kw{k}"] = _named(BASE, name)
    # host strings with escapes or non-ASCII text (not host-string slots: the whole file parsed)
    odd["a-uni"] = _named(BASE, "n\u00e9ud-1")
    odd["a-esc"] = _named(BASE, "a-esc").replace('"name": "a-esc"', '"name": "a-\\u0065sc"', 1)
    # a BOM, CRLF line ends, trailing white space
    odd["z-bom"] = b"\xef\xbb\xbf" + _named(BASE, "z-bom").encode()
    odd["z-crlf"] = _named(BASE, "z-crlf").replace("\n", "\r\n")
    odd["z-ws"] = _named(BASE, "z-ws") + "\n\n  "
    # one byte changed inside a value no slot holds (same length): another port state
    odd["z-byte"] = _named(BASE, "z-byte").replace('"LinkUp"', '"LinkUq"', 1)
    # a duplicate key: the last one counts (the healthy hostname first, a faulty value last)
    odd["z-dup"] = _named(BASE, "z-dup").replace(
        '"memory.shm_size": {', '"memory.shm_size": {"value": 1, "value": 0, "unit": "B", "source": "x"},\n'
        '  "memory.shm_size": {', 1).replace('"value": 1082055473152', '"value": 1082055473152, "value": 1', 1)
    for text in odd.values():
        json.loads(text)
    _as_alone(tmp_path, {**_healthy(6), **odd}, list(odd))


@pytest.mark.parametrize("change", ["bom", "garbage", "truncated", "badutf8", "nul"])
def test_unreadable_copies_refuse_the_fleet(tmp_path, change):
    """A copy of a healthy file made unreadable: the replay refuses it, as alone."""
    raw = _named(BASE, "z-bad").encode()
    bad = {
        "bom": b"\xef\xbb\xbf\xef\xbb\xbf" + raw,  # two BOMs: the second is text, not JSON
        "garbage": raw.rstrip() + b"}",
        "truncated": raw[: raw.rfind(b"}")],
        "badutf8": raw.replace(b'"z-bad"', b'"z-\xffad"'),
        "nul": raw.replace(b'"z-bad"', b'"z-\x00ad"'),
    }[change]
    _as_alone(tmp_path, {**_healthy(4), "z-bad": bad}, ["z-bad"])


# --- value slots --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1e400", "-0", "-0.0", "1.0", "0012", "1" * 40, "1E5", "12.", ".5",
                                  '"912345"', "true", "NaN", "Infinity", "0x10", "+1", "9" * 21])
def test_an_energy_counter_in_any_spelling(tmp_path, text):
    """A value slot (a GPU's energy counter) spelled as JSON reads it differently, or not
    at all: judged as alone (ENER-01 reads the counter)."""
    fleet = _healthy(4, distinct=True)
    crafted = _distinct(_named(BASE, "z-c"), 9)
    crafted = re.sub(r'("energy_total": \{\s*"value": )(\d+(?:\.\d+)?)', lambda m: m.group(1) + text, crafted,
                     count=1)
    fleet["z-c"] = crafted
    _as_alone(tmp_path, fleet, ["z-c"])


def test_value_slot_strings_odd_but_valid(tmp_path):
    """UUIDs with non-ASCII text, escapes, JSON keywords, numbers as text, invalid UTF-8."""
    fleet = _healthy(4, distinct=True)
    odd: dict[str, str | bytes] = {}
    for k, uuid in enumerate(("GPU-\u00fc", "GPU-\\u00fc", "true", "12", "", "GPU-\\\\", "\u2028")):
        odd[f"z-u{k}"] = _distinct(_named(BASE, f"z-u{k}"), 20 + k).replace(f'"GPU-{20 + k:08x}', f'"{uuid}', 1)
    for text in odd.values():
        json.loads(text)
    _as_alone(tmp_path, {**fleet, **odd}, list(odd))
    bad = _distinct(_named(BASE, "z-x"), 30).encode().replace(b'"GPU-0000001e', b'"GPU-\xc3\x28', 1)
    fleet2 = {**_healthy(4, distinct=True), "z-x": bad}
    _as_alone(tmp_path / "second", fleet2, ["z-x"])


def _dup_fleet_doc(name: str, shm: str, other: str) -> str:
    """The healthy document with memory.shm_size given twice (once early, once last: JSON
    keeps the last value at the first place) and a fact no rule reads between them."""
    doc = json.loads(_named(BASE, name))
    facts = doc["facts"]
    pairs = [(k, json.dumps(v)) for k, v in facts.items()]
    pairs.append(("zz.unread", f'{{"value": {other}}}'))
    pairs.append(("memory.shm_size", f'{{"value": {shm}, "unit": "B", "source": "os.statvfs(/dev/shm)"}}'))
    doc["facts"] = "@FACTS@"
    body = ",\n  ".join(f'"{k}": {v}' for k, v in pairs)
    return json.dumps(doc, indent=1).replace('"@FACTS@"', "{\n  " + body + "\n }")


def test_a_duplicate_key_does_not_swap_value_slots(tmp_path):
    """Where a fact is given twice, JSON puts its (last) value at its first place: the
    parsed facts' order is not the bytes' order. Two files whose two differing values are
    equal in the second make the slots' paths look right when read back; a third file
    with a small /dev/shm (MEM-02) and a large unread value must fail MEM-02 as alone."""
    a = _dup_fleet_doc("z-d0", "1082055473152", "1082055473153")
    b = _dup_fleet_doc("z-d1", "1082055473154", "1082055473154")
    c = _dup_fleet_doc("z-d2", "6.4000000e+07", "1082055473152")
    assert json.loads(c)["facts"]["memory.shm_size"]["value"] == 64e6
    result = _as_alone(tmp_path, {**_healthy(3), "z-d0": a, "z-d1": b, "z-d2": c}, ["z-d0", "z-d1", "z-d2"])
    # issue 24: a key written twice is refused by every reader (validator/io/jsondoc.py), the
    # fleet's too, naming a file: no value slot can be swapped
    assert result == {}


def test_more_shapes_than_kept_and_the_sampling(tmp_path):
    """More faulty variants than KEEP, each repeated, then many nodes that match nothing
    (past 2 * KEEP misses one file in RETRY is made a shape), then faulty copies again:
    every host as alone."""
    faulty = ("ecc_off", "nvlink_inactive", "port_200g", "remap_pending", "hw_thermal", "no_peermem",
              "fabric_not_started", "nic_x8", "port_init")
    fleet: dict[str, str | bytes] = {}
    crafted = []
    for r in range(2):
        for k in faulty:
            name = f"b{r}-{k}"
            fleet[name] = _named((FIXTURES / f"dgx_h100_{k}.json").read_text(), name)
            crafted.append(name)
    for i in range(40):  # each its own kernel string: no shape matches
        fleet[f"c{i:03d}"] = _named(BASE, f"c{i:03d}").replace("5.15.0-1042-nvidia", f"5.15.0-{i:04d}-nvidia")
    for k in faulty:
        name = f"d-{k}"
        fleet[name] = _named((FIXTURES / f"dgx_h100_{k}.json").read_text(), name)
        crafted.append(name)
    fleet["d-zz-healthy"] = _named(BASE, "d-zz-healthy")
    _as_alone(tmp_path, fleet, [*crafted[::3], "c000", "c039", "d-zz-healthy"])
