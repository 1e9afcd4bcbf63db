"""ToolWorld adapter: the oracle scores 1.0 and a no-op policy 0.0 on every task, through gym.make."""

from __future__ import annotations

import collections

import gymnasium as gym
import pytest
from envsched_gym.adapters.toolworld import GYM_ID, ToolWorldAdapter
from gymnasium.utils.env_checker import check_env

import envsched_gym
from envsched_gym import render_turn

NO_OP = "I cannot help with that."


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make(GYM_ID)


def _episode(env: gym.Env, task_id: str, actions: list[str] | None) -> tuple[float, dict]:
    """Play ``actions`` (``None``: the no-op reply, repeated) until the episode ends."""
    env.reset(options={"task_id": task_id})
    step = 0
    while True:
        action = NO_OP if actions is None else actions[step]
        _, reward, terminated, truncated, info = env.step(action)
        step += 1
        if terminated or truncated:
            return float(reward), info


def test_oracle_scores_one_on_every_task(env: gym.Env) -> None:
    index = env.unwrapped.index
    ids = index.ids("all")
    assert len(ids) >= 5000
    failures = []
    for task_id in ids:
        task = index.get(task_id)[0]
        reward, info = _episode(env, task_id, [render_turn(t) for t in task.solution])
        if reward != 1.0 or info["termination"] != "agent":
            failures.append((task_id, info["outcome"]))
    assert not failures, f"{len(failures)} of {len(ids)} gold solutions failed, e.g. {failures[:3]}"


def test_no_op_scores_zero_on_every_task(env: gym.Env) -> None:
    ids = env.unwrapped.index.ids("all")
    rewards = collections.Counter()
    for task_id in ids:
        reward, info = _episode(env, task_id, None)
        rewards[reward] += 1
        assert info["termination"] == "agent"
    mean = sum(r * n for r, n in rewards.items()) / len(ids)
    assert mean == 0.0, f"no-op mean reward {mean:.4f} ({rewards})"


def test_env_specs_and_registration(env: gym.Env) -> None:
    adapter = env.unwrapped.adapter
    assert isinstance(adapter, ToolWorldAdapter) and adapter is envsched_gym.get_adapter("ToolWorld")
    specs = adapter.env_specs()
    assert len({s.env_id for s in specs}) == len(specs) >= 100
    for spec in specs:
        assert spec.gym_id == GYM_ID and spec.family == "ToolWorld" and spec.env_id.startswith("ToolWorld/")
        assert spec.tools is adapter.variant(spec.env_id).tools()
        assert "Policies:" in spec.system_prompt and spec.verifier_kind == "state+facts+process"
    nodes = envsched_gym.suite("ToolWorld", split="heldout")
    assert len(nodes) == len(adapter.tasks("heldout")) and all(n.env.split == "heldout" for n in nodes)


def test_check_env(env: gym.Env) -> None:
    check_env(gym.make(GYM_ID).unwrapped, skip_render_check=True)


def test_reset_without_task_id_draws_from_the_split() -> None:
    env = gym.make(GYM_ID, split="heldout")
    _, info = env.reset(seed=3)
    first = info["task_id"]
    assert env.unwrapped.index.get(first)[0].split == "heldout"
    assert env.reset(seed=3)[1]["task_id"] == first
    assert info["tools"] and info["messages"][0]["role"] == "system"


def test_bad_options_say_how_to_fix() -> None:
    with pytest.raises(ValueError, match="heldout_variants"):
        ToolWorldAdapter(variants_per_domain=2, heldout_variants=2)
    with pytest.raises(KeyError, match="ids look like"):
        ToolWorldAdapter(variants_per_domain=1, heldout_variants=0).variant("ToolWorld/nowhere-0")
