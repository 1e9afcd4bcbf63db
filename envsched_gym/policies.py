"""Reference policies: the oracle (gold replay), a no-op agent and a random tool caller.

They map the latest observation and ``info`` to the next action text, the same interface an
LLM agent loop has, and serve as sanity baselines: the oracle must score 1.0 wherever gold
exists, the no-op agent about 0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from envsched_gym.declarations import AssistantTurn, TaskSpec, ToolCall
from envsched_gym.parsing import Format
from envsched_gym.rendering import render_calls, render_turn


class Policy:
    """An agent: ``begin`` at reset, then ``act`` once per step."""

    name = "policy"

    def begin(self, task: TaskSpec, info: dict[str, Any]) -> None:
        """Called after ``reset`` with the episode's task."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        """The next assistant message."""
        raise NotImplementedError


class OraclePolicy(Policy):
    """Replays the task's gold assistant turns in order, then says it is done."""

    name = "oracle"

    def __init__(self, fmt: Format = "qwen3") -> None:
        self.fmt = fmt
        self._turns: list[AssistantTurn] = []

    def begin(self, task: TaskSpec, info: dict[str, Any]) -> None:
        if task.solution is None:
            raise ValueError(f"task '{task.task_id}' has no gold solution; the oracle needs TaskSpec.solution")
        self._turns = list(task.solution)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return render_turn(self._turns.pop(0), self.fmt) if self._turns else "Done."


class NoOpPolicy(Policy):
    """Never calls a tool: answers every turn with a fixed refusal."""

    name = "no-op"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return "I cannot help with that."


class RandomPolicy(Policy):
    """Calls a random available tool with arguments drawn from its schema, then stops.

    Args:
        seed: RNG seed.
        max_calls: Calls per episode before it replies in text.
    """

    name = "random"

    def __init__(self, seed: int = 0, max_calls: int = 3) -> None:
        self.rng = np.random.default_rng(seed)
        self.max_calls = max_calls
        self._left = max_calls

    def begin(self, task: TaskSpec, info: dict[str, Any]) -> None:
        self._left = int(self.rng.integers(1, self.max_calls + 1))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        tools = info.get("tools") or []
        if self._left <= 0 or not tools:
            return "Here is what I found."
        self._left -= 1
        function = tools[int(self.rng.integers(len(tools)))]["function"]
        args = {k: self._sample(s) for k, s in function["parameters"].get("properties", {}).items()}
        return render_calls([ToolCall(function["name"], args)])

    def _sample(self, schema: dict[str, Any]) -> Any:
        if "enum" in schema:
            return schema["enum"][int(self.rng.integers(len(schema["enum"])))]
        kind = schema.get("type")
        if kind == "integer":
            return int(self.rng.integers(0, 100))
        if kind == "number":
            return float(np.round(self.rng.uniform(0, 100), 2))
        if kind == "boolean":
            return bool(self.rng.integers(2))
        if kind == "array":
            return [self._sample(schema.get("items", {})) for _ in range(int(self.rng.integers(0, 3)))]
        if kind == "object":
            return {}
        return "".join(self.rng.choice(list("abcdefghij"), size=5))


def run_episode(env: gym.Env, policy: Policy, task_id: str, seed: int = 0) -> dict[str, Any]:
    """Play one episode of ``task_id``; return the final ``info`` plus reward and step count."""
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    policy.begin(env.unwrapped.episode.task, info)
    total, steps, done = 0.0, 0, False
    while not done:
        observation, reward, terminated, truncated, info = env.step(policy.act(observation, info))
        total += float(reward)
        steps += 1
        done = terminated or truncated
    return {"reward": total, "steps": steps, "info": info}
