"""Issue 32 (the third hostile-input campaign): the reproducers outside the run readers, each
written from the issue's words (the run readers' are tests/runs/test_events.py and
tests/runs/test_bounds.py).

A series an exporter serves twice is an error naming it; a named endpoint counts as the
platform's exporter only by the rules a process found by name meets (a login user's server
is passed over); parsing a scrape is bounded by the deadline; a closed standard output is
the one-line error a full one gets; a rule pack whose ``min_engine_version`` has 5,000
digits is a one-line error, exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fixtures import exporters as ex
from tests.hardening.test_round2 import _one_line  # the one-line exit-2 check every round uses
from tests.jobs.util import ROOT, spec_check

FACTS = ROOT / "tests" / "fixtures" / "facts"
HF = ROOT / "tests" / "jobs" / "formats" / "hf" / "huggingface__open-r1__recipes__OpenR1-Distill-7B__sft__config_distill.yaml"

DCGM = ('# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n'
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 97\n'
        '# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n'
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-1"} 1000\n')




def _mon03(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    r = spec_check("check", "--select", "MON-03", "--scrape-interval", "0.3", "--format", "json", *args,
                   timeout=int(timeout))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and r.stdout, r.stderr
    return r, json.loads(r.stdout)["findings"]


# ---- a series served twice ----------------------------------------------------------------

@pytest.mark.parametrize("first", ["50", "150"])
def test_a_series_served_twice_is_an_error_naming_it(first: str) -> None:
    """Before: the later sample replaced the earlier, so line order decided
    MON-03.telemetry-out-of-range (150 % then 50 % passed; 50 then 150 failed)."""
    second = "150" if first == "50" else "50"
    body = ('# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n'
            f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",UUID="GPU-1"}} {first}\n'
            f'DCGM_FI_DEV_GPU_UTIL{{UUID="GPU-1",gpu="0"}} {second}\n')
    with ex.raw_server(ex.text_body(body)) as url:
        _, findings = _mon03("--scrape", url)
    mine = [f for f in findings if f.get("item") == url]
    assert mine and not [f for f in mine if f["status"] == "pass"], mine
    assert any(f["status"] == "error" and 'DCGM_FI_DEV_GPU_UTIL{UUID="GPU-1",gpu="0"} is served twice'
               in f["message"] for f in mine), mine


# ---- whose endpoint it is -------------------------------------------------------------------

SERVE = textwrap.dedent("""
    import os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    body = sys.stdin.read().encode()
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    s = HTTPServer(("127.0.0.1", 0), H)
    if len(sys.argv) > 1:
        os.setuid(int(sys.argv[1]))  # the socket is bound; the process is now that user's
    print(s.server_address[1], flush=True)
    s.serve_forever()
