"""telemetry.families (rule pack v1.1, MON-03): what a running dcgm-exporter really exports,
read over HTTP from a real server shaped like dcgm-exporter's /metrics, and an NCCL profiler
plugin configured in /etc/nccl.conf."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from validator.facts.node import telemetry
from validator.facts.node.base import Context

# the shape of dcgm-exporter 4.x's exposition with its default counters (etc/default-counters.csv)
DCGM_METRICS = """# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 97
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 61234
DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1"} 0
"""


def _serve(body: str) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body.encode()
            self.send_response(200 if self.path == "/metrics" else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def dcgm_port() -> Iterator[int]:
    yield from _serve(DCGM_METRICS)


@pytest.fixture
def memory_only_port() -> Iterator[int]:
    yield from _serve("DCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\n")


def _live(tmp_path: Path) -> Context:
    return Context(rootfs=tmp_path)  # /proc and /sys of this machine: live


def _named(url: str):
    from validator.facts.node import scrape

    return scrape.scrape_endpoints([url], interval_s=0, deadline_s=3)


def test_a_named_dcgm_exporter_endpoint_gives_its_families(tmp_path: Path, dcgm_port: int) -> None:
    url = f"http://127.0.0.1:{dcgm_port}/metrics"
    f = telemetry._families(_live(tmp_path), None, _named(url))
    assert f["value"] == ["gpu_utilization", "memory"]
    assert f"DCGM_FI_DEV_GPU_UTIL at {url}" in f["source"]


def test_only_the_families_exported_count(tmp_path: Path, memory_only_port: int) -> None:
    f = telemetry._families(_live(tmp_path), None, _named(f"http://127.0.0.1:{memory_only_port}/metrics"))
    assert f["value"] == ["memory"]


def test_a_platform_exporter_with_no_socket_is_an_error(tmp_path: Path) -> None:
    """Its address is never taken from its arguments: no listening socket of its own, no scrape."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "-a", ":9400"])
    try:
        proc = telemetry.Process(p.pid, "dcgm-exporter", 0, "/system.slice/dcgm-exporter.service")
        f = telemetry._families(_live(tmp_path), proc, None)
    finally:
        p.kill()
        p.wait()
    assert f["error"] == (f"dcgm-exporter (pid {p.pid}) runs but it listens on no TCP socket "
                          "(name its endpoint with --scrape URL)")


def test_an_nccl_profiler_plugin_in_nccl_conf(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nccl.conf").write_text("NCCL_DEBUG=WARN\nNCCL_PROFILER_PLUGIN=libnccl-profiler-inspector.so\n")
    f = telemetry._families(_live(tmp_path), None, None)
    assert f["value"] == ["collective_latency"]
    assert "NCCL_PROFILER_PLUGIN=libnccl-profiler-inspector.so in" in f["source"]
    (tmp_path / "etc" / "nccl.conf").write_text("NCCL_PROFILER_PLUGIN=none\n")
    assert telemetry._families(_live(tmp_path), None, None)["value"] == []


def test_a_recorded_tree_cannot_be_scraped(tmp_path: Path) -> None:
    ctx = Context(procfs=tmp_path / "proc", sysfs=tmp_path / "sys", rootfs=tmp_path)
    f = telemetry._families(ctx, telemetry.Process(1, "dcgm-exporter", 0, ""), None)
    assert "scraped only on the live node" in f["error"]


def test_check_verifies_the_declared_families_end_to_end(tmp_path: Path) -> None:
    """`spec-check check` on this machine (no exporter): a declared family is a warn, naming it."""
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "validator", "check", "--select", "MON-03.platform",
                        "--set", "platform_metric_families=memory", "--format", "json"],
                       capture_output=True, text=True, timeout=120)
    f = [x for x in json.loads(r.stdout)["findings"] if x["rule"] == "MON-03.platform-family-not-exported"]
    assert len(f) == 1 and f[0]["status"] in ("warn", "pass"), f
    if f[0]["status"] == "warn":  # nothing exports memory on a machine without dcgm-exporter
        assert "includes all of [memory pressure]" in f[0]["expected"]
