"""ToolWorld verifier: each check fails the episode on its own, and only the right process passes."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import pytest

import envsched_gym
from envsched_gym import TaskSpec, ToolCall, ToolError, render_calls, render_turn

ENV_ID = "envsched/ToolWorld-v0"


@pytest.fixture(scope="module")
def env() -> gym.Env:
    return gym.make(ENV_ID)


@pytest.fixture(scope="module")
def tasks(env: gym.Env) -> list[TaskSpec]:
    index = env.unwrapped.index
    return [index.get(i)[0] for i in index.ids("all")]


def _find(tasks: list[TaskSpec], pred: Callable[[TaskSpec], bool]) -> TaskSpec:
    return next(t for t in tasks if pred(t))


def _play(env: gym.Env, task: TaskSpec, turns: list[str]) -> dict:
    env.reset(options={"task_id": task.task_id})
    for text in turns:
        _, reward, terminated, truncated, info = env.step(text)
        if terminated or truncated:
            return info
    raise AssertionError("the episode did not end")


def _gold(task: TaskSpec) -> list[str]:
    return [render_turn(t) for t in task.solution]


def test_missing_fact_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    task = _find(tasks, lambda t: t.metadata["pattern"] == "chain" and t.verifier.params["facts"])
    turns = _gold(task)
    info = _play(env, task, [*turns[:-1], "All done."])
    assert info["outcome"]["reward"] == 0.0
    assert info["reward_breakdown"] == {"state_match": 1.0, "facts": 0.0, "sourced": 1.0, "grounded": 1.0, "completed": 1.0}
    assert str(task.verifier.params["facts"]) in info["outcome"]["details"]["blocks"]["facts"]


def test_wrong_state_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    task = _find(tasks, lambda t: t.metadata["pattern"] == "single" and t.metadata["n_writes"] == 1)
    info = _play(env, task, [task.solution[-1].content])
    assert info["reward_breakdown"]["state_match"] == 0.0 and info["outcome"]["reward"] == 0.0


def test_refusing_after_doing_it_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """Policy-limit refusals the tool would accept: making the refused call changes the state."""
    checked = 0
    for task in [t for t in tasks if t.metadata.get("refusal") == "policy"][::10]:
        call = ToolCall.from_dict(task.metadata["refused_call"])
        env.reset(options={"task_id": task.task_id})
        _, _, _, _, info = env.step(render_calls([call]))
        if info["messages"][-1]["content"].startswith("Error:"):
            continue  # also over a hard limit: the tool refuses by itself
        _, reward, terminated, _, info = env.step(task.solution[-1].content)
        assert terminated and reward == 0.0, task.task_id
        assert info["reward_breakdown"]["state_match"] == 0.0
        if task.verifier.params["max_writes"] == 0:
            assert info["reward_breakdown"]["refusal"] == 0.0
        checked += 1
    assert checked >= 20


def test_refused_calls_are_refused_by_a_rule(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """Bound and status refusals break a rule the tool enforces; policy ones a prompt-only limit."""
    adapter = env.unwrapped.adapter
    for task in [t for t in tasks if t.metadata["pattern"] == "refuse"][::7]:
        call = ToolCall.from_dict(task.metadata["refused_call"])
        world = adapter.make_world(task)
        if task.metadata["refusal"] == "policy":
            limit = adapter.variant(task.env_id).limits[call.name]
            assert str(limit) in task.verifier.params["facts"] and call.arguments[next(reversed(call.arguments))] > limit
        else:
            with pytest.raises(ToolError):
                world.call(call.name, call.arguments)


def test_ask_task_needs_a_question_before_any_write(env: gym.Env, tasks: list[TaskSpec]) -> None:
    task = _find(tasks, lambda t: t.metadata["pattern"] == "ask" and t.metadata["n_calls"] == 1)
    gold = _gold(task)
    info = _play(env, task, gold)
    assert info["outcome"]["reward"] == 1.0
    statement = _play(env, task, ["Tell me which one you mean.", *gold[1:]])
    assert statement["outcome"]["reward"] == 0.0 and "did not ask" in statement["outcome"]["details"]["blocks"]["ask_clarification"]
    eager = _play(env, task, [gold[1], "Which one did you mean?", gold[1], gold[-1]])
    assert eager["reward_breakdown"]["ask_clarification"] == 0.0
    assert "before asking" in eager["outcome"]["details"]["blocks"]["ask_clarification"]


def test_refusal_that_claims_success_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """The agent tries the refused call, gets the tool's error, then says it is done: reward 0
    (the old verifier checked only the writes and the quoted facts, and scored this 1.0)."""
    checked = 0
    for task in [t for t in tasks if t.metadata.get("refusal") in ("bound", "status") and t.verifier.params["max_writes"] == 0][::5]:
        call = ToolCall.from_dict(task.metadata["refused_call"])
        facts = " ".join(task.verifier.params["facts"])
        lie = f"Done, it is taken care of ({facts})."
        info = _play(env, task, [*[render_turn(t) for t in task.solution[:-1]], render_calls([call]), lie])
        assert info["outcome"]["reward"] == 0.0, task.task_id
        assert info["reward_breakdown"] == {"state_match": 1.0, "facts": 1.0, "sourced": 1.0, "grounded": 1.0, "refusal": 0.0, "completed": 1.0}
        checked += 1
    assert checked >= 10


def test_step_limit_scores_zero(env: gym.Env, tasks: list[TaskSpec]) -> None:
    task = _find(tasks, lambda t: t.metadata["pattern"] == "single" and t.metadata["n_writes"] == 0)
    read = render_turn(task.solution[0])
    env.reset(options={"task_id": task.task_id})
    for _ in range(env.unwrapped.episode.env.max_steps_per_turn):
        _, reward, terminated, truncated, info = env.step(read)
    assert truncated and not terminated and reward == 0.0 and info["termination"] == "turn_limit"


def test_oracle_in_python_and_openai_formats(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """Gold turns rendered in the other wire formats score the same (every 25th task)."""
    for fmt in ("python", "openai"):
        for task in tasks[::25]:
            info = _play(env, task, [render_turn(t, fmt) for t in task.solution])
            assert info["outcome"]["reward"] == 1.0, (fmt, task.task_id, info["outcome"])


def test_adapter_options_change_the_suite() -> None:
    env = envsched_gym.make(ENV_ID, adapter_options={"seed": 7, "variants_per_domain": 2})
    index = env.unwrapped.index
    assert len(index.envs) == 2 * 22 and len(index.tasks) == 2 * 22 * 44
    task = index.get(index.ids("heldout")[0])[0]
    assert _play(env, task, _gold(task))["outcome"]["reward"] == 1.0


def test_an_answer_that_contains_the_fact_only_inside_another_number_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """What the SmolLM2 policy of the real comparison (seed 2) learned: read the booking, then answer
    ``BKG-007: 21`` to "how many nights", which a substring test scored 1.0 for a 1-night booking."""
    task = next(t for t in tasks if t.task_id == "ToolWorld/hotel-1/003")
    assert task.verifier.params["facts"] == ["1"]  # the booking has 1 night
    turns = _gold(task)
    assert _play(env, task, turns)["outcome"]["reward"] == 1.0
    info = _play(env, task, [*turns[:-1], "BKG-007: 21"])
    assert info["reward_breakdown"] == {"state_match": 1.0, "facts": 0.0, "sourced": 1.0, "grounded": 1.0, "completed": 1.0}


def test_an_answer_that_lists_numbers_to_hit_the_fact_fails(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """Whole-token matching alone would pass it: 1 is one of the listed numbers."""
    task = next(t for t in tasks if t.task_id == "ToolWorld/hotel-1/003")
    turns = _gold(task)
    info = _play(env, task, [*turns[:-1], "BKG-007 has " + " or ".join(str(n) for n in range(1, 15)) + " nights."])
    # other bookings' nights are alternatives the agent never read (sourced), and most numbers nothing gave it (grounded)
    assert info["reward_breakdown"] == {"state_match": 1.0, "facts": 1.0, "sourced": 0.0, "grounded": 0.0, "completed": 1.0}
    assert "[2, 3, 4, 6" in info["outcome"]["details"]["blocks"]["grounded"]  # the numbers nothing the agent was given says


def _breakdown(env: gym.Env, task_id: str, turns: list[str]) -> tuple[dict[str, float], dict[str, str]]:
    info = _play(env, task_id_task(env, task_id), turns)
    return info["reward_breakdown"], info["outcome"]["details"]["blocks"]


def task_id_task(env: gym.Env, task_id: str) -> TaskSpec:
    return env.unwrapped.index.get(task_id)[0]


GET_BKG_013 = '<tool_call>\n{"name": "get_booking", "arguments": {"booking_id": "BKG-013"}}\n</tool_call>'


def test_a_fact_guessed_before_looking_it_up_fails(env: gym.Env) -> None:
    """Session 41's seed 3: the policy learned to say ``suite`` (3 of the first 3 bookings are suites)
    for "the room type of booking BKG-013", with no lookup or after a failed call that echoed it."""
    guess = "The room type of booking BKG-013 is suite."
    assert task_id_task(env, "ToolWorld/hotel-3/004").verifier.params["facts"] == ["suite"]
    assert _breakdown(env, "ToolWorld/hotel-3/004", [GET_BKG_013, guess])[0]["sourced"] == 1.0
    breakdown, why = _breakdown(env, "ToolWorld/hotel-3/004", [guess])
    assert breakdown == {"state_match": 1.0, "facts": 1.0, "sourced": 0.0, "grounded": 1.0, "completed": 1.0}
    assert "['suite'] are in no tool_results the agent received" in why["sourced"]
    echo = '<tool_call>\n{"name": "extend_stay", "arguments": {"booking_id": "BKG-013", "nights": "suite"}}\n</tool_call>'
    assert _breakdown(env, "ToolWorld/hotel-3/004", [echo, guess])[0]["sourced"] == 0.0  # the error echoes "suite"


def test_a_number_copied_from_a_parse_error_fails(env: gym.Env) -> None:
    """Session 41's seed 3: the answer ``... invalid syntax (<unknown>, line 1)`` stated 1 item."""
    assert task_id_task(env, "ToolWorld/shop-4/007").verifier.params["facts"] == ["1"]
    copied = "Error: could not parse the tool call: Expecting value: line 1"
    breakdown, _ = _breakdown(env, "ToolWorld/shop-4/007", ["<tool_call>\nget_order(ORD-015\n</tool_call>", copied])
    assert breakdown == {"state_match": 1.0, "facts": 1.0, "sourced": 0.0, "grounded": 0.0, "completed": 1.0}


