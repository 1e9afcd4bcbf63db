"""UnicodeText: any string is an element, and vector envs carry it, shared memory included."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from hypothesis import given
from hypothesis import strategies as st

import envsched_gym  # noqa: F401  (registers the envs)
from envsched_gym.rendering import render_turn
from envsched_gym.spaces import UnicodeText


@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_shared_memory_round_trips_any_text(texts: list[str]) -> None:
    space = UnicodeText(max_length=40)
    memory = create_shared_memory(space, n=len(texts))
    view = read_from_shared_memory(space, memory, n=len(texts))
    for i, text in enumerate(texts):
        write_to_shared_memory(space, i, text, memory)
    assert copy.deepcopy(view) == tuple(texts)  # what AsyncVectorEnv hands out (copy=True)
    assert list(view) == texts and view[-1] == texts[-1]


def test_shared_memory_view_follows_later_writes() -> None:
    space = UnicodeText(max_length=8)
    memory = create_shared_memory(space, n=1)
    view = read_from_shared_memory(space, memory, n=1)
    write_to_shared_memory(space, 0, "你好", memory)
    assert view[0] == "你好"
    write_to_shared_memory(space, 0, "", memory)
    assert view[0] == ""


def test_shared_memory_refuses_text_longer_than_the_space() -> None:
    space = UnicodeText(max_length=3)
    memory = create_shared_memory(space, n=1)
    try:
        write_to_shared_memory(space, 0, "toolong", memory)
    except ValueError as exc:
        assert "at most 3 characters" in str(exc)
    else:
        raise AssertionError("a too-long observation was written")


def _replay(mode: str) -> list[tuple[tuple[str, ...], list[float]]]:
    """Reset two ToolWorld envs with fixed seeds and replay each one's gold turns."""
    envs = gym.make_vec("envsched/ToolWorld-v0", num_envs=2, vectorization_mode=mode)
    try:
        _, info = envs.reset(seed=3)
        core = gym.make("envsched/ToolWorld-v0").unwrapped
        turns = [[render_turn(t) for t in core.index.get(task_id)[0].solution] for task_id in info["task_id"]]
        trace = []
        for k in range(2):
            actions = [t[k] if k < len(t) else "Done." for t in turns]
            obs, reward, _, _, _ = envs.step(actions)
            trace.append((tuple(obs), [float(r) for r in reward]))
        return trace
    finally:
        envs.close()


def test_async_vector_env_sees_the_same_observations_as_sync() -> None:
    sync, async_ = _replay("sync"), _replay("async")
    assert sync == async_
    assert any("<tool_response>" in o for obs, _ in sync for o in obs)


def test_batched_reward_is_an_array() -> None:
    envs = gym.make_vec("envsched/ToolWorld-v0", num_envs=2, vectorization_mode="sync")
    envs.reset(seed=0)
    _, reward, terminated, _, _ = envs.step(["I cannot help.", "I cannot help."])
    assert isinstance(reward, np.ndarray) and reward.shape == (2,) and terminated.dtype == np.bool_
    envs.close()


def test_shared_memory_carries_lone_surrogates() -> None:
    """An agent can write ``"\\ud800"`` (JSON escapes make one); it has no UTF-32 form without surrogatepass."""
    space = UnicodeText(max_length=8)
    memory = create_shared_memory(space, n=1)
    write_to_shared_memory(space, 0, "a\ud800b\udfff", memory)
    assert read_from_shared_memory(space, memory, n=1)[0] == "a\ud800b\udfff"
