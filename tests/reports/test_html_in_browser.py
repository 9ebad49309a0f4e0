"""The HTML report a customer reads, checked in a real headless Chromium.

Layout is measured by the browser itself: a copy of the page gets a probe script (the
report runs none; the copy drops the Content-Security-Policy to let the probe run) that
writes what the reader sees into the DOM, which ``--dump-dom`` returns: each rule ID and
GPU UUID on one line box (never broken mid-word), at a desktop and a narrow width; the
tiles' numbers against the banner's; the WAIVED badge beside the original status;
remediation commands in a monospace font. Screenshots check the banner's colour.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reports.conftest import make_report
from tests.reports.test_html import CHROMIUM, chromium, console_messages, needs_chromium, read_png, render

FACTS = Path(__file__).resolve().parents[1] / "fixtures" / "facts"

PROBE = """<script>
(function () {
  const out = {};
  const broken = [];
  for (const el of document.querySelectorAll("code.id")) {
    const rects = el.getClientRects();
    if (rects.length !== 1) broken.push(el.textContent);
  }
  out.ids = document.querySelectorAll("code.id").length;
  out.broken = broken;
  out.title = document.title;
  out.banner = document.querySelector(".verdict").innerText;
  out.tiles = {};
  for (const t of document.querySelectorAll(".count")) {
    out.tiles[t.querySelector(".st").textContent] = Number(t.querySelector("b").textContent);
  }
  out.waived = [];
  for (const row of document.querySelectorAll("tr")) {
    const cell = row.querySelector("td");
    if (cell && cell.querySelector(".st.waived") && cell.querySelector(".was")) out.waived.push(cell.innerText);
  }
  out.mono = [];
  for (const c of document.querySelectorAll("td.ev:last-child code")) out.mono.push(getComputedStyle(c).fontFamily);
  out.backticks = [...document.querySelectorAll("td.ev:last-child")].filter(td => td.innerText.includes("`")).length;
  out.covers = (document.querySelector(".covers") || {}).innerText || "";
  out.signed = (document.querySelector(".signed") || {}).innerText || "";
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def probe(tmp_path: Path, html: str, width: int = 1280) -> dict:
    page = tmp_path / f"probe-{width}-{len(list(tmp_path.iterdir()))}.html"
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", html)
    page.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = chromium(tmp_path, page, "--dump-dom", f"--window-size={width},1000")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_messages(proc.stderr) == [], console_messages(proc.stderr)
    m = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stdout[-2000:]
    return json.loads(m.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&quot;", '"'))


def cli(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000"}
    return subprocess.run([sys.executable, "-m", "validator", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@needs_chromium
@pytest.mark.parametrize("width", [1280, 700])
def test_ids_never_break_and_tiles_agree_with_the_banner(tmp_path: Path, width: int) -> None:
    got = probe(tmp_path, render(), width)
    assert got["ids"] > 10 and got["broken"] == []
    t = got["tiles"]
    # the fixture: 4 fails, one of them under an active waiver; one MUST error; one warn
    assert (t["fail"], t["waived"], t["error"], t["warn"]) == (3, 1, 1, 1)
    assert f"{t['fail']} fail, {t['error']} could not be checked, {t['warn']} warn; {t['waived']} waived" in got[
        "banner"]
    # a waived finding shows WAIVED with the status it had
    assert got["waived"] and all(re.search(r"waived\s+was\s+fail", w, re.I) for w in got["waived"])


@needs_chromium
def test_code_spans_render_as_code(tmp_path: Path) -> None:
    from dataclasses import replace

    r = make_report()
    fixed = tuple(replace(f, remediation="Run `ibstat` on the node, then `systemctl restart opensm`.")
                  for f in r.findings)
    # the remediation column: with --show passes (folded, each fix is said once under What to fix)
    got = probe(tmp_path, render(r.with_findings(fixed), show_passes=True))
    assert got["backticks"] == 0
    assert got["mono"] and all("mono" in f.lower() or "consolas" in f.lower() or "menlo" in f.lower()
                               for f in got["mono"])


@needs_chromium
def test_conformant_node_page_says_what_it_covers(tmp_path: Path) -> None:
    page = tmp_path / "node.html"
    r = cli("check", "--facts", FACTS / "dgx_h100.json", "--format", "html", "-o", page)
    assert r.returncode == 0, r.stderr
    got = probe(tmp_path, page.read_text())
    assert got["title"] == "Conformance of node dgx-h100-01 to spec v1.0 (spec-check)"
    assert got["banner"].startswith("CONFORMANT for node scope")
    assert "12 of 28 requirements; cluster and job scope not in this result" in got["banner"]
    assert "CONFORMANT to spec" not in got["banner"]
    assert got["covers"].startswith("This report covers node scope: 12 of 28 requirements")
    assert "CKPT-01" in got["covers"] and "REC-02" in got["covers"]
    # the green banner, in a screenshot
    png = tmp_path / "node.png"
    shot = chromium(tmp_path, page, f"--screenshot={png}", "--window-size=1280,900", "--hide-scrollbars")
    assert shot.returncode == 0 and png.exists(), shot.stderr[-2000:]
    _, _, rows = read_png(png)
    green = sum(1 for row in rows[40:260:4] for i in range(0, 1200 * 3, 30)
                if abs(row[i] - 0x1B) < 10 and abs(row[i + 1] - 0x7F) < 10 and abs(row[i + 2] - 0x3B) < 10)
    assert green > 50
    red = sum(1 for row in rows[40:260:4] for i in range(0, 1200 * 3, 30)
              if abs(row[i] - 0xB3) < 10 and abs(row[i + 1] - 0x26) < 10)
    assert red == 0


@needs_chromium
def test_fleet_title_and_sources_relative_to_the_run(tmp_path: Path) -> None:
    from tests.reports.test_output_for_people import make_fleet

    fleet = make_fleet(tmp_path, n=4, bad={"dgx-002": "dgx_h100_ecc_off"})
    page = tmp_path / "fleet.html"
    # sources given as absolute paths below the run's directory show relative to it
    facts = [arg for p in sorted(fleet.iterdir()) for arg in ("--facts", str(p))]
    r = cli("check", *facts, "--format", "html", "-o", page, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    html = page.read_text()
    assert str(tmp_path) not in html
    assert "fleet/dgx-000.json" in html
    got = probe(tmp_path, html)
    assert got["title"] == "Conformance of 4 nodes to spec v1.0 (spec-check)"
    assert got["broken"] == []

    result = tmp_path / "cluster.json"
    assert cli("cluster", "--facts", fleet, "--format", "json", "-o", result).returncode == 1
    page2 = tmp_path / "cluster.html"
    assert cli("report", result, "--format", "html", "-o", page2).returncode == 0
    got = probe(tmp_path, page2.read_text())
    assert re.match(r"Conformance of (a fleet of 4 nodes|fleet \S+ \(4 nodes\)) to spec v1\.0 \(spec-check\)$",
                    got["title"]), got["title"]


@needs_chromium
def test_signed_result_shows_key_time_and_the_verify_command(tmp_path: Path) -> None:
    result, signed, page = tmp_path / "node.json", tmp_path / "node.signed.json", tmp_path / "node.html"
    assert cli("check", "--facts", FACTS / "dgx_h100.json", "--format", "json", "-o", result).returncode == 0
    assert cli("keygen", tmp_path / "provider").returncode == 0
    assert cli("sign", result, "--key", tmp_path / "provider.key", "-o", signed).returncode == 0
    block = json.loads(signed.read_text())["signature"]
    assert block["signed_at"] == "2026-11-18T11:06:40Z"  # SOURCE_DATE_EPOCH
    assert cli("report", signed, "--format", "html", "-o", page).returncode == 0
    got = probe(tmp_path, page.read_text())
    assert got["signed"].startswith("Signature not verified.")  # no --key: never called signed
    assert cli("report", signed, "--key", tmp_path / "provider.pub", "--format", "html", "-o", page).returncode == 0
    got = probe(tmp_path, page.read_text())
    assert got["signed"].startswith("Signed result, signature verified")
    assert block["key_fingerprint"] in got["signed"] and "signed at 2026-11-18T11:06:40Z" in got["signed"]
    command = re.search(r"spec-check verify \S+ --key \S+", got["signed"])
    assert command and command.group(0) == "spec-check verify node.signed.json --key PROVIDER.pub"
    # the command the page gives verifies the JSON it came from
    v = cli("verify", "node.signed.json", "--key", "provider.pub", cwd=tmp_path)
    assert v.returncode == 0, v.stderr
    # a JSON written from the signed result is not itself signed, and does not claim to be
    again = json.loads(cli("report", signed, "--format", "json").stdout)
    assert "signature" not in again and "signature" not in again.get("extra", {})
    # an unsigned result's page says nothing about a signature
    assert cli("report", result, "--format", "html", "-o", page).returncode == 0
    assert 'class="signed"' not in page.read_text()


def test_chromium_is_present_where_the_suite_expects_it() -> None:
    """CI installs chromium (scripts/install-system-deps.sh); these tests must not skip there."""
    import os

    if os.environ.get("CI"):
        assert CHROMIUM is not None
