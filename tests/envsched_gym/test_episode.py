"""Transcript entries are chat dicts; assistant ``Message`` s also keep their calls typed."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from envsched_gym import EnvSpec, Episode, Message, TaskSpec, ToolCall


def _episode(messages: list[dict]) -> Episode:
    return Episode(task=TaskSpec(task_id="t", env_id="E", instruction="hi"), env=EnvSpec(env_id="E", family="F", gym_id="g"), messages=messages)


def test_assistant_message_is_its_chat_dict() -> None:
    m = Message.assistant("ok", [ToolCall("f", {"a": 1})], reasoning="think")
    assert m == {
        "role": "assistant",
        "content": "ok",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        "reasoning_content": "think",
    }
    assert m.calls == [ToolCall("f", {"a": 1})] and m.reasoning == "think" and m.role == "assistant"
    assert json.loads(json.dumps(m)) == dict(m)


def test_typed_calls_are_read_back_from_an_openai_chat_dict() -> None:
    chat = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "g", "arguments": '{"b": 2}'}}]}
    m = Message(chat)
    assert m.calls == [ToolCall("g", {"b": 2}, "c1")] and m.content == ""
    assert Message(role="user", content="x").calls == []


def test_messages_survive_pickle_and_deepcopy_with_their_calls() -> None:
    m = Message.assistant("", [ToolCall("f", {"a": [1, 2]})])
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert type(clone) is Message and clone == m and clone.calls == m.calls


def test_episode_reads_plain_and_typed_entries_alike() -> None:
    ep = _episode([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},  # e.g. an agent greeting, stored as a plain dict
        Message.assistant("", [ToolCall("f", {})]),
        {"role": "tool", "content": "{}", "name": "f"},
        Message.assistant("done"),
    ])  # fmt: skip
    assert ep.final_answer() == "done"
    replies = ep.assistant_messages()
    assert [type(r) for r in replies] == [Message, Message, Message]
    assert [[c.name for c in r.calls] for r in replies] == [[], ["f"], []]


def test_final_answer_without_any_reply_is_empty() -> None:
    assert _episode([{"role": "user", "content": "hi"}]).final_answer() == ""


def test_a_chat_template_reads_the_openai_form_of_the_calls() -> None:
    jinja2 = pytest.importorskip("jinja2")
    template = jinja2.Environment().from_string("{% for c in m.tool_calls %}{{ c.function.name }}:{{ c.function.arguments | tojson }}{% endfor %}")
    assert template.render(m=Message.assistant("", [ToolCall("f", {"a": 1})])) == 'f:{"a": 1}'


def test_unreadable_call_arguments_name_the_call() -> None:
    m = Message({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "g", "arguments": "{oops"}}]})
    with pytest.raises(ValueError, match="tool call 'g': arguments are not JSON"):
        _ = m.calls
