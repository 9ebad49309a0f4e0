"""Live Prometheus endpoints sampled twice (MON-03 measured): ``telemetry.scrapes``.

A live endpoint is sampled, not trusted. Each endpoint named with ``--scrape URL`` (or the
profile's ``scrape_endpoints``) is read through ``validator.io.netfetch`` (a deadline for the
whole answer, a size cap), parsed with prometheus_client's own parsers (the Prometheus text
format, or OpenMetrics when the server answers with it; never by splitting lines), then read
again ``interval_s`` later, and judged:

* **fresh**: counters that advance on any live device (energy; NVLink and PCIe byte counters
  when no energy counter is exported; node_exporter's CPU seconds) must advance between the
  two scrapes. dcgm-exporter collects every 30 s by default (``-c``/``--collect-interval``
  30000 ms, NVIDIA/dcgm-exporter ``pkg/cmd/app.go`` at d5e5f510), so the interval defaults to
  35 s: shorter, a healthy exporter may serve the same sample twice.
* **not supported**: DCGM's blank and not-supported sentinels are never values: the int32,
  int64 and fp64 BLANK, NOT_FOUND, NOT_SUPPORTED and NOT_PERMISSIONED values of
  NVIDIA/go-dcgm ``pkg/dcgm/const.go`` (b7fa3154, lines 46-69), the set dcgm-exporter itself
  filters in ``internal/pkg/collector/utils.go`` (``isInt64Blank``, ``isFloat64Blank``);
  older exporters serve them, e.g. ``9223372036854775794`` in dcgm-exporter's README.
* **in range**: utilizations outside 0-100 %, activity ratios outside 0-1, negative sizes or
  power, framebuffer used above its total: an error with the sample.

Every field names the endpoint; an endpoint that hangs, answers HTML or streams without end
is an error value naming the URL and why, never a pass.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeAlias

from validator.facts.document import Fact, error, item, items, value
from validator.io.netfetch import DEFAULT_CAP, fetch

ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

# NVIDIA/go-dcgm pkg/dcgm/const.go (b7fa31542404a9090ad0d1aabbbe592afbe234cb), lines 46-69
DCGM_INT32_BLANK = 2147483632
DCGM_INT64_BLANK = 9223372036854775792
DCGM_FP64_BLANK = 140737488355328.0
_KINDS = ("blank", "not found", "not supported", "not permissioned")  # BLANK + 0, 1, 2, 3
SENTINELS: dict[int | float, str] = {}
for _i, _kind in enumerate(_KINDS):
    SENTINELS[DCGM_INT32_BLANK + _i] = f"DCGM int32 {_kind}"
    SENTINELS[DCGM_INT64_BLANK + _i] = f"DCGM int64 {_kind}"
    SENTINELS[DCGM_FP64_BLANK + _i] = f"DCGM fp64 {_kind}"
# as a float, the four int64 values are one number (2**63): say so rather than guess which
_INT64_AS_FLOAT = float(DCGM_INT64_BLANK)

# counters that advance on any live device (names lower-cased; a counter family's name)
ENERGY = {"dcgm_fi_dev_total_energy_consumption", "gpu_energy_consumed"}
TRAFFIC = {"dcgm_fi_dev_nvlink_bandwidth_total", "dcgm_fi_prof_pcie_tx_bytes", "dcgm_fi_prof_pcie_rx_bytes",
           "dcgm_fi_prof_nvlink_tx_bytes", "dcgm_fi_prof_nvlink_rx_bytes", "dcgm_fi_dev_nvlink_bandwidth_l0"}
CPU = {"node_cpu_seconds"}
PERCENT = {"dcgm_fi_dev_gpu_util", "dcgm_fi_dev_mem_copy_util", "dcgm_fi_dev_enc_util", "dcgm_fi_dev_dec_util",
           "gpu_gfx_activity", "gpu_umc_activity", "gpu_mma_activity"}
NON_NEGATIVE = {"dcgm_fi_dev_fb_used", "dcgm_fi_dev_fb_free", "dcgm_fi_dev_fb_reserved", "dcgm_fi_dev_fb_total",
                "dcgm_fi_dev_power_usage", "gpu_used_vram", "gpu_total_vram", "gpu_package_power"}
USED_TOTAL = (("dcgm_fi_dev_fb_used", "dcgm_fi_dev_fb_total"), ("gpu_used_vram", "gpu_total_vram"))
_SHOWN = 5  # samples quoted in one message

SampleKey: TypeAlias = "tuple[str, tuple[tuple[str, str], ...]]"  # (metric, sorted labels)


@dataclass
class Exposition:
    """One scrape: every sample by (metric, labels), or the problem."""

    url: str
    problem: str | None = None
    content_type: str = ""
    # (value, family type), as prometheus_client parses them
    samples: dict[SampleKey, tuple[float, str]] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    families: int = 0


@dataclass
class Scrapes:
    fact: Fact
    names: dict[str, set[str]]  # url -> metric names (readable endpoints)
    exporters: dict[str, str]  # url -> exporter kind




MAX_LINE = 16 * 1024  # bytes in one exposition line: dcgm-exporter's are a few hundred


def _long_line(text: str) -> tuple[int, int] | None:
    """(line number, length) of the first line over ``MAX_LINE``, or None. prometheus_client
    parses a line's labels in time quadratic in its length (a 2 MB line of 200,000 labels
    took 50 s); bounded lines keep each step of the parse short, so the deadline holds."""
    if len(text) <= MAX_LINE:
        return None
    for n, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            return n, len(line)
    return None


def read_exposition(url: str, *, deadline_s: float, cap: int = DEFAULT_CAP) -> Exposition:
    """Fetch and parse one exposition with prometheus_client's parsers, the parse within
    the same deadline as the fetch; a series served twice is an error naming it."""
    deadline = time.monotonic() + deadline_s
    got = fetch(url, deadline_s=deadline_s, cap=cap, accept=ACCEPT)
    if got.problem:
        return Exposition(url, f"{url}: {got.problem}")
    ctype = got.content_type.split(";", 1)[0].strip().lower()
    head = got.body[:512].lstrip().lower()
    if ctype in ("text/html", "application/xhtml+xml") or head.startswith((b"<!doctype", b"<html")):
        return Exposition(url, f"{url}: answers HTML (Content-Type {got.content_type or 'none'}), "
                               "not a Prometheus exposition", got.content_type)
    if ctype not in ("", "text/plain", "application/openmetrics-text"):
        return Exposition(url, f"{url}: answers Content-Type {got.content_type}, not a Prometheus "
                               "exposition (text/plain or application/openmetrics-text)", got.content_type)
    try:
        text = got.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Exposition(url, f"{url}: the exposition is not UTF-8 (byte {exc.start})", got.content_type)
    if ctype == "application/openmetrics-text":
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    long = _long_line(text)
    if long is not None:
        return Exposition(url, f"{url}: line {long[0]} is {long[1]:,} characters long, over the "
                               f"{MAX_LINE // 1024} KiB of any exporter's sample line (a series with that many "
                               "labels is not telemetry)", got.content_type)
    out = Exposition(url, content_type=got.content_type)
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    try:
        for fam in text_string_to_metric_families(text):
            if time.monotonic() > deadline:
                return Exposition(url, f"{url}: the exposition was not parsed within the {deadline_s:g} s "
                                       f"deadline ({out.families} metric families read)", got.content_type)
            out.families += 1
            out.names.add(fam.name)
            for s in fam.samples:
                labels = tuple(sorted(s.labels.items()))
                if (s.name, labels) in seen:
                    return Exposition(url, f"{url}: the series {series((s.name, labels))[:200]} is "
                                           "served twice (a duplicate series: which sample counts would be decided "
                                           "by line order; Prometheus refuses the scrape)", got.content_type)
                seen.add((s.name, labels))
                name = fam.name if fam.type == "counter" and s.name == fam.name + "_total" else s.name
                out.names.add(s.name)
                out.samples[(name, labels)] = (s.value, fam.type)
    except Exception as exc:  # the parsers raise ValueError, and others on odd input
        return Exposition(url, f"{url}: not a Prometheus exposition ({type(exc).__name__}: {exc})",
                          got.content_type)
    if not out.samples:
        return Exposition(url, f"{url}: the exposition holds no samples", got.content_type)
    return out


def scrape_endpoints(urls: Iterable[str], *, interval_s: float, deadline_s: float, cap: int = DEFAULT_CAP,
                     sleep: Callable[[float], None] = time.sleep) -> Scrapes:
    """Scrape every endpoint, wait ``interval_s``, scrape each again, and judge the pair."""
    urls = list(dict.fromkeys(urls))
    first = {u: read_exposition(u, deadline_s=deadline_s, cap=cap) for u in urls}
    if any(e.problem is None for e in first.values()):
        sleep(interval_s)
    second = {u: (read_exposition(u, deadline_s=deadline_s, cap=cap) if first[u].problem is None else None)
              for u in urls}
    members = [item(u, judge(first[u], second[u], interval_s)) for u in urls]
    names = {u: e.names for u, e in first.items() if e.problem is None}
    kinds = {u: exporter_kind(e) for u, e in first.items() if e.problem is None}
    return Scrapes(items(members, source=f"two scrapes {interval_s:g} s apart (--scrape)"), names, kinds)


def exporter_kind(e: Exposition) -> str:
    low = {n.lower() for n in e.names}
    if any(n.startswith("dcgm_fi_") for n in low):
        return "dcgm-exporter"
    if any(n.startswith("gpu_") for n in low) and low & {"gpu_gfx_activity", "gpu_package_power", "gpu_used_vram"}:
        return "amd-metrics-exporter"
    if any(n.startswith("node_") for n in low):
        return "node_exporter"
    return "prometheus exporter"


def judge(first: Exposition, second: Exposition | None, interval_s: float) -> dict[str, Fact]:
    url = first.url
    if first.problem:
        err = error(first.problem, source=url)
        return {"readable": value(False, source=url), "exposition": err, "stale_counters": err,
                "not_supported": err, "in_range": err}
    kind = exporter_kind(first)
    summary = (f"{kind}: {first.families} metric families, {len(first.samples)} samples "
               f"({first.content_type or 'no Content-Type'})")
    scrapes = [first] + ([second] if second is not None and second.problem is None else [])
    return {"readable": value(True, source=url),
            "exposition": value(summary, source=url),
            "stale_counters": _stale(first, second, interval_s),
            "not_supported": _not_supported(first),
            "in_range": _in_range(scrapes)}


def series(key: SampleKey) -> str:
    name, labels = key
    lab = ",".join(f'{k}="{val}"' for k, val in labels)
    return f"{name}{{{lab}}}" if lab else name


def show(key: SampleKey, v: object) -> str:
    return f"{series(key)} = {_num(v)}"


def _num(v: object) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return str(v)


def sentinel(v: object) -> str | None:
    """Which DCGM sentinel ``v`` is, or None for a value."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and v == _INT64_AS_FLOAT:
        return "DCGM int64 blank, not found, not supported or not permissioned (9223372036854775792..95)"
    if isinstance(v, float) and not v.is_integer():
        return None
    return SENTINELS.get(int(v) if isinstance(v, float) else v)


