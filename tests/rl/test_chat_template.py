"""The project's Qwen3 chat template: rendering with tools, parsing back, masks and turn glue."""

from __future__ import annotations

import json

import pytest
from transformers import AutoTokenizer

from envsched_gym import ToolCall, parse_tool_calls
from envsched_gym.rl.chat_template import continuation_ids

TOOLS = [{"type": "function", "function": {"name": "put", "description": "Set.", "parameters": {
    "type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "integer"}}, "required": ["key", "value"]}}}]  # fmt: skip


def _assistant(calls: list[ToolCall], content: str = "") -> dict:
    return {"role": "assistant", "content": content,
            "tool_calls": [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]}  # fmt: skip


@pytest.fixture(scope="module")
def tokenizer(micro_dir):
    return AutoTokenizer.from_pretrained(micro_dir)


@pytest.mark.parametrize("content", ["", "Setting it now."])
def test_render_then_parse_recovers_the_calls(tokenizer, content):
    calls = [ToolCall("put", {"key": "fig", "value": 3}), ToolCall("put", {"key": "pear", "value": -1})]
    messages = [{"role": "user", "content": "go"}, _assistant(calls, content)]
    text = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False)
    body = text.split("<|im_start|>assistant\n")[1].removesuffix("<|im_end|>\n")
    parsed = parse_tool_calls(body)
    assert [(c.name, c.arguments) for c in parsed.calls] == [(c.name, c.arguments) for c in calls]
    assert parsed.content.strip() == content
    assert not parsed.errors


def test_tools_block_in_the_system_message(tokenizer):
    text = tokenizer.apply_chat_template([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}], tools=TOOLS,
                                         tokenize=False, add_generation_prompt=True)  # fmt: skip
    system = text.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert json.loads(system.split("<tools>\n")[1].split("\n</tools>")[0]) == TOOLS[0]
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_tool_results_are_grouped_in_one_user_turn(tokenizer):
    messages = [{"role": "user", "content": "go"}, _assistant([ToolCall("put", {"key": "a", "value": 1})] * 2),
                {"role": "tool", "name": "put", "content": "ok"}, {"role": "tool", "name": "put", "content": "no"}]  # fmt: skip
    text = tokenizer.apply_chat_template(messages, tokenize=False)
    assert text.endswith("<|im_start|>user\n<tool_response>\nok\n</tool_response>\n<tool_response>\nno\n</tool_response><|im_end|>\n")


def test_thinking_off_adds_an_empty_think_block(tokenizer):
    text = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False, add_generation_prompt=True, enable_thinking=False)
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")


def test_assistant_mask_covers_exactly_the_assistant_messages(tokenizer):
    messages = [{"role": "user", "content": "go"}, _assistant([ToolCall("put", {"key": "a", "value": 1})]),
                {"role": "tool", "name": "put", "content": "ok"}, {"role": "assistant", "content": "Done."}]  # fmt: skip
    enc = tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    kept = tokenizer.decode([t for t, m in zip(enc["input_ids"], enc["assistant_masks"], strict=True) if m])
    assert kept == '<tool_call>\n{"name": "put", "arguments": {"key": "a", "value": 1}}\n</tool_call><|im_end|>Done.<|im_end|>'


def test_continuation_is_the_text_between_turns(tokenizer):
    ids = continuation_ids(tokenizer, [{"role": "tool", "name": "put", "content": "ok"}])
    assert tokenizer.decode(ids) == "\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
    ids = continuation_ids(tokenizer, [{"role": "user", "content": "next"}])
    assert tokenizer.decode(ids) == "\n<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n"
