"""Values with units and the numbers rule: unit conversion and the refusal of numbers
beyond any real value; and ``records.record``, how a value class is declared. Leaves: they
import nothing of validator but its errors."""
