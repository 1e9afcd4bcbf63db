"""An LLM judge for τ2's natural-language assertions (``NL_ASSERTION`` in a task's reward basis)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from envsched_gym import ChatMessage
from envsched_gym.llm_user import ChatBackend, LLMError, backend_from_options

JUDGE_PROMPT = (
    "You grade a customer-service conversation. For each expected outcome, decide whether the agent's behaviour in "
    'the conversation meets it. Answer with JSON only: {"results": [{"expected_outcome": str, "reasoning": str, '
    '"met": bool}, ...]}, one entry per expected outcome, in the given order.'
)
_JSON = re.compile(r"\{.*\}", re.DOTALL)


class LLMJudge:
    """Asks a chat model whether each assertion holds for the conversation.

    Args:
        backend: The judging model.
    """

    def __init__(self, backend: ChatBackend) -> None:
        self.backend = backend

    def __call__(self, assertions: list[str], messages: list[ChatMessage]) -> list[bool]:
        said = [(m["role"], (m.get("content") or "").strip()) for m in messages if m["role"] in ("user", "assistant")]
        transcript = "\n".join(f"{role}: {text}" for role, text in said if text)
        outcomes = "\n".join(f"- {a}" for a in assertions)
        reply = self.backend.complete([
            {"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": f"Conversation:\n{transcript}\n\nExpected outcomes:\n{outcomes}"},
        ])  # fmt: skip
        match = _JSON.search(reply)
        try:
            results = json.loads(match.group(0) if match else reply)["results"]
            return [bool(r["met"]) for r in results]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LLMError(f"judge reply is not the expected JSON ({exc}): {reply[:300]}") from None


def judge_from_option(option: Callable[[list[str], list[ChatMessage]], list[bool]] | dict[str, Any] | None) -> Any:
    """The adapter's ``nl_judge`` option as a judge: a callable as is, endpoint options as an :class:`LLMJudge`."""
    if option is None or callable(option):
        return option
    return LLMJudge(backend_from_options(option))
