"""Issue 24 (hardening, round 2): the reproducers, each written from the issue's words.

Signed means signed (an HTML page re-waived after signing says so beside the banner);
every facts and result reader refuses a repeated key the same way; one rule for numbers
beyond any real value, in facts, results, rule packs, profiles and waivers, each refusal
naming the field; JSON output never holds NaN or Infinity."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.jobs.util import ROOT, spec_check

FACTS = ROOT / "tests" / "fixtures" / "facts"
H200 = Path("/work/shared/recordings/h200-node")


def _one_line(r, *needles: str) -> str:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout[-300:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-check: error: "), r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# ---- signed means signed -----------------------------------------------------------------

def test_html_rewaived_after_signing_says_so_beside_the_banner(tmp_path: Path, keypair: Path) -> None:
    result = tmp_path / "r.json"
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100_ecc_off.json"), "--format", "json", "-o", str(result))
    assert r.returncode == 1, r.stderr
    signed = tmp_path / "signed.json"
    assert spec_check("sign", "--key", f"{keypair}.key", str(result), "-o", str(signed)).returncode == 0
    waivers = tmp_path / "w.yaml"
    waivers.write_text("waivers:\n  - id: MEM-01.ecc-disabled\n    subject: '*'\n"
                       "    justification: lab node\n    approver: ops\n    expires: 2099-01-01\n")
    html = tmp_path / "r.html"
    r = spec_check("report", str(signed), "--key", f"{keypair}.pub", "--format", "html", "--waivers", str(waivers),
                   "-o", str(html))
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    banner = text[text.index('<div class="signed">'):]
    banner = banner[: banner.index("</div>")]
    assert "Not as signed:" in banner and "w.yaml" in banner, banner
    assert "the signed result is <strong>NOT CONFORMANT</strong>" in banner
    # without --waivers the page is the signed result: no such note
    r = spec_check("report", str(signed), "--format", "html", "-o", str(html))
    assert r.returncode == 0 and "Not as signed" not in html.read_text()


# ---- repeated keys: one refusal for every reader --------------------------------------------

def _repeated_count(tmp_path: Path) -> Path:
    """The real H200 recording with its GPU count written twice: 200, then the real value
    (Python keeps the last, other parsers the first)."""
    text = (H200 / "facts.json").read_text()
    fixed = text.replace('"gpu.count": {', '"gpu.count": {"value": 200, ', 1)
    assert fixed != text and json.loads(text)["subject"]["kind"] == "node"
    out = tmp_path / "facts.json"
    out.write_text(fixed)
    return out


@pytest.mark.parametrize("verb", [["check", "--facts"], ["cluster", "--facts"],
                                  ["health", "--node", "h200", "--facts"]])
def test_facts_with_a_repeated_key_are_refused_by_every_reader(tmp_path: Path, verb: list[str]) -> None:
    bad = _repeated_count(tmp_path)
    _one_line(spec_check(*verb, str(bad)), str(bad), 'key "value" written twice in one object')


def test_verify_does_not_vouch_for_facts_with_a_repeated_key(tmp_path: Path, keypair: Path) -> None:
    facts = tmp_path / "good.json"
    shutil.copy(FACTS / "dgx_h100.json", facts)
    result, signed = tmp_path / "r.json", tmp_path / "s.json"
    assert spec_check("check", "--facts", str(facts), "--format", "json", "-o", str(result)).returncode in (0, 1)
    assert spec_check("sign", "--key", f"{keypair}.key", str(result), "-o", str(signed)).returncode == 0
    assert spec_check("verify", str(signed), "--key", f"{keypair}.pub", "--facts", str(facts)).returncode == 0
    # the same facts with a key written twice: parsed by Python it has the same digest
    # (the last value wins), but another parser reads the first: not vouched for
    text = facts.read_text()
    i = text.index('"value"')
    twice = text[:i] + '"value": "something else", ' + text[i:]
    facts.write_text(twice)
    r = spec_check("verify", str(signed), "--key", f"{keypair}.pub", "--facts", str(facts))
    _one_line(r, str(facts), "written twice")


def test_results_with_a_repeated_key_are_refused(tmp_path: Path, lint_result: Path) -> None:
    text = lint_result.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace('"command": ', '"command": "check", "command": ', 1))
    for argv in (["report", str(bad)], ["diff", str(lint_result), str(bad)]):
        _one_line(spec_check(*argv), str(bad), 'key "command" written twice')


# ---- numbers beyond any real value --------------------------------------------------------

@pytest.mark.parametrize(("number", "said"), [
    ("9" * 400, "a 400-digit integer"), ("-" + "9" * 400, "a 400-digit integer"),
    ("9" * 5000, "a 5000-digit integer"), ("1e400", "1e400"), ("-1e400", "-1e400"),
    ("1e300", "1e300"), ("18446744073709551617", "18446744073709551617"),
])
def test_facts_numbers_beyond_any_real_value_name_the_field(tmp_path: Path, number: str, said: str) -> None:
    text = (FACTS / "dgx_h100.json").read_text()
    doc = json.loads(text)
    doc["facts"]["gpu.count"]["value"] = "@N@"
    bad = tmp_path / "f.json"
    bad.write_text(json.dumps(doc, indent=1).replace('"@N@"', number))
    for verb in ("check", "cluster"):
        _one_line(spec_check(verb, "--facts", str(bad)), str(bad),
                  f'facts["gpu.count"].value: {said} is beyond any real value')


def test_the_limit_itself_is_a_real_value(tmp_path: Path) -> None:
    doc = json.loads((FACTS / "dgx_h100.json").read_text())
    doc["facts"]["memory.total"] = {"value": 2**64, "unit": "B", "source": "test"}
    ok = tmp_path / "f.json"
    ok.write_text(json.dumps(doc))
    r = spec_check("check", "--facts", str(ok), "--format", "json", "-o", str(tmp_path / "o.json"))
    assert r.returncode in (0, 1), r.stderr


@pytest.mark.parametrize(("number", "said"), [
    ("9" * 5000, "a 5000-digit integer"), ("9" * 4000, "a 4000-digit integer"),
    (".inf", "infinity"), ("-.inf", "infinity"), (".nan", "NaN is not a number"), ("1.0e+300", "1e+300"),
])
def test_rule_pack_numbers_beyond_any_real_value(tmp_path: Path, number: str, said: str) -> None:
    pack = tmp_path / "pack"
    shutil.copytree(ROOT / "rules" / "v1.0", pack)
    path = pack / "node_gpu_host.yaml"
    text = path.read_text()
    path.write_text(text.replace("{fact: gpu.count, op: gte, value: 1}",
                                 f"{{fact: gpu.count, op: gte, value: {number}}}", 1))
    r = spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--rules", str(pack))
    _one_line(r, "node_gpu_host.yaml:", said)


def test_profile_and_waiver_numbers_beyond_any_real_value(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("parameters:\n  fabric_port_rate: " + "9" * 4000 + "\n")
    _one_line(spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--profile", str(profile)),
              "p.yaml:2", "parameters.fabric_port_rate: a 4000-digit integer is beyond")
    waivers = tmp_path / "w.yaml"
    waivers.write_text("waivers:\n  - id: MEM-01.ecc-disabled\n    subject: '*'\n    justification: x\n"
                       "    approver: ops\n    expires: 2099-01-01\n    ticket: .inf\n")
    _one_line(spec_check("check", "--facts", str(FACTS / "dgx_h100.json"), "--waivers", str(waivers)),
              "w.yaml:7", "waivers[0].ticket: infinity is beyond")


def test_json_output_never_holds_nan_or_infinity() -> None:
    """A value the probe or a measurement made infinite (a reader refuses one) is written
    as a string, never a bare Infinity that no JSON parser reads back."""
    import io

    from validator.renderers.json_ import dumps_indented
    from validator.values.numbers import dumps, finite

    doc = {"a": float("inf"), "b": [1.5, float("nan"), {"c": -float("inf")}], "d": 2}
    for text in (dumps_indented(doc), dumps(doc)):
        assert "Infinity" not in text and "NaN" not in text
        assert json.loads(text)["b"][1] == "nan"
    assert finite(doc)["a"] == "inf" and finite(1.5) == 1.5
    assert dumps_indented({"x": 1.5, "y": [2]}) == json.dumps({"x": 1.5, "y": [2]}, indent=2)
    del io


# ---- resources: node files through the safe opener -----------------------------------------

def test_a_fifo_and_a_link_to_dev_zero_under_rootfs_are_error_values(tmp_path: Path) -> None:
    """Issue 24: a FIFO under --rootfs blocked the probe forever; a symlink to /dev/zero
    read until memory ran out. Both are now error values naming the file."""
    import os

    from tests.fixtures import nodes

    tree = nodes.dgx_h100(tmp_path / "node")
    meminfo = tree.procfs / "meminfo"
    meminfo.unlink()
    os.mkfifo(meminfo)
    rate = tree.sysfs / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "rate"
    rate = rate.resolve()
    rate.unlink()
    rate.symlink_to("/dev/zero")
    out = tmp_path / "facts.json"
    r = spec_check("probe", "--sysfs", str(tree.sysfs), "--procfs", str(tree.procfs), "--rootfs", str(tree.rootfs),
                   "--no-nvml", "-o", str(out))
    assert r.returncode == 0, r.stderr
    facts = json.loads(out.read_text())["facts"]
    assert "not a regular file" in facts["memory.total"]["error"] and "meminfo" in facts["memory.total"]["error"]
    [port] = [m for m in facts["rdma.ports"]["items"] if m["id"] == "mlx5_0:1"]
    assert "not a regular file" in port["fields"]["rate"]["error"], port["fields"]["rate"]


def test_node_files_are_capped(tmp_path: Path) -> None:
    from validator.facts.node.base import ReadError, read
    from validator.io.safeio import CAPS

    big = tmp_path / "meminfo"
    big.write_bytes(b"x" * (CAPS["node file"] + 1))
    with pytest.raises(ReadError, match="larger than 4 MiB"):
        read(big)
    assert read(Path("/proc/self/status")).startswith("Name:")  # procfs: size 0 until read


@pytest.mark.parametrize("argv", [
    ["check", "--facts", str(FACTS / "dgx_h100_ecc_off.json")],
    ["check", "--facts", str(FACTS / "dgx_h100.json"), "--format", "json"],
    ["rules", "list"],
])
def test_a_full_stdout_is_one_line_and_exit_2(argv: list[str]) -> None:
    """Issue 24: a full stdout (/dev/full) was an internal OSError."""
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "validator", *argv], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == "spec-check: error: cannot write to standard output: No space left on device"


# ---- the terminal report is linear in findings ---------------------------------------------

def _empty_gpus_report(n: int):  # type: ignore[no-untyped-def]
    """The report of a DGX H100 whose ``gpu.devices`` are ``n`` items with no fields."""
    from validator.cli.common import RunOptions, build, evaluate_documents

    doc = json.loads((FACTS / "dgx_h100.json").read_text())
    doc["facts"]["gpu.devices"] = {"items": [{"id": f"g{i}", "fields": {}} for i in range(n)], "source": "nvml"}
    opts = RunOptions(spec_version="1.0")
    return evaluate_documents("check", build(opts, ("node",)), opts, [doc], ["test"])


def test_long_tables_are_laid_out_per_row_shape_not_per_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts rich's work rather than timing it: the rows rich lays out for a node with 150
    GPU items and one with 900 are the same number (one per row shape, a few times over:
    ids g0 to g149 and g0 to g899 have the same lengths), while the report has six times
    the rows."""
    import io

    from rich.table import Table

    from validator.renderers.terminal import TerminalRenderer

    counted: list[int] = []
    add_row = Table.add_row

    def counting(self, *cells, **kw):  # type: ignore[no-untyped-def]
        counted[-1] += 1
        return add_row(self, *cells, **kw)

    monkeypatch.setattr(Table, "add_row", counting)
    laid_out, lines = [], []
    for n in (150, 900):
        counted.append(0)
        buf = io.StringIO()
        TerminalRenderer(width=140).render(_empty_gpus_report(n), buf)
        laid_out.append(counted[-1])
        lines.append(buf.getvalue().count("\n"))
    assert lines[1] > 5 * lines[0]
    assert laid_out[1] == laid_out[0] < lines[0], laid_out


def test_long_tables_are_rich_s_bytes() -> None:
    """A table laid out a row shape at a time is the same text as rich's layout of it."""
    import io

    from validator.renderers import terminal_tables
    from validator.renderers.terminal import TerminalRenderer

    report = _empty_gpus_report(12)
    assert len(report.findings) > 2 * terminal_tables.ROWS_AT_ONCE
    fast, slow = io.StringIO(), io.StringIO()
    TerminalRenderer(width=140).render(report, fast)
    TerminalRenderer(width=140, reuse=False).render(report, slow)
    assert fast.getvalue() == slow.getvalue()
