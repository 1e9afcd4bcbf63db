"""Reference rows of the scheduler simulator: what would be reached with knowledge no scheduler has.

None of these is a scheduler; each bounds one part of EnvSched's gap to what is possible.

- ``oracle`` (:class:`OracleScheduler`): the ``B`` train tasks of highest true ``p (1 - p)`` at
  every step, with no mix, quotas or transfer term: the best a pure variance-seeker can do.
- ``gain`` (:class:`GainOracleScheduler`): at every step, each family's share of the batch
  (the target mix, as EnvSched's within its band) filled with the family's train tasks whose
  group is expected to raise the held-out score the most, to first order, knowing every skill,
  difficulty and dead end and the held-out tasks themselves (the learner's ``expected_gain``).
  Greedy one step at a time, so a reference, not a proven maximum; where it gains little over
  random, a scheduler that learns only from rewards cannot be expected to gain more.
  ``gain-free``: the same without the family mix. ``gain-decl``: ``gain`` that knows a
  never-rolled task only as its declarations do (every latent skill, the learning rule and the
  held-out tasks, but not the task's hidden difficulty nor, on learner B, whether it is one of
  the undeclared dead ends: ``expected_gain(declared=True)``); a task it has rolled it knows
  exactly, more than one group reveals. The ceiling of a scheduler that sees no task's hidden
  draws before its rollouts.
- ``direction`` (:class:`DirectedEnvSched`): EnvSched's own predicted variance times its
  progress factor times the learner's declared :meth:`direction` of each task (how much a unit
  of its group's signal moves the held-out score: every skill, the learning rule and the held-out
  tasks known, on learner B the undeclared dead ends not), the top of each family's target count.
  EnvSched's predictions with the one thing ``gain-decl`` adds that a scheduler cannot see.
- ``truth-all``: EnvSched itself, every predicted variance replaced by the learner's true
  ``p (1 - p)`` (:class:`ToldPredictor`): its selection rule (mix, quotas, transfer and progress
  terms) with perfect predictions.
- ``truth-new``: the same for never-rolled tasks only, EnvSched's own predictions for the rest:
  what perfect cold-start predictions are worth.
- ``decl-new``: never-rolled tasks get the simulator's declaration ceiling instead (every latent
  skill known, the hidden per-task difficulty not; ``Learner.expected_variance``): what the best
  possible declaration model is worth. The gap between ``truth-new`` and ``decl-new`` is the
  value of the per-task difficulty that only a task's own rollouts reveal.
- ``dead``: EnvSched's own predictions, except that the learner's dead ends (learner B's tasks
  that vary but teach nothing; learner A has none) are predicted to give no signal (variance
  and uncertainty 0): what recognising them at once, before any revisit, is worth.
- ``truth-dead``: ``truth-all`` and ``dead`` together.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from envsched_gym.curriculum import EnvSchedScheduler
from envsched_gym.curriculum.mixture import Mixture
from envsched_gym.curriculum.predictor import VariancePredictor
from envsched_gym.suite import Suite

GAIN = ("gain", "gain-free", "gain-decl")
"""The held-out-gain oracle rows: with and without the family mix, and blind to never-rolled tasks' hidden draws (module docstring)."""
DIRECTED = "direction"
"""The row of EnvSched's predictions with the learner's direction (:class:`DirectedEnvSched`)."""
TOLD = ("truth-all", "truth-new", "decl-new", "dead", "truth-dead")
"""The told-EnvSched reference rows, in table order (see the module docstring)."""
_TELLS = {"truth-all": "all", "truth-new": "new", "decl-new": "new", "dead": "none", "truth-dead": "all"}
"""Which tasks' variance each told row replaces: every task's, the never-rolled ones', none."""


class SimulatedLearner(Protocol):
    """What the reference rows read from a simulated learner."""

    def success(self, nodes: np.ndarray | None = None) -> np.ndarray: ...

    def expected_variance(self, nodes: np.ndarray) -> np.ndarray: ...

    @property
    def dead(self) -> np.ndarray: ...

    def direction(self, nodes: np.ndarray, held: np.ndarray, declared: bool = False) -> np.ndarray: ...

    def expected_gain(self, nodes: np.ndarray, held: np.ndarray, group: int, declared: bool = False) -> np.ndarray: ...


