"""Every number bounded, every string escaped for its medium, every result field checked
before use: each case here was an internal error (a traceback class) or a false verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest

from tests.jobs.util import ROOT, spec_check
from validator.renderers import escape

DS = ROOT / "tests" / "acceptance" / "jobs" / "negative" / "ds_batch_mismatch.json"
BIG = "1" + "0" * 400  # past the float range


def _one_line(r, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout[-300:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-check: error: "), r.stderr
    assert "internal error" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


# ---- numbers --------------------------------------------------------------------------

def test_integer_beyond_the_float_range_in_a_config_is_an_error_naming_it(tmp_path: Path) -> None:
    p = tmp_path / "ds.json"
    p.write_text(f'{{"train_batch_size": {BIG},\n "train_micro_batch_size_per_gpu": 4, "bf16": {{"enabled": true}}}}')
    r = spec_check("lint", "--format", "json", str(p))
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    errs = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert len(errs) == 1 and errs[0]["location"]["line"] == 1
    assert "train_batch_size" in errs[0]["message"] and "digits" in errs[0]["message"]


def test_absurd_sbatch_time_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "run.sbatch"
    p.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=" + "9" * 400 + ":00:00\nsrun python train.py\n")
    r = spec_check("lint", "--format", "json", str(p))
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    errs = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "LINT-00.unreadable-config"]
    assert [(e["location"]["line"], "--time" in e["message"]) for e in errs] == [(3, True)]


@pytest.mark.parametrize(("option", "needle"), [
    (f"gpu_count={BIG}", "beyond any real count"),
    ("gpu_count=" + "9" * 5000, "is not a number"),
    ("step_time=1e400", "outside the range"),
    (f"step_time={BIG}", "outside the range"),
    ("fabric_port_rate=1e400 Gb/s", "outside the range"),
])
def test_set_values_beyond_any_physical_range(option: str, needle: str) -> None:
    r = spec_check("lint", "--set", option, str(DS))
    _one_line(r, needle)
    assert len(r.stderr) < 400  # the value is named, not echoed in full


def test_profile_with_a_huge_integer(tmp_path: Path) -> None:
    p = tmp_path / "profile.yaml"
    p.write_text("parameters:\n  gpu_count: " + "9" * 5000 + "\n")
    _one_line(spec_check("lint", "--profile", str(p), str(DS)), f"{p}:2:")


def _log(tmp_path: Path, stamp: str) -> Path:
    p = tmp_path / "train.log"
    p.write_text(
        " [2024-05-01 11:59:58] iteration       99/   10000 | loss 1 |\n"
        f"[{stamp}] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -6) local_rank: 3\n"
        " [2024-05-01 12:01:00] iteration      100/   10000 | loss 1 |\n"
    )
    return p


@pytest.mark.parametrize("stamp", ["2024-05-01T12:00:10+99:00", "9999-12-31T23:59:59-01:00"])
def test_log_timestamps_python_cannot_hold_are_error_items(tmp_path: Path, stamp: str) -> None:
    r = spec_check("lint", "--format", "json", "--recovery-log", str(_log(tmp_path, stamp)), str(DS))
    assert r.returncode == 1 and "internal error" not in r.stderr, r.stderr
    rec = next(f for f in json.loads(r.stdout)["findings"] if f["rule"] == "REC-02.measured-recovery-too-slow")
    assert rec["status"] == "error" and "cannot be held" in rec["message"] and "line 2" in rec["message"]


# ---- results checked before use -------------------------------------------------------

def _tampered(tmp_path: Path, lint_result: Path, mutate) -> Path:  # type: ignore[no-untyped-def]
    doc = json.loads(lint_result.read_text())
    mutate(doc)
    p = tmp_path / "tampered.json"
    p.write_text(json.dumps(doc))
    return p


def _fail_findings(doc):  # type: ignore[no-untyped-def]
    return [f for f in doc["findings"] if f["status"] == "fail"]


CASES = {
    "item-int": (lambda d: d["findings"][0].__setitem__("item", 5), "findings[0].item: expected a JSON string or null"),
    "selection-str": (lambda d: d.__setitem__("selection", "MON"), "selection: expected a JSON object"),
    "active-string": (lambda d: [f.__setitem__("waiver", {"id": "MON-01", "active": "false"}) for f in _fail_findings(d)],
                      "waiver.active: expected a JSON boolean"),
    "line-bool": (lambda d: [f.__setitem__("location", {"file": "x", "line": True}) for f in d["findings"][:1]],
                  "findings[0].location.line"),
    "markup-rule": (lambda d: d["findings"][0].__setitem__("rule", "[/x]MON-01.y"), "is not a valid rule"),
    "markup-version": (lambda d: d.__setitem__("tool_version", "[/x]"), "tool_version"),
    "subject-extra": (lambda d: d["subjects"][0].__setitem__("evil", 1), 'subjects[0]: unknown key "evil"'),
}


@pytest.mark.parametrize("verb", ["report", "diff", "sign"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_results_are_checked_field_by_field(tmp_path: Path, lint_result: Path, keypair: Path,
                                            verb: str, case: str) -> None:
    mutate, needle = CASES[case]
    bad = _tampered(tmp_path, lint_result, mutate)
    argv = {"report": ["report", str(bad)], "diff": ["diff", str(lint_result), str(bad)],
            "sign": ["sign", "--key", f"{keypair}.key", str(bad)]}[verb]
    _one_line(spec_check(*argv), str(bad), needle)


@pytest.mark.parametrize(("text", "needle"), [
    ('"\\ud800"', "invalid JSON"), ("9" * 5000, "].x: a 5000-digit integer is beyond any real value"),
    ("NaN", "invalid JSON: NaN is not a JSON number (findings["),
    ("1e400", "].x: 1e400 is beyond any real value"), ("-" + "9" * 400, "a 400-digit integer is beyond"),
])
def test_result_json_that_python_cannot_hold(tmp_path: Path, lint_result: Path, text: str, needle: str) -> None:
    raw = lint_result.read_text().replace('"message": "', '"x": ' + text + ', "message": "', 1)
    bad = tmp_path / "bad.json"
    bad.write_text(raw)
    for argv in (["report", str(bad)], ["diff", str(bad), str(lint_result)]):
        _one_line(spec_check(*argv), needle)


# ---- escaping -------------------------------------------------------------------------

def test_escape_functions() -> None:
    assert escape.text("a\x1b[31mb\x07\x00c\nd\te\x85") == "a\\x1b[31mb\\x07\\x00c\nd\te\\x85"
    assert escape.text("ds_\udcff.json") == "ds_\\xff.json"  # a non-UTF-8 byte, as os.fsdecode keeps it
    assert escape.text("\ud800") == "\\ud800"
    assert escape.rich("[bold]x[/]") == "\\[bold]x\\[/]"
    assert escape.rich("ends in \\").endswith("\\\\")
    assert escape.html('<a href="x">') == "&lt;a href=&quot;x&quot;&gt;"
    assert escape.markdown("a|b\n<i>") == "a\\|b \\<i\\>"


def test_markup_everywhere_in_a_result_renders_literally(tmp_path: Path, lint_result: Path) -> None:
    m = "[/x][bold red]:x:"

    def mutate(d):  # type: ignore[no-untyped-def]
        d["rule_pack"]["id"] = m
        d["parameters"][m] = {"value": m, "origin": m}
        for f in d["findings"]:
            f["subject"] = f["message"] = m
            f["remediation"] = m + "\\"
    bad = _tampered(tmp_path, lint_result, mutate)
    for fmt in ("terminal", "markdown", "html", "junit", "sarif", "github", "json"):
        r = spec_check("report", "--format", fmt, str(bad))
        assert r.returncode == 0 and "internal error" not in r.stderr, (fmt, r.stderr)  # report renders
    r = spec_check("report", str(bad))
    assert "[/x][bold red]:x:" in r.stdout and "❌" not in r.stdout  # no markup applied, no emoji


def test_control_characters_and_non_utf8_names_in_every_format(tmp_path: Path) -> None:
    name = b"ds_\xff\x1b[31m\x07.json"
    target = tmp_path / os.fsdecode(name)  # how Python holds an undecodable name
    target.write_bytes(DS.read_bytes())
    for fmt in ("terminal", "json", "sarif", "html", "markdown", "junit", "github"):
        out = Path(str(tmp_path / f"out.{fmt}"))
        for argv in (["-o", str(out)], []):
            r = subprocess.run([sys.executable, "-m", "validator", "lint", "--format", fmt, *argv, str(target)],
                               capture_output=True, cwd=ROOT)
            assert r.returncode == 1 and b"internal error" not in r.stderr, (fmt, r.stderr)
            data = out.read_bytes() if argv else r.stdout
            assert b"\x1b" not in data and b"\x07" not in data, fmt
            data.decode("utf-8")  # valid UTF-8
            assert b"\\xff" in data or b"\\\\xff" in data or (fmt == "junit" and b"xff" in data), fmt
            if fmt == "junit":
                xml.dom.minidom.parseString(data)  # well-formed XML


def test_error_lines_escape_control_characters(tmp_path: Path) -> None:
    bad = tmp_path / "evil\x1b[31m\x07.json"
    bad.write_text("{")
    r = spec_check("report", str(bad))
    _one_line(r, "evil\\x1b[31m\\x07.json", "invalid JSON")
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
