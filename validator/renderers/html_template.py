"""The fixed parts of the HTML report: stylesheet and the bandwidth chart.

Kept apart from ``html_`` so the renderer reads as document structure. Everything here
is inline (no fonts, scripts or images fetched), and the page's Content-Security-Policy
forbids fetching anything, so the report is one file a customer can archive and open
offline years later.
"""

from __future__ import annotations

from html import escape

from validator.renderers.coverage import Measurement

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root{--fail:#b3261e;--error:#7b1fa2;--warn:#a15c00;--pass:#1b7f3b;--skip:#6b6b6b;--waived:#1565c0;
--none:#9e9e9e;--line:#d9d9d9;--bg:#fafafa;--ink:#1d1d1f}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);margin:0;background:#fff}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.verdict{display:flex;align-items:center;gap:18px;padding:16px 20px;border-radius:8px;color:#fff;margin:12px 0}
.verdict.ok{background:var(--pass)}.verdict.bad{background:var(--fail)}
.verdict strong{font-size:24px;letter-spacing:.5px}
.counts{display:flex;gap:10px;flex-wrap:wrap;margin:10px 0}
.count{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:84px;background:var(--bg)}
.count b{display:block;font-size:20px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.meta dt{color:#555}dl.meta dd{margin:0;overflow-wrap:anywhere;min-width:0}
table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:13px}
table.subjects{table-layout:fixed}table.subjects td,table.subjects th{overflow-wrap:anywhere}
table.subjects col.name{width:22%}table.subjects col.kind{width:7%}table.subjects col.digest{width:25%}
table.subjects col.when{width:12%}table.subjects col.source{width:24%}table.subjects col.outcome{width:10%}
th,td{overflow-wrap:break-word}code{overflow-wrap:anywhere}
code.id{white-space:nowrap;overflow-wrap:normal;word-break:keep-all}
.covers{margin:6px 0}
.signed{border:1px solid var(--waived);border-radius:6px;padding:8px 12px;margin:8px 0;background:#f3f8fe}
.was{white-space:nowrap;font-size:11px;color:#555}
.verdict .note{display:block;font-size:13px;opacity:.95}
caption{text-align:left;font-weight:600;padding:4px 0;color:#333}
th,td{border:1px solid var(--line);padding:4px 7px;text-align:left;vertical-align:top}
thead th{background:#f0f0f0;position:sticky;top:0}
td.ev{word-break:break-word;max-width:360px}
.st{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:11.5px;font-weight:600;
text-transform:uppercase;white-space:nowrap}
.st.fail{background:var(--fail)}.st.error{background:var(--error)}.st.warn{background:var(--warn)}
.st.pass{background:var(--pass)}.st.skip{background:var(--skip)}.st.not.judged{background:var(--skip);outline:2px dashed var(--error)}.st.waived{background:var(--waived)}
.st.none{background:var(--none)}
.waiver{border-left:3px solid var(--waived);padding-left:6px;margin-top:4px;color:#333}
.waiver.expired{border-left-color:var(--fail)}
table.matrix td{text-align:center;padding:2px 4px}table.matrix th[scope=col]{writing-mode:vertical-rl;
transform:rotate(180deg);white-space:nowrap;padding:6px 2px}
details{margin:6px 0}summary{cursor:pointer;color:#333}
.muted{color:#666}.small{font-size:12px}
figure{margin:8px 0}figcaption{color:#555;font-size:12.5px}
@media print{thead th{position:static}details{display:block}
details:not([open])>*:not(summary){display:block}details::details-content{content-visibility:visible;
display:block}details>summary{list-style:none}
table.matrix th[scope=col]{writing-mode:horizontal-tb;transform:none}}
"""

STATUS_LABEL = {
    "fail": "fail",
    "error": "error",
    "warn": "warn",
    "pass": "pass",
    "skip": "skip",
    "waived": "waived",
    "not judged": "not judged",
    "none": "—",
}


def badge(outcome: str) -> str:
    return f'<span class="st {escape(outcome)}">{escape(STATUS_LABEL.get(outcome, outcome))}</span>'


def bandwidth_svg(
    rows: list[Measurement],
    line_gbps: float,
    pass_gbps: float | None = None,
    spec_gbps: float | None = None,
) -> str:
    """A horizontal bar per measured pair (a->b), with the spec's line drawn across.

    The solid line is always the spec's own rate (400 Gb/s in v1.0, ``spec_gbps``), even
    when the run lowered its threshold: a dotted line then shows the run's rate
    (``line_gbps``), so a relaxed run cannot hide where the spec stands. The dashed line,
    where the run has a measured-efficiency parameter, is where a measurement passes
    (380 Gb/s by default). A bar is red when its finding failed (or, for a bare
    measurement, when it is below the pass line), blue and marked "waived" when that
    failure is under an active waiver. Values are written on the bars, so the chart reads
    without colour too, and a table follows it for screen readers.
    """
    spec = spec_gbps if spec_gbps is not None else line_gbps
    lines = [(spec, "", f"spec {spec:g} Gb/s")]
    if line_gbps != spec:
        lines.append((line_gbps, ' stroke-dasharray="2 3"', f"this run {line_gbps:g} Gb/s"))
    if pass_gbps is not None and pass_gbps != line_gbps:
        lines.append((pass_gbps, ' stroke-dasharray="6 3"', f"pass ≥ {pass_gbps:g}"))
    bar, gap, left, right = 18, 6, 190, 40
    top = 22 + 13 * len(lines)
    width = 900
    plot = width - left - right
    threshold = pass_gbps if pass_gbps is not None else line_gbps
    vmax = max([spec * 1.1, line_gbps * 1.1] + [m.gbps * 1.05 for m in rows])
    height = top + len(rows) * (bar + gap) + 30

    def x(v: float) -> float:
        return left + plot * v / vmax

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-labelledby="bw-title">',
        f'<title id="bw-title">Measured pairwise bandwidth against the {spec:g} Gb/s line</title>',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
    ]
    step = 100 if vmax <= 1000 else 200 if vmax <= 2000 else 500
    tick = 0
    while tick <= vmax:
        tx = x(tick)
        out.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - 24}" stroke="#eee"/>'
        )
        out.append(
            f'<text x="{tx:.1f}" y="{height - 10}" font-size="11" text-anchor="middle" '
            f'fill="#555">{tick}</text>'
        )
        tick += step
    values: list[str] = []
    for i, m in enumerate(rows):
        y = top + i * (bar + gap)
        ok = m.status in ("pass", "skip") if m.status else m.gbps >= threshold
        colour = "#1b7f3b" if ok else "#1565c0" if m.waived else "#b3261e"
        label = escape(f"{m.a} → {m.b}" + (" (waived)" if m.waived and not ok else ""))
        end = x(m.gbps)
        out.append(
            f'<text x="{left - 8}" y="{y + bar - 5}" font-size="12" text-anchor="end" '
            f'fill="#1d1d1f">{label}</text>'
        )
        out.append(
            f'<rect x="{left}" y="{y}" width="{max(end - left, 1):.1f}" height="{bar}" '
            f'fill="{colour}"><title>{label}: {m.gbps:.1f} Gb/s</title></rect>'
        )
        inside = end - left > 60  # the value inside the bar's end, clear of the lines
        values.append(
            f'<text x="{end - 5 if inside else end + 4:.1f}" y="{y + bar - 5}" font-size="11" '
            f'text-anchor="{"end" if inside else "start"}" fill="{"#fff" if inside else "#1d1d1f"}">'
            f"{m.gbps:.1f}</text>"
        )
    for i, (value, dash, text) in enumerate(lines):
        lx = x(value)
        anchor = "end" if lx > left + plot / 2 else "start"
        nudge = -3 if anchor == "end" else 3
        out.append(
            f'<line x1="{lx:.1f}" y1="{14 + 13 * i}" x2="{lx:.1f}" y2="{height - 24}" stroke="#1d1d1f" '
            f'stroke-width="2"{dash}/>'
        )
        out.append(
            f'<text x="{lx + nudge:.1f}" y="{12 + 13 * i + 10}" font-size="12" text-anchor="{anchor}" '
            f'font-weight="600" fill="#1d1d1f">{escape(text)}</text>'
        )
    out += values  # on top of the bars and lines
    out.append("</svg>")
    return "\n".join(out)
