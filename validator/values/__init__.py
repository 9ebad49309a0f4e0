"""Values with units and the numbers rule: unit conversion and the refusal of numbers
beyond any real value. Leaves: they import nothing of validator but its errors.
``JSONValue``: any JSON value, the type every stage reads documents with (defined here,
below them all)."""

from typing import Any

JSONValue = Any
"""Any JSON value (an observed fact's raw value, a rule's literal): truly open."""
