"""Resource guards for BFCL backend calls an RL policy could make but no benchmark entry does.

BFCL runs every call as asked. Some MathAPI calls can then stall a rollout worker for seconds to
hours in one C-level operation that no signal interrupts. Each is refused with an error result
before it runs; no BFCL ground truth comes near the limits, so scoring is unchanged:

* ``power`` with integers whose result has more than :data:`MAX_RESULT_DIGITS` digits (a longer
  integer could not even be printed: Python refuses to convert it to text);
* ``square_root`` and ``logarithm`` asking for more than :data:`MAX_PRECISION` digits
  (``logarithm`` at 10^6 digits runs for minutes);
* ``round_number`` to more than :data:`MAX_DECIMAL_PLACES` places either side of the point
  (``round(123, -10**7)`` builds a ten-million-digit power of ten).
"""

from __future__ import annotations

import math
from typing import Any

MAX_RESULT_DIGITS = 4300
"""Largest integer result (in decimal digits) ``power`` may build: Python's own limit for
printing an integer."""
MAX_PRECISION = 4300
"""Largest ``precision`` of ``square_root`` (decimal) and ``logarithm`` (mpmath): each takes
under 0.05 s here."""
MAX_DECIMAL_PLACES = 4300
"""Largest ``|decimal_places|`` of ``round_number``."""


class ResourceLimitError(ValueError):
    """A call whose cost is out of all proportion to any benchmark task."""


def refusal(name: str, arguments: dict[str, Any]) -> ResourceLimitError | None:
    """The reason to refuse ``name(**arguments)``, or ``None`` when it may run."""
    if name == "power":
        return _power_refusal(arguments.get("base"), arguments.get("exponent"))
    if name in ("square_root", "logarithm"):
        return _bound(name, "precision", arguments.get("precision"), MAX_PRECISION)
    if name == "round_number":
        return _bound(name, "decimal_places", arguments.get("decimal_places"), MAX_DECIMAL_PLACES)
    return None


def _bound(name: str, parameter: str, value: Any, limit: int) -> ResourceLimitError | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not abs(value) <= limit:
        return ResourceLimitError(f"{name}: {parameter}={value} is out of range; use at most {limit} in absolute value")
    return None


def _power_refusal(base: Any, exponent: Any) -> ResourceLimitError | None:
    if not (isinstance(base, int) and isinstance(exponent, int)) or abs(base) < 2 or exponent <= 0:
        return None
    digits = exponent * math.log10(abs(base))
    if digits > MAX_RESULT_DIGITS:
        return ResourceLimitError(f"result would have about {digits:.3g} digits; the limit is {MAX_RESULT_DIGITS}")
    return None
