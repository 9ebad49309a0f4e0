"""The claims of docs/telemetry.md, checked against the code that makes them true."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from validator.facts.node import scrape, telemetry
from validator.io.netfetch import DEFAULT_CAP, DEFAULT_DEADLINE_S

DOC = (Path(__file__).parents[1] / "docs" / "telemetry.md").read_text()


def _help(verb: str) -> str:
    return subprocess.run([sys.executable, "-m", "validator", verb, "--help"], capture_output=True,
                          text=True, timeout=60).stdout


def _defaults(command) -> dict:
    return {p.name: p.default for p in command.params}


def test_defaults_in_the_doc_are_the_codes() -> None:
    from validator.cli.cluster import cluster
    from validator.cli.node import check, probe

    assert "(default 35: dcgm-exporter" in DOC
    for command in (check, probe, cluster):
        assert _defaults(command)["scrape_interval"] == 35.0
    assert "(`--timeout`, default 10 s; `--scrape-timeout` is the same option)" in " ".join(DOC.split())
    assert DEFAULT_DEADLINE_S == 10.0
    assert _defaults(check)["scrape_timeout"] == 10.0 == _defaults(probe)["scrape_timeout"]
    for command in (check, probe):  # one option, two names
        (opt,) = [p for p in command.params if p.name == "scrape_timeout"]
        assert set(opt.opts) == {"--timeout", "--scrape-timeout"}
    assert "size cap of 16 MiB" in DOC and DEFAULT_CAP == 16 << 20
    assert "--scrape-port" in _help("cluster") and "--scrape URL" in _help("probe")


def test_sentinels_in_the_doc_are_the_codes() -> None:
    for low, high in ((2147483632, 2147483635), (9223372036854775792, 9223372036854775795),
                      (140737488355328.0, 140737488355331.0)):
        assert f"{low} to {high}" in DOC
        assert scrape.sentinel(low) and scrape.sentinel(high)
    assert scrape.sentinel(9223372036854775794) == "DCGM int64 not supported"
    assert scrape.sentinel(2147483631) is None and scrape.sentinel(36) is None


def test_the_rules_in_the_doc_are_the_packs() -> None:
    rules = Path(__file__).parents[1] / "rules" / "v1.1" / "node.yaml"
    text = rules.read_text()
    for rule in re.findall(r"`(MON-03\.[a-z-]+)`", DOC):
        assert f"id: {rule}" in text


def test_uid_min_default_and_cgroups() -> None:
    assert "1000 when unset" in DOC and telemetry.DEFAULT_UID_MIN == 1000
    user = telemetry.Process(1, "dcgm-exporter", 1001, "/user.slice/user-1001.slice/session-3.scope")
    assert telemetry.platform_reason(user, 1000) is None
    unit = telemetry.Process(1, "dcgm-exporter", 1001, "/system.slice/dcgm-exporter.service")
    assert telemetry.platform_reason(unit, 1000)


def test_a_redirect_is_not_followed_and_html_is_an_error() -> None:
    # exercised end to end in tests/facts/test_scrape.py; the doc's words are the code's
    assert "a redirect is not followed" in DOC and "HTML" in DOC
    assert "not followed" in Path(scrape.__file__).with_name("..").joinpath("..", "io", "netfetch.py").resolve().read_text()
