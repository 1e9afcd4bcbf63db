"""The Tau adapter over the full τ2 task sets: oracle replays, DB sensitivity, declarations, gym.make."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest
from envsched_gym.envs.tau.verifier import gold_calls, replay

import envsched_gym
from envsched_gym import TaskSpec, render_turn

TASK_SETS = ("current", "pre_tau3")
EXPECTED = {"retail": 114, "airline": 50}


@pytest.fixture(scope="module", params=TASK_SETS)
def adapter(request: pytest.FixtureRequest, benchmarks: Path) -> envsched_gym.Adapter:
    """The Tau adapter for one task set (fails without the benchmark data)."""
    adapter = envsched_gym.get_adapter("Tau", {"task_set": request.param})
    adapter.env_specs()
    return adapter


def _oracle(env: gym.Env, task: TaskSpec) -> tuple[float, dict]:
    env.reset(options={"task_id": task.task_id})
    for turn in task.solution or []:
        _, reward, terminated, truncated, info = env.step(render_turn(turn))
        if terminated or truncated:
            return float(reward), info
    return 0.0, {"termination": "oracle did not finish"}


def test_tasks_ids_splits_and_declarations(adapter: envsched_gym.Adapter) -> None:
    tasks = list(adapter.tasks("all"))
    by_domain = Counter(t.metadata["domain"] for t in tasks)
    assert dict(by_domain) == EXPECTED
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert Counter(t.split for t in tasks) == {"train": 74 + 30, "test": 40 + 20}
    prefix = "" if adapter.task_set == "current" else "@pre"  # type: ignore[attr-defined]
    assert {t.task_id.split("/")[0] for t in tasks} == {f"retail{prefix}", f"airline{prefix}"}
    specs = {e.env_id: e for e in adapter.env_specs()}
    assert [len(specs["Tau/retail"].tools), sum(t.write for t in specs["Tau/retail"].tools)] == [16, 7]
    assert [len(specs["Tau/airline"].tools), sum(t.write for t in specs["Tau/airline"].tools)] == [14, 6]
    assert "<policy>\n# Retail agent policy" in specs["Tau/retail"].system_prompt


def test_oracle_scores_one_on_every_task(adapter: envsched_gym.Adapter) -> None:
    failures = []
    for domain in EXPECTED:
        env = gym.make(f"envsched/Tau-{domain}-v0", adapter_options={"task_set": adapter.task_set})  # type: ignore[attr-defined]
        for task in adapter.tasks("all"):
            if task.metadata["domain"] == domain:
                reward, info = _oracle(env, task)
                if reward != 1.0 or info["termination"] != "agent":
                    failures.append((task.task_id, reward, info.get("termination"), info.get("reward_breakdown")))
    assert failures == []


def test_dropping_the_last_write_breaks_the_db_check(adapter: envsched_gym.Adapter) -> None:
    """Exact counts: current 129/130, pre_tau3 133/135 (the rest: gold writes that τ2's rules refuse)."""
    with_writes, broken, unbroken = 0, 0, []
    for task in adapter.tasks("all"):
        calls = gold_calls(task)
        world = adapter.make_world(task)
        writes = [i for i, c in enumerate(calls) if c.name in {t.name for t in world.tools() if t.write}]
        if not writes:
            continue
        with_writes += 1
        cut = calls[: writes[-1]] + calls[writes[-1] + 1 :]
        if replay(world, cut, validate=False).sha256() != adapter.gold_hash(task):  # type: ignore[attr-defined]
            broken += 1
        else:
            unbroken.append(task.task_id)
    expected = {"current": (130, 129), "pre_tau3": (135, 133)}[adapter.task_set]  # type: ignore[attr-defined]
    assert (with_writes, broken) == expected, unbroken
    assert broken / with_writes >= 0.95


@pytest.mark.usefixtures("benchmarks")
def test_scripted_episode_end_to_end_through_gym_make() -> None:
    """A scripted agent (authenticate, look up, confirm, cancel, report) against the scripted user."""
    env = gym.make("envsched/Tau-retail-v0")
    task, _ = env.unwrapped.index.get("retail/1")
    obs, info = env.reset(seed=0, options={"task_id": "retail/1"})
    assert obs == task.instruction and info["messages"][0]["role"] == "system"
    agent = [render_turn(t) for t in task.solution or []]
    rewards, steps = [], 0
    for action in agent:
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        steps += 1
        if terminated or truncated:
            break
    assert terminated and not truncated and steps == len(agent)
    assert rewards[-1] == 1.0 and info["outcome"]["details"]["db_hash"] == info["outcome"]["details"]["gold_db_hash"]


@pytest.mark.usefixtures("benchmarks")
def test_wrong_write_scores_zero_and_tool_errors_reach_the_agent() -> None:
    env = gym.make("envsched/Tau-airline-v0")
    env.reset(options={"task_id": "airline/0"})
    obs, *_ = env.step('<tool_call>{"name": "get_reservation_details", "arguments": {"reservation_id": "NOPE00"}}</tool_call>')
    assert "Error: Reservation NOPE00 not found" in obs
    env.step('<tool_call>{"name": "send_certificate", "arguments": {"user_id": "emma_kim_9957", "amount": 500}}</tool_call>')
    _, reward, terminated, _, info = env.step("All done.")
    assert terminated and reward == 0.0 and info["reward_breakdown"]["db"] == 0.0


@pytest.mark.usefixtures("benchmarks")
def test_step_limit_is_abnormal_and_scores_zero() -> None:
    env = gym.make("envsched/Tau-retail-v0", adapter_options={"max_steps": 2})
    env.reset(options={"task_id": "retail/105"})  # gold write fails: the untouched DB is the gold DB
    env.step('<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call>')
    _, reward, _, truncated, info = env.step('<tool_call>{"name": "calculate", "arguments": {"expression": "1+1"}}</tool_call>')
    assert truncated and reward == 0.0 and info["termination"] == "max_steps"


@pytest.mark.usefixtures("benchmarks")
def test_suite_options_select_the_task_set() -> None:
    nodes = envsched_gym.suite(["Tau"], split="test", options={"Tau": {"task_set": "pre_tau3"}})
    assert len(nodes) == 60 and all("@pre/" in n.task_id for n in nodes)


def test_unknown_options_say_what_is_accepted() -> None:
    with pytest.raises(ValueError, match="use one of"):
        envsched_gym.get_adapter("Tau", {"task_set": "tau3"})


@pytest.fixture(scope="module")
def tau1(benchmarks: Path) -> envsched_gym.Adapter:
    """The adapter over the original τ-bench tasks (fails without the benchmark data)."""
    adapter = envsched_gym.get_adapter("Tau", {"task_set": "tau1"})
    adapter.env_specs()
    list(adapter.tasks())
    return adapter


def test_tau1_tasks_read_as_tau2_tasks(tau1: envsched_gym.Adapter) -> None:
    tasks = list(tau1.tasks("all"))
    assert Counter((t.metadata["domain"], t.split) for t in tasks) == {
        ("retail", "train"): 500,
        ("retail", "test"): 135,
        ("airline", "test"): 50,
    }
    assert len({t.task_id for t in tasks}) == len(tasks) and tasks[0].task_id == "retail@tau1/train/0"
    first = tasks[0]
    assert first.verifier.params["reward_basis"] == ["DB", "COMMUNICATE"] and first.instruction.startswith("Hi! My name is Omar Anderson")
    with_outputs = next(t for t in tasks if t.verifier.params["communicate_info"])
    assert with_outputs.solution is not None and with_outputs.verifier.params["communicate_info"][0] in with_outputs.solution[-1].content


def test_tau1_oracle_and_db_sensitivity(tau1: envsched_gym.Adapter) -> None:
    """Oracle 1.0 on all 685 original τ-bench tasks; dropping the last write breaks 629 of the 655 with writes."""
    failures, with_writes, broken = [], 0, 0
    envs = {d: gym.make(f"envsched/Tau-{d}-v0", adapter_options={"task_set": "tau1"}) for d in EXPECTED}
    for task in tau1.tasks("all"):
        reward, info = _oracle(envs[task.metadata["domain"]], task)
        if reward != 1.0:
            failures.append((task.task_id, reward, info.get("reward_breakdown")))
        calls = gold_calls(task)
        writes = [i for i, c in enumerate(calls) if c.name in {t.name for t in envs[task.metadata["domain"]].unwrapped.tools() if t.write}]
        if writes:
            with_writes += 1
            cut = calls[: writes[-1]] + calls[writes[-1] + 1 :]
            broken += replay(tau1.make_world(task), cut, validate=False).sha256() != tau1.gold_hash(task)  # type: ignore[attr-defined]
    assert failures == [] and (with_writes, broken) == (655, 629)


@pytest.mark.usefixtures("benchmarks")
def test_scripted_agent_asks_the_scripted_user_and_acts_on_the_answer() -> None:
    """A rule-based agent: ask for the user id, look the user up, refuse politely; the user answers and stops."""
    env = gym.make("envsched/Tau-airline-v0")
    env.reset(options={"task_id": "airline/0"})
    answer, *_ = env.step("Could you tell me your user id, please?")
    assert answer == "My user id is emma_kim_9957."
    user_id = answer.rsplit(" ", 1)[-1].rstrip(".")
    obs, *_ = env.step(f'<tool_call>{{"name": "get_user_details", "arguments": {{"user_id": "{user_id}"}}}}</tool_call>')
    assert '"EHGLP3"' in obs
    _, reward, terminated, truncated, info = env.step("Under our policy this reservation cannot be cancelled.")
    assert terminated and not truncated and info["termination"] == "agent" and reward == 1.0
    assert info["messages"][-1] == {"role": "user", "content": "###STOP###"}
