"""MON-03 cannot be forged by a local user (issue 24): a process named dcgm-exporter that a
login user starts does not count as the exporter, and spec-check never connects to the
address in its arguments. The reproducer runs a real process named dcgm-exporter as an
unprivileged uid, serving dcgm-exporter-shaped /metrics on a local HTTP server that records
every request it gets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.exporters import free_port
from validator.facts.node import telemetry
from validator.facts.node.base import Context

USER_UID = 4242  # in the login range (UID_MIN 1000): a user's process
SYSTEM_PY = "/usr/bin/python3"

SERVER = '''
import sys, pathlib
from http.server import BaseHTTPRequestHandler, HTTPServer
port, hits = int(sys.argv[-2]), pathlib.Path(sys.argv[-1])
BODY = b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 100\\nDCGM_FI_DEV_FB_USED{gpu="0"} 1\\n'
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        with open(hits, "a") as fh: fh.write(self.path + "\\n")
        self.send_response(200); self.send_header("Content-Length", str(len(BODY))); self.end_headers()
        self.wfile.write(BODY)
    def log_message(self, *a): pass
srv = HTTPServer(("127.0.0.1", port), H)
(hits.parent / "ready").write_text("1")
srv.serve_forever()
'''


def _start(uid: int | None, argv_port: int, listen_port: int) -> Iterator[tuple[subprocess.Popen, Path]]:
    if not os.path.exists(SYSTEM_PY):
        pytest.skip("no system python to run the fake exporter")
    d = Path(tempfile.mkdtemp())
    try:
        d.chmod(0o777)
        (d / "server.py").write_text(SERVER)
        (d / "dcgm-exporter").symlink_to(SYSTEM_PY)  # comm and argv[0]: dcgm-exporter
        hits = d / "hits"
        argv = [str(d / "dcgm-exporter"), str(d / "server.py"), "-a", f":{argv_port}", str(listen_port), str(hits)]
        kwargs = {"user": uid} if uid is not None else {}
        p = subprocess.Popen(argv, **kwargs)
        try:
            for _ in range(100):
                if (d / "ready").exists():
                    break
                time.sleep(0.05)
            else:
                pytest.skip("the fake exporter did not start")
            yield p, hits
        finally:
            p.kill()
            p.wait(5)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def user_exporter() -> Iterator[tuple[subprocess.Popen, Path, int]]:
    if os.geteuid() != 0 and os.geteuid() < 1000:
        pytest.skip("needs a login-range uid or root to start one")
    uid = USER_UID if os.geteuid() == 0 else None  # not root: the test user is itself a login user
    port = free_port()
    for p, hits in _start(uid, port, port):
        yield p, hits, port


@pytest.fixture
def root_exporter() -> Iterator[tuple[subprocess.Popen, Path, int, int]]:
    if os.geteuid() != 0:
        pytest.skip("a system user's exporter needs root to start")
    listen, decoy = free_port(), free_port()
    for p, hits in _start(None, decoy, listen):
        yield p, hits, listen, decoy


def _ours(procfs: Path, pid: int) -> telemetry.Process:
    procs = telemetry._scan(procfs) or []
    (mine,) = [p for p in procs if p.pid == pid]
    return mine


def test_a_users_process_named_dcgm_exporter_does_not_count(tmp_path: Path, user_exporter) -> None:
    proc, hits, port = user_exporter
    mine = _ours(Path("/proc"), proc.pid)
    assert mine.exporter == "dcgm-exporter" and mine.uid is not None and mine.uid >= 1000
    assert telemetry.platform_reason(mine, telemetry.login_uid_min(Path("/"))) is None
    facts = telemetry.collect(Context(rootfs=tmp_path))  # the live node
    assert f"dcgm-exporter pid {proc.pid} (uid {mine.uid}" in facts["telemetry.exporters"]["source"]
    assert "passed over" in facts["telemetry.exporters"]["source"]
    # its address was never connected to: the server it runs saw no request
    assert not hits.exists(), hits.read_text()
    assert f"127.0.0.1:{port}" not in str(facts["telemetry.families"])


def test_the_platforms_exporter_is_scraped_on_its_own_socket_not_its_arguments(root_exporter) -> None:
    proc, hits, listen, _decoy = root_exporter
    mine = _ours(Path("/proc"), proc.pid)
    assert telemetry.platform_reason(mine, 1000) == "a system user's process (uid 0)"
    url, why = telemetry._own_endpoint(mine)
    assert url == f"http://127.0.0.1:{listen}/metrics", why  # the kernel's socket, not -a :decoy
    fams = telemetry._families(Context(rootfs=Path(tempfile.gettempdir())), mine, None)
    assert fams["value"] == ["gpu_utilization", "memory"]
    assert f"DCGM_FI_DEV_GPU_UTIL at http://127.0.0.1:{listen}/metrics" in fams["source"]
    assert hits.read_text().splitlines() == ["/metrics"]


@pytest.mark.parametrize(("cgroup", "uid", "counts"), [
    ("/system.slice/dcgm-exporter.service", 0, "a systemd unit (dcgm-exporter.service)"),
    ("/system.slice/dcgm-exporter.service", 1001, "a systemd unit (dcgm-exporter.service)"),
    ("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12.slice/cri-containerd-ab12.scope",
     1001, "a container (/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12.slice/"
           "cri-containerd-ab12.scope)"),
    ("/system.slice/docker-0123abcd.scope", 1001, "a container (/system.slice/docker-0123abcd.scope)"),
    ("/user.slice/user-1001.slice/session-4.scope", 1001, None),
    # a user's own systemd unit or rootless container is still the user's
    ("/user.slice/user-1001.slice/user@1001.service/app.slice/dcgm-exporter.service", 1001, None),
    ("/user.slice/user-1001.slice/user@1001.service/user.slice/libpod-5f2e.scope", 1001, None),
    ("/user.slice/user-998.slice/session-2.scope", 998, "a system user's process (uid 998)"),
    ("", None, None),
])
def test_what_the_platform_runs(cgroup: str, uid: int | None, counts: str | None) -> None:
    assert telemetry.platform_reason(telemetry.Process(7, "dcgm-exporter", uid, cgroup), 1000) == counts


def test_uid_min_comes_from_login_defs(tmp_path: Path) -> None:
    assert telemetry.login_uid_min(tmp_path) == 1000
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "login.defs").write_text("# comment\nUID_MIN\t\t\t  500\nUID_MAX 60000\n")
    assert telemetry.login_uid_min(tmp_path) == 500


def test_the_probe_reads_status_and_cgroup_of_a_recorded_tree(tmp_path: Path) -> None:
    from tests.fixtures import nodes

    tree = nodes.plain_host(tmp_path)
    b = nodes.Builder(tree.root)
    b.process(88, "dcgm-exporter", ["/usr/bin/dcgm-exporter"], uid=1001,
              cgroup="0::/user.slice/user-1001.slice/session-3.scope")
    b.process(89, "node_exporter", ["/usr/bin/node_exporter"], uid=65534,
              cgroup="0::/system.slice/prometheus-node-exporter.service")
    facts = telemetry.collect(Context(procfs=tree.procfs, sysfs=tree.sysfs, rootfs=tree.rootfs))
    assert facts["telemetry.exporters"]["value"] == ["node_exporter"]
    assert "passed over: dcgm-exporter pid 88 (uid 1001, /user.slice/user-1001.slice/session-3.scope)" in (
        facts["telemetry.exporters"]["source"])


def test_cli_check_scrape_survives_a_dripping_server() -> None:
    """`check --scrape` against a server that sends a byte every 2 s ends within its deadline."""
    from tests.fixtures import exporters as ex

    with ex.raw_server(ex.drip) as url:
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "validator", "check", "--select", "MON-03.endpoint",
                            "--scrape", url, "--scrape-timeout", "2", "--scrape-interval", "0",
                            "--format", "json"], capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
    assert took < 30
    import json

    (f,) = json.loads(r.stdout)["findings"]
    assert f["status"] == "error" and f["item"] == url
    assert f"{url}: no complete answer within the 2 s deadline" in f["message"]


def test_a_named_node_exporter_does_not_hide_the_platforms_dcgm_exporter(root_exporter) -> None:
    from tests.fixtures import exporters as ex
    from validator.facts.node import scrape

    proc, hits, listen, _decoy = root_exporter
    mine = _ours(Path("/proc"), proc.pid)
    with ex.raw_server(ex.text_body("# TYPE node_cpu_seconds_total counter\n"
                                    'node_cpu_seconds_total{cpu="0",mode="idle"} 12.5\n')) as url:
        named = scrape.scrape_endpoints([url], interval_s=0, deadline_s=3)
    assert named.exporters == {url: "node_exporter"}
    fams = telemetry._families(Context(rootfs=Path(tempfile.gettempdir())), mine, named)
    assert fams["value"] == ["gpu_utilization", "memory"]
    assert f"at http://127.0.0.1:{listen}/metrics" in fams["source"]