class OracleScheduler:
    """Reference only (not a real scheduler): the B tasks of highest true ``p (1 - p)``."""

    name = "oracle"

    def __init__(self, train: Suite, learner: SimulatedLearner) -> None:
        self.task_ids = [n.task_id for n in train.nodes]
        self.learner = learner
        self.position = {t: i for i, t in enumerate(self.task_ids)}

    def next_batch(self, batch_size: int) -> list[str]:
        """Top ``batch_size`` by true variance."""
        p = self.learner.success(np.arange(len(self.task_ids)))
        return [self.task_ids[i] for i in np.argsort(-(p * (1 - p)), kind="stable")[:batch_size]]

    def predict(self, task_ids: list[str]) -> dict[str, np.ndarray]:
        """The true ``p (1 - p)``."""
        p = self.learner.success(np.array([self.position[t] for t in task_ids]))
        return {"variance": p * (1 - p)}

    def update(self, task_id: str, rewards: np.ndarray) -> None:
        """Nothing to learn."""

    def keep(self, task_id: str, rewards: np.ndarray) -> bool:
        """Every group trains."""
        return True


class GainOracleScheduler(OracleScheduler):
    """Reference only (not a real scheduler): the tasks of highest true expected held-out gain.

    Args:
        train: The scheduled nodes (the learner's first ``len(train)`` nodes).
        learner: The simulated learner (read, never changed).
        held: The learner's node indices of the held-out tasks.
        group: Rollouts per group (G).
        mixed: Fill each family's target count of the batch (``gain``); False: the best of the
            whole pool (``gain-free``).
        declared: Rate a task not yet rolled by its declared expected gain (``gain-decl``).
    """

    name = "gain"

    def __init__(
        self, train: Suite, learner: SimulatedLearner, held: np.ndarray, group: int, mixed: bool = True, declared: bool = False
    ) -> None:
        super().__init__(train, learner)
        self.held, self.group, self.declared = held, group, declared
        self.mixture = Mixture(train) if mixed else None
        self.rolled = np.zeros(len(self.task_ids), dtype=bool)

    def update(self, task_id: str, rewards: np.ndarray) -> None:
        """Remember that ``task_id`` was rolled (``gain-decl`` knows it exactly from then on)."""
        self.rolled[self.position[task_id]] = True

    def predict(self, task_ids: list[str]) -> dict[str, np.ndarray]:
        """The true ``p (1 - p)``; for ``gain-decl``, a never-rolled task's declaration ceiling (``expected_variance``)."""
        variance = super().predict(task_ids)["variance"]
        if not self.declared:
            return {"variance": variance}
        nodes = np.array([self.position[t] for t in task_ids], dtype=np.int64)
        return {"variance": np.where(self.rolled[nodes], variance, self.learner.expected_variance(nodes))}

    def next_batch(self, batch_size: int) -> list[str]:
        """Per family (or over the pool), the top tasks by the learner's ``expected_gain`` (ties: pool order)."""
        gain = np.zeros(len(self.task_ids))
        known = self.rolled if self.declared else np.ones(len(gain), dtype=bool)
        for part, declared in ((np.flatnonzero(known), False), (np.flatnonzero(~known), True)):
            if len(part):
                gain[part] = self.learner.expected_gain(part, self.held, self.group, declared=declared)
        parts = self.mixture.groups(batch_size) if self.mixture else [(np.arange(len(gain)), batch_size)]
        picks = [members[np.argsort(-gain[members], kind="stable")[:count]] for members, count in parts]
        return [self.task_ids[i] for i in np.concatenate(picks)]


