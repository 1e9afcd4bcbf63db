"""The suite API: every (environment, task) node with its declarations, filterable."""

from __future__ import annotations

import math

import pytest

import envsched_gym
from envsched_gym.suite import Suite, parse_weights
from tests.conftest import NotesAdapter


def test_suite_nodes_and_filters(notes_adapter: NotesAdapter) -> None:
    suite = envsched_gym.suite(["Notes"])
    assert [n.task_id for n in suite] == ["notes/0", "notes/1", "notes/2"]
    assert set(suite.envs) == {"Notes", "Notes-single"}
    assert [n.task_id for n in suite.filter(split="test")] == ["notes/1"]
    assert [n.task_id for n in suite.filter(env_ids=["Notes-single"])] == ["notes/2"]
    assert len(suite.filter(family="Other")) == 0
    node = suite.node("notes/1")
    assert node.family == "Notes" and node.env.tools and node.task.solution


def test_suite_split_argument(notes_adapter: NotesAdapter) -> None:
    assert [n.task_id for n in envsched_gym.suite("Notes", split="train")] == ["notes/0", "notes/2"]


def test_make_env_from_node(notes_adapter: NotesAdapter) -> None:
    env = envsched_gym.suite("Notes").make_env("notes/0")
    assert env.reset(options={"task_id": "notes/0"})[0].startswith("Add a note")


def test_unknown_node(notes_adapter: NotesAdapter) -> None:
    with pytest.raises(KeyError, match="not in this suite"):
        envsched_gym.suite("Notes").node("nope")


def test_toolworld_suite_loads() -> None:
    suite = envsched_gym.suite("ToolWorld", split="train")
    assert len(suite) > 0 and all(n.family == "ToolWorld" and n.split == "train" for n in suite)


def test_make_env_keeps_the_suite_adapter_options(notes_adapter: NotesAdapter) -> None:
    suite = envsched_gym.suite("Notes", options={"Notes": {"max_steps_per_turn": 1}})
    env = suite.filter(split="train").make_env("notes/0")
    assert env.unwrapped.adapter.max_steps_per_turn == 1
    env.reset(options={"task_id": "notes/0"})
    assert env.step('<tool_call>{"name": "read_note", "arguments": {"title": "todo"}}</tool_call>')[3] is True


def test_suite_weights_are_checked_and_kept(notes_adapter: NotesAdapter) -> None:
    suite = envsched_gym.suite("Notes", weights={"Notes": 2})
    assert suite.weights == {"Notes": 2.0} and suite.families == ["Notes"]
    assert suite.filter(split="train").weights == {"Notes": 2.0}
    assert envsched_gym.suite("Notes").weights is None


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"Note": 1.0}, r"family weight for 'Note', which is not a family of this suite\. Did you mean 'Notes'\? Families: \['Notes'\]"),
        ({}, r"no family weight for \['Notes'\]; give every family of the suite a weight"),
        ({"Notes": -0.5}, r"family weight for 'Notes' is -0\.5; weights must be finite numbers above 0"),
        ({"Notes": math.nan}, r"family weight for 'Notes' is nan"),
        ({"Notes": 0}, r"family weight for 'Notes' is 0;"),
        ({"Notes": True}, r"family weight for 'Notes' is True;"),
        ({"Notes": "1"}, r"family weight for 'Notes' is '1';"),
    ],
)
def test_bad_suite_weights_are_refused_with_the_fix(notes_adapter: NotesAdapter, weights: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        envsched_gym.suite("Notes", weights=weights)


def test_a_family_without_a_weight_is_an_error_not_a_default(notes_adapter: NotesAdapter) -> None:
    nodes = [*envsched_gym.suite("Notes"), *envsched_gym.suite("ToolWorld", split="train")[:5]]
    with pytest.raises(ValueError, match=r"no family weight for \['ToolWorld'\]"):
        Suite(nodes, weights={"Notes": 1.0})


def test_parse_weights() -> None:
    assert parse_weights("ToolWorld=0.7, BugTracker = 0.3") == {"ToolWorld": 0.7, "BugTracker": 0.3}
    assert parse_weights("") is None
    with pytest.raises(ValueError, match="is not FAMILY=WEIGHT"):
        parse_weights("=1")
