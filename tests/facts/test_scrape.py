"""MON-03 measured on live endpoints: real prometheus_client servers on 127.0.0.1 serving the
families of dcgm-exporter's default counters file, and servers that hang, drip, answer HTML
or stream without end (tests/fixtures/exporters.py)."""

from __future__ import annotations

import time

import pytest

from tests.fixtures import exporters as ex
from validator.facts.node import scrape
from validator.io.netfetch import fetch

pytest.importorskip("prometheus_client")

DEADLINE = 1.5


def _one(urls: list[str], interval: float = 0.3, cap: int = 1 << 20) -> dict:
    got = scrape.scrape_endpoints(urls, interval_s=interval, deadline_s=DEADLINE, cap=cap)
    return {m["id"]: m["fields"] for m in got.fact["items"]}


def test_the_fixture_is_dcgm_exporters_default_counters() -> None:
    names = [n for n, _k, _h in ex.default_counters()]
    assert "DCGM_FI_DEV_GPU_UTIL" in names and "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in names
    assert "DCGM_FI_DRIVER_VERSION" not in names  # a label row, not a metric
    assert len(names) == 25


def test_a_healthy_dcgm_exporter_passes_every_check() -> None:
    with ex.prometheus_server(ex.DcgmLike()) as url:
        f = _one([url])[url]
    assert f["readable"]["value"] is True
    assert f["exposition"]["value"].startswith("dcgm-exporter: 25 metric families, 25 samples")
    assert f["stale_counters"]["value"] == []
    assert "energy counters" in f["stale_counters"]["source"] and url in f["stale_counters"]["source"]
    assert f["not_supported"]["value"] == []
    assert f["in_range"]["value"] is True


@pytest.mark.parametrize("accept", ["openmetrics", "text"])
def test_both_exposition_formats_are_parsed(monkeypatch: pytest.MonkeyPatch, accept: str) -> None:
    if accept == "text":
        monkeypatch.setattr(scrape, "ACCEPT", "text/plain;version=0.0.4")
    with ex.prometheus_server(ex.DcgmLike()) as url:
        e = scrape.read_exposition(url, deadline_s=DEADLINE)
    assert e.problem is None
    assert e.content_type.startswith("application/openmetrics-text" if accept == "openmetrics" else "text/plain")
    assert ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", tuple(sorted(ex.LABELS.items()))) in e.samples


def test_dcgm_exporters_own_text_shape_is_parsed() -> None:
    """The Go exporter's counters have no _total suffix; the README's sentinel sample."""
    body = ("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
            "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
            'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} 1234\n'
            "# HELP DCGM_FI_DEV_MEMORY_TEMP Memory temperature (in C).\n"
            "# TYPE DCGM_FI_DEV_MEMORY_TEMP gauge\n"
            'DCGM_FI_DEV_MEMORY_TEMP{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} 9223372036854775794\n')
    with ex.raw_server(ex.text_body(body)) as url:
        f = _one([url])[url]
    assert f["stale_counters"]["value"] == [
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",gpu="0"} = 1234 '
        "at both scrapes"]
    (hit,) = f["not_supported"]["value"]
    assert hit.startswith("DCGM_FI_DEV_MEMORY_TEMP{") and "DCGM int64" in hit and "not supported" in hit
    assert f["in_range"]["value"] is True  # a sentinel is never judged as a temperature


def test_a_stale_exporter_is_flagged_with_its_frozen_counter() -> None:
    with ex.prometheus_server(ex.DcgmLike(energy_per_s=0)) as url:
        f = _one([url])[url]
    (frozen,) = f["stale_counters"]["value"]
    assert frozen.startswith("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{") and frozen.endswith("at both scrapes")


@pytest.mark.parametrize(("value", "kind"), [
    (2147483634, "DCGM int32 not supported"), (2147483632, "DCGM int32 blank"),
    (140737488355328.0, "DCGM fp64 blank"), (140737488355331.0, "DCGM fp64 not permissioned"),
    (9223372036854775794, "DCGM int64"),
])
def test_every_dcgm_sentinel_is_not_supported_never_a_value(value: float, kind: str) -> None:
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_DEV_GPU_UTIL": value})) as url:
        f = _one([url])[url]
    (hit,) = f["not_supported"]["value"]
    assert hit.startswith("DCGM_FI_DEV_GPU_UTIL{") and kind in hit
    assert f["in_range"]["value"] is True  # 2147483634 % is not judged as a utilization


def test_a_utilization_above_100_is_an_error_with_the_sample() -> None:
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_DEV_GPU_UTIL": 140})) as url:
        f = _one([url])[url]
    assert "error" in f["in_range"]
    assert url in f["in_range"]["error"]
    assert 'DCGM_FI_DEV_GPU_UTIL{DCGM_FI_DRIVER_VERSION="570.195.03"' in f["in_range"]["error"]
    assert "= 140: utilization outside 0-100 %" in f["in_range"]["error"]


