"""The LLM judge for NL assertions, over a stub chat backend."""

from __future__ import annotations

import pytest
from envsched_gym.envs.tau.judge import LLMJudge, judge_from_option

from envsched_gym import Message
from envsched_gym.llm_user import LLMError


class Stub:
    """Returns a fixed reply and records the prompts."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]]) -> str:
        self.prompts.append(messages)
        return self.reply


def test_judge_parses_verdicts_and_shows_only_the_dialogue() -> None:
    stub = Stub('Sure: {"results": [{"expected_outcome": "a", "reasoning": "r", "met": true}, {"met": false}]}')
    messages = [Message(role="user", content="cancel it"), Message(role="tool", content="secret tool output"), Message(role="assistant", content="I cannot.")]
    assert LLMJudge(stub)(["refuses", "apologises"], messages) == [True, False]
    prompt = stub.prompts[0][1]["content"]
    assert "user: cancel it" in prompt and "assistant: I cannot." in prompt and "secret" not in prompt and "- apologises" in prompt


def test_judge_rejects_malformed_replies() -> None:
    with pytest.raises(LLMError, match="not the expected JSON"):
        LLMJudge(Stub("yes"))(["x"], [])


def test_judge_option_forms() -> None:
    def fn(assertions: list[str], messages: list[Message]) -> list[bool]:
        return [True] * len(assertions)

    assert judge_from_option(None) is None and judge_from_option(fn) is fn
    assert isinstance(judge_from_option({"base_url": "http://127.0.0.1:9/v1", "model": "m"}), LLMJudge)
