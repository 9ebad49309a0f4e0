"""``open_atomic``: a result written in pieces (a fleet's is not held whole) appears only
complete; a failure part-way leaves the previous file, and no temporary file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.errors import SpecCheckError
from validator.io.atomic import open_atomic


def test_a_failure_part_way_leaves_the_previous_file(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    out.write_text("previous\n")
    with pytest.raises(RuntimeError), open_atomic(out) as fh:
        fh.write(b"half of a new result")
        raise RuntimeError("renderer failed")
    assert out.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
    with open_atomic(out) as fh:
        for i in range(1000):
            fh.write(b"%d\n" % i)
        assert out.read_text() == "previous\n"  # not there until the block ends
    assert out.read_text().splitlines()[-1] == "999"


def test_devices_are_written_through_and_directories_refused(tmp_path: Path) -> None:
    with open_atomic(Path("/dev/null")) as fh:
        fh.write(b"x" * 10)
    with pytest.raises(SpecCheckError, match="is a directory"), open_atomic(tmp_path) as fh:
        fh.write(b"x")
