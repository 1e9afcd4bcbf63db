"""Post-selection calibration: do the never-rolled picks realise the variance they were picked for?

EnvSched picks the nodes of highest predicted variance. A prediction that is a posterior mean
given what the scheduler knows stays unbiased on any selection made from that knowledge, so the
groups a scheduler picked should realise, on average, what it predicted for them. On the
simulated learners they do for revisits (learner A, tuning seeds 100-104: 0.189 realised against
0.181 predicted) and do not for never-rolled tasks (0.136 against 0.172): picking the best of
thousands of noisy cold-start predictions selects the ones that are too high (the winner's
curse), so never-rolled tasks win slots from revisits they should not.

This module keeps, per kind of pick (never rolled, revisit), the decayed sums of the predicted
and the realised group variance over the scheduler's own picks (half-life ``half_life`` steps),
and the *factor*

    (realised / predicted on never-rolled picks) / (realised / predicted on revisits),

clipped to ``[MINIMUM, 1]`` (selecting on noisy predictions only ever inflates them). It is 1
until both kinds hold ``WARM_UP`` of predicted variance (about ten groups each), and always 1 with
``half_life = 0`` (off). EnvSched multiplies the variance term of never-rolled nodes by it. Being
a ratio of ratios, a bias shared by every prediction (the policy moved since the pick) cancels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envsched_gym.curriculum.state import StateReader

NEW, REVISIT = 1, 0
PREDICTED, REALISED = 0, 1


class SelectionCalibration:
    """Decayed predicted and realised variance of never-rolled picks and revisits (see the module docstring).

    Args:
        half_life: Steps after which a group counts half; 0: off (the factor stays 1).
    """

    MINIMUM = 0.5
    WARM_UP = 2.0
    """Predicted variance (summed, decayed) each kind needs before the factor leaves 1."""
    STATE_KEYS = ("sums",)

    def __init__(self, half_life: float) -> None:
        if not half_life >= 0:
            raise ValueError(f"calibration_half_life must be at least 0 (steps; 0: off), got {half_life}")
        self.on = half_life > 0
        self.keep = 0.5 ** (1.0 / half_life) if self.on else 0.0
        self.sums = np.zeros((2, 2))
        """``sums[kind]``: decayed (predicted, realised) variance of the picks of that kind (``NEW`` or ``REVISIT``)."""

    def observe(self, new: bool, predicted: float, realised: float) -> None:
        """Add one group: the variance predicted when it was picked, and its rewards' (population) variance."""
        self.sums[NEW if new else REVISIT] += (predicted, realised)

    def advance(self) -> None:
        """One step passes: every earlier group counts ``0.5 ** (1 / half_life)`` as much."""
        self.sums *= self.keep

    def factor(self) -> float:
        """The factor on never-rolled nodes' variance term (1 before the warm-up)."""
        predicted, realised = self.sums[:, PREDICTED], self.sums[:, REALISED]
        if not self.on or predicted.min() < self.WARM_UP or realised[REVISIT] <= 0:
            return 1.0
        ratio = (realised[NEW] / predicted[NEW]) / (realised[REVISIT] / predicted[REVISIT])
        return float(np.clip(ratio, self.MINIMUM, 1.0))

    def state_dict(self) -> dict[str, Any]:
        """The decayed sums (JSON-able)."""
        return {"sums": self.sums.tolist()}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked sums of a saved state."""
        return {"sums": reader.array("sums", (2, 2), minimum=0.0)}

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the checked sums."""
        self.sums = values["sums"]
