"""The curriculum sampler: a scheduler chooses every GRPO generation batch.

It yields dataset indices in the layout of TRL's ``RepeatSampler`` (each chosen task
``num_generations`` times in a row, the whole generation batch ``repeat_count`` times), so
every GRPO group is one task and the trainer's slicing across processes and gradient
accumulation steps is unchanged.

Feedback and the dataloader's look-ahead. The trainer's dataloader fetches the next batch
before the current one is trained on (and so before its rewards exist). The sampler therefore
decides round ``r`` from the rewards of rounds ``0 .. r - 1 - lag`` exactly (``lag=1``), never
from whatever happened to arrive in time: rewards are buffered and applied to the scheduler in
round order just before a decision. Every process gets the same gathered rewards and applies
them at the same point, so every process yields the same order. Decisions are logged, so a
resumed run (whose dataloader skips the batches already trained on) replays them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np
from torch.utils.data import Sampler


class Scheduler(Protocol):
    """The curriculum interface (``envsched_gym.curriculum.make_scheduler`` returns one)."""

    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids of the next batch."""
        ...

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Feed back one group's rewards."""
        ...

    def predict(self, task_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Predicted ``variance``, ``mean`` and ``uncertainty`` per task."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Serialisable state."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        ...


class CurriculumSampler(Sampler[int]):
    """``RepeatSampler``-shaped index stream whose tasks a scheduler picks round by round.

    Args:
        scheduler: Chooses ``tasks_per_round`` task ids per round.
        task_ids: The training dataset's task id per row (dataset order).
        tasks_per_round: GRPO groups per generation batch (``generation_batch_size // G``).
        num_generations: Rollouts per task (G).
        repeat_count: Times each generation batch is yielded (``num_iterations * steps_per_generation``).
        num_rounds: Generation rounds in the run.
        lag: Rounds between a round's rewards and the first decision that uses them.
    """

    def __init__(
        self, scheduler: Scheduler, task_ids: Sequence[str], tasks_per_round: int, num_generations: int,
        repeat_count: int, num_rounds: int, lag: int = 1,
    ) -> None:  # fmt: skip
        self.scheduler = scheduler
        self.row = {task_id: i for i, task_id in enumerate(task_ids)}
        self.tasks_per_round = tasks_per_round
        self.num_generations = num_generations
        self.repeat_count = repeat_count
        self.num_rounds = num_rounds
        self.lag = lag
        self.decisions: list[list[str]] = []
        self.predictions: list[dict[str, list[float]]] = []
        self.pending: dict[int, list[tuple[str, list[float]]]] = {}
        self.applied = 0

    def __len__(self) -> int:
        return self.num_rounds * self.repeat_count * self.tasks_per_round * self.num_generations

    def __iter__(self) -> Iterator[int]:
        for r in range(self.num_rounds):
            rows = [self.row[t] for t in self.decide(r)]
            for _ in range(self.repeat_count):
                for row in rows:
                    yield from [row] * self.num_generations

    def decide(self, r: int) -> list[str]:
        """Task ids of round ``r``: replayed when already decided, else chosen now."""
        if r < len(self.decisions):
            return self.decisions[r]
        if r != len(self.decisions):
            raise RuntimeError(f"round {r} requested before round {len(self.decisions)}")
        self._apply_feedback(until=r - self.lag)
        tasks = list(self.scheduler.next_batch(self.tasks_per_round))
        unknown = [t for t in tasks if t not in self.row]
        if unknown:
            raise KeyError(f"the scheduler chose tasks outside the training dataset: {unknown[:3]}")
        pred = self.scheduler.predict(tasks)
        self.predictions.append({k: [float(v) for v in np.asarray(pred[k])] for k in ("variance", "mean", "uncertainty") if k in pred})
        self.decisions.append(tasks)
        return tasks

    def feedback(self, r: int, groups: list[tuple[str, list[float]]]) -> None:
        """Buffer round ``r``'s gathered groups ``(task_id, rewards)``; applied at a later decision."""
        if r < self.applied or r in self.pending:
            raise ValueError(f"feedback for round {r} was already given")
        self.pending[r] = groups

    def _apply_feedback(self, until: int) -> None:
        """Apply buffered rounds ``< until`` in order; a missing round is an error, not a silent skip."""
        while self.applied < until:
            if self.applied not in self.pending:
                raise RuntimeError(
                    f"deciding a round needs the rewards of round {self.applied}, which have not arrived: the dataloader reads "
                    "more than one generation batch ahead. Use dataloader_num_workers=0 or raise the sampler's lag."
                )
            for task_id, rewards in self.pending.pop(self.applied):
                self.scheduler.update(task_id, rewards)
            self.applied += 1

    def state_dict(self) -> dict[str, Any]:
        """Decisions, predictions, buffered feedback and the scheduler's own state."""
        return {
            "decisions": self.decisions, "predictions": self.predictions, "pending": self.pending,
            "applied": self.applied, "scheduler": self.scheduler.state_dict(),
        }  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the scheduler included)."""
        self.decisions = [list(d) for d in state["decisions"]]
        self.predictions = list(state["predictions"])
        self.pending = {int(k): v for k, v in state["pending"].items()}
        self.applied = int(state["applied"])
        self.scheduler.load_state_dict(state["scheduler"])