def test_framebuffer_used_above_total_is_an_error() -> None:
    class WithTotal(ex.DcgmLike):
        def collect(self):  # type: ignore[no-untyped-def]
            from prometheus_client.metrics_core import GaugeMetricFamily

            yield from super().collect()
            fam = GaugeMetricFamily("DCGM_FI_DEV_FB_TOTAL", "Framebuffer memory total (in MiB).",
                                    labels=list(ex.LABELS))
            fam.add_metric(list(ex.LABELS.values()), ex.H200_MIB)
            yield fam

    with ex.prometheus_server(WithTotal({"DCGM_FI_DEV_FB_USED": ex.H200_MIB + 1})) as url:
        f = _one([url])[url]
    assert f"= {ex.H200_MIB + 1}: framebuffer used above its total (DCGM_FI_DEV_FB_TOTAL{{" in f["in_range"]["error"]


def test_a_profiling_ratio_above_1_is_out_of_range() -> None:
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_PROF_GR_ENGINE_ACTIVE": 1.7})) as url:
        f = _one([url])[url]
    assert "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" in f["in_range"]["error"]
    assert "an activity ratio outside 0-1" in f["in_range"]["error"]


@pytest.mark.parametrize(("handler", "why"), [
    (ex.drip, "no complete answer within the 1.5 s deadline"),
    (ex.silent, "no complete answer within the 1.5 s deadline"),
    (ex.html, "answers HTML (Content-Type text/html; charset=utf-8), not a Prometheus exposition"),
    (ex.endless, "over the 1048576 byte cap"),
    (ex.endless_chunked, "goes past the 1048576 byte cap"),
    (ex.text_body("<html>oops</html>\n"), "not a Prometheus exposition"),
    (ex.text_body("# just a comment\n"), "the exposition holds no samples"),
])
def test_a_bad_endpoint_is_an_error_naming_the_url_never_a_hang(handler, why: str) -> None:
    with ex.raw_server(handler) as url:
        t0 = time.monotonic()
        f = _one([url])[url]
        took = time.monotonic() - t0
    assert took < DEADLINE + 1.0  # the deadline holds for the whole answer (no second scrape)
    assert f["readable"]["value"] is False
    assert f["exposition"]["error"].startswith(f"{url}: ") and why in f["exposition"]["error"], f
    for name in ("stale_counters", "not_supported", "in_range"):
        assert "error" in f[name]


def test_a_refused_connection_names_the_url() -> None:
    url = f"http://127.0.0.1:{ex.free_port()}/metrics"
    f = _one([url])[url]
    assert f["exposition"]["error"].startswith(f"{url}: ConnectionRefusedError")


def test_the_fetcher_never_follows_a_redirect() -> None:
    def redirect(h):  # type: ignore[no-untyped-def]
        h.send_response(302)
        h.send_header("Location", "http://10.0.0.1:9400/metrics")
        h.send_header("Content-Length", "0")
        h.end_headers()

    with ex.raw_server(redirect) as url:
        got = fetch(url, deadline_s=DEADLINE)
    assert got.problem == "HTTP 302 Found (redirect to http://10.0.0.1:9400/metrics: not followed)"


def test_the_second_scrape_comes_after_the_interval() -> None:
    waited: list[float] = []
    with ex.prometheus_server(ex.DcgmLike()) as url:
        scrape.scrape_endpoints([url], interval_s=35.0, deadline_s=DEADLINE, sleep=waited.append)
    assert waited == [35.0]


def test_scrape_module_imports_prometheus_client_lazily() -> None:
    import subprocess
    import sys

    code = ("import sys, validator.facts.node, validator.facts.node.scrape, validator.cli.node; "
            "print('prometheus_client' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_a_sentinel_energy_counter_proves_nothing_and_nvlink_bytes_decide() -> None:
    body = ("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
            'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0"} 9223372036854775794\n'
            "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter\n"
            'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu="0"} 5\n')
    with ex.raw_server(ex.text_body(body)) as url:
        f = _one([url])[url]
    assert f["stale_counters"]["value"] == ['DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{gpu="0"} = 5 at both scrapes']
    assert "NVLink/PCIe byte counters" in f["stale_counters"]["source"]


def test_an_exposition_with_no_counter_to_judge_is_freshness_unknown() -> None:
    with ex.raw_server(ex.text_body('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n')) as url:
        f = _one([url])[url]
    assert f["stale_counters"]["error"].startswith(f"freshness unknown: {url} exports no counter")


def test_node_exporter_cpu_seconds_prove_freshness() -> None:
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.core import CounterMetricFamily

    class Cpu:
        def __init__(self) -> None:
            self.t0 = time.monotonic()

        def collect(self):  # type: ignore[no-untyped-def]
            fam = CounterMetricFamily("node_cpu_seconds", "Seconds the CPUs spent in each mode.",
                                      labels=["cpu", "mode"])
            fam.add_metric(["0", "idle"], 1000.0 + time.monotonic() - self.t0)
            fam.add_metric(["0", "steal"], 0.0)
            yield fam

    registry = CollectorRegistry()
    registry.register(Cpu())
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        f = _one([url])[url]
    finally:
        server.shutdown()
        server.server_close()
    assert f["exposition"]["value"].startswith("node_exporter:")
    assert f["stale_counters"]["value"] == [] and "node_cpu_seconds" in f["stale_counters"]["source"]
