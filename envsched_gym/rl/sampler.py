"""The curriculum sampler: a scheduler chooses every GRPO generation batch.

It yields indices in the layout of TRL's ``RepeatSampler`` (each group slot ``num_generations``
times in a row, the whole generation batch ``repeat_count`` times), so every GRPO group is one
task and the trainer's slicing across processes and gradient-accumulation steps is unchanged.

The dataloader reads one generation batch ahead, so anything decided when indices are drawn
would miss the rewards of the round being trained. The sampler therefore yields *group slots*
(rows ``0 .. tasks_per_round - 1`` of a slot dataset) and binds tasks to the slots when the
round's generation starts (:meth:`CurriculumSampler.bind`, called by the rollout function): by
then every earlier round's gathered rewards have been fed back, and every process binds the
same tasks because every process holds the same scheduler state and calls ``bind`` at the same
point. Bindings are logged, so a resumed run replays them, together with each round's family
mix (the share of every family the scheduler aimed for and the share it bound).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np
from torch.utils.data import Sampler

from envsched_gym.curriculum.base import checked_rewards


class Scheduler(Protocol):
    """The curriculum interface (``envsched_gym.curriculum.make_scheduler`` returns one)."""

    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids of the next batch."""
        ...

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Feed back one group's rewards."""
        ...

    def predict(self, task_ids: Sequence[str]) -> dict[str, list[float]]:
        """Predicted ``variance``, ``mean`` and ``uncertainty`` per task."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Serialisable state."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        ...

    def family_mix(self, task_ids: Sequence[str]) -> dict[str, dict[str, float]]:
        """Per family: the share the last batch aimed for (``target``) and the share of ``task_ids`` (``share``)."""
        ...


class CurriculumSampler(Sampler[int]):
    """``RepeatSampler``-shaped stream of group slots whose tasks a scheduler binds round by round.

    Args:
        scheduler: Chooses ``tasks_per_round`` task ids per round.
        tasks_per_round: GRPO groups per generation batch (``generation_batch_size // G``).
        num_generations: Rollouts per task (G).
        repeat_count: Times each generation batch is yielded (``num_iterations * steps_per_generation``).
        num_rounds: Generation rounds in the run.
    """

    def __init__(self, scheduler: Scheduler, tasks_per_round: int, num_generations: int, repeat_count: int, num_rounds: int) -> None:
        self.scheduler = scheduler
        self.tasks_per_round = tasks_per_round
        self.num_generations = num_generations
        self.repeat_count = repeat_count
        self.num_rounds = num_rounds
        self.decisions: list[list[str]] = []
        self.predictions: list[dict[str, list[float]]] = []
        self.mixes: list[dict[str, dict[str, float]]] = []
        self.pending: dict[int, list[tuple[str, list[float]]]] = {}
        self.applied = 0

    def __len__(self) -> int:
        return self.num_rounds * self.repeat_count * self.tasks_per_round * self.num_generations

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.num_rounds * self.repeat_count):
            for slot in range(self.tasks_per_round):
                yield from [slot] * self.num_generations

    def bind(self, r: int) -> list[str]:
        """Task ids of round ``r``'s slots: replayed when already bound, else chosen now from rounds ``< r``."""
        if r < len(self.decisions):
            return self.decisions[r]
        if r != len(self.decisions):
            raise RuntimeError(f"round {r} bound before round {len(self.decisions)}")
        self._apply_feedback(until=r)
        tasks = list(self.scheduler.next_batch(self.tasks_per_round))
        if len(tasks) != self.tasks_per_round:
            raise ValueError(f"the scheduler returned {len(tasks)} tasks for {self.tasks_per_round} group slots")
        pred = self.scheduler.predict(tasks)
        self.predictions.append({k: [float(v) for v in np.asarray(pred[k])] for k in ("variance", "mean", "uncertainty") if k in pred})
        self.mixes.append(self.scheduler.family_mix(tasks))
        self.decisions.append(tasks)
        return tasks

    def feedback(self, r: int, groups: list[tuple[str, list[float]]]) -> None:
        """Buffer round ``r``'s gathered groups ``(task_id, rewards)``; applied before the next binding.

        Every group is checked here (finite rewards, see :func:`checked_rewards`), so a bad round is
        refused whole, before any of its groups reaches the scheduler."""
        if r < self.applied or r in self.pending:
            raise ValueError(f"feedback for round {r} was already given")
        for task_id, rewards in groups:
            checked_rewards(task_id, rewards)
        self.pending[r] = groups

    def _apply_feedback(self, until: int) -> None:
        """Apply buffered rounds ``< until`` in order; a missing round is an error, not a silent skip."""
        while self.applied < until:
            if self.applied not in self.pending:
                raise RuntimeError(f"binding a round needs the rewards of round {self.applied}, which were never fed back")
            for task_id, rewards in self.pending.pop(self.applied):
                self.scheduler.update(task_id, rewards)
            self.applied += 1

    def state_dict(self) -> dict[str, Any]:
        """Decisions, predictions, family mixes, buffered feedback and the scheduler's own state."""
        return {
            "decisions": self.decisions, "predictions": self.predictions, "mixes": self.mixes, "pending": self.pending,
            "applied": self.applied, "scheduler": self.scheduler.state_dict(),
        }  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the scheduler included).

        Raises:
            ValueError: The state lacks a key (a checkpoint written by an older version).
        """
        if missing := sorted({"decisions", "predictions", "mixes", "pending", "applied", "scheduler"} - set(state)):
            raise ValueError(
                f"the checkpoint's curriculum state lacks {missing} (written by an older envsched-gym); resume it with the "
                "version that wrote it, or start a new run in a new --output-dir"
            )
        self.decisions = [list(d) for d in state["decisions"]]
        self.predictions = list(state["predictions"])
        self.mixes = list(state["mixes"])
        self.pending = {int(k): v for k, v in state["pending"].items()}
        self.applied = int(state["applied"])
        self.scheduler.load_state_dict(state["scheduler"])