def _not_supported(e: Exposition) -> Fact:
    hits = [f"{show(k, v)} ({what})" for k, (v, _t) in e.samples.items() if (what := sentinel(v))]
    return value(hits, source=f"{e.url}: DCGM sentinels (NVIDIA/go-dcgm pkg/dcgm/const.go) read as "
                 "not supported, never as values")


def _in_range(scrapes: list[Exposition]) -> Fact:
    bad: list[str] = []
    for e in scrapes:
        totals: dict[tuple[str, str], tuple[SampleKey, float]] = {}
        for (name, labels), (v, _t) in e.samples.items():
            low = name.lower()
            if sentinel(v) or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if low in PERCENT or low in NON_NEGATIVE or _is_ratio(low):
                if isinstance(v, float) and not math.isfinite(v):
                    bad.append(f"{show((name, labels), v)}: not a finite number")
                elif low in PERCENT and not 0 <= v <= 100:
                    bad.append(f"{show((name, labels), v)}: utilization outside 0-100 %")
                elif _is_ratio(low) and not 0 <= v <= 1:
                    bad.append(f"{show((name, labels), v)}: an activity ratio outside 0-1")
                elif low in NON_NEGATIVE and v < 0:
                    bad.append(f"{show((name, labels), v)}: negative")
            for used, total in USED_TOTAL:
                if low in (used, total):
                    totals[(low, _device(labels))] = ((name, labels), v)
        for used, total in USED_TOTAL:
            for (low, dev), (key, v) in totals.items():
                if low != used or (total, dev) not in totals:
                    continue
                tkey, tv = totals[(total, dev)]
                if isinstance(v, (int, float)) and isinstance(tv, (int, float)) and v > tv:
                    bad.append(f"{show(key, v)}: framebuffer used above its total ({show(tkey, tv)})")
        if bad:
            break  # the first scrape's samples; the second only where the first was clean
    if bad:
        more = f" (and {len(bad) - _SHOWN} more)" if len(bad) > _SHOWN else ""
        return error(f"{scrapes[0].url}: values out of range: " + "; ".join(bad[:_SHOWN]) + more,
                     source=scrapes[0].url)
    n = sum(len(e.samples) for e in scrapes)
    return value(True, source=f"{scrapes[0].url}: {n} samples of {len(scrapes)} scrape(s) within range")


