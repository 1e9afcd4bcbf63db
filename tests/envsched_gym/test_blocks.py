"""Verifier blocks: each one scores a right episode 1 and a plausible wrong one 0, and reports
itself in the breakdown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from envsched_gym import AssistantTurn, VerifierConfig
from envsched_gym.blocks import CallPattern, same_value
from envsched_gym.env import ToolUseEnv
from envsched_gym.rendering import render_calls, render_turn
from envsched_gym.verifier import parse_params

sys.path.insert(0, str(Path(__file__).parent))
from bugtracker import ASSIGN, BugTrackerAdapter, adapter_with, assign_call, task

GYM_ID = "envsched/BugTracker-v0"
GET = '<tool_call>{"name": "get_issue", "arguments": {"issue_id": "BUG-1"}}</tool_call>'
ASSIGN_ANA = render_calls([assign_call()])


def play(adapter: BugTrackerAdapter, task_id: str, actions: list[str]) -> dict[str, Any]:
    env = ToolUseEnv(adapter, GYM_ID)
    env.reset(options={"task_id": task_id})
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info
    raise AssertionError(f"the episode of {task_id} did not end after {actions}")


def blocks_task(task_id: str, blocks: list[dict[str, Any]], **kw: Any) -> Any:
    solution = kw.pop("solution", [AssistantTurn(tool_calls=[assign_call()]), AssistantTurn("BUG-1 is assigned to ana.")])
    return task(task_id, VerifierConfig("blocks", {"blocks": blocks}), solution, **kw)


def test_state_match_wrong_assignee_scores_zero() -> None:
    adapter = BugTrackerAdapter()
    assert play(adapter, "bug/assign", [ASSIGN_ANA, "BUG-1 is now assigned to ana."])["outcome"]["reward"] == 1.0
    wrong = play(adapter, "bug/assign", [render_calls([assign_call(user="bo")]), "BUG-1 is now assigned to ana."])
    assert wrong["outcome"]["reward"] == 0.0
    assert wrong["reward_breakdown"] == {"state_match": 0.0, "facts": 1.0, "completed": 1.0}
    assert "issues" in wrong["outcome"]["details"]["blocks"]["state_match"]


def test_facts_missing_from_the_answer_scores_zero() -> None:
    info = play(BugTrackerAdapter(), "bug/assign", [ASSIGN_ANA, "Done."])
    assert info["outcome"]["reward"] == 0.0 and info["reward_breakdown"]["facts"] == 0.0
    assert "BUG-1" in info["outcome"]["details"]["blocks"]["facts"]


def test_required_calls_in_order() -> None:
    required = {"block": "required_calls", "ordered": True, "calls": [{"name": "get_issue", "arguments": {"issue_id": "BUG-1"}},
                                                                      {"name": "assign", "arguments": {"user": "ana"}}]}  # fmt: skip
    adapter = adapter_with(blocks_task("bug/read-first", [required]))
    assert play(adapter, "bug/read-first", [GET, ASSIGN_ANA, "Assigned."])["outcome"]["reward"] == 1.0
    wrong = play(adapter, "bug/read-first", [ASSIGN_ANA, GET, "Assigned."])
    assert wrong["outcome"]["reward"] == 0.0 and "in order" in wrong["outcome"]["details"]["blocks"]["required_calls"]


def test_required_calls_any_order_needs_a_distinct_call_per_pattern() -> None:
    twice = {"block": "required_calls", "calls": [{"name": "assign"}, {"name": "assign", "arguments": {"issue_id": "BUG-2"}}]}
    adapter = adapter_with(blocks_task("bug/two", [twice]))
    both = render_calls([assign_call("BUG-2"), assign_call("BUG-1")])
    assert play(adapter, "bug/two", [both, "Both assigned."])["outcome"]["reward"] == 1.0
    one = play(adapter, "bug/two", [render_calls([assign_call("BUG-2")]), "Both assigned."])
    assert one["outcome"]["reward"] == 0.0 and one["reward_breakdown"]["required_calls"] == 0.0


def test_required_calls_count_only_successful_calls() -> None:
    adapter = adapter_with(blocks_task("bug/ok", [{"block": "required_calls", "calls": [{"name": "assign"}]}]))
    failed = play(adapter, "bug/ok", [render_calls([assign_call(user="zed")]), "Assigned."])
    assert failed["outcome"]["reward"] == 0.0


def test_forbidden_call_even_attempted_scores_zero() -> None:
    forbid = {"block": "forbidden_calls", "calls": [{"name": "close"}]}
    adapter = adapter_with(blocks_task("bug/no-close", [{"block": "state_match"}, forbid]))
    assert play(adapter, "bug/no-close", [ASSIGN_ANA, "Assigned."])["outcome"]["reward"] == 1.0
    closed = play(adapter, "bug/no-close", [ASSIGN_ANA, '<tool_call>{"name": "close", "arguments": {"issue_id": "NOPE"}}</tool_call>', "Assigned."])
    assert closed["outcome"]["reward"] == 0.0 and closed["reward_breakdown"]["forbidden_calls"] == 0.0
    assert closed["reward_breakdown"]["state_match"] == 1.0  # the failed close changed nothing: only the block sees it


def test_ask_clarification_guessing_scores_zero() -> None:
    adapter = BugTrackerAdapter()
    good = ["Which login bug do you mean, BUG-1 or BUG-2?", render_calls([assign_call("BUG-2")]), "Done."]
    assert play(adapter, "bug/ask", good)["outcome"]["reward"] == 1.0
    guessed = play(adapter, "bug/ask", [render_calls([assign_call("BUG-1")]), "Did you mean BUG-1?", render_calls([assign_call("BUG-2")]), "Done."])
    assert guessed["reward_breakdown"]["ask_clarification"] == 0.0 and guessed["outcome"]["reward"] == 0.0
    told = play(adapter, "bug/ask", ["I will assign the login bug.", render_calls([assign_call("BUG-2")]), "Done."])
    assert told["outcome"]["reward"] == 0.0 and "did not ask" in told["outcome"]["details"]["blocks"]["ask_clarification"]


def test_refusal_claiming_success_after_the_tool_error_scores_zero() -> None:
    """The defect: the agent tried the invalid assignment, got the error, and answered 'Done'."""
    adapter = BugTrackerAdapter()
    attempt = render_calls([assign_call("BUG-3")])
    lied = play(adapter, "bug/refuse", [attempt, "Done, assigned."])
    assert lied["outcome"]["reward"] == 0.0
    assert lied["reward_breakdown"] == {"state_match": 1.0, "refusal": 0.0, "completed": 1.0}
    assert play(adapter, "bug/refuse", [attempt, "I cannot assign BUG-3, it is closed."])["outcome"]["reward"] == 1.0


def test_refusal_with_a_write_scores_zero_even_when_it_declines() -> None:
    adapter = adapter_with(blocks_task("bug/refuse-all", [{"block": "refusal"}], solution=[AssistantTurn("Sorry, I can't.")]))
    info = play(adapter, "bug/refuse-all", [ASSIGN_ANA, "Sorry, I cannot do that."])
    assert info["outcome"]["reward"] == 0.0 and "1 successful write" in info["outcome"]["details"]["blocks"]["refusal"]


def test_milestones_in_order_and_partial_credit() -> None:
    steps = [{"call": {"name": "get_issue", "arguments": {"issue_id": "BUG-1"}}}, {"call": {"name": "assign"}}, {"says": "assigned"}]
    adapter = adapter_with(
        blocks_task("bug/stones", [{"block": "milestones", "steps": steps}]),
        blocks_task("bug/stones-partial", [{"block": "milestones", "steps": steps, "partial": True}]),
    )
    assert play(adapter, "bug/stones", [GET, ASSIGN_ANA, "BUG-1 assigned."])["outcome"]["reward"] == 1.0
    skipped = play(adapter, "bug/stones", [ASSIGN_ANA, "BUG-1 assigned."])
    assert skipped["outcome"]["reward"] == 0.0 and "0/3" in skipped["outcome"]["details"]["blocks"]["milestones"]
    unsaid = play(adapter, "bug/stones-partial", [GET, ASSIGN_ANA, "Ok."])
    assert unsaid["outcome"]["reward"] == pytest.approx(2 / 3)
    early = play(adapter, "bug/stones-partial", [GET, "It is assigned now."])  # said before the call: out of order
    assert early["outcome"]["reward"] == pytest.approx(1 / 3)


def test_an_abnormal_end_scores_zero_whatever_the_blocks_say() -> None:
    adapter = BugTrackerAdapter()
    env = ToolUseEnv(adapter, GYM_ID)
    env.reset(options={"task_id": "bug/assign"})
    for _ in range(adapter.max_steps):
        _, reward, terminated, truncated, info = env.step(GET)
        if truncated:
            break
    assert truncated and reward == 0.0 and info["reward_breakdown"]["completed"] == 0.0


def test_two_blocks_of_one_kind_get_their_own_breakdown_keys() -> None:
    facts = [{"block": "facts", "facts": ["BUG-1"]}, {"block": "facts", "facts": ["ana"]}]
    adapter = adapter_with(blocks_task("bug/facts", facts))
    info = play(adapter, "bug/facts", [ASSIGN_ANA, "BUG-1 is done."])
    assert info["reward_breakdown"] == {"facts": 1.0, "facts#2": 0.0, "completed": 1.0}


def test_call_patterns_compare_numbers_by_value_but_not_bools() -> None:
    assert same_value(2, 2.0) and same_value([1, {"a": 2}], [1.0, {"a": 2}])
    assert not same_value(True, 1) and not same_value("2", 2) and not same_value([1], [1, 1])
    pattern = CallPattern(name="assign", arguments={"user": "ana"})
    assert pattern.matches(assign_call()) and not pattern.matches(assign_call(user="bo"))
    assert str(pattern) == "assign(user='ana')"


def test_oracle_of_every_bugtracker_task_scores_one() -> None:
    adapter = BugTrackerAdapter()
    for spec in adapter.tasks():
        assert play(adapter, spec.task_id, [render_turn(t) for t in spec.solution])["outcome"]["reward"] == 1.0, spec.task_id
    assert ASSIGN.verifier.kind == "gold_state"


def test_facts_match_whole_tokens_unless_a_family_asks_for_substrings() -> None:
    token = blocks_task("bug/token", [{"block": "facts", "facts": ["1"]}])
    substring = blocks_task("bug/substring", [{"block": "facts", "facts": ["1"], "match": "substring"}])
    adapter = adapter_with(token, substring)
    assert play(adapter, "bug/token", [ASSIGN_ANA, "BUG-1 is assigned."])["reward_breakdown"]["facts"] == 0.0  # "1" only inside BUG-1
    assert play(adapter, "bug/substring", [ASSIGN_ANA, "BUG-1 is assigned."])["reward_breakdown"]["facts"] == 1.0
    with pytest.raises(ValueError, match=r"blocks\[0\] \(facts\): parameter 'match'.*'token' or 'substring'"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "facts", "facts": ["1"], "match": "tokens"}]}))


def test_grounded_refuses_a_number_that_nothing_the_agent_was_given_says() -> None:
    grounded = task("bug/grounded", VerifierConfig("blocks", {"blocks": [{"block": "grounded"}]}),
                    [AssistantTurn(tool_calls=[assign_call()]), AssistantTurn("Done.")], turns=["Assign BUG-1 to ana within 3 days."])  # fmt: skip
    adapter = adapter_with(grounded)
    assert play(adapter, "bug/grounded", [ASSIGN_ANA, "Assigned; due in 3 days."])["reward_breakdown"]["grounded"] == 1.0
    made_up = play(adapter, "bug/grounded", [ASSIGN_ANA, "Assigned; due in 3 days, 2 hours."])
    assert made_up["reward_breakdown"]["grounded"] == 0.0 and "[2]" in made_up["outcome"]["details"]["blocks"]["grounded"]
    echoed = play(adapter, "bug/grounded", ["Due in 7 days. " + ASSIGN_ANA, "Assigned; due in 7 days."])  # its own words ground nothing
    assert echoed["reward_breakdown"]["grounded"] == 0.0


def test_sourced_refuses_an_unknown_source_at_registration() -> None:
    with pytest.raises(ValueError, match=r"blocks\[0\] \(sourced\): parameter 'sources.0'.*'tool_results'.*got 'tools'"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "sourced", "facts": ["ana"], "sources": ["tools"]}]}))


def test_sourced_needs_the_fact_in_a_successful_result() -> None:
    sourced = blocks_task("bug/sourced", [{"block": "sourced", "facts": ["ana"], "sources": ["tool_results"]}])
    adapter = adapter_with(sourced)
    assert play(adapter, "bug/sourced", [ASSIGN_ANA, "BUG-1 is assigned to ana."])["reward_breakdown"]["sourced"] == 1.0
    unread = play(adapter, "bug/sourced", ["BUG-1 is assigned to ana."])
    assert unread["reward_breakdown"]["sourced"] == 0.0 and "['ana']" in unread["outcome"]["details"]["blocks"]["sourced"]
