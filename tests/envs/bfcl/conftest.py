"""Shared BFCL fixtures: one adapter over the benchmark data root and a runner of scripted messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from envsched_gym.env import ToolUseEnv

Play = Callable[[Any, list[str]], tuple[float, dict[str, Any]]]


@pytest.fixture(scope="session")
def bfcl(benchmarks):
    """The BFCL adapter over the benchmark data root (``$ENVSCHED_BENCHMARKS`` or ../shared/benchmarks; fails when absent)."""
    from envsched_gym.adapters.bfcl import BFCLAdapter

    return BFCLAdapter(data_dir=benchmarks)


@pytest.fixture(scope="session")
def play(bfcl) -> Play:
    """``play(task, messages)``: step ``messages`` through a fresh episode; ``(reward, last info)``."""
    envs: dict[str, ToolUseEnv] = {}

    def run(task, messages: list[str]) -> tuple[float, dict[str, Any]]:
        gym_id = f"envsched/BFCL-{task.metadata['category']}-v0"
        env = envs.setdefault(gym_id, ToolUseEnv(bfcl, gym_id))
        env.reset(seed=0, options={"task_id": task.task_id})
        reward, info = 0.0, {}
        for message in messages:
            _, reward, terminated, truncated, info = env.step(message)
            if terminated or truncated:
                return float(reward), info
        raise AssertionError(f"{task.task_id}: episode did not end after {len(messages)} messages")

    return run
