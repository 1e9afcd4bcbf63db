"""Declarations round-trip through JSON and reject unknown keys."""

from __future__ import annotations

import pytest

from envsched_gym import AssistantTurn, EnvSpec, StateComponent, TaskSpec, ToolCall, ToolSpec, VerifierConfig


def _task() -> TaskSpec:
    tool = ToolSpec("f", "Do f.", {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}, write=True)
    return TaskSpec(
        task_id="t/1", env_id="E", instruction="go", user_turns=["go", "again"], initial_state={"a": [1, {"b": None}]},
        solution=[AssistantTurn("", [ToolCall("f", {"x": 1}, id="c0")]), AssistantTurn("done")],
        verifier=VerifierConfig("gold_state", {"facts": ["1"]}), split="test", tools=[tool], metadata={"difficulty": 2},
    )  # fmt: skip


def test_task_round_trip() -> None:
    task = _task()
    again = TaskSpec.from_json(task.to_json())
    assert again == task and isinstance(again.solution[0].tool_calls[0], ToolCall)  # type: ignore[index]
    assert isinstance(again.tools[0], ToolSpec) and isinstance(again.verifier, VerifierConfig)  # type: ignore[index]


def test_env_round_trip() -> None:
    env = EnvSpec("E", "Fam", "envsched/Fam-v0", tools=_task().tools or [], state_components=[StateComponent("db", "the DB")],
                  verifier_kind="gold_state", interaction="single_response", max_steps_per_turn=20, split="heldout")  # fmt: skip
    again = EnvSpec.from_json(env.to_json())
    assert again == env and isinstance(again.state_components[0], StateComponent)


def test_unknown_keys_name_the_fields() -> None:
    with pytest.raises(ValueError, match=r"unknown keys \['taskid'\]"):
        TaskSpec.from_dict({"taskid": "x", "env_id": "E", "instruction": "i"})


def test_openai_schema_form() -> None:
    schema = _task().tools[0].openai_schema()  # type: ignore[index]
    assert schema["type"] == "function" and schema["function"]["name"] == "f" and "write" not in schema["function"]
