"""Profiles for people: the sample profile is valid as printed, docs/profile.md documents
every key and parameter, and what a finding tells the user to write into a profile is
written exactly as a profile takes it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from validator.rules.profile_sample import TOP_KEYS, parameter_table, sample_profile
from validator.rules.spec import PROFILE_KEYS, load_spec, resolve_parameters

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "profile.md"
TABLE = re.compile(r"<!-- profile-parameters:start -->\n(.*?)<!-- profile-parameters:end -->", re.S)
SPEC = load_spec("1.0")


def spec_check(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, cwd=cwd or ROOT, timeout=120)


def test_doc_documents_every_key_and_parameter() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert set(TOP_KEYS) == set(PROFILE_KEYS)
    for key in PROFILE_KEYS:
        assert f"| `{key}` |" in text, key
    for name in SPEC.parameters:
        assert f"| `{name}` |" in text, name
    m = TABLE.search(text)
    assert m and m.group(1) == parameter_table(SPEC), "regenerate docs/profile.md's table: python tests/test_profile.py"


def test_sample_profile_is_valid_as_printed(tmp_path: Path) -> None:
    r = spec_check("spec", "sample-profile")
    assert r.returncode == 0, r.stderr
    assert r.stdout == sample_profile(SPEC)
    sample = tmp_path / "profile.yaml"
    sample.write_text(r.stdout)
    values = resolve_parameters(SPEC, profile=sample)
    assert all(v.origin == "default" for v in values.values())  # everything commented: the defaults
    for key in PROFILE_KEYS:
        assert re.search(rf"^{key}:", r.stdout, re.M), key
    for name in SPEC.parameters:
        assert f"  # {name}: " in r.stdout, name
    run = spec_check("check", "--facts", "tests/fixtures/facts/dgx_h100.json", "--profile", str(sample))
    assert run.returncode == 0, run.stderr


def test_sample_profile_with_every_parameter_uncommented_loads(tmp_path: Path) -> None:
    text = re.sub(r"^  # ([a-z_]+): ", r"  \1: ", sample_profile(SPEC), flags=re.M)
    sample = tmp_path / "profile.yaml"
    sample.write_text(text)
    values = resolve_parameters(SPEC, profile=sample)
    assert {n for n, v in values.items() if v.origin.startswith("profile:")} == set(SPEC.parameters)


def test_doc_snippets_load(tmp_path: Path) -> None:
    for block in re.findall(r"^```yaml\n(.*?)^```$", DOC.read_text(encoding="utf-8"), re.M | re.S):
        p = tmp_path / "p.yaml"
        p.write_text(block)
        resolve_parameters(SPEC, profile=p)


def test_what_a_finding_says_to_write_into_the_profile_loads_and_works(tmp_path: Path) -> None:
    """MON-01's message and fixes say `parameters: {platform_metric_families: [...]}`: written
    into a profile exactly as shown, it loads (no "unknown key") and the rule passes."""
    job = "tests/corpus/olmo_yaml/allenai__OLMo__configs__official-0724__OLMo-1B.yaml"
    r = spec_check("lint", job, "--select", "MON-01", "--format", "json")
    assert r.returncode == 1
    import json

    findings = [f for f in json.loads(r.stdout)["findings"] if f["status"] == "error"]
    assert findings
    for f in findings:
        [said] = re.findall(r"declare it in the profile: (parameters: \{platform_metric_families: \[\w+\]\})",
                            f["message"])
        p = tmp_path / "p.yaml"
        p.write_text(said + "\n")
        again = spec_check("lint", job, "--select", f["rule"], "--profile", str(p), "--format", "json")
        assert again.returncode == 0, again.stderr
        assert {x["status"] for x in json.loads(again.stdout)["findings"] if x["rule"] == f["rule"]} == {"pass"}
    for rule in ("MON-01.gpu-utilization-not-emitted", "MON-01.collective-latency-not-emitted"):
        fix = spec_check("rules", "explain", rule).stdout
        [said] = re.findall(r"written as: (parameters: \{[^}]*\})", " ".join(fix.split()))
        p = tmp_path / "fix.yaml"
        p.write_text(said + "\n")
        resolve_parameters(SPEC, profile=p)


if __name__ == "__main__":  # regenerate the table
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(TABLE.sub(lambda m: m.group(0).replace(m.group(1), parameter_table(SPEC)), text))
    pytest.main([__file__, "-q"])
