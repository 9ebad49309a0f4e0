"""The options of each run, as frozen dataclasses: what the CLI parses into and what an
outside Python caller builds by hand.

Why: the options of a run were keyword lists (``cluster/live.py`` passed the same twelve
twice) and a ``dict`` of extras. Here each verb's options are one typed value, and the
options every report shares (spec, parameters, rule pack, selection, waivers, baseline,
``--fail-on``) are one ``ReportOptions`` held by each. Rendering (format, output file,
``--show``) is not here: it is the caller's business (``validator/cli`` renders).

Nothing heavy is imported here: this module is on the ``check``/``lint`` start-up path.
It declares ``CheckOptions``; ``ReportOptions`` (and ``OptionsError``) are declared in
``report_options.py``, the options of the verbs other than ``check`` (``health``, ``lint``,
``cluster``) in ``verb_options.py``, imported when first asked for. Every name imports from
here as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from validator.api.report_options import DEFAULT_SPEC_VERSION as DEFAULT_SPEC_VERSION
from validator.api.report_options import DEFAULT_TOOLS as DEFAULT_TOOLS
from validator.api.report_options import KNOWN_TOOLS as KNOWN_TOOLS
from validator.api.report_options import OptionsError as OptionsError
from validator.api.report_options import ReportOptions
from validator.io.scrape_defaults import DEFAULT_DEADLINE_S, SCRAPE_INTERVAL_S

if TYPE_CHECKING:
    # re-exported (mypy sees the classes; at run time __getattr__ below loads them)
    from validator.api.verb_options import ClusterOptions as ClusterOptions
    from validator.api.verb_options import HealthOptions as HealthOptions
    from validator.api.verb_options import LintOptions as LintOptions
    from validator.api.verb_options import ReplayOptions as ReplayOptions

@dataclass(frozen=True)
class CheckOptions:
    """``check``: recorded node facts (``facts``), or this node probed (the rest)."""

    report: ReportOptions = field(default_factory=ReportOptions)
    facts: tuple[Path, ...] = ()
    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    rootfs: Path = Path("/")
    nvml: bool | None = None  # query the GPU driver; None: only when sysfs is /sys
    kernel_log: Path | None = None
    dcgm_diag: int | None = None
    since: Path | None = None
    scrape: tuple[str, ...] = ()
    scrape_interval: float = SCRAPE_INTERVAL_S
    scrape_timeout: float = DEFAULT_DEADLINE_S


# the other verbs' options live in verb_options.py: ``check`` builds only the two above.
# They are importable from here as before (``from validator.api.options import LintOptions``).
_ELSEWHERE = ("HealthOptions", "LintOptions", "ClusterOptions", "ReplayOptions")


def __getattr__(name: str) -> Any:
    if name not in _ELSEWHERE:
        raise AttributeError(f"module 'validator.api.options' has no attribute {name!r}")
    from validator.api import verb_options

    return getattr(verb_options, name)
