"""Where a rollout's environments run: the contract, and the in-process backend (the default).

:func:`envsched_gym.rl.rollout.run_rollouts` reaches environments only through an
:class:`EnvSession`, opened once per call: it submits resets and steps for numbered slots, then
polls for the :class:`EnvReply` s that have arrived. :class:`EnvPool` runs each call the moment it
is submitted, in this process. :class:`envsched_gym.rl.env_workers.RayEnvWorkers` sends them to
Ray actors and replies as they finish, which is what lets the model generate for some episodes
while the environments and user simulators of others are busy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym

from envsched_gym.suite import Suite


@dataclass
class EnvReply:
    """What one reset or step tells the rollout driver.

    Attributes:
        env_id: The episode's environment (from the reset's ``info``).
        messages: The new chat messages: after a reset the system and first user messages, after
            a step the assistant message the environment parsed, then tool results and user turns.
        tools: The tool schemas (reset replies only; steps leave it empty).
        done: The episode ended (terminated or truncated).
        reward: The verifier's outcome reward when ``done``.
        success: The verifier's success flag when ``done``.
        termination: How it ended when ``done`` (``agent``, ``user``, ``max_steps``, ``user_error``, ...).
        error: The user simulator's failure, when one ended the episode.
    """

    env_id: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    reward: float = 0.0
    success: bool = False
    termination: str | None = None
    error: str | None = None


@dataclass
class EnvFailure:
    """A reset or step that failed outside the environment's code (a worker died or timed out).

    Attributes:
        env_id: The episode's environment (from the suite), for the failed rollout.
        reason: What failed, with the worker and the call.
        timeout: True when the call ran past its timeout.
    """

    env_id: str
    reason: str
    timeout: bool = False


def reset_reply(info: dict[str, Any]) -> EnvReply:
    """The reply of ``env.reset``, from its ``info``."""
    return EnvReply(info["env_id"], list(info["messages"]), info["tools"] or [])


def step_reply(reward: float, terminated: bool, truncated: bool, info: dict[str, Any]) -> EnvReply:
    """The reply of ``env.step``, from its reward, flags and ``info``."""
    if not (terminated or truncated):
        return EnvReply(messages=list(info["messages"]))
    return EnvReply(messages=list(info["messages"]), done=True, reward=float(reward), success=bool(info["outcome"]["success"]),
                    termination=info.get("termination", "agent"), error=info.get("user_error"))  # fmt: skip


class EnvSession(Protocol):
    """One ``run_rollouts`` call's view of a backend; slots are the call's episode indices."""

    def reset(self, slot: int, task_id: str, seed: int) -> None:
        """Start (or restart) slot's episode of ``task_id``."""
        ...

    def step(self, slot: int, action: str) -> None:
        """Send slot's next assistant message."""
        ...

    def poll(self, block: bool) -> list[tuple[int, EnvReply | EnvFailure]]:
        """The replies that have arrived; with ``block``, wait until at least one has (or a call timed out)."""
        ...

    def close(self) -> None:
        """Release every environment the session holds."""
        ...


class EnvBackend(Protocol):
    """Anything that opens sessions: :class:`EnvPool` or ``RayEnvWorkers``.

    Attributes:
        suite: The nodes it serves.
        lockstep: The model generates only once every running episode's observation is in.
        retries: Restarts of an episode whose worker died or timed out.
        on_failure: ``raise`` (``EpisodeFailed``) or ``mark`` (``termination="worker_error"``)
            for an episode that failed on every attempt.
    """

    suite: Suite
    lockstep: bool
    retries: int
    on_failure: str

    def session(self) -> EnvSession:
        """A session for one ``run_rollouts`` call."""
        ...


class EnvPool:
    """Environments in this process, reused across rollouts, one list per gymnasium id.

    Making an environment is not free, so they are kept. Each is made with the suite's adapter
    options for its family (``Suite.options``), as ``Suite.make_env`` makes it. Its calls cannot
    fail outside the environment's code, so it never retries.
    """

    lockstep = True
    retries = 0
    on_failure = "raise"

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._free: dict[str, list[gym.Env]] = {}

    def take(self, task_id: str) -> gym.Env:
        """An environment that serves ``task_id`` (give it back with :meth:`give`)."""
        gym_id = self.suite.node(task_id).env.gym_id
        free = self._free.setdefault(gym_id, [])
        return free.pop() if free else self.suite.make_env(task_id)

    def give(self, env: gym.Env) -> None:
        """Return an environment to the pool."""
        self._free.setdefault(env.spec.id, []).append(env)  # type: ignore[union-attr]

    def session(self) -> EnvSession:
        return _LocalSession(self)


class _LocalSession:
    """Runs every call when it is submitted; :meth:`poll` hands the replies back in slot order."""

    def __init__(self, pool: EnvPool) -> None:
        self.pool = pool
        self._envs: dict[int, gym.Env] = {}
        self._replies: dict[int, EnvReply | EnvFailure] = {}

    def reset(self, slot: int, task_id: str, seed: int) -> None:
        env = self._envs.get(slot) or self.pool.take(task_id)
        self._envs[slot] = env
        _, info = env.reset(seed=seed, options={"task_id": task_id})
        self._replies[slot] = reset_reply(info)

    def step(self, slot: int, action: str) -> None:
        _, reward, terminated, truncated, info = self._envs[slot].step(action)
        self._replies[slot] = step_reply(float(reward), terminated, truncated, info)

    def poll(self, block: bool) -> list[tuple[int, EnvReply | EnvFailure]]:
        replies, self._replies = sorted(self._replies.items()), {}
        return replies

    def close(self) -> None:
        for env in self._envs.values():
            self.pool.give(env)
        self._envs = {}
