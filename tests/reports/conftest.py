"""Shared fixtures for the report tests: one synthetic fleet Report with hostile strings,
and a runner for the real CLI (a subprocess, so exit codes and stderr are the user's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from validator.report.model import Finding, Location, Report, RequirementDoc, RuleDoc, Status, Subject

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
HOSTILE = '<script>alert("x")</script> | `rm -rf` & "quote" \\ back\nnewline'


def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(os.environ.get("SPEC_CHECK_UPDATE_GOLDEN")) or bool(
        request.config.getoption("--update-golden")
    )


def check_golden(request: pytest.FixtureRequest, name: str, text: str) -> None:
    """Compare with tests/reports/golden/NAME; SPEC_CHECK_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if update_golden(request) or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not update_golden(request):
            pytest.fail(f"golden file {path} was missing and has been written; re-run")
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if intended, re-run with SPEC_CHECK_UPDATE_GOLDEN=1"
    )


def _f(rule: str, status: Status, subject: str, **kw: Any) -> Finding:
    req = rule.split(".")[0]
    level = kw.pop("level", "SHOULD" if req == "PLAT-03" else "MUST")
    return Finding(
        rule=rule,
        requirement=req,
        level=level,
        status=status,
        subject=subject,
        expected=kw.pop("expected", "as the spec says"),
        message=kw.pop("message", f"{rule} checked"),
        remediation=kw.pop("remediation", f"fix {rule}"),
        **kw,
    )


def make_report(**changes: Any) -> Report:
    findings = (
        _f(
            "NET-01.fabric-port-slow",
            Status.PASS,
            "n1",
            item="mlx5_0:1",
            observed="400 Gb/s",
            value=400,
            unit="Gb/s",
            source="/sys/class/infiniband/mlx5_0/ports/1/rate",
        ),
        _f(
            "NET-01.fabric-port-slow",
            Status.FAIL,
            "n2",
            item="mlx5_0:1",
            observed="200 Gb/s",
            value=200,
            unit="Gb/s",
            source="/sys/class/infiniband/mlx5_0/ports/1/rate",
            waiver={
                "id": "NET-01",
                "subject": "n2",
                "justification": "RMA open",
                "approver": "ops",
                "expires": "2027-01-31",
                "active": True,
            },
        ),
        _f("MEM-01.ecc-disabled", Status.PASS, "n1", item="GPU0", observed="true", value=True),
        _f(
            "MEM-01.ecc-disabled",
            Status.FAIL,
            "n2",
            item="GPU3",
            observed="false",
            value=False,
            waiver={
                "id": "MEM-01.ecc-disabled",
                "subject": "n2",
                "justification": "experiment",
                "approver": "research",
                "expires": "2026-01-01",
                "active": False,
            },
        ),
        _f(
            "MEM-01.row-remap-failed",
            Status.ERROR,
            "n2",
            item="GPU1",
            message="could not be read: NotSupported",
            source="NVML (nvidia-smi's library): nvmlDeviceGetRemappedRows",
        ),
        _f(
            "PLAT-03.persistence-off",
            Status.WARN,
            "n1",
            item=HOSTILE,
            observed=HOSTILE,
            message=HOSTILE,
            remediation=HOSTILE,
        ),
        _f("PLAT-03.persistence-off", Status.SKIP, "n2", message="not applicable (no GPU)"),
        _f(
            "NET-01.measured-throughput-low",
            Status.PASS,
            "fleet",
            item="n1->n2",
            observed="391.7 Gb/s",
            value=391.7,
            unit="Gb/s",
            source="ib_write_bw",
        ),
        _f(
            "NET-01.measured-throughput-low",
            Status.FAIL,
            "fleet",
            item="n2->n1",
            observed="196.2 Gb/s",
            value=196.2,
            unit="Gb/s",
            source="ib_write_bw",
        ),
        _f(
            "PREC-01.fp32-training",
            Status.FAIL,
            "conf/ds_config.json",
            location=Location("conf/ds_config.json", 12),
            observed="fp32",
            level="MUST",
        ),
    )
    base: dict[str, Any] = dict(
        command="cluster",
        spec_version="1.0",
        tool_version="0.1.0",
        rule_pack={"id": "v1.0", "digest": "sha256:" + "ab" * 32},
        generated_at="2026-11-18T11:06:40Z",
        parameters={
            "fabric_port_rate": {"value": "400 Gb/s", "origin": "default"},
            "shm_min": {"value": "2 GiB", "origin": "--set"},
        },
        subjects=(
            Subject("n1", "node", "sha256:" + "11" * 32, "2026-11-18T10:00:00Z", "n1.json"),
            Subject("n2", "node", "sha256:" + "22" * 32, "2026-11-18T10:00:00Z", "n2.json"),
            Subject("fleet", "cluster", "sha256:" + "33" * 32, "2026-11-18T10:00:00Z", "cluster"),
            Subject(
                "conf/ds_config.json", "job", "sha256:" + "44" * 32, None, "conf/ds_config.json"
            ),
        ),
        findings=findings,
        rules=tuple(
            RuleDoc(
                r, r.split(".")[0], r.split(".")[1], "MUST", "node", f"summary {r}", "why", "fix"
            )
            for r in (
                "NET-01.fabric-port-slow",
                "NET-01.measured-throughput-low",
                "MEM-01.ecc-disabled",
                "MEM-01.row-remap-failed",
                "PLAT-03.persistence-off",
            )
        ),
        requirements=(
            RequirementDoc(
                "NET-01", "MUST", "Node-to-node throughput >= 400 Gbps", "400 <b>Gbps</b>"
            ),
            RequirementDoc("MEM-01", "MUST", "GPU ECC enabled", "ECC on"),
            RequirementDoc("PLAT-03", "SHOULD", "Persistence mode", "persistence on"),
            RequirementDoc("REC-02", "MUST", "Recovery within 90 s", "90 s"),
        ),
        profile=None,
    )
    base.update(changes)
    return Report(**base)


@pytest.fixture
def report() -> Report:
    return make_report()


@pytest.fixture
def result_file(tmp_path: Path, report: Report) -> Path:
    path = tmp_path / "result.json"
    from validator.renderers.json_ import JsonRenderer

    with path.open("w", encoding="utf-8") as fh:  # as the CLI writes a result
        JsonRenderer().render(report, fh)
    return path


def spec_check(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI: ``python -m validator ARGS``."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "validator", *map(str, args)],
        cwd=cwd or ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def real_result(tmp_path: Path, *facts: str, extra: tuple[str, ...] = ()) -> Path:
    """A real ``check --facts`` result (facts files from tests/fixtures/facts/ or ours)."""
    out = tmp_path / f"result-{len(list(tmp_path.iterdir()))}.json"
    paths = []
    for name in facts:
        p = ROOT / "tests" / "fixtures" / "facts" / name
        paths += [
            "--facts",
            str(p if p.exists() else ROOT / "tests/reports/fixtures/facts/small_node.json"),
        ]
    proc = spec_check("check", *paths, "--format", "json", "-o", out, *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return out
