"""Resource guards for BFCL backend calls an RL policy could make but no benchmark entry does.

BFCL runs every call as asked. Two MathAPI calls can then stall a rollout worker for hours in a
single C-level operation that no signal interrupts: ``power`` with a huge integer exponent and
``square_root`` with a huge decimal precision. Such calls are refused with an error result
instead; no BFCL ground truth comes near the limits, so scoring is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

MAX_RESULT_DIGITS = 100_000
"""Largest integer result (in decimal digits) ``power`` may build, and largest ``precision``."""


class ResourceLimitError(ValueError):
    """A call whose cost is out of all proportion to any benchmark task."""


def refusal(name: str, arguments: dict[str, Any]) -> ResourceLimitError | None:
    """The reason to refuse ``name(**arguments)``, or ``None`` when it may run."""
    if name == "power":
        return _power_refusal(arguments.get("base"), arguments.get("exponent"))
    if name == "square_root":
        precision = arguments.get("precision")
        if isinstance(precision, int) and precision > MAX_RESULT_DIGITS:
            return ResourceLimitError(f"precision {precision} exceeds the limit of {MAX_RESULT_DIGITS} digits")
    return None


def _power_refusal(base: Any, exponent: Any) -> ResourceLimitError | None:
    if not (isinstance(base, int) and isinstance(exponent, int)) or abs(base) < 2 or exponent <= 0:
        return None
    digits = exponent * math.log10(abs(base))
    if digits > MAX_RESULT_DIGITS:
        return ResourceLimitError(f"result would have about {digits:.3g} digits; the limit is {MAX_RESULT_DIGITS}")
    return None
