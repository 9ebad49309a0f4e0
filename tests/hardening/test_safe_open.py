"""One safe way to open any input: FIFOs, devices and directories are refused with a
one-line exit 2 before open, by every verb and option that reads a file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.jobs.util import spec_check
from validator.io.safeio import CAPS, InputError, read_bytes


def _one_line(r, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout[-300:], r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spec-check: error: "), r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def _argv(verb: str, bad: str, good: Path, key: Path) -> list[str]:
    return {
        "report": ["report", bad],
        "diff-old": ["diff", bad, str(good)],
        "diff-new": ["diff", str(good), bad],
        "sign-result": ["sign", "--key", f"{key}.key", bad],
        "sign-key": ["sign", "--key", bad, str(good)],
        "verify-result": ["verify", "--key", f"{key}.pub", bad],
        "verify-key": ["verify", "--key", bad, str(good)],
        "check-facts": ["check", "--facts", bad],
        "cluster-facts": ["cluster", "--facts", bad],
        "cluster-hosts": ["cluster", "--hosts", f"@{bad}"],
        "lint": ["lint", bad],
        "profile": ["lint", "--profile", bad, str(good)],
        "waivers": ["report", "--waivers", bad, str(good)],
        "recovery-log": ["lint", "--recovery-log", bad, str(good)],
    }[verb]


VERBS = ["report", "diff-old", "diff-new", "sign-result", "sign-key", "verify-result", "verify-key",
         "check-facts", "cluster-facts", "cluster-hosts", "lint", "profile", "waivers"]


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_fifo_and_device_refused_before_open(tmp_path: Path, lint_result: Path, keypair: Path,
                                             verb: str, kind: str) -> None:
    if kind == "fifo":
        bad = tmp_path / "pipe"
        os.mkfifo(bad)  # nobody writes: an open() without the check would hang until the timeout
    else:
        bad = Path("/dev/zero")  # never ends: a read without a cap would exhaust memory
    good = lint_result
    if verb in ("lint", "profile", "recovery-log"):
        good = Path(__file__).resolve().parents[1] / "acceptance" / "jobs" / "negative" / "ds_batch_mismatch.json"
    r = spec_check(*_argv(verb, str(bad), good, keypair), timeout=30)
    _one_line(r, str(bad), "not a regular file")


def test_verify_facts_fifo_refused(tmp_path: Path, lint_result: Path, keypair: Path) -> None:
    signed = tmp_path / "signed.json"
    assert spec_check("sign", "--key", f"{keypair}.key", "-o", str(signed), str(lint_result)).returncode == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = spec_check("verify", "--key", f"{keypair}.pub", "--facts", str(fifo), str(signed), timeout=30)
    _one_line(r, str(fifo), "not a regular file")


def test_read_bytes_caps_and_kinds(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 1025)
    assert read_bytes(f, cap=1025, what="thing") == b"x" * 1025
    with pytest.raises(InputError, match="larger than 1 KiB; not a thing"):
        read_bytes(f, cap=1024, what="thing")
    with pytest.raises(InputError, match="is a directory"):
        read_bytes(tmp_path, cap=1024, what="thing")
    with pytest.raises(InputError, match="cannot read: No such file"):
        read_bytes(tmp_path / "nope", cap=1024, what="thing")
    link = tmp_path / "link"
    link.symlink_to("/dev/null")  # a link to a device is a device
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes(link, cap=1024, what="thing")


def test_every_kind_has_a_cap_below_a_gigabyte() -> None:
    assert CAPS and all(0 < cap < 2**30 for cap in CAPS.values())
