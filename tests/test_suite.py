"""The suite API: every (environment, task) node with its declarations, filterable."""

from __future__ import annotations

import pytest

import envsched_gym
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
