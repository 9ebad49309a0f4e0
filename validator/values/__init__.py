"""Values with units and the numbers rule: unit conversion and the refusal of numbers
beyond any real value. Leaves: they import nothing of validator but its errors."""
