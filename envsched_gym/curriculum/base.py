"""The scheduler contract every curriculum (EnvSched and the baselines) implements.

A scheduler owns the choice of which suite nodes (task ids) a GRPO step trains on. The trainer
asks for ``next_batch(B)``, rolls each id ``G`` times, reports every finished group with
``update(task_id, rewards)``, and asks ``keep(task_id, rewards)`` whether the group enters the
gradient step (only DAPO dynamic sampling drops groups). ``predict`` gives every scheduler's own
estimate of the within-group reward variance, which the benchmarks compare with what the
rollouts realised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envsched_gym.suite import Suite


@runtime_checkable
class Scheduler(Protocol):
    """What a trainer needs from a curriculum."""

    name: str

    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids to roll next, distinct within the batch, each to be rolled G times."""
        ...

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Record one finished GRPO group of ``task_id``."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume scheduling (JSON- and pickle-able)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`."""
        ...

    def predict(self, task_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Predicted ``variance``, ``mean`` and ``uncertainty`` of each task's group rewards."""
        ...


def group_variance(rewards: Sequence[float]) -> float:
    """Population variance of one group's rewards (0 when GRPO gets no signal from it)."""
    values = np.asarray(rewards, dtype=np.float64)
    return float(values.var()) if values.size else 0.0


class BaseScheduler:
    """Shared plumbing: the node index, a seeded generator, global reward statistics.

    Args:
        suite: Nodes to schedule over (typically ``envsched_gym.suite(..., split="train")``).
        seed: Seeds every random choice; equal seeds and equal updates give equal batches on
            every training process.
    """

    name = "base"

    def __init__(self, suite: Suite, seed: int = 0) -> None:
        if len(suite) == 0:
            raise ValueError("cannot schedule over an empty suite; check the families and split passed to envsched_gym.suite()")
        self.suite = suite
        self.seed = seed
        self.task_ids: list[str] = [n.task_id for n in suite.nodes]
        self.index: dict[str, int] = {t: i for i, t in enumerate(self.task_ids)}
        env_ids = list(dict.fromkeys(n.env.env_id for n in suite.nodes))
        self.env_ids = env_ids
        env_pos = {e: i for i, e in enumerate(env_ids)}
        self.env_of = np.fromiter((env_pos[n.env.env_id] for n in suite.nodes), dtype=np.int64, count=len(suite))
        self.rng = np.random.default_rng(seed)
        self.step = 0
        self.totals = np.zeros(3)  # groups, sum of group means, sum of group variances
        self.rollouts = 0

    def positions(self, task_ids: Sequence[str]) -> np.ndarray:
        """Node positions of ``task_ids`` (a clear error for ids outside the suite)."""
        try:
            return np.fromiter((self.index[t] for t in task_ids), dtype=np.int64, count=len(task_ids))
        except KeyError as exc:
            raise KeyError(f"task {exc} is not in this scheduler's suite ({len(self.task_ids)} nodes)") from None

    def check_batch_size(self, batch_size: int) -> int:
        """Clip ``batch_size`` to the pool size (ids are distinct within a batch)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        return min(batch_size, len(self.task_ids))

    def record(self, rewards: Sequence[float]) -> tuple[float, float]:
        """Add a group to the global totals and the rollout count; returns its (mean, variance)."""
        values = [float(r) for r in rewards]
        if not values:
            raise ValueError("update() needs the rewards of at least one rollout")
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / len(values)
        self.totals += (1.0, mean, var)
        self.rollouts += len(values)
        return mean, var

    def global_estimates(self, count: int) -> dict[str, np.ndarray]:
        """The pool-wide mean and variance for ``count`` tasks (schedulers without per-task models)."""
        groups = self.totals[0]
        mean = self.totals[1] / groups if groups else 0.5
        var = self.totals[2] / groups if groups else 0.25
        return {"variance": np.full(count, var), "mean": np.full(count, mean), "uncertainty": np.ones(count)}

    def keep(self, task_id: str, rewards: Sequence[float]) -> bool:
        """Whether the trainer should put this group into the gradient step (default: always)."""
        return True

    def base_state(self) -> dict[str, Any]:
        """The shared part of :meth:`state_dict`."""
        return {"name": self.name, "seed": self.seed, "step": self.step, "rng": self.rng.bit_generator.state,
                "totals": self.totals.tolist(), "rollouts": self.rollouts, "task_ids_hash": hash_ids(self.task_ids)}  # fmt: skip

    def load_base_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`base_state`, checking that the suite is the one it was saved with."""
        if state.get("name") != self.name:
            raise ValueError(f"state was saved by scheduler '{state.get('name')}', not '{self.name}'")
        if state["task_ids_hash"] != hash_ids(self.task_ids):
            raise ValueError("state was saved over a different suite (task ids differ); build the scheduler over the same suite")
        self.seed, self.step = state["seed"], state["step"]
        self.rng.bit_generator.state = state["rng"]
        self.totals = np.asarray(state["totals"], dtype=np.float64)
        self.rollouts = state["rollouts"]


def hash_ids(task_ids: Sequence[str]) -> str:
    """A stable fingerprint of the node order (checked when a state is loaded)."""
    digest = hashlib.sha256()
    for task_id in task_ids:
        digest.update(task_id.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]
