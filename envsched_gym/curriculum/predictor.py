"""The variance predictor: decayed rollout statistics propagated over the dual graph.

Per node it keeps decayed sums of ``[rollouts, reward, groups, unbiased within-group
variance]``. A node's success rate ``p`` gets a Beta posterior:

- the **prior** is a mixture of evidence sources, each with a weight in pseudo-groups: the
  row-normalised average of the within-environment neighbours (at most ``within_weight``), of the
  cross-environment neighbours (at most ``cross_weight``), the node's environment (at most
  ``env_weight``) and the pool (``prior_weight``). A source that has seen ``g`` groups counts
  ``cap * g / (g + 1)``. The mixture's mean ``mu`` and its mean within-group variance ``nu``
  (an unbiased estimate of ``E[p (1 - p)]``) are moment-matched to a Beta whose concentration
  ``kappa = nu / (mu (1 - mu) - nu)`` is capped by the evidence behind it: neighbours that
  all succeed or all fail half the time give a *low* variance, not ``mu (1 - mu)``;
- the **likelihood** is the node's own decayed successes and failures.

The prediction is the posterior's expected within-group variance
``E[p (1 - p)] (G - 1) / G`` (``G``: the mean group size seen), its mean, and its standard
deviation as the uncertainty. A node with many rollouts keeps mostly its own evidence; a
never-seen node borrows from its neighbours and its environment.

A node's own earlier evidence is also multiplied by ``revisit_forget`` whenever a new group of
it arrives (the policy moves fastest on the tasks it trains on). Decay (``half_life`` scheduler
steps) is lazy: sums are stored multiplied by ``growth ** step``,
so decaying the whole pool costs nothing and an update touches only the updated node, its
in-neighbours' aggregates (one sparse row each) and its environment. Predictions are cached;
:meth:`refresh` recomputes the nodes marked dirty by updates (the updated nodes and their
in-neighbours) plus a rotating slice of the pool, which bounds how stale the decay,
environment and pool part of any cached prediction can be; the scheduler also recomputes its
candidates before choosing among them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.preprocessing import normalize

from envsched_gym.curriculum.graph import DualGraph
from envsched_gym.curriculum.regression import DeclarationModel
from envsched_gym.curriculum.state import StateReader

ROLLOUTS, REWARD, GROUPS, VARIANCE = range(4)


@dataclass
class PredictorConfig:
    """Weights of the evidence sources (in pseudo-groups of the mean group size) and the decay.

    Attributes:
        within_weight: Most evidence the within-environment neighbours can contribute.
        cross_weight: Most evidence the cross-environment neighbours can contribute.
        env_weight: Most evidence the node's environment as a whole can contribute.
        prior_weight: Evidence of the pool-wide prior (``prior_variance`` before any rollout).
        prior_variance: ``E[p (1 - p)]`` assumed before anything is observed (0.25: all tasks
            at p = 0.5, the optimistic start that makes every task worth a first look).
        half_life: Scheduler steps after which a group's evidence counts half.
        revisit_forget: Factor on a node's own earlier evidence when a new group of it arrives:
            training on a task moves its success rate fastest, so its older groups go stale first.
        refresh_period: Every cached prediction is recomputed at least once per this many steps
            (for pools larger than ``refresh_period * refresh_budget``: once per
            ``n / refresh_budget`` steps).
        refresh_budget: Most nodes of the rotating slice recomputed per step.
        model_weight: Most evidence the declaration model (:mod:`envsched_gym.curriculum.regression`)
            can contribute; it counts ``model_weight * g / (g + 16)`` after ``g`` decayed groups
            (0: graph propagation only).
        model_penalty: Ridge penalty of the declaration model.
        model_half_life: Steps after which a group weighs half in the declaration model (longer
            than ``half_life``: which tools and environments are hard changes more slowly than
            any one task's success rate).
        model_exposure: Scale of the declaration model's training-exposure columns (0: none; see
            :mod:`envsched_gym.curriculum.regression`).
    """

    within_weight: float = 1.0
    cross_weight: float = 0.5
    env_weight: float = 0.5
    prior_weight: float = 0.25
    prior_variance: float = 0.25
    half_life: float = 10.0
    revisit_forget: float = 0.5
    refresh_period: int = 20
    refresh_budget: int = 8192
    model_weight: float = 1.0
    model_penalty: float = 1.0
    model_half_life: float = 30.0
    model_exposure: float = 1.0


class VariancePredictor:
    """Predicted within-group reward variance, mean and uncertainty for every node."""

    def __init__(self, graph: DualGraph, env_of: np.ndarray, model: DeclarationModel, config: PredictorConfig | None = None) -> None:
        self.config = config or PredictorConfig()
        self.env_of = env_of
        self.model = model
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
        self.dirty: list[np.ndarray] = []
        self.pending: list[tuple[int, list[float]]] = []
        self._mark = np.zeros(n, dtype=bool)
        self.env_mass = np.zeros(len(self.env_stats))
        self.unit_variance = np.zeros(len(model.units))
        """Per unit, the predicted variance summed over the nodes having it (row-weighted), kept in step with the cache."""
        self.cursor = 0
        self.refresh_all()

    # ----------------------------------------------------------------- updates
    def observe(self, node: int, size: int, reward_sum: float, unbiased_variance: float) -> None:
        """Add one finished group of ``node`` at the current step (rewards clipped to [0, 1] in the sum).

        The node's own row changes at once; environment, pool and neighbour aggregates are
        applied in bulk by :meth:`flush` (called before any prediction is read).
        """
        scale = self.growth ** (self.step - self.base_step)
        keep = 1.0 - self.config.revisit_forget
        old = self.stats[node].tolist()
        fresh = (size * scale, reward_sum * scale, float(size > 1) * scale, unbiased_variance * scale)
        delta = [f - keep * o for f, o in zip(fresh, old, strict=True)]
        self.stats[node] += delta
        self.last_seen[node] = self.step
        self.pending.append((node, delta))
        signal = min(unbiased_variance * (size - 1) / size / 0.25, 1.0) if size > 1 else 0.0
        self.model.observe(node, size, reward_sum, self.step, signal)

    def flush(self) -> None:
        """Apply pending updates to environment, pool and in-neighbour aggregates (vectorised)."""
        if not self.pending:
            return
        nodes = np.fromiter((p[0] for p in self.pending), dtype=np.int64, count=len(self.pending))
        deltas = np.array([p[1] for p in self.pending])
        self.pending.clear()
        np.add.at(self.env_stats, self.env_of[nodes], deltas)
        self.pool += deltas.sum(axis=0)
        self.dirty.append(nodes)
        for incoming, agg in ((self.in_within, self.agg_within), (self.in_cross, self.agg_cross)):
            starts = incoming.indptr[nodes]
            counts = incoming.indptr[nodes + 1] - starts
            offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            rows = incoming.indices[offsets]
            np.add.at(agg, rows, incoming.data[offsets, None] * np.repeat(deltas, counts, axis=0))
            self.dirty.append(rows)

    def advance(self, steps: int = 1) -> None:
        """Move the clock; evidence decays by ``0.5 ** (steps / half_life)``."""
        self.step += steps
        if self.growth ** (self.step - self.base_step) > 1e100:
            self.flush()
            shrink = self.growth ** (self.step - self.base_step)
            for array in (self.stats, self.agg_within, self.agg_cross, self.env_stats, self.pool):
                array /= shrink
            self.base_step = self.step

    # -------------------------------------------------------------- prediction
    def refresh(self) -> np.ndarray:
        """Recompute the cached predictions of dirty nodes and of the next rotating slice;
        returns the recomputed nodes."""
        self.flush()
        chunk = min(-(-self.n // max(1, self.config.refresh_period)), self.config.refresh_budget)
        rotating = (self.cursor + np.arange(min(chunk, self.n))) % max(self.n, 1)
        self.cursor = int((self.cursor + chunk) % max(self.n, 1))
        self._mark[rotating] = True
        for part in self.dirty:
            self._mark[part] = True
        nodes = np.flatnonzero(self._mark)
        self._mark[nodes] = False
        self.dirty.clear()
        if nodes.size:
            self.store(nodes, *self.compute(nodes))
        return nodes

    def refresh_all(self) -> None:
        """Recompute every cached prediction."""
        self.flush()
        self.dirty.clear()
        self.variance, self.mean, self.uncertainty = self.compute(np.arange(self.n))
        self.env_mass = np.bincount(self.env_of, weights=self.variance, minlength=len(self.env_mass))
        self.unit_variance = self.model.units.matrix.T @ self.variance

    def store(self, nodes: np.ndarray, variance: np.ndarray, mean: np.ndarray, uncertainty: np.ndarray) -> None:
        """Write fresh predictions of ``nodes`` (distinct) into the cache, keeping ``env_mass`` and ``unit_variance`` in step."""
        change = variance - self.variance[nodes]
        self.env_mass += np.bincount(self.env_of[nodes], weights=change, minlength=len(self.env_mass))
        rows = self.model.units.matrix[nodes]
        np.add.at(self.unit_variance, rows.indices, rows.data * np.repeat(change, np.diff(rows.indptr)))
        self.variance[nodes], self.mean[nodes], self.uncertainty[nodes] = variance, mean, uncertainty

    def compute(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fresh (variance, mean, uncertainty) of ``nodes`` from the current statistics."""
        self.flush()
        if self.model.stale:
            self.model.fit(self.step)
        cfg = self.config
        decay = self.growth ** -(self.step - self.base_step)
        group = self.group_size()
        prior_nu, prior_mu = self.pool_prior()
        weight_sum = np.full(len(nodes), cfg.prior_weight)
        mu_sum, nu_sum = weight_sum * prior_mu, weight_sum * prior_nu
        sources = ((self.agg_within[nodes], cfg.within_weight), (self.agg_cross[nodes], cfg.cross_weight),
                   (self.env_stats[self.env_of[nodes]], cfg.env_weight))  # fmt: skip
        for agg, cap in sources:
            groups = agg[:, GROUPS] * decay
            weight = cap * groups / (groups + 1.0)
            mu_sum += weight * agg[:, REWARD] / np.maximum(agg[:, ROLLOUTS], 1e-12)
            nu_sum += weight * agg[:, VARIANCE] / np.maximum(agg[:, GROUPS], 1e-12)
            weight_sum += weight
        if cfg.model_weight > 0 and self.model.evidence > 0:
            model_mu, model_nu = self.model.predict(nodes)
            weight = cfg.model_weight * self.model.evidence / (self.model.evidence + 16.0)
            mu_sum, nu_sum, weight_sum = mu_sum + weight * model_mu, nu_sum + weight * model_nu, weight_sum + weight
        mu = mu_sum / weight_sum
        spread = mu * (1.0 - mu)
        nu = np.minimum(nu_sum / weight_sum, spread)
        kappa = np.minimum(nu / np.maximum(spread - nu, 1e-9), weight_sum * group)
        own = self.stats[nodes] * decay
        a = own[:, REWARD] + mu * kappa + 1e-9
        b = own[:, ROLLOUTS] - own[:, REWARD] + (1.0 - mu) * kappa + 1e-9
        total = a + b
        mean = a / total
        expected = mean * (1.0 - mean) * total / (total + 1.0)
        return expected * (group - 1.0) / group, mean, np.sqrt(mean * (1.0 - mean) / (total + 1.0))

    def pool_prior(self) -> tuple[float, float]:
        """Pool-wide (E[p (1 - p)], mean), shrunk towards the configured prior by one group."""
        groups, rollouts = self.pool[GROUPS], self.pool[ROLLOUTS]
        if groups <= 0 or rollouts <= 0:
            return self.config.prior_variance, 0.5
        weight = groups / (groups + 1.0)
        nu = weight * self.pool[VARIANCE] / groups + (1 - weight) * self.config.prior_variance
        return float(nu), float(self.pool[REWARD] / rollouts)

    def group_size(self) -> float:
        """Mean rollouts per group seen so far (8 before any)."""
        groups = self.pool[GROUPS]
        return float(self.pool[ROLLOUTS] / groups) if groups > 0 else 8.0

    def own_groups(self) -> np.ndarray:
        """Decayed group count of every node's own evidence."""
        return self.stats[:, GROUPS] * self.growth ** -(self.step - self.base_step)

    # ------------------------------------------------------------------- state
    ARRAYS = ("stats", "agg_within", "agg_cross", "env_stats", "pool", "last_seen", "variance", "mean", "uncertainty", "env_mass", "unit_variance")
    STATE_KEYS = (*ARRAYS, "base_step", "step", "cursor", "dirty", "model")

    def state_dict(self) -> dict[str, Any]:
        """Statistics, aggregates, cached predictions and clock, as JSON-able lists."""
        self.flush()
        state: dict[str, Any] = {name: getattr(self, name).tolist() for name in self.ARRAYS}
        dirty = np.unique(np.concatenate(self.dirty)).tolist() if self.dirty else []
        state.update(base_step=self.base_step, step=self.step, cursor=self.cursor, dirty=dirty, model=self.model.state_dict())
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` exactly (the next batch equals the uninterrupted run's).

        Every key and value is checked first; a damaged state raises a ``ValueError`` naming the key.
        """
        sizes = f"{self.n} nodes in {len(self.env_stats)} environments"
        self.apply_state(self.read_state(StateReader(state, "the variance predictor's state", self.STATE_KEYS, sizes)))

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked attribute values of a saved state: every array of its exact shape, finite."""
        values: dict[str, Any] = {}
        for name in self.ARRAYS:
            current = getattr(self, name)
            integer = current.dtype.kind == "i"
            values[name] = reader.array(name, current.shape, integer=integer, minimum=-1 if integer else None)
        values["step"] = reader.integer("step", minimum=0)
        values["base_step"] = reader.integer("base_step", minimum=0)
        if values["base_step"] > values["step"]:
            reader.fail("base_step", f"is {values['base_step']}, later than the saved step {values['step']}")
        values["cursor"] = reader.integer("cursor", minimum=0)
        if values["cursor"] >= max(self.n, 1):
            reader.fail("cursor", f"is {values['cursor']}, outside the {self.n} nodes")
        dirty = reader.array("dirty", (-1,), integer=True, minimum=0)
        if dirty.size and dirty.max() >= self.n:
            reader.fail("dirty", f"holds node {dirty.max()}, outside the {self.n} nodes")
        values["dirty"] = [dirty]
        values["model"] = self.model.read_state(reader.nested("model", DeclarationModel.STATE_KEYS))
        return values

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the values :meth:`read_state` checked (pending updates are dropped: a saved state has none)."""
        values = dict(values)
        self.model.apply_state(values.pop("model"))
        for name, value in values.items():
            setattr(self, name, value)
        self.pending = []
