"""ACEBench adapter: every gold answer through the environment, agent end states and milestones."""

from __future__ import annotations

from functools import lru_cache

import gymnasium as gym
import pytest
from envsched_gym.adapters.acebench import ACEBenchAdapter
from envsched_gym.envs.acebench.agent_check import milestone_alternatives, parse_call_string, resolve_class
from envsched_gym.envs.acebench.verifiers import AgentVerifier
from envsched_gym.envs.acebench.world import ScenarioWorld
from gymnasium.utils.env_checker import check_env

import envsched_gym
from envsched_gym import CallRecord, Episode, Message, TaskSpec, ToolCall, render_turn

pytestmark = pytest.mark.usefixtures("benchmarks")
"""Every test here reads the ACEBench data: missing data fails them (tests/conftest.py)."""

IDS = ["envsched/ACE-normal-v0", "envsched/ACE-special-v0", "envsched/ACE-agent-v0"]
FAITHFUL_REJECTS_GOLD = {
    "ace/en/normal_preference_40": "an array-of-objects parameter whose ground truth is ['None']",
    "ace/zh/normal_similar_api_2": "the function is named personalized_learning_2 and the suffix is stripped",
    "ace/zh/normal_similar_api_22": "the function is named perception_check_1 and the suffix is stripped",
    "ace/zh/normal_atom_object_short_1": "the ground truth omits a required parameter",
}
"""Entries whose own ground truth the original evaluator rejects (docs/acebench.md)."""


@lru_cache(maxsize=2)
def adapter(mode: str) -> ACEBenchAdapter:
    return envsched_gym.get_adapter("ACE", {"mode": mode})  # type: ignore[return-value]


def run_gold(env: gym.Env, task: TaskSpec) -> dict:
    env.reset(options={"task_id": task.task_id})
    for turn in task.solution or []:
        _, _, terminated, truncated, info = env.step(render_turn(turn))
        if terminated or truncated:
            return info
    raise AssertionError(f"{task.task_id}: the gold solution did not end the episode")


@pytest.mark.parametrize("mode", ["strict", "faithful"])
def test_every_gold_answer_through_the_environment(mode: str) -> None:
    envs = {gid: gym.make(gid, adapter_options={"mode": mode}) for gid in IDS}
    failed, solved = {}, 0
    for task in adapter(mode).tasks():
        if task.solution is None:
            continue
        info = run_gold(envs[f"envsched/ACE-{task.metadata['group']}-v0"], task)
        solved += 1
        if info["outcome"]["reward"] != 1.0:
            failed[task.task_id] = info["outcome"]["details"]
    assert solved == 1940 + 82  # every normal and special entry, and the agent entries whose milestones reach the end state
    assert set(failed) == (set(FAITHFUL_REJECTS_GOLD) if mode == "faithful" else set()), failed


def agent_tasks() -> list[TaskSpec]:
    return [t for t in adapter("strict").tasks() if t.metadata["group"] == "agent"]


def test_counts_and_ids() -> None:
    tasks = list(adapter("strict").tasks())
    assert len(tasks) == 2040 and len({t.task_id for t in tasks}) == 2040
    assert "ace/en/normal_atom_bool_3" in {t.task_id for t in tasks}
    assert len(agent_tasks()) == 100
    assert {e.gym_id for e in adapter("strict").env_specs()} == set(IDS)


def episode_with(task: TaskSpec, calls: list[list]) -> Episode:
    env = next(e for e in adapter("strict").env_specs() if e.env_id == task.env_id)
    episode = Episode(task=task, env=env, termination="agent")
    for i, message_calls in enumerate(calls):
        episode.messages.append(Message.assistant("", calls=message_calls))
        episode.calls += [CallRecord(0, i + 1, c, "ok", True, True) for c in message_calls]
    episode.messages.append(Message(role="assistant", content="done"))
    return episode


@pytest.mark.parametrize("mode", ["strict", "faithful"])
def test_ground_truth_end_state_scores_one(mode: str) -> None:
    for task in agent_tasks():
        world = adapter(mode).make_world(task)
        assert isinstance(world, ScenarioWorld)
        for gold in task.verifier.params["ground_truth"]:
            name, attributes = next(iter(gold.items()))
            world.load_state({resolve_class(name, list(world.instances)): attributes})
        reached = episode_with(task, [[ToolCall("turn_on_wifi", {})]])  # faithful needs one executed call
        outcome = AgentVerifier(task, mode).score(reached, world)
        assert outcome.breakdown == {"end_state": 1.0, "process": 1.0}, (task.task_id, outcome.details)


@pytest.mark.parametrize("mode", ["strict", "faithful"])
def test_milestone_sequence_scores_process_one(mode: str) -> None:
    for task in agent_tasks():
        for stones in milestone_alternatives(task.verifier.params["mile_stone"]):
            calls = [parse_call_string(s) for s in stones]
            assert all(c is not None for c in calls), (task.task_id, stones)
            world = adapter(mode).make_world(task)  # the initial state: the end state is not reached
            outcome = AgentVerifier(task, mode).score(episode_with(task, calls), world)
            assert outcome.breakdown["process"] == 1.0, (task.task_id, stones)


def test_a_wrong_end_state_scores_zero_with_partial_process() -> None:
    task = next(t for t in agent_tasks() if t.task_id == "ace/en/agent_multi_turn_0")
    world = adapter("strict").make_world(task)
    stones = milestone_alternatives(task.verifier.params["mile_stone"])[0]
    outcome = AgentVerifier(task, "strict").score(episode_with(task, [parse_call_string(stones[0])]), world)
    assert outcome.reward == 0.0 and outcome.breakdown["process"] == round(1 / len(stones), 3)
    assert outcome.details["state_errors"]


@pytest.mark.parametrize("gym_id", IDS)
def test_env_checker(gym_id: str) -> None:
    check_env(gym.make(gym_id).unwrapped, skip_render_check=True)


def test_options_select_language_and_categories() -> None:
    zh = envsched_gym.get_adapter("ACE", {"language": "zh", "categories": ["special_irrelevant", "agent_multi_step"]})
    ids = [t.task_id for t in zh.tasks()]
    assert len(ids) == 70 and all(i.startswith("ace/zh/") for i in ids)
    assert {e.env_id for e in zh.env_specs()} == {"ACE/special/special_irrelevant/zh", "ACE/agent/agent_multi_step/zh"}
    with pytest.raises(ValueError, match="unknown ACEBench categories"):
        ACEBenchAdapter(categories=["normal_atom_boolean"])


def test_special_prompt_and_single_response() -> None:
    env = gym.make("envsched/ACE-special-v0")
    obs, info = env.reset(options={"task_id": "ace/en/special_irrelevant_0"})
    assert "Conversation history 1..t" in obs
    _, reward, terminated, _, info = env.step("[turn_on_wifi()]")
    assert terminated and reward == 0.0 and info["outcome"]["details"]["errors"]


class EchoBackend:
    """A stand-in chat model: finishes the conversation on its second turn."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.calls += 1
        return "I want to message Frank." if self.calls == 1 else "finish conversation"


def test_llm_user_is_pluggable() -> None:
    backend = EchoBackend()
    env = gym.make("envsched/ACE-agent-v0", adapter_options={"user_backend": backend, "categories": ["agent_multi_turn"]})
    obs, _ = env.reset(options={"task_id": "ace/en/agent_multi_turn_0"})
    assert obs == "I want to message Frank."
    _, _, terminated, _, info = env.step("Sure, what should it say?")
    assert terminated and info["termination"] == "user_stop" and backend.calls == 2
