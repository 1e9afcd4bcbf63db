"""The scheduler contract every curriculum (EnvSched and the baselines) implements.

A scheduler owns the choice of which suite nodes (task ids) a GRPO step trains on. The trainer
asks for ``next_batch(B)`` (``B`` distinct ids; a ``ValueError`` when the pool holds fewer than
``B`` tasks), rolls each id ``G`` times, reports every finished group with
``update(task_id, rewards)`` (refused, with nothing changed, when a reward is not a finite
number), and asks ``keep(task_id, rewards)`` whether the group enters the
gradient step (only DAPO dynamic sampling drops groups). ``predict`` gives every scheduler's own
estimate of the within-group reward variance (plain Python floats), which the benchmarks compare
with what the rollouts realised.

Every scheduler draws a batch family by family: its :class:`~envsched_gym.curriculum.mixture.Mixture`
says how many groups each family gets (the suite's family weights, or the pool share, with a
floor and a cap), and the scheduler's own rule chooses the tasks within each family.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from envsched_gym.curriculum.mixture import Mixture, MixtureConfig
from envsched_gym.curriculum.state import StateReader
from envsched_gym.suite import Suite


@runtime_checkable
class Scheduler(Protocol):
    """What a trainer needs from a curriculum."""

    name: str

    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids to roll next, distinct within the batch, each to be rolled G times.

        Raises:
            ValueError: ``batch_size`` is below 1 or above the number of tasks in the pool.
        """
        ...

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Record one finished GRPO group of ``task_id`` (a ``ValueError`` for non-finite rewards)."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume scheduling (JSON- and pickle-able)."""
        ...

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (a ``ValueError`` naming the key for a damaged one)."""
        ...

    def predict(self, task_ids: Sequence[str]) -> dict[str, list[float]]:
        """Predicted ``variance``, ``mean`` and ``uncertainty`` of each task's group rewards, as lists of floats."""
        ...

    def family_mix(self, task_ids: Sequence[str]) -> dict[str, dict[str, float]]:
        """Per family: the share the last batch aimed for (``target``) and the share of ``task_ids`` (``share``)."""
        ...