class DirectedEnvSched(EnvSchedScheduler):
    """Reference only (not a real scheduler): EnvSched's predictions scored along the learner's declared direction.

    Every node's score is its predicted variance, recomputed for every node at every step
    (EnvSched recomputes its candidates' before it picks), x its progress factor (to the
    configured weight) x ``learner.direction(node, held, declared=True)``; each family's target
    count of the batch is filled with the family's best scores, with no environment quotas,
    bonus or similarity penalty (ties: EnvSched's seeded tie-break).

    Args:
        train: The scheduled nodes (the learner's first ``len(train)`` nodes).
        learner: The simulated learner (read, never changed).
        held: The learner's node indices of the held-out tasks.
        seed: EnvSched's seed.
        **overrides: EnvSched options, as for :class:`EnvSchedScheduler`.
    """

    name = DIRECTED

    def __init__(self, train: Suite, learner: SimulatedLearner, held: np.ndarray, seed: int = 0, **overrides: Any) -> None:
        super().__init__(train, seed=seed, **overrides)
        self.learner, self.held = learner, held

    def directed_scores(self) -> np.ndarray:
        """Every node's predicted variance x progress factor x declared direction, plus the tie-break."""
        nodes = np.arange(len(self.task_ids))
        variance = self.predictor.variance * self.progress.factor(nodes) ** self.config.progress_weight
        return variance * self.learner.direction(nodes, self.held, declared=True) + self.tie_break

    def next_batch(self, batch_size: int) -> list[str]:
        """Recompute every prediction, then fill each family's count with its best :meth:`directed_scores`."""
        size = self.check_batch_size(batch_size)
        self.predictor.refresh_all()
        self.progress.refresh()
        score = self.directed_scores()
        picks = [members[np.argsort(-score[members], kind="stable")[:count]] for members, count in self.mixture.groups(size)]
        self.step += 1
        self.predictor.advance()
        return [self.task_ids[i] for i in np.concatenate(picks)]


class ToldPredictor:
    """EnvSched's predictor with some predictions replaced by what the simulated learner knows.

    Everything but :meth:`compute` and :meth:`refresh` is the wrapped predictor's (its
    statistics keep moving as groups arrive, so the untold tasks' predictions are EnvSched's
    own). Told values are the expected within-group variance of a group of ``group`` rollouts,
    ``(G - 1) / G`` times ``p (1 - p)``, as EnvSched's own predictions are.

    Args:
        inner: The scheduler's own predictor.
        learner: The simulated learner (read, never changed).
        row: One of :data:`TOLD`.
        group: Rollouts per group (G).
    """

    def __init__(self, inner: VariancePredictor, learner: SimulatedLearner, row: str, group: int) -> None:
        if row not in TOLD:
            raise ValueError(f"unknown reference row {row!r}; known: {sorted(TOLD)}")
        self.inner, self.learner, self.row, self.shrink = inner, learner, row, (group - 1) / group

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def told(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masks over ``nodes``: whose variance this row tells, and which are dead ends it tells as such."""
        tells = _TELLS[self.row]
        variance = np.full(len(nodes), tells == "all") if tells != "new" else self.inner.model.visits[nodes] == 0
        dead = self.learner.dead[nodes] if self.row.endswith("dead") else np.zeros(len(nodes), dtype=bool)
        return variance, dead

    def compute(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(variance, mean, uncertainty) of ``nodes``: told where this row tells, EnvSched's own elsewhere."""
        nodes = np.asarray(nodes, dtype=np.int64)
        variance, mean, uncertainty = self.inner.compute(nodes)
        told, dead = self.told(nodes)
        if told.any():
            p = self.learner.success(nodes)
            truth = self.learner.expected_variance(nodes) if self.row == "decl-new" else p * (1.0 - p)
            variance, mean = np.where(told, self.shrink * truth, variance), np.where(told, p, mean)
        return np.where(dead, 0.0, variance), mean, np.where(told | dead, 0.0, uncertainty)

    def refresh(self) -> np.ndarray:
        """The wrapped refresh (its statistics and rotation), then every told node (the truth moves every step).

        Untold nodes are refreshed exactly when EnvSched's own predictor refreshes them, so a
        row that tells nothing about a learner (``dead`` on learner A) runs as ``envsched``.
        """
        refreshed = self.inner.refresh()
        told, dead = self.told(np.arange(self.inner.n))
        nodes = np.union1d(refreshed, np.flatnonzero(told | dead))
        self.inner.store(nodes, *self.compute(nodes))
        return nodes


def told_envsched(row: str, train: Suite, learner: SimulatedLearner, seed: int, group: int, **overrides: Any) -> EnvSchedScheduler:
    """EnvSched over ``train`` whose predictor is told what ``row`` says (see :class:`ToldPredictor`)."""
    scheduler = EnvSchedScheduler(train, seed=seed, **overrides)
    scheduler.predictor = ToldPredictor(scheduler.predictor, learner, row, group)  # type: ignore[assignment]
    return scheduler
