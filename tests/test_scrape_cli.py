"""`check --scrape`, `probe --scrape` then `check --facts`, and `cluster --scrape-port`, end to end
against real prometheus_client servers on 127.0.0.1 (tests/fixtures/exporters.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import exporters as ex

pytest.importorskip("prometheus_client")


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          timeout=timeout)


def _scrape_findings(stdout: str) -> dict[tuple[str, str | None], dict]:
    doc = json.loads(stdout)
    return {(f["rule"], f["item"]): f for f in doc["findings"]
            if f["rule"].startswith("MON-03.") and f["rule"] not in (
                "MON-03.gpu-power-unreadable", "MON-03.platform-family-not-exported")}


def test_check_scrape_judges_a_live_exporter_and_names_the_endpoint() -> None:
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_DEV_GPU_UTIL": 140})) as good, \
            ex.prometheus_server(ex.DcgmLike(energy_per_s=0)) as stale, ex.raw_server(ex.html) as html:
        r = _run("check", "--select", "MON-03", "--scrape", good, "--scrape", stale, "--scrape", html,
                 "--scrape-interval", "0.5", "--scrape-timeout", "3", "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    f = _scrape_findings(r.stdout)
    assert f[("MON-03.telemetry-out-of-range", good)]["status"] == "error"
    assert "= 140: utilization outside 0-100 %" in f[("MON-03.telemetry-out-of-range", good)]["message"]
    assert f[("MON-03.exporter-stale", good)]["status"] == "pass"
    assert f[("MON-03.exporter-stale", stale)]["status"] == "warn"
    assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" in f[("MON-03.exporter-stale", stale)]["message"]
    assert f[("MON-03.endpoint-unreadable", html)]["status"] == "error"
    assert f"{html}: answers HTML" in f[("MON-03.endpoint-unreadable", html)]["message"]
    assert f[("MON-03.exporter-stale", html)]["status"] == "skip"
    assert f[("MON-03.no-telemetry-exporter", None)]["status"] == "pass"  # a named endpoint counts
    params = json.loads(r.stdout)["parameters"]["scrape_endpoints"]
    assert params["origin"] == "--scrape" and good in params["value"]


def test_probe_records_the_scrapes_and_check_facts_judges_them(tmp_path: Path) -> None:
    out = tmp_path / "facts.json"
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_DEV_MEMORY_TEMP": 9223372036854775794})) as url:
        r = _run("probe", "--scrape", url, "--scrape-interval", "0.3", "-o", str(out))
    assert r.returncode == 0, r.stderr
    (member,) = json.loads(out.read_text())["facts"]["telemetry.scrapes"]["items"]
    assert member["id"] == url
    r = _run("check", "--facts", str(out), "--select", "MON-03", "--format", "json")
    f = _scrape_findings(r.stdout)
    assert f[("MON-03.sentinel-served-as-value", url)]["status"] == "warn"
    assert "DCGM int64 blank, not found, not supported or not permissioned" in (
        f[("MON-03.sentinel-served-as-value", url)]["message"])
    assert json.loads(r.stdout)["parameters"]["scrape_endpoints"]["origin"] == "facts"


def test_without_scrape_the_rules_skip(tmp_path: Path) -> None:
    r = _run("check", "--select", "MON-03.exporter-stale", "--format", "json")
    (f,) = json.loads(r.stdout)["findings"]
    assert f["status"] == "skip" and "no telemetry endpoint named to scrape" in f["message"]


@pytest.mark.parametrize(("args", "message"), [
    (["check", "--scrape", "ftp://example.org/metrics"], "is not an http:// or https:// URL"),
    (["check", "--scrape", "http:///metrics"], "names no host"),
    (["probe", "--scrape", "not a url"], "is not an http:// or https:// URL"),
    (["check", "--facts", "x.json", "--scrape", "http://127.0.0.1:9400/metrics"],
     "--scrape samples live endpoints; with --facts the recorded scrapes are judged"),
])
def test_bad_scrape_options_are_one_line_errors(args: list[str], message: str) -> None:
    r = _run(*args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_cluster_scrape_port_scrapes_each_hosts_exporter_from_the_host() -> None:
    with ex.prometheus_server(ex.DcgmLike({"DCGM_FI_DEV_FB_USED": -1})) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        r = _run("cluster", "--transport", "local", "--scrape-port", port, "--scrape-interval", "0.5",
                 "--timeout", "60", "--select", "MON-03", "--format", "json")
    f = _scrape_findings(r.stdout)
    local = f"http://127.0.0.1:{port}/metrics"
    assert f[("MON-03.endpoint-unreadable", local)]["status"] == "pass"
    assert f[("MON-03.endpoint-unreadable", local)]["subject"] == "localhost"
    assert "DCGM_FI_DEV_FB_USED{" in f[("MON-03.telemetry-out-of-range", local)]["message"]
    assert ": negative" in f[("MON-03.telemetry-out-of-range", local)]["message"]


def test_cluster_timeout_must_leave_room_for_the_scrapes() -> None:
    r = _run("cluster", "--transport", "local", "--scrape-port", "9400", "--timeout", "30")
    assert r.returncode == 2 and "leaves no room for two scrapes" in r.stderr, r.stderr


def test_cluster_replay_refuses_scrape_port(tmp_path: Path) -> None:
    r = _run("cluster", "--facts", str(tmp_path), "--scrape-port", "9400")
    assert r.returncode == 2 and "--scrape-port" in r.stderr and "only apply to a live run" in r.stderr, r.stderr


def test_check_timeout_bounds_every_bad_exporter_and_names_each_url() -> None:
    """An exporter that never answers, one that drips a byte every 2 s, one that announces
    10 GB, one that streams without a length and one that answers HTML: each an error naming
    its URL, none a pass, and `check --timeout 2` ends within each scrape's 2 s deadline (the
    default deadline, 10 s, would take over 20 s on the first two alone)."""
    import time

    with ex.raw_server(ex.silent) as silent, ex.raw_server(ex.drip) as drip, \
            ex.raw_server(ex.endless) as huge, ex.raw_server(ex.endless_chunked) as stream, \
            ex.raw_server(ex.html) as html:
        t0 = time.monotonic()
        r = _run("check", "--select", "MON-03", "--scrape", silent, "--scrape", drip, "--scrape", huge,
                 "--scrape", stream, "--scrape", html, "--timeout", "2", "--scrape-interval", "0.5",
                 "--format", "json")
        took = time.monotonic() - t0
    # MON-03 is a SHOULD: its errors are in the report, they do not decide the exit code
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and r.stdout, r.stderr
    assert took < 20, took
    f = _scrape_findings(r.stdout)
    why = {silent: "no complete answer within the 2 s deadline", drip: "no complete answer within the 2 s deadline",
           huge: "over the 16777216 byte cap", stream: "goes past the 16777216 byte cap", html: "answers HTML"}
    for url, reason in why.items():
        finding = f[("MON-03.endpoint-unreadable", url)]
        assert finding["status"] == "error" and f"{url}: " in finding["message"], finding
        assert reason in finding["message"], finding
    assert not any(v["status"] == "pass" for (rule, item), v in f.items() if item in why and
                   rule != "MON-03.no-telemetry-exporter")


def test_the_scrape_defaults_are_written_once() -> None:
    """35 s and 10 s live in validator/io/scrape_defaults.py (light: no HTTP client at
    start-up); the options, the library's options and the node facts name them."""
    root = Path(__file__).resolve().parents[1] / "validator"
    for rel in ("cli/node.py", "cli/cluster.py", "api/node.py", "api/options.py", "facts/node/base.py",
                "facts/node/__init__.py"):
        text = (root / rel).read_text()
        assert "35.0" not in text and "10.0" not in text, rel
        assert "SCRAPE_INTERVAL_S" in text, rel
