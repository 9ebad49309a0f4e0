"""spec-check: the 2026 large-scale training specification, as code."""

__version__ = "0.1.0"
