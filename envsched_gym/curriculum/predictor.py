"""The variance predictor: decayed rollout statistics propagated over the dual graph.

Per node it keeps decayed sums of ``[rollouts, reward, groups, within-group variance]``. A
node's prediction blends, as pseudo-counts,

- its own groups (weight = its decayed group count),
- the row-normalised average of its within-environment neighbours (at most ``within_weight``),
- the same over its cross-environment neighbours (at most ``cross_weight``),
- its environment's pooled statistics (at most ``env_weight``) and the pool's (``prior_weight``),

so a node with many observations keeps mostly its own evidence and a never-seen node borrows
from its neighbours. Neighbour evidence counts ``w * g / (g + 1)``: one observed group is worth
half of the cap.

Decay (``half_life`` scheduler steps) is lazy: sums are stored multiplied by ``growth ** step``,
so decaying the whole pool costs nothing and an update touches only the updated node, its
in-neighbours' aggregates (one sparse row each) and its environment. Predictions are cached;
:meth:`refresh` recomputes the nodes marked dirty by updates plus a rotating slice of the pool
(``1 / refresh_period`` of it), which bounds how stale the pooled-prior part of any cached
prediction can be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.preprocessing import normalize

from envsched_gym.curriculum.graph import DualGraph

ROLLOUTS, REWARD, GROUPS, VARIANCE = range(4)


@dataclass
class PredictorConfig:
    """Weights of the evidence sources (in pseudo-groups) and the decay.

    Attributes:
        within_weight: Most evidence the within-environment neighbours can contribute.
        cross_weight: Most evidence the cross-environment neighbours can contribute.
        env_weight: Most evidence the node's environment as a whole can contribute.
        prior_weight: Evidence of the pool-wide prior (``prior_variance`` before any rollout).
        prior_variance: Predicted within-group variance before anything is observed.
        half_life: Scheduler steps after which a group's evidence counts half.
        refresh_period: Every cached prediction is recomputed at least once per this many steps.
    """

    within_weight: float = 3.0
    cross_weight: float = 1.5
    env_weight: float = 1.0
    prior_weight: float = 0.5
    prior_variance: float = 0.25
    half_life: float = 20.0
    refresh_period: int = 20


class VariancePredictor:
    """Predicted within-group reward variance, mean and uncertainty for every node."""

    def __init__(self, graph: DualGraph, env_of: np.ndarray, config: PredictorConfig | None = None) -> None:
        self.config = config or PredictorConfig()
        self.env_of = env_of
        n = len(env_of)
        self.n = n
        self.w_within = normalize(graph.within, norm="l1").tocsr()
        self.w_cross = normalize(graph.cross, norm="l1").tocsr()
        self.in_within = self.w_within.T.tocsr()
        self.in_cross = self.w_cross.T.tocsr()
        self.growth = 2.0 ** (1.0 / self.config.half_life)
        self.stats = np.zeros((n, 4))
        self.agg_within = np.zeros((n, 4))
        self.agg_cross = np.zeros((n, 4))
        self.env_stats = np.zeros((int(env_of.max()) + 1 if n else 0, 4))
        self.pool = np.zeros(4)
        self.base_step = 0
        self.step = 0
        self.last_seen = np.full(n, -1, dtype=np.int64)
        self.variance = np.full(n, self.config.prior_variance)
        self.mean = np.full(n, 0.5)
        self.uncertainty = np.ones(n)
        self.dirty: set[int] = set()
        self.cursor = 0

    # ----------------------------------------------------------------- updates
    def observe(self, node: int, rewards: np.ndarray) -> None:
        """Add one finished group of ``node`` at the current step."""
        scale = self.growth ** (self.step - self.base_step)
        delta = np.array([rewards.size, rewards.sum(), 1.0, rewards.var()]) * scale
        self.stats[node] += delta
        self.env_stats[self.env_of[node]] += delta
        self.pool += delta
        self.last_seen[node] = self.step
        self.dirty.add(node)
        for incoming, agg in ((self.in_within, self.agg_within), (self.in_cross, self.agg_cross)):
            lo, hi = incoming.indptr[node], incoming.indptr[node + 1]
            rows = incoming.indices[lo:hi]
            agg[rows] += incoming.data[lo:hi, None] * delta
            self.dirty.update(rows.tolist())

    def advance(self, steps: int = 1) -> None:
        """Move the clock; evidence decays by ``0.5 ** (steps / half_life)``."""
        self.step += steps
        if self.growth ** (self.step - self.base_step) > 1e100:
            shrink = self.growth ** (self.step - self.base_step)
            for array in (self.stats, self.agg_within, self.agg_cross, self.env_stats, self.pool):
                array /= shrink
            self.base_step = self.step

    # -------------------------------------------------------------- prediction
    def refresh(self) -> None:
        """Recompute the cached predictions of dirty nodes and of the next rotating slice."""
        chunk = -(-self.n // max(1, self.config.refresh_period))
        rotating = (self.cursor + np.arange(min(chunk, self.n))) % max(self.n, 1)
        self.cursor = int((self.cursor + chunk) % max(self.n, 1))
        nodes = np.union1d(np.fromiter(self.dirty, dtype=np.int64, count=len(self.dirty)), rotating)
        self.dirty.clear()
        if nodes.size:
            self.variance[nodes], self.mean[nodes], self.uncertainty[nodes] = self.compute(nodes)

    def refresh_all(self) -> None:
        """Recompute every cached prediction."""
        self.dirty.clear()
        self.variance, self.mean, self.uncertainty = self.compute(np.arange(self.n))

    def compute(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fresh (variance, mean, uncertainty) of ``nodes`` from the current statistics."""
        cfg = self.config
        decay = self.growth ** -(self.step - self.base_step)
        own = self.stats[nodes] * decay
        sources = [
            (self.agg_within[nodes] * decay, cfg.within_weight),
            (self.agg_cross[nodes] * decay, cfg.cross_weight),
            (self.env_stats[self.env_of[nodes]] * decay, cfg.env_weight),
        ]
        var_num, var_den = own[:, VARIANCE].copy(), own[:, GROUPS].copy()
        mean_num, mean_den = own[:, REWARD] / np.maximum(own[:, ROLLOUTS], 1e-12) * own[:, GROUPS], own[:, GROUPS].copy()
        for agg, cap in sources:
            groups = agg[:, GROUPS]
            weight = cap * groups / (groups + 1.0)
            safe = np.maximum(groups, 1e-12)
            var_num += weight * agg[:, VARIANCE] / safe
            mean_num += weight * agg[:, REWARD] / np.maximum(agg[:, ROLLOUTS], 1e-12)
            var_den += weight
            mean_den += weight
        prior_var, prior_mean = self.pool_prior()
        var_num += cfg.prior_weight * prior_var
        mean_num += cfg.prior_weight * prior_mean
        var_den += cfg.prior_weight
        mean_den += cfg.prior_weight
        uncertainty = np.sqrt(cfg.prior_weight / var_den)
        return var_num / var_den, mean_num / mean_den, uncertainty

    def pool_prior(self) -> tuple[float, float]:
        """Pool-wide (variance, mean), or the configured prior before any rollout."""
        groups, rollouts = self.pool[GROUPS], self.pool[ROLLOUTS]
        if groups <= 0:
            return self.config.prior_variance, 0.5
        weight = groups / (groups + 1.0)
        var = weight * self.pool[VARIANCE] / groups + (1 - weight) * self.config.prior_variance
        return float(var), float(self.pool[REWARD] / rollouts)

    def own_groups(self) -> np.ndarray:
        """Decayed group count of every node's own evidence."""
        return self.stats[:, GROUPS] * self.growth ** -(self.step - self.base_step)

    # ------------------------------------------------------------------- state
    ARRAYS = ("stats", "agg_within", "agg_cross", "env_stats", "pool", "last_seen", "variance", "mean", "uncertainty")

    def state_dict(self) -> dict[str, Any]:
        """Statistics, aggregates, cached predictions and clock, as JSON-able lists."""
        state: dict[str, Any] = {name: getattr(self, name).tolist() for name in self.ARRAYS}
        state.update(base_step=self.base_step, step=self.step, cursor=self.cursor, dirty=sorted(self.dirty))
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` exactly (the next batch equals the uninterrupted run's)."""
        for name in self.ARRAYS:
            current = getattr(self, name)
            setattr(self, name, np.asarray(state[name], dtype=current.dtype).reshape(current.shape))
        self.base_step, self.step, self.cursor = state["base_step"], state["step"], state["cursor"]
        self.dirty = set(state["dirty"])
