"""The suite's environments driven through SkyRL-gym's own interface (``skyrl_gym.make``, ``init``,
``step``), with the rewards of the gymnasium path."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import pytest
import skyrl_gym  # the skyrl extra (make setup installs it)

import envsched_gym
from envsched_gym import registry
from envsched_gym.integrations.skyrl import ENV_CLASS, EnvSchedSkyRLEnv, register, skyrl_rows
from envsched_gym.policies import RandomPolicy
from envsched_gym.rendering import render_turn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lampworld"


@pytest.fixture(scope="module")
def toolworld() -> envsched_gym.Suite:
    register()
    nodes = envsched_gym.suite("ToolWorld", split="train")
    return envsched_gym.Suite([n for n in nodes if n.task.metadata["variant"] == 0][:60])


def make(node: envsched_gym.TaskNode, **config: object) -> EnvSchedSkyRLEnv:
    env = skyrl_gym.make(ENV_CLASS, env_config=config, extras={"task_id": node.task_id, "gym_id": node.env.gym_id})
    assert isinstance(env, EnvSchedSkyRLEnv) and isinstance(env, skyrl_gym.Env)
    return env


def play(env: EnvSchedSkyRLEnv, actions: list[str]) -> tuple[list[dict], list]:
    chat, _ = env.init()
    outputs = []
    for action in actions:
        out = env.step(action)
        outputs.append(out)
        chat += [{"role": "assistant", "content": action}, *out["observations"]]
        if out["done"]:
            break
    return chat, outputs


def test_gold_episode_through_skyrl_scores_one(toolworld: envsched_gym.Suite) -> None:
    node = next(n for n in toolworld if n.task.metadata["pattern"] == "chain")
    env = make(node)
    chat, outputs = play(env, [render_turn(t) for t in node.task.solution])
    assert outputs[-1]["done"] and outputs[-1]["reward"] == 1.0 and all(o["reward"] == 0.0 for o in outputs[:-1])
    assert outputs[0]["observations"] and all(m["role"] == "tool" for m in outputs[0]["observations"])
    assert outputs[-1]["metadata"]["breakdown"]["state_match"] == 1.0 and env.get_metrics()["success"] == 1.0
    assert chat[0]["role"] == "system" and "<tools>" in chat[0]["content"] and chat[1]["role"] == "user"


def test_ask_task_gets_the_next_user_turn_as_an_observation(toolworld: envsched_gym.Suite) -> None:
    node = next(n for n in toolworld if n.task.metadata["pattern"] == "ask")
    _, outputs = play(make(node), [render_turn(t) for t in node.task.solution])
    assert outputs[0]["observations"] == [{"role": "user", "content": node.task.user_turns[1]}] and not outputs[0]["done"]
    assert outputs[-1]["reward"] == 1.0


def test_rewards_equal_the_gymnasium_path(toolworld: envsched_gym.Suite) -> None:
    """A random tool caller on 60 tasks: the same actions give the same rewards both ways."""
    for seed, node in enumerate(toolworld):
        policy, env = RandomPolicy(seed), gym.make(node.env.gym_id)
        obs, info = env.reset(options={"task_id": node.task_id})
        policy.begin(node.task, info)
        actions, done, reward = [], False, 0.0
        while not done:
            actions.append(policy.act(obs, info))
            obs, reward, terminated, truncated, info = env.step(actions[-1])
            done = terminated or truncated
        _, outputs = play(make(node), actions)
        assert outputs[-1]["done"] and outputs[-1]["reward"] == reward, node.task_id


def test_hostile_text_is_an_observation_not_an_exception(toolworld: envsched_gym.Suite) -> None:
    env = make(toolworld[0])
    env.init()
    out = env.step('<tool_call>{"name": "rm_rf", "arguments": {"x": 1e999999}}</tool_call>')
    assert not out["done"] and out["observations"][0]["content"].startswith("Error:")


def test_rows_carry_the_opening_and_a_wrong_prompt_is_refused(toolworld: envsched_gym.Suite) -> None:
    rows = skyrl_rows(envsched_gym.Suite(toolworld[:3]))
    assert [r["env_class"] for r in rows] == [ENV_CLASS] * 3
    row = rows[0]
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(ENV_CLASS, env_config={}, extras=extras)
    assert env.init(row["prompt"])[0] == row["prompt"]
    with pytest.raises(ValueError, match="not the task's opening"):
        env.init([{"role": "user", "content": "something else"}])
    bare = skyrl_gym.make(ENV_CLASS, env_config={"tools_in_prompt": False}, extras=extras)
    assert "<tools>" not in bare.init()[0][0]["content"]


def test_bad_extras_and_config_are_errors(toolworld: envsched_gym.Suite) -> None:
    with pytest.raises(ValueError, match=r"unknown extras key\(s\) \['task'\]"):
        EnvSchedSkyRLEnv({}, {"task": "x", "task_id": "y", "gym_id": "envsched/ToolWorld-v0"})
    with pytest.raises(ValueError, match=r"extras need \['gym_id'\]"):
        EnvSchedSkyRLEnv({}, {"task_id": toolworld[0].task_id})
    with pytest.raises(ValueError, match="unknown env_config key"):
        EnvSchedSkyRLEnv({"tools": True}, {"task_id": "y", "gym_id": "envsched/ToolWorld-v0"})


def test_a_user_family_reaches_skyrl_through_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    register()
    monkeypatch.syspath_prepend(str(FIXTURES))
    entry = registry._FAMILIES.pop("LampWorld", None)
    sys.modules.pop("lampworld", None)
    try:
        import lampworld  # noqa: F401  (registers LampWorld so that the suite can list it)

        node = envsched_gym.suite("LampWorld")[0]
        rows = skyrl_rows(envsched_gym.Suite([node]), imports=["lampworld"])
        extras = {k: v for k, v in rows[0].items() if k not in ("prompt", "env_class")}
        _, outputs = play(skyrl_gym.make(ENV_CLASS, env_config={}, extras=extras), [render_turn(t) for t in node.task.solution])
        assert extras["imports"] == ["lampworld"] and outputs[-1]["reward"] == 1.0
    finally:
        registry._FAMILIES.pop("LampWorld", None)
        if entry is not None:
            registry._FAMILIES["LampWorld"] = entry
