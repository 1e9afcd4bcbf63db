"""Provenance: what an episode gave the agent, and the values a fact competes with."""

from __future__ import annotations

import gymnasium as gym
import pytest

import envsched_gym  # noqa: F401  (registers the envs)
from envsched_gym.provenance import alternatives, given_texts

STATE = {
    "records": {
        "EVT-1": {"name": "Sync", "day": "Tuesday", "minutes": 30, "done": False},
        "EVT-2": {"name": "Retro", "day": "Wednesday", "minutes": 30.0, "done": True},
        "EVT-3": {"name": "Demo", "day": "Monday", "minutes": 45},
    },
    "rooms": [{"room": "A", "floor": 1}, {"room": "B", "floor": 2}],
}


def test_alternatives_are_the_other_values_of_the_field_that_holds_the_fact() -> None:
    assert alternatives(STATE, "Wednesday") == {"Tuesday", "Monday"}
    assert alternatives(STATE, "wednesday") == {"Tuesday", "Monday"}  # the fact's case does not matter
    assert alternatives(STATE, "45") == {"30"}  # numbers by value: 30 and 30.0 are one alternative
    assert alternatives(STATE, "2") == {"1"}  # a table inside a list
    assert alternatives(STATE, "Friday") == set() and alternatives(None, "Monday") == set()


def test_booleans_are_not_values_a_fact_can_compete_with() -> None:
    assert alternatives(STATE, "1") == {"2"}  # floor 1, not done=True


@pytest.fixture()
def env() -> gym.Env:
    return gym.make("envsched/ToolWorld-v0")


def test_given_texts_skip_failed_calls_unparsed_calls_and_the_agents_own_words(env: gym.Env) -> None:
    env.reset(options={"task_id": "ToolWorld/hotel-3/004"})
    env.step("I guess suite. <tool_call>\nget_booking(BKG-013\n</tool_call>")  # does not parse
    env.step('<tool_call>\n{"name": "extend_stay", "arguments": {"booking_id": "BKG-013", "nights": "suite"}}\n</tool_call>')
    episode = env.unwrapped.episode
    assert any("suite" in str(m.get("content")) for m in episode.messages if m["role"] == "tool")  # the error echoes it
    assert not any("suite" in t for t in given_texts(episode, ("system", "user", "tool_results")))
    env.step('<tool_call>\n{"name": "get_booking", "arguments": {"booking_id": "BKG-013"}}\n</tool_call>')
    results = given_texts(env.unwrapped.episode, ("tool_results",))
    assert len(results) == 1 and '"room_type": "suite"' in results[0]


def test_declarations_are_a_source_of_their_own(env: gym.Env) -> None:
    env.reset(options={"task_id": "ToolWorld/hotel-3/004"})
    episode = env.unwrapped.episode
    declared = given_texts(episode, ("declarations",))
    assert any("at most 21 nights" in t for t in declared)
    assert not any("at most 21 nights" in t for t in given_texts(episode, ("system", "user", "tool_results")))
