"""Learning progress on revisits: does training on a task move its rewards?

A group whose rewards vary is GRPO signal, but some tasks keep varying however often they are
trained: their outcome does not depend on anything the policy learns (flaky tools, ambiguous
verifiers, tasks whose gold makes no call). A variance-seeking scheduler keeps returning to
them because their predicted variance never falls. This module measures, per node, the slope
of its group mean success against its visit number, and shrinks it by empirical Bayes towards
the pool's mean slope:

- per node with ``k >= 2`` visits: the least-squares slope ``b`` of group mean on visit index,
  with sampling variance ``m (1 - m) / (G S)`` (``m``: its mean success, ``S``: the spread of
  its visit indices);
- over those nodes: the prior mean slope ``b0`` (information-weighted) and the spread ``tau^2``
  of the true slopes (their variance less the mean sampling variance, at least ``(b0 / 2)^2``);
- the posterior slope ``(b / var + b0 / tau^2) / (1 / var + 1 / tau^2)``, and the node's
  *progress factor*: its posterior slope relative to ``b0``, clipped to ``[0, 2]``.

Nodes with fewer than 2 visits, and every node while the pool's mean slope is not positive,
get 1. EnvSched multiplies a node's variance term by ``factor ** progress_weight``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envsched_gym.curriculum.state import StateReader

VISITS, SUM_J, SUM_JJ, SUM_M, SUM_JM = range(5)


class LearningProgress:
    """Per-node visit statistics and the progress factor (see the module docstring).

    Args:
        n: Number of nodes.
    """

    STATE_KEYS = ("stats", "group_size")

    def __init__(self, n: int) -> None:
        self.stats = np.zeros((n, 5))
        self.group_size = 8.0
        self.prior_slope, self.prior_spread = 0.0, 0.0
        self._revisited = np.zeros(0, dtype=np.int64)

    def observe(self, node: int, size: int, mean: float) -> None:
        """Add one group (``mean``: its mean reward, clipped to [0, 1]) as the node's next visit."""
        j = self.stats[node, VISITS]
        self.stats[node] += (1.0, j, j * j, mean, j * mean)
        self.group_size = float(size)
        if j == 1.0:
            self._revisited = np.r_[self._revisited, node]

    def _slopes(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Least-squares slope and its sampling variance for ``nodes`` (each with at least 2 visits)."""
        k, sj, sjj, sm, sjm = self.stats[nodes].T
        spread = sjj - sj * sj / k
        slope = (sjm - sj * sm / k) / spread
        mean = np.clip(sm / k, 0.05, 0.95)
        return slope, mean * (1.0 - mean) / (self.group_size * spread)

    def refresh(self) -> None:
        """Re-estimate the pool's prior slope and spread from every revisited node (once per batch)."""
        if len(self._revisited) < 8:
            self.prior_slope, self.prior_spread = 0.0, 0.0
            return
        slope, noise = self._slopes(np.sort(self._revisited))  # sorted: the same sums after a state reload
        weight = 1.0 / noise
        self.prior_slope = float(weight @ slope / weight.sum())
        excess = float(np.mean((slope - self.prior_slope) ** 2) - np.mean(noise))
        self.prior_spread = max(excess, (self.prior_slope / 2.0) ** 2)

    def factor(self, nodes: np.ndarray) -> np.ndarray:
        """The progress factor of ``nodes`` (1 where there is no evidence)."""
        out = np.ones(len(nodes))
        if self.prior_slope <= 0:
            return out
        seen = self.stats[nodes, VISITS] >= 2
        if seen.any():
            slope, noise = self._slopes(nodes[seen])
            posterior = (slope / noise + self.prior_slope / self.prior_spread) / (1.0 / noise + 1.0 / self.prior_spread)
            out[seen] = np.clip(posterior / self.prior_slope, 0.0, 2.0)
        return out

    def state_dict(self) -> dict[str, Any]:
        """Per-node visit sums and the last group size (JSON-able)."""
        return {"stats": self.stats.tolist(), "group_size": self.group_size}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked values of a saved state."""
        stats = reader.array("stats", self.stats.shape, minimum=0.0)
        return {"stats": stats, "group_size": reader.number("group_size", minimum=1.0)}

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the checked values; the revisited nodes and priors follow from them."""
        self.stats, self.group_size = values["stats"], values["group_size"]
        self._revisited = np.flatnonzero(self.stats[:, VISITS] >= 2)
        self.refresh()
