"""τ2 scoring components on hand-built episodes: DB, COMMUNICATE, ACTION, ENV_ASSERTION, NL_ASSERTION."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from envsched_gym.envs.tau.verifier import TauVerifier, action_matched, communicated

import envsched_gym
from envsched_gym import CallRecord, Episode, Message, TaskSpec, ToolCall, ToolError


@pytest.fixture(scope="module")
def adapter(benchmarks: Path) -> envsched_gym.Adapter:
    """The Tau adapter (fails without the benchmark data)."""
    adapter = envsched_gym.get_adapter("Tau")
    adapter.env_specs()
    return adapter


def _episode(adapter: envsched_gym.Adapter, task: TaskSpec, calls: list[ToolCall], text: str, termination: str = "agent") -> Episode:
    env = next(e for e in adapter.env_specs() if e.env_id == task.env_id)
    world = adapter.make_world(task)
    messages = [Message(role="user", content=task.instruction)]
    records = []
    for step, call in enumerate(calls):
        messages.append(Message.assistant("", calls=[call]))
        try:
            result = str(world.call(call.name, call.arguments))
        except ToolError as exc:
            result = f"Error: {exc}"
        write = call.name in {t.name for t in env.tools if t.write}
        records.append(CallRecord(0, step, call, result, True, write))
    messages.append(Message(role="assistant", content=text))
    return Episode(task=task, env=env, messages=messages, calls=records, termination=termination)  # type: ignore[arg-type]


def _gold_calls(task: TaskSpec) -> list[ToolCall]:
    return [ToolCall(a["name"], a["arguments"]) for a in task.verifier.params["actions"]]


def _task(adapter: envsched_gym.Adapter, task_id: str, **params: object) -> TaskSpec:
    task = copy.deepcopy(next(t for t in adapter.tasks() if t.task_id == task_id))
    task.verifier.params.update(params)
    return task


def test_communicate_uses_tau2_normalisation() -> None:
    said = [Message(role="assistant", content="Your refund is $1,126.04 in TOTAL.")]
    assert communicated("1126.04", said) and communicated("total", said)
    assert not communicated("1,126.04", said)  # τ2 strips commas from the message only
    assert not communicated("1126.04", [Message(role="user", content="1126.04")])


def test_action_matching_respects_compare_args() -> None:
    gold = {"name": "transfer_to_human_agents", "arguments": {"summary": "x"}, "compare_args": []}
    assert action_matched(gold, [ToolCall("transfer_to_human_agents", {"summary": "anything"})])
    strict = {"name": "get_order_details", "arguments": {"order_id": "#W1"}}
    assert not action_matched(strict, [ToolCall("get_order_details", {"order_id": "#W2"})])
    assert action_matched({**strict, "compare_args": ["order_id"]}, [ToolCall("get_order_details", {"order_id": "#W1", "extra": 1})])


def test_db_and_communicate_components(adapter: envsched_gym.Adapter) -> None:
    task = _task(adapter, "airline/4", reward_basis=["DB", "COMMUNICATE"], communicate_info=["327"])
    verifier = adapter.make_verifier(task)
    good = _episode(adapter, task, _gold_calls(task), "You will get 327 dollars back.")
    outcome = verifier.score(good, adapter.make_world(task))
    assert outcome.reward == 1.0 and outcome.breakdown == {"db": 1.0, "communicate": 1.0}
    silent = _episode(adapter, task, _gold_calls(task), "Done.")
    assert verifier.score(silent, adapter.make_world(task)).breakdown == {"db": 1.0, "communicate": 0.0}


def test_action_component_is_the_matched_fraction(adapter: envsched_gym.Adapter) -> None:
    task = _task(adapter, "retail/0", reward_basis=["ACTION"])
    half = _gold_calls(task)[:2]
    outcome = adapter.make_verifier(task).score(_episode(adapter, task, half, "ok"), adapter.make_world(task))
    assert outcome.breakdown == {"action": 2 / 5} and outcome.reward == pytest.approx(0.4) and not outcome.success


def test_env_assertions_call_world_methods(adapter: envsched_gym.Adapter) -> None:
    holds = {"env_type": "assistant", "func_name": "calculate", "arguments": {"expression": "1 + 1"}, "assert_value": "2.0"}
    task = _task(adapter, "retail/0", reward_basis=["ENV_ASSERTION"], env_assertions=[holds])
    episode = _episode(adapter, task, [], "ok")
    assert adapter.make_verifier(task).score(episode, adapter.make_world(task)).reward == 1.0
    task = _task(adapter, "retail/0", reward_basis=["ENV_ASSERTION"], env_assertions=[{**holds, "assert_value": "3.0"}])
    assert adapter.make_verifier(task).score(episode, adapter.make_world(task)).reward == 0.0


def test_nl_assertions_skipped_without_a_judge_and_judged_with_one(adapter: envsched_gym.Adapter) -> None:
    task = next(t for t in adapter.tasks() if t.verifier.params["nl_assertions"] and "NL_ASSERTION" in t.verifier.params["reward_basis"])
    episode = _episode(adapter, task, _gold_calls(task), "done")
    skipped = adapter.make_verifier(task).score(episode, adapter.make_world(task))
    assert skipped.reward == 1.0 and skipped.breakdown["nl_assertion_skipped"] == 1.0 and "skipped" in skipped.details["nl_assertion"]
    seen: list[int] = []

    def judge(assertions: list[str], messages: list[Message]) -> list[bool]:
        seen.append(len(messages))
        return [False] + [True] * (len(assertions) - 1)

    judged = envsched_gym.get_adapter("Tau", {"nl_judge": judge})
    outcome = judged.make_verifier(task).score(episode, judged.make_world(task))
    assert outcome.reward == 0.0 and outcome.breakdown["nl_assertion"] == 0.0 and seen == [len(episode.messages)]


def test_failing_judge_fails_the_component(adapter: envsched_gym.Adapter) -> None:
    task = next(t for t in adapter.tasks() if t.verifier.params["nl_assertions"] and "NL_ASSERTION" in t.verifier.params["reward_basis"])

    def broken(assertions: list[str], messages: list[Message]) -> list[bool]:
        raise TimeoutError("judge timed out")

    verifier = TauVerifier(task, adapter.make_world, adapter.gold_hash(task), broken)  # type: ignore[attr-defined]
    outcome = verifier.score(_episode(adapter, task, _gold_calls(task), "done"), adapter.make_world(task))
    assert outcome.reward == 0.0 and "judge timed out" in outcome.details["nl_assertion"]


@pytest.mark.parametrize("termination", ["max_steps", "turn_limit", "user_error"])
def test_abnormal_termination_scores_zero(adapter: envsched_gym.Adapter, termination: str) -> None:
    task = _task(adapter, "airline/4")
    episode = _episode(adapter, task, _gold_calls(task), "327", termination=termination)
    outcome = adapter.make_verifier(task).score(episode, adapter.make_world(task))
    assert outcome.reward == 0.0 and termination in outcome.details["note"]


def test_agent_writes_rejected_by_the_schema_are_not_replayed(adapter: envsched_gym.Adapter) -> None:
    task = _task(adapter, "airline/4", reward_basis=["DB"])
    episode = _episode(adapter, task, _gold_calls(task), "ok")
    bad = ToolCall("cancel_reservation", {"reservation_id": 7})
    episode.calls.append(CallRecord(0, 99, bad, "Error: invalid arguments", False, True))
    assert adapter.make_verifier(task).score(episode, adapter.make_world(task)).reward == 1.0