""")


@contextmanager
def _server_as(uid: int | None) -> Iterator[str]:
    """A dcgm-exporter-shaped HTTP server in a process of its own, run as ``uid``."""
    args = [sys.executable, "-c", SERVE] + ([str(uid)] if uid is not None else [])
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(DCGM)
        p.stdin.close()
        port = int(p.stdout.readline())
        yield f"http://127.0.0.1:{port}/metrics"
    finally:
        p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()


def _exporter_finding(findings: list[dict]) -> dict:
    [f] = [f for f in findings if f["rule"] == "MON-03.no-telemetry-exporter"]
    return f


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a server as uid 65534 needs root")
def test_a_login_users_endpoint_is_passed_over_as_its_process_would_be() -> None:
    """Before: with --scrape, an endpoint whose socket belongs to uid 65534 passed
    MON-03.no-telemetry-exporter, though that process found by name is passed over."""
    from validator.facts.node import telemetry

    if telemetry._scan(Path("/proc")):
        pytest.skip("an exporter process runs on this machine: it would decide the rule")
    with _server_as(65534) as url:
        _, findings = _mon03("--scrape", url)
    f = _exporter_finding(findings)
    assert f["status"] != "pass", f
    with _server_as(65534) as url:
        r = spec_check("probe", "--scrape", url, "--scrape-interval", "0.3", timeout=60)
    src = json.loads(r.stdout)["facts"]["telemetry.exporters"]["source"]
    assert f"dcgm-exporter at {url} (--scrape), served by pid" in src and "(uid 65534, " in src, src
    # the same server run by a system user (root, uid 0) is the platform's: the rule passes
    with _server_as(None) as url:
        _, findings = _mon03("--scrape", url)
    assert _exporter_finding(findings)["status"] == "pass"


def test_an_endpoint_on_another_host_is_not_this_nodes_exporter(monkeypatch: pytest.MonkeyPatch) -> None:
    from validator.facts.node import telemetry

    owner, why = telemetry.endpoint_owner("http://192.0.2.1:9400/metrics", "dcgm-exporter", Path("/proc"))
    assert owner is None and why == "not on this node: whose process serves it cannot be told"


# ---- parsing bounded by the deadline ----------------------------------------------------------

def test_a_sample_with_200000_labels_is_bounded_by_the_deadline() -> None:
    """Before: one 2 MB sample (under the cap) made `check --timeout 2` take 50 s, the
    parse quadratic and outside the deadline."""
    labels = ",".join(f'l{i}="v"' for i in range(200_000))
    body = f"# TYPE x gauge\nx{{{labels}}} 1\n"
    assert len(body) < 16 * 2**20
    with ex.raw_server(ex.text_body(body)) as url:
        t0 = time.monotonic()
        _, findings = _mon03("--scrape", url, "--timeout", "2")
        took = time.monotonic() - t0
    assert took < 15, took
    [f] = [f for f in findings if f["rule"] == "MON-03.endpoint-unreadable" and f.get("item") == url]
    assert f["status"] == "error" and "line 2 is" in f["message"] and "characters long" in f["message"], f


def test_the_parse_stops_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many short families past the deadline: the parse stops and says so (a clock that
    moves 1 s a family)."""
    from validator.facts.node import scrape

    body = "".join(f"# TYPE m{i} gauge\nm{i} 1\n" for i in range(100))
    ticks = iter(range(10_000))
    monkeypatch.setattr(scrape.time, "monotonic", lambda: float(next(ticks)))
    with ex.raw_server(ex.text_body(body)) as url:
        got = scrape.read_exposition(url, deadline_s=5)
    assert got.problem is not None and "not parsed within the 5 s deadline" in got.problem


# ---- a closed standard output -----------------------------------------------------------------

def _closed(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1795000000"}
    cmd = " ".join([sys.executable, "-m", "validator", *args]) + " >&-"
    return subprocess.run(["bash", "-c", cmd], capture_output=False, stderr=subprocess.PIPE, text=True,
                          env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("args", [("check",), ("check", "--format", "json"),
                                  ("check", "--facts", str(FACTS / "dgx_h100.json")),
                                  ("lint", str(HF)), ("rules", "list"), ("--help",)])
def test_a_closed_standard_output_is_the_one_line_error_a_full_one_gets(args: tuple[str, ...]) -> None:
    """Before: `check >&-` was `internal error: AttributeError`."""
    r = _closed(*args)
    line = _one_line(r, "cannot write to standard output")
    full = subprocess.run(["bash", "-c", " ".join([sys.executable, "-m", "validator", *args]) + " >/dev/full"],
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120)
    assert line.split(": ")[:3] == full.stderr.strip().split(": ")[:3] and full.returncode == 2


def test_a_closed_standard_output_is_no_error_when_the_report_goes_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = _closed("check", "--facts", str(FACTS / "dgx_h100.json"), "--format", "json", "-o", str(out))
    assert r.returncode in (0, 1) and "error" not in r.stderr, r.stderr
    assert json.loads(out.read_text())["findings"]


# ---- the leftover of round 1 ------------------------------------------------------------------

@pytest.mark.parametrize("quote", ['"', ""])
def test_a_min_engine_version_of_5000_digits_is_a_one_line_error(tmp_path: Path, quote: str) -> None:
    """Before: `internal error: ValueError` (int() refuses over 4,300 digits)."""
    import shutil

    from validator.io.resources import rules_dir

    pack = tmp_path / "pack"
    shutil.copytree(rules_dir() / "v1.0", pack)
    meta = pack / "pack.yaml"
    lines = [ln if not ln.startswith("min_engine_version:") else f"min_engine_version: {quote}{'7' * 5000}{quote}"
             for ln in meta.read_text().splitlines()]
    meta.write_text("\n".join(lines) + "\n")
    for verb in (("rules", "list", "--rules", str(pack)),
                 ("check", "--facts", str(FACTS / "dgx_h100.json"), "--rules", str(pack))):
        line = _one_line(spec_check(*verb), f"{meta}:3:")
        assert len(line) < 300, line
