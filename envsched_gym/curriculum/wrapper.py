"""``EnvSchedCurriculum``: one gymnasium environment over a whole suite, the curriculum choosing tasks.

``reset()`` without a ``task_id`` takes the next task of the scheduler's current batch (each
task ``group_size`` times in a row, as a GRPO group), serves it with the environment that owns
it, and once the group's episodes have finished reports their rewards to the scheduler. Trainers
that roll groups themselves use the batch API, :meth:`EnvSchedCurriculum.next_batch` and
:meth:`EnvSchedCurriculum.update`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium as gym

from envsched_gym.curriculum.base import BaseScheduler, Scheduler
from envsched_gym.curriculum.registry import make_scheduler
from envsched_gym.spaces import UnicodeText
from envsched_gym.suite import Suite


class EnvSchedCurriculum(gym.Env[str, str]):
    """A curriculum-driven environment over ``suite``.

    Args:
        suite: The nodes to train on (for example ``envsched_gym.suite(["ToolWorld"], split="train")``).
        scheduler: A scheduler name (see ``SCHEDULERS``) or an instance.
        seed: Seed of a scheduler built by name.
        group_size: Episodes per task before its rewards are reported (GRPO's G).
        batch_size: Tasks drawn from the scheduler at a time by ``reset()``.
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

    # ------------------------------------------------------------- batch API
    def next_batch(self, batch_size: int) -> list[str]:
        """Task ids for one GRPO step (distinct), each to be rolled ``G`` times."""
        return self.scheduler.next_batch(batch_size)

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        """Report one finished group of ``task_id``."""
        self.scheduler.update(task_id, rewards)

    def keep(self, task_id: str, rewards: Sequence[float]) -> bool:
        """Whether the group goes into the gradient step (False only for DAPO's dropped groups)."""
        return self.scheduler.keep(task_id, rewards) if isinstance(self.scheduler, BaseScheduler) else True

    # ------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode of ``options["task_id"]`` or, without one, of the scheduler's next task."""
        super().reset(seed=seed)
        options = dict(options or {})
        task_id = options.pop("task_id", None) or self._next_task()
        self._env = self._env_for(task_id)
        self.task_id, self._done = task_id, False
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