def checked_rewards(task_id: str, rewards: Sequence[float]) -> np.ndarray:
    """One group's rewards as a float array, or a ``ValueError`` naming the task and the bad reward.

    A single NaN or infinity would poison a scheduler's statistics for many rounds, so the
    whole group is refused before anything is recorded.
    """
    try:
        values = np.asarray(rewards, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"task '{task_id}': rewards must be numbers, got {rewards!r:.100}; pass one float per rollout to update()"
        ) from None
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"task '{task_id}': update() needs a flat list of at least one reward per rollout, got shape {values.shape}")
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"task '{task_id}': reward {values[i]} (rollout {i} of {values.size}) is not finite, so the group was refused and the scheduler is"
            " unchanged; fix the reward function to return finite numbers, or leave this group out of update()"
        )
    return values


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
        weights: Family weights of the target mix (one per family of ``suite``); ``None``: the
            suite's own ``weights``, else each family's share of the pool.
        mixture: Floor, cap and band of the target mix.
    """

    name = "base"
    STATE_KEYS: tuple[str, ...] = ("name", "seed", "step", "rng", "totals", "rollouts", "task_ids_hash", "mixture")

    def __init__(
        self, suite: Suite, seed: int = 0, weights: Mapping[str, float] | None = None, mixture: MixtureConfig | None = None
    ) -> None:
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
        self.mixture = Mixture(suite, weights, mixture)

    def positions(self, task_ids: Sequence[str]) -> np.ndarray:
        """Node positions of ``task_ids`` (a clear error for ids outside the suite)."""
        try:
            return np.fromiter((self.index[t] for t in task_ids), dtype=np.int64, count=len(task_ids))
        except KeyError as exc:
            raise KeyError(f"task {exc} is not in this scheduler's suite ({len(self.task_ids)} nodes)") from None

    def check_batch_size(self, batch_size: int) -> int:
        """``batch_size`` itself, once it is known to fit the pool (ids are distinct within a batch).

        A GRPO step that asked for ``B`` groups expects ``B`` groups, so a batch larger than the
        pool is an error, not a smaller batch; to roll a task more often, raise the group size G.

        Raises:
            ValueError: ``batch_size`` is below 1 or above the number of tasks in the pool.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        pool = len(self.task_ids)
        if batch_size > pool:
            raise ValueError(
                f"next_batch({batch_size}) needs {batch_size} distinct tasks but the '{self.name}' scheduler's pool has {pool}; ask for at"
                f" most {pool} (EnvSchedCurriculum batch_size, train_grpo.py --tasks-per-step), widen the pool (more families, another"
                " split, a higher --max-difficulty, --max-tasks 0), or roll each task more times with a larger group size G"
            )
        return batch_size

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Record one finished GRPO group of ``task_id``.

        The id and the rewards are checked first (:func:`checked_rewards`): an unknown id, an
        empty group or a non-finite reward raises and leaves the scheduler unchanged. The group
        then enters the pool totals and the scheduler's own model (:meth:`observe`).
        """
        node = int(self.positions([task_id])[0])
        values = checked_rewards(task_id, rewards)
        mean, variance = self.record(values)
        self.observe(node, values, mean, variance)

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Fold one checked group of ``node`` into the scheduler's own model (here: nothing beyond the totals)."""

    def record(self, rewards: Sequence[float]) -> tuple[float, float]:
        """Add a group to the global totals and the rollout count; returns its (mean, variance)."""
        values = [float(r) for r in rewards]
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / len(values)
        self.totals += (1.0, mean, var)
        self.rollouts += len(values)
        return mean, var

    def predict(self, task_ids: Sequence[str]) -> dict[str, list[float]]:
        """The scheduler's :meth:`estimates` for ``task_ids`` as lists of plain floats (an unknown id raises a ``KeyError``)."""
        return {key: np.asarray(values, dtype=np.float64).tolist() for key, values in self.estimates(self.positions(task_ids)).items()}

    def estimates(self, nodes: np.ndarray) -> dict[str, np.ndarray]:
        """Predicted ``variance``, ``mean`` and ``uncertainty`` of the nodes at positions ``nodes`` (here: the pool-wide figures)."""
        return self.global_estimates(len(nodes))

    def global_estimates(self, count: int) -> dict[str, np.ndarray]:
        """The pool-wide mean and variance for ``count`` tasks (schedulers without per-task models)."""
        groups = self.totals[0]
        mean = self.totals[1] / groups if groups else 0.5
        var = self.totals[2] / groups if groups else 0.25
        return {"variance": np.full(count, var), "mean": np.full(count, mean), "uncertainty": np.ones(count)}

    def family_mix(self, task_ids: Sequence[str]) -> dict[str, dict[str, float]]:
        """Per family name: the share the last batch aimed for (``target``) and the share of ``task_ids`` (``share``)."""
        return self.mixture.report(self.positions(task_ids))

    def keep(self, task_id: str, rewards: Sequence[float]) -> bool:
        """Whether the trainer should put this group into the gradient step (default: always)."""
        return True

    def base_state(self) -> dict[str, Any]:
        """The shared part of :meth:`state_dict`."""
        return {"name": self.name, "seed": self.seed, "step": self.step, "rng": self.rng.bit_generator.state,
                "totals": self.totals.tolist(), "rollouts": self.rollouts, "task_ids_hash": hash_ids(self.task_ids),
                "mixture": self.mixture.state_dict()}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`.

        Every key and value is checked (:meth:`read_state`) before anything is assigned, so a
        damaged state raises a ``ValueError`` naming the key and leaves the scheduler unchanged.
        """
        self.apply_state(self.read_state(self.state_reader(state)))

    def state_reader(self, state: Any) -> StateReader:
        """A reader of ``state``, once it is known to come from this scheduler over this suite."""
        if isinstance(state, Mapping) and "name" in state and state["name"] != self.name:
            raise ValueError(
                f"state was saved by scheduler '{state['name']}', not '{self.name}'; load it into make_scheduler('{state['name']}', ...)"
            )
        sizes = f"{len(self.task_ids)} tasks in {len(self.env_ids)} environments"
        reader = StateReader(state, f"the '{self.name}' scheduler's state", self.STATE_KEYS, sizes)
        if reader.raw("task_ids_hash") != hash_ids(self.task_ids):
            raise ValueError("state was saved over a different suite (task ids differ); build the scheduler over the same suite")
        return reader

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked attribute values of a saved state (subclasses add their own)."""
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = reader.raw("rng")
        except (TypeError, ValueError, KeyError) as exc:
            reader.fail("rng", f"is not a {type(rng.bit_generator).__name__} generator state ({exc!r})")
        totals = reader.array("totals", (3,))
        if totals[0] < 0 or totals[2] < 0:
            reader.fail("totals", f"must hold a group count and a variance sum of at least 0, found {totals.tolist()}")
        mixture = self.mixture.read_state(reader.nested("mixture", Mixture.STATE_KEYS))
        return {"seed": reader.integer("seed"), "step": reader.integer("step", minimum=0), "rng": rng, "totals": totals,
                "rollouts": reader.integer("rollouts", minimum=0), "mixture": mixture}  # fmt: skip

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the values :meth:`read_state` checked."""
        values = dict(values)
        self.mixture.apply_state(values.pop("mixture"))
        for attr, value in values.items():
            setattr(self, attr, value)


def hash_ids(task_ids: Sequence[str]) -> str:
    """A stable fingerprint of the node order (checked when a state is loaded)."""
    digest = hashlib.sha256()
    for task_id in task_ids:
        digest.update(task_id.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]
