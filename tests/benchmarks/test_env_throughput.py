"""The throughput benchmark runs end to end on a slice of ToolWorld, and its by-hand sides do
the env's work: the loop's transcripts and call records are the env's, message for message."""

from __future__ import annotations

import gymnasium as gym

from benchmarks.env_throughput import GYM_ID, ThroughputConfig, main, replay_inputs, run_loop
from envsched_gym.episode import Episode


def test_env_throughput_smoke(capsys) -> None:
    figures = main(ThroughputConfig(tasks=150, repeats=1, cpu=-1))
    assert figures["env_reward"] == figures["loop_reward"] == figures["direct_reward"] == 1.0
    assert figures["env_steps_per_s"] > 0 and figures["direct_steps_per_s"] > 0
    out = capsys.readouterr().out
    assert "ToolUseEnv (gym.make)" in out and "wrapper overhead" in out


def _env_episode(env: gym.Env, task_id: str, actions: list[str]) -> Episode:
    env.reset(options={"task_id": task_id})
    for action in actions:
        *_, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    return env.unwrapped.episode


def test_loop_builds_the_env_transcript_and_records() -> None:
    env = gym.make(GYM_ID)
    index = env.unwrapped.index
    ids = index.ids("all")[::29]  # 200 tasks over every domain and pattern
    by_id, by_task = replay_inputs(index, ids)
    kept: list[Episode] = []
    run_loop(env.unwrapped.adapter, index, by_task, keep=kept)
    assert len(kept) == len(ids)
    for (task_id, actions), loop in zip(by_id, kept, strict=True):
        ours = _env_episode(env, task_id, actions)
        assert [dict(m) for m in loop.messages] == [dict(m) for m in ours.messages], task_id
        assert loop.calls == ours.calls and (loop.turn, loop.termination) == (ours.turn, ours.termination), task_id


def test_loop_applies_the_per_turn_cap_like_the_env() -> None:
    env = gym.make(GYM_ID)
    index = env.unwrapped.index
    task_id = index.ids("all")[0]
    task, spec = index.get(task_id)
    looping = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    actions = [looping] * (spec.max_steps_per_turn + 3)
    kept: list[Episode] = []
    run_loop(env.unwrapped.adapter, index, [(task, actions)], keep=kept)
    ours = _env_episode(env, task_id, actions)
    assert ours.termination == "turn_limit" and ours.steps == spec.max_steps_per_turn
    assert [dict(m) for m in kept[0].messages] == [dict(m) for m in ours.messages]
