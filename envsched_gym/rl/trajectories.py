"""Gold conversations: a task's gold solution replayed through its environment, as chat messages.

They are the text a micro model's tokenizer is trained on and the data of its SFT warm start,
so both see exactly what the environment shows an agent (system prompt, tool schemas, tool
results, scripted user turns).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from envsched_gym.rendering import render_turn
from envsched_gym.suite import Suite, TaskNode


@dataclass
class Conversation:
    """A chat transcript plus the tool schemas it was held with (chat-template form)."""

    task_id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    reward: float


def gold_conversation(node: TaskNode, env: gym.Env | None = None) -> Conversation | None:
    """Replay ``node``'s gold solution; ``None`` when the task has no gold solution.

    Args:
        node: The suite node to replay.
        env: A made environment for the node's gym id (made here when omitted).
    """
    if not node.task.solution:
        return None
    env = env or gym.make(node.env.gym_id)
    _, info = env.reset(seed=0, options={"task_id": node.task_id})
    messages, tools, reward = list(info["messages"]), info["tools"], 0.0
    for turn in node.task.solution:
        _, reward, terminated, truncated, info = env.step(render_turn(turn))
        messages.extend(info["messages"])
        if terminated or truncated:
            break
    return Conversation(node.task_id, messages, tools, float(reward))


def gold_conversations(suite: Suite, successful_only: bool = True) -> Iterator[Conversation]:
    """Gold conversations of every node with a solution (one environment per gym id)."""
    envs: dict[str, gym.Env] = {}
    for node in suite:
        gym_id = node.env.gym_id
        if gym_id not in envs:
            envs[gym_id] = gym.make(gym_id)
        conv = gold_conversation(node, envs[gym_id])
        if conv is not None and (conv.reward > 0 or not successful_only):
            yield conv
