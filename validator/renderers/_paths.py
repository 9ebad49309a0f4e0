"""Where a finding points, as CI tools want it: a repository-relative path and a line."""

from __future__ import annotations

import os
from pathlib import Path

from validator.report.model import Finding


def finding_path(f: Finding) -> tuple[str | None, int | None]:
    """(path relative to the working directory with forward slashes, line) or (None, None)."""
    if f.location is not None and f.location.file:
        file, line = f.location.file, f.location.line
    elif f.subject and ("/" in f.subject or "." in f.subject) and Path(f.subject).exists():
        file, line = f.subject, None
    else:
        return None, None
    try:
        rel = os.path.relpath(file)
        if not rel.startswith(".."):
            file = rel
    except ValueError:  # another drive (Windows)
        pass
    return Path(file).as_posix(), line if isinstance(line, int) and line >= 1 else None
