"""Shared BFCL fixtures: one adapter over ../shared/benchmarks and a runner of scripted messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envsched_gym.env import ToolUseEnv

DATA = Path(__file__).resolve().parents[4] / "shared" / "benchmarks"

Play = Callable[[Any, list[str]], tuple[float, dict[str, Any]]]


@pytest.fixture(scope="session")
def bfcl():
    """The BFCL adapter over the checkout's benchmark data (skips when the data is absent)."""
    if not DATA.is_dir():
        pytest.skip(f"BFCL data not found at {DATA}")
    from envsched_gym.adapters.bfcl import BFCLAdapter

    return BFCLAdapter(data_dir=DATA)


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