def _is_ratio(low: str) -> bool:
    return low.startswith("dcgm_fi_prof_") and (low.endswith("_active") or low.endswith("_occupancy"))


def _device(labels: tuple[tuple[str, str], ...]) -> str:
    d = dict(labels)
    return d.get("UUID") or d.get("gpu") or d.get("gpu_id") or d.get("card_model", "") or str(labels)


def _stale(first: Exposition, second: Exposition | None, interval_s: float) -> Fact:
    url = first.url
    if second is None or second.problem:
        why = second.problem if second is not None else "not scraped"
        return error(f"freshness unknown: the second scrape failed: {why}", source=url)

    def counters(names: set[str]) -> list[tuple[SampleKey, float, float]]:
        out = []
        for key, (v, t) in first.samples.items():
            if (key[0].lower() in names and t in ("counter", "unknown", "untyped") and key in second.samples
                    and not sentinel(v)):  # a sentinel is not a reading: it proves nothing either way
                out.append((key, v, second.samples[key][0]))
        return out

    def frozen(rows: list[tuple[SampleKey, float, float]]) -> list[str]:
        return [f"{show(k, a)} at both scrapes" for k, a, b in rows if a == b]

    source = f"{url}: two scrapes {interval_s:g} s apart"
    energy, traffic, cpu = counters(ENERGY), counters(TRAFFIC), counters(CPU)
    if energy:
        return value(frozen(energy), source=f"{source} (energy counters)")
    if traffic:
        still = frozen(traffic)
        return value(still if len(still) == len(traffic) else [], source=f"{source} (NVLink/PCIe byte counters)")
    if cpu:
        still = frozen(cpu)
        return value(["node_cpu_seconds (every series) did not advance"] if len(still) == len(cpu) else [],
                     source=f"{source} (node_cpu_seconds)")
    others = [(k, v, second.samples[k][0]) for k, (v, t) in first.samples.items()
              if t == "counter" and k in second.samples]
    if any(a != b for _k, a, b in others):
        return value([], source=f"{source} (a counter advanced)")
    return error(f"freshness unknown: {url} exports no counter that advances on a live device (energy, "
                 f"NVLink or PCIe bytes, CPU seconds), and none of its {len(others)} counters advanced in "
                 f"{interval_s:g} s", source=url)
