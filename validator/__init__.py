"""spec-check: the 2026 large-scale training specification, as code."""

__version__ = "0.4.0.dev0"

# The name on the package index (`pip install training-spec-check`); the command is `spec-check`.
DISTRIBUTION = "training-spec-check"
