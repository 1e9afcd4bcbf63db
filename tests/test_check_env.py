"""gymnasium's env checker passes for every registered envsched/* id."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import envsched_gym


@pytest.mark.parametrize("gym_id", envsched_gym.registered_ids())
def test_check_env(gym_id: str) -> None:
    env = gym.make(gym_id)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["tools"] is not None