def test_listing_values_of_the_asked_field_fails_unless_they_were_looked_up(env: gym.Env) -> None:
    """Session 41's seed 3 listed days (``['Monday', 'Weekend', 'Thursday', 'Friday']``) for "the day of EVT-013"."""
    task = task_id_task(env, "ToolWorld/calendar-4/002")
    assert task.verifier.params["facts"] == ["Wednesday"]
    get = '<tool_call>\n{"name": "get_event", "arguments": {"event_id": "EVT-013"}}\n</tool_call>'
    breakdown, why = _breakdown(env, task.task_id, [get, "The day of event EVT-013 is Monday, Wednesday or Friday."])
    assert breakdown == {"state_match": 1.0, "facts": 1.0, "sourced": 0.0, "grounded": 1.0, "completed": 1.0}
    assert "['Monday']" in why["sourced"]  # Friday is no event's day here, so it is no alternative
    monday = next(k for k, r in task.initial_state["records"].items() if r["day"] == "Monday")
    look = f'<tool_call>\n{{"name": "get_event", "arguments": {{"event_id": "{monday}"}}}}\n</tool_call>'
    both = _breakdown(env, task.task_id, [get, look, f"EVT-013 is on Wednesday; {monday} is on Monday."])[0]
    assert both["sourced"] == 1.0  # a value it looked up is not a guess


def test_a_policy_number_is_a_source_only_for_refusals(env: gym.Env, tasks: list[TaskSpec]) -> None:
    """inventory-5/000 asks a value that happens to equal a limit in the system prompt: quoting the
    policy without a lookup is grounded but not sourced; a refusal may quote it (it must)."""
    task = task_id_task(env, "ToolWorld/inventory-5/000")
    (fact,) = task.verifier.params["facts"]
    env.reset(options={"task_id": task.task_id})
    assert fact in env.unwrapped.episode.messages[0]["content"]  # the system prompt's policy
    breakdown, _ = _breakdown(env, task.task_id, [f"It is {fact}."])
    assert breakdown["grounded"] == 1.0 and breakdown["sourced"] == 0.0
    policy = _find(tasks, lambda t: t.metadata.get("refusal") == "policy" and t.metadata["n_calls"] == 0)
    assert _play(env, policy, _gold(policy))["reward_breakdown"]["sourced"] == 1.0
