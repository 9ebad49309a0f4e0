"""The HTML report: self-contained, escaped, semantic tables, and it really renders in a
headless Chromium (screenshot with content, no console errors). The browser tests skip,
saying so, where chromium is not installed (Debian/Ubuntu: ``apt-get install chromium``)."""

from __future__ import annotations

import io
import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.reports.conftest import make_report
from validator.renderers.html_ import HtmlRenderer

CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (apt-get install chromium)"
)


def render(report=None, **options) -> str:
    buf = io.StringIO()
    HtmlRenderer(**options).render(report or make_report(), buf)
    return buf.getvalue()


class Outline(HTMLParser):
    """Collects tags (with attributes), checks nesting of tables, and the text."""

    VOID = frozenset({"meta", "br", "img", "input", "link", "hr", "line", "rect", "path", "col"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.text: list[str] = []
        self.tables: list[dict[str, int]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append({"caption": 0, "thead": 0, "th_scope": 0, "th": 0})
        elif self.tables and tag in ("caption", "thead"):
            self.tables[-1][tag] += 1
        elif self.tables and tag == "th":
            self.tables[-1]["th"] += 1
            self.tables[-1]["th_scope"] += dict(attrs).get("scope") in ("col", "row")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def outline(text: str) -> Outline:
    o = Outline()
    o.feed(text)
    o.close()
    assert o.stack == [], f"unclosed: {o.stack}"
    return o


def test_semantic_tables_and_well_formed():
    o = outline(render())
    assert len(o.tables) >= 5
    for t in o.tables:
        assert t["caption"] == 1 and t["thead"] == 1, t
        assert t["th"] == t["th_scope"], "every <th> has scope=col|row"


def test_self_contained_no_script_no_fetch():
    text = render()
    assert "<script" not in text.lower()
    lowered = text.lower()
    for bad in ("src=", "@import", "url(", "<link", "<iframe", "<object", "<embed"):
        assert bad not in lowered, bad
    urls = set(re.findall(r"https?://[^\s\"'<>]+", text))
    assert urls <= {"http://www.w3.org/2000/svg"}  # the SVG namespace name, never fetched
    assert "default-src 'none'" in text  # the page may not fetch anything, even if asked


def test_hostile_strings_escaped():
    text = render()
    assert '<script>alert("x")</script>' not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    o = outline(text)
    assert '<script>alert("x")</script> | `rm -rf` & "quote"' in "".join(o.text)  # shown as text
    # the statement is an attribute (title=): quotes in it cannot break out
    assert 'title="400 &lt;b&gt;Gbps&lt;/b&gt;"' in text


def test_summary_coverage_matrix_chart_and_evidence():
    text = render()
    assert "NOT CONFORMANT" in text
    assert (
        "sha256:" + "ab" * 32 in text
        and "2026-11-18T11:06:40Z" in text
        and "spec-check 0.1.0" in text
    )
    assert "shm_min = 2 GiB (--set)" in text
    assert 'class="matrix"' in text  # two node subjects: host-by-requirement matrix
    assert "<svg" in text and "400 Gb/s" in text and "n2 → n1" in text
    assert "conf/ds_config.json:12" in text and "NVML (nvidia-smi&#x27;s library): nvmlDeviceGetRemappedRows" in text
    assert "waiver expired" in text and "<strong>waived</strong>" in text
    assert "fix NET-01.fabric-port-slow" in text  # remediation


def test_single_node_without_measurements_has_no_fleet_section():
    r = make_report()
    r = r.with_findings(tuple(f for f in r.findings if f.subject == "n1"))
    from dataclasses import replace

    r = replace(r, subjects=r.subjects[:1])
    text = render(r)
    assert 'id="fleet"' not in text and "<svg" not in text
    outline(text)


def test_measurements_from_extra_only():
    from dataclasses import replace

    r = make_report()
    r = replace(
        r,
        findings=tuple(f for f in r.findings if not (f.item or "").count("->")),
        extra={
            "measurements": [
                {"src": "a", "dst": "b", "value": 50, "unit": "GB/s"},
                {"pair": "b->a", "value": {"value": 390, "unit": "Gb/s"}},
                {"junk": True},
                "nonsense",
            ]
        },
    )
    text = render(r)
    assert "a → b" in text and ">400.0<" in text and "b → a" in text


# ---- in a real browser -------------------------------------------------------------------------


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and raw RGB(A) rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = bpp = 0
    while pos < len(data):
        (length,), ctype = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if ctype == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6)
            bpp = 3 if colour == 2 else 4
        elif ctype == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)}
    )


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@needs_chromium
def test_console_detection_works(tmp_path):
    """The control: a page that logs and throws is caught by the same check."""
    page = tmp_path / "control.html"
    page.write_text('<!doctype html><p>x</p><script>console.error("marker"); nope();</script>')
    proc = chromium(tmp_path, page, "--dump-dom")
    assert any("marker" in m for m in console_messages(proc.stderr)), proc.stderr[-2000:]


