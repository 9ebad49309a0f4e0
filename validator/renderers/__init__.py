"""Output formats, picked by name (after check-jsonschema's REPORTER_BY_NAME).

Each entry is ``module:Class``, imported only when that format is asked for, so that a
run in JSON never imports rich and ``--help`` imports none of them.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from validator.renderers.base import Renderer

RENDERERS: dict[str, str] = {
    "terminal": "validator.renderers.terminal:TerminalRenderer",
    "json": "validator.renderers.json_:JsonRenderer",
}
# Formats whose module another part of the project provides; listed only if importable.
OPTIONAL_RENDERERS: dict[str, str] = {
    "sarif": "validator.renderers.sarif:SarifRenderer",
    "junit": "validator.renderers.junit:JUnitRenderer",
    "github": "validator.renderers.github:GitHubRenderer",
    "markdown": "validator.renderers.markdown:MarkdownRenderer",
    "html": "validator.renderers.html_:HtmlRenderer",
    "prometheus": "validator.renderers.prometheus:PrometheusRenderer",
}


def available() -> dict[str, str]:
    """Every format this installation can write."""
    out = dict(RENDERERS)
    for name, target in OPTIONAL_RENDERERS.items():
        module = target.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            out[name] = target
    return out


def get_renderer(name: str, **options: Any) -> Renderer:
    target = available()[name]
    module_name, cls_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    renderer: Renderer = cls(**options)
    return renderer
