"""``EnvSchedCurriculum``: one gymnasium environment over a whole suite, the curriculum choosing tasks.

``reset()`` without a ``task_id`` takes the next task of the scheduler's current batch (each
task ``group_size`` times in a row, as a GRPO group), serves it with the environment that owns
it, and once the group's episodes have finished reports their rewards to the scheduler. Trainers
that roll groups themselves use the batch API, :meth:`EnvSchedCurriculum.next_batch` and
:meth:`EnvSchedCurriculum.update`. :meth:`EnvSchedCurriculum.state_dict` saves the scheduler
together with the wrapper's own queue and unfinished groups, so a loaded curriculum serves the
same tasks next.
"""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from envsched_gym.curriculum.base import BaseScheduler, Scheduler
from envsched_gym.curriculum.registry import make_scheduler
from envsched_gym.curriculum.state import StateReader
from envsched_gym.spaces import UnicodeText
from envsched_gym.suite import Suite


class EnvSchedCurriculum(gym.Env[str, str]):
    """A curriculum-driven environment over ``suite``.

    Args:
        suite: The nodes to train on (for example ``envsched_gym.suite(["ToolWorld"], split="train")``).
        scheduler: A scheduler name (see ``SCHEDULERS``) or an instance.
        seed: Seed of a scheduler built by name.
        group_size: Episodes per task before its rewards are reported (GRPO's G).
        batch_size: Tasks drawn from the scheduler at a time by ``reset()`` (at most the suite's
            size: the scheduler refuses a larger batch with a ``ValueError``).
        env_kwargs: Keyword arguments for every ``gym.make`` of the suite's environments.
        **scheduler_options: Options of a scheduler built by name.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        suite: Suite,
        scheduler: str | Scheduler = "envsched",
        seed: int = 0,
        group_size: int = 8,
        batch_size: int = 16,
        env_kwargs: dict[str, Any] | None = None,
        **scheduler_options: Any,
    ) -> None:
        self.suite = suite
        self.scheduler: Scheduler = make_scheduler(scheduler, suite, seed, **scheduler_options) if isinstance(scheduler, str) else scheduler
        self.group_size = group_size
        self.batch_size = batch_size
        self.env_kwargs = env_kwargs or {}
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self._envs: dict[str, gym.Env] = {}
        self._queue: deque[str] = deque()
        self._pending: dict[str, list[float]] = {}
        self.task_id: str | None = None
        self._env: gym.Env | None = None
        self._done = True
        self._scheduled = False  # whether the current episode's task came from the queue

    # ------------------------------------------------------------- batch API
    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids for one GRPO step (distinct), each to be rolled ``G`` times.

        Raises:
            ValueError: ``batch_size`` is larger than the suite (see ``BaseScheduler.check_batch_size``).
        """
        return self.scheduler.next_batch(batch_size)

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Report one finished group of ``task_id``."""
        self.scheduler.update(task_id, rewards)

    def keep(self, task_id: str, rewards: Sequence[float]) -> bool:
        """Whether the group goes into the gradient step (False only for DAPO's dropped groups)."""
        return self.scheduler.keep(task_id, rewards) if isinstance(self.scheduler, BaseScheduler) else True

    # ----------------------------------------------------------------- state
    STATE_KEYS = ("scheduler", "queue", "pending")

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state, the tasks queued for ``reset()`` and the unfinished groups' rewards.

        The state is JSON- and pickle-able. An episode in progress is not saved: a scheduled
        one's task goes back to the front of the queue, so a curriculum loaded from this state
        serves it again first.
        """
        queue = list(self._queue)
        if not self._done and self._scheduled and self.task_id is not None:
            queue.insert(0, self.task_id)
        return {"scheduler": self.scheduler.state_dict(), "queue": queue, "pending": {t: list(r) for t, r in self._pending.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`; the next ``reset()`` calls serve what the saved curriculum would have.

        Everything is checked before anything is assigned, so a damaged state raises a
        ``ValueError`` naming the key and leaves the curriculum as it was. An episode in
        progress here is abandoned.
        """
        reader = StateReader(state, "EnvSchedCurriculum's state", self.STATE_KEYS, f"{len(self.suite)} tasks")
        known = {n.task_id for n in self.suite}
        queue, pending = reader.raw("queue"), reader.raw("pending")
        if not isinstance(queue, list | tuple):
            reader.fail("queue", f"must be a list of task ids, found {type(queue).__name__}")
        if not isinstance(pending, Mapping):
            reader.fail("pending", f"must map task ids to reward lists, found {type(pending).__name__}")
        for key, task_id in [*(("queue", t) for t in queue), *(("pending", t) for t in pending)]:
            if not isinstance(task_id, str) or task_id not in known:
                reader.fail(key, f"holds {task_id!r:.80}, which is not a task id of this suite ({len(self.suite)} tasks)")
        for task_id, rewards in pending.items():
            if not (isinstance(rewards, list | tuple) and 0 < len(rewards) < self.group_size and all(_finite(r) for r in rewards)):
                reader.fail(f"pending.{task_id}", f"must be 1 to {self.group_size - 1} finite rewards (an unfinished group of"
                                                  f" group_size {self.group_size}), found {rewards!r:.100}")  # fmt: skip
        self.scheduler.load_state_dict(reader.raw("scheduler"))
        self._queue = deque(queue)
        self._pending = {t: [float(r) for r in rewards] for t, rewards in pending.items()}
        self.task_id, self._env, self._done, self._scheduled = None, None, True, False

    # ------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode of ``options["task_id"]`` or, without one, of the scheduler's next task."""
        super().reset(seed=seed)
        options = dict(options or {})
        requested = options.pop("task_id", None)
        task_id = requested or self._next_task()
        self._env = self._env_for(task_id)
        self.task_id, self._done, self._scheduled = task_id, False, not requested
        observation, info = self._env.reset(seed=seed, options={**options, "task_id": task_id})
        return observation, {**info, "task_id": task_id}

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the current task's environment; a finished episode's reward goes to its group."""
        if self._env is None or self.task_id is None:
            raise RuntimeError("call reset() before step()")
        observation, reward, terminated, truncated, info = self._env.step(action)
        if (terminated or truncated) and not self._done:
            self._done = True
            self._finish(self.task_id, float(reward))
        return observation, reward, terminated, truncated, {**info, "task_id": self.task_id}

    def render(self) -> str | None:
        """The current episode's transcript (``ansi``)."""
        return self._env.render() if self._env is not None else None

    def close(self) -> None:
        """Close every environment opened so far."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    def _next_task(self) -> str:
        if not self._queue:
            for task_id in self.scheduler.next_batch(self.batch_size):
                self._queue.extend([task_id] * self.group_size)
        return self._queue.popleft()

    def _env_for(self, task_id: str) -> gym.Env:
        gym_id = self.suite.node(task_id).env.gym_id
        if gym_id not in self._envs:
            self._envs[gym_id] = self.suite.make_env(task_id, **self.env_kwargs)
        return self._envs[gym_id]

    def _finish(self, task_id: str, reward: float) -> None:
        rewards = self._pending.setdefault(task_id, [])
        rewards.append(reward)
        if len(rewards) >= self.group_size:
            del self._pending[task_id]
            self.scheduler.update(task_id, rewards)


def _finite(value: Any) -> bool:
    """A real number (not a bool) that is finite."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and bool(np.isfinite(value))
