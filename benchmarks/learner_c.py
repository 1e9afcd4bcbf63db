"""Simulated learner C for ``scheduler_sim.py --learner C``: learner B plus a trade-off between call kinds.

Written and fixed in session 44, before any scheduler was run on it, to carry the failure the
real learner showed in session 42 (EnvSched without kind cover trained ToolWorld's look-ups
almost only; its held-out write tasks fell by 0.25 and 0.37 while its look-ups rose by 0.21 and
0.14). Neither A nor B has that dynamic: on them a group of one task never lowers another task
of its own environment.

Everything of :class:`benchmarks.learner_b.LearnerB` holds (the same seeded draws, so with
``KIND_LR = 0`` C is B exactly), and:

7. **One write-or-stop decision per family.** Every family has a *mode* skill per call kind
   ``writes`` and ``reads`` (:data:`envsched_gym.curriculum.features.CALL_KINDS`, from the
   declarations; on ToolWorld they are the generator's own split), starting at 0, added to the
   logit of every task of that family and kind. A varied group of a live task of kind ``k``
   raises its family's ``k`` mode by ``KIND_LR * var / 0.25`` and lowers the other kind's mode by
   ``KIND_INTERFERENCE`` times as much: a policy taught to stop after a look-up is untaught to go
   on and write, and the reverse. Tasks that make no call or have no gold have no mode.

The constants, fixed a priori: ``KIND_INTERFERENCE = 1`` because on the real learner the write
loss matched or exceeded the look-up gain (above); ``KIND_LR = 0.01`` so that T = 40 steps of
only one kind in the largest family (about 40 % of 640 groups, mean signal about 0.6) move the
other kind's logit by about 1.5, the size of the real fall (0.25-0.37 in success near p = 0.5).
Training the two kinds of a family with equal signal leaves both modes where they were.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks.learner_b import LearnerB
from envsched_gym.curriculum.features import CALL_KINDS, node_call_kinds
from envsched_gym.suite import TaskNode

MODE_KINDS = ("writes", "reads")
"""The call kinds that have a mode skill (assumption 7)."""


class LearnerC(LearnerB):
    """Learner C (see the module docstring); the interface of ``scheduler_sim.Learner``."""

    KIND_LR = 0.01
    KIND_INTERFERENCE = 1.0

    def __init__(
        self,
        nodes: list[TaskNode],
        seed: int,
        skills_of: Callable[[TaskNode], tuple[list[str], int, int]],
        pattern_of: Callable[[TaskNode], str],
    ) -> None:
        super().__init__(nodes, seed, skills_of, pattern_of)
        kinds = node_call_kinds(nodes)
        families = sorted({node.family for node in nodes})
        self.mode_unit = np.full(len(nodes), -1, dtype=np.int64)
        for i, (node, code) in enumerate(zip(nodes, kinds, strict=True)):
            kind = CALL_KINDS[code]
            if kind in MODE_KINDS:
                self.mode_unit[i] = 2 * families.index(node.family) + MODE_KINDS.index(kind)
        self.mode = np.zeros(2 * len(families))

    @staticmethod
    def rival(units: np.ndarray) -> np.ndarray:
        """The other kind's mode unit of the same family (units come in (writes, reads) pairs)."""
        return units ^ 1

    def logits(self, nodes: np.ndarray, skill: np.ndarray | None = None, difficulty: np.ndarray | None = None) -> np.ndarray:
        """Learner B's logits plus each node's family-and-kind mode (0 for tasks without one)."""
        nodes = np.asarray(nodes)
        units = self.mode_unit[nodes]
        return super().logits(nodes, skill, difficulty) + np.where(units >= 0, self.mode[np.maximum(units, 0)], 0.0)

    def mode_delta(self, nodes: np.ndarray, signals: np.ndarray) -> np.ndarray:
        """The change of every mode from ``signals`` (``var / 0.25``, 0 for dead ends) on ``nodes`` (assumption 7)."""
        units = self.mode_unit[nodes]
        has = units >= 0
        delta = np.zeros_like(self.mode)
        np.add.at(delta, units[has], self.KIND_LR * signals[has])
        np.add.at(delta, self.rival(units[has]), -self.KIND_INTERFERENCE * self.KIND_LR * signals[has])
        return delta

    def learn(self, nodes: np.ndarray, variances: np.ndarray) -> None:
        """Learner B's step, then the modes move by the step's live groups."""
        nodes, variances = np.asarray(nodes, dtype=np.int64), np.asarray(variances, dtype=np.float64)
        signals = np.where(self.dead[nodes], 0.0, np.maximum(variances, 0.0) / 0.25)
        delta = self.mode_delta(nodes, signals)
        super().learn(nodes, variances)
        self.mode += delta

    def direction(self, nodes: np.ndarray, held: np.ndarray, declared: bool = False) -> np.ndarray:
        """Learner B's first-order direction plus the modes': a node's own mode raises the held-out
        tasks of its family and kind and its rival lowers those of the other kind."""
        nodes, held = np.asarray(nodes), np.asarray(held)
        live = held[~self.dead[held]]
        p_held = self.success(live)
        slope = p_held * (1 - p_held) / len(held)
        gradient = np.zeros_like(self.mode)
        has = self.mode_unit[live] >= 0
        np.add.at(gradient, self.mode_unit[live][has], slope[has])
        units = self.mode_unit[nodes]
        safe = np.maximum(units, 0)
        mode = np.where(units >= 0, self.KIND_LR * (gradient[safe] - self.KIND_INTERFERENCE * gradient[self.rival(safe)]), 0.0)
        alive = np.where(self.no_call[nodes], 0.0, 1.0 - self.DEAD_END_FRACTION) if declared else (~self.dead[nodes]).astype(float)
        return super().direction(nodes, held, declared) + alive * mode