@needs_chromium
def test_renders_in_chromium(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render(), encoding="utf-8")
    dom = chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert "NOT CONFORMANT" in dom.stdout and "<table" in dom.stdout and "<svg" in dom.stdout
    assert "<script>alert" not in dom.stdout

    png = tmp_path / "shot.png"
    shot = chromium(
        tmp_path, page, f"--screenshot={png}", "--window-size=1280,2000", "--hide-scrollbars"
    )
    assert shot.returncode == 0 and png.exists(), shot.stderr[-2000:]
    assert console_messages(shot.stderr) == []
    width, height, rows = read_png(png)
    assert (width, height) == (1280, 2000)
    colours = set()
    non_white = 0
    for row in rows[::8]:
        for x in range(0, len(row) - 3, 3 * 8):
            px = row[x : x + 3]
            colours.add(px)
            non_white += px != b"\xff\xff\xff"
    assert len(colours) > 20, "a blank or near-blank screenshot"
    assert non_white > 0.05 * (len(rows) // 8) * (width // 8)
    # the red NOT CONFORMANT banner is near the top
    assert any(
        abs(px[0] - 0xB3) < 8 and abs(px[1] - 0x26) < 8
        for row in rows[40:200:4]
        for px in (row[i : i + 3] for i in range(0, 1200 * 3, 30))
    )


@needs_chromium
def test_example_reports_render_in_chromium(tmp_path):
    examples = Path(__file__).resolve().parents[2] / "reports" / "examples"
    pages = sorted(examples.glob("*.html"))
    assert pages, "reports/examples/*.html missing (run scripts/make_example_reports.py)"
    for page in pages:
        proc = chromium(tmp_path, page, "--dump-dom")
        assert proc.returncode == 0 and "</html>" in proc.stdout, page
        assert console_messages(proc.stderr) == [], page


def _pdf_pages(path: Path) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", path.read_bytes()))


@needs_chromium
def test_print_shows_folded_details(tmp_path):
    """Printed (to PDF), a report shows what its closed <details> hold: the passed
    findings are evidence too (listed one by one with --show passes). The control is the
    same page without the print rules."""
    from dataclasses import replace as _replace

    base = make_report()
    many = tuple(
        _replace(base.findings[0], subject="n1", item=f"mlx5_{i}:1", message=f"port {i} checked")
        for i in range(400)
    )
    text = render(base.with_findings(base.findings + many), show_passes=True)
    page, control = tmp_path / "r.html", tmp_path / "control.html"
    page.write_text(text, encoding="utf-8")
    start = text.index("@media print{")
    control.write_text(text[:start] + "@media not all{" + text[start + len("@media print{"):],
                       encoding="utf-8")
    counts = []
    for p in (page, control):
        pdf = tmp_path / f"{p.stem}.pdf"
        proc = chromium(tmp_path, p, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
        assert proc.returncode == 0 and pdf.exists(), proc.stderr[-2000:]
        counts.append(_pdf_pages(pdf))
    assert counts[0] > counts[1] + 3, counts


def test_subjects_table_wraps_long_names_and_digests():
    text = render()
    assert '<table class="subjects">' in text and '<col class="digest">' in text
    assert "table.subjects{table-layout:fixed}" in text and "overflow-wrap:anywhere" in text
