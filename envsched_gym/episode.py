"""Typed episode state: the messages, the executed calls and how the episode ended.

The transcript is a list of chat dicts, exactly what ``tokenizer.apply_chat_template`` takes.
Assistant messages the env records are :class:`Message` s: dicts that also keep the parsed
calls typed (``message.calls``). Read any entry by key (``m["role"]``, ``m.get("content")``); use
:meth:`Episode.assistant_messages` for typed access to the assistant's calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from envsched_gym.declarations import EnvSpec, TaskSpec, ToolCall

Role = Literal["system", "user", "assistant", "tool"]
Termination = Literal["agent", "user_stop", "user_error", "single_response", "max_steps", "turn_limit"]
ABNORMAL: frozenset[str] = frozenset({"user_error", "max_steps", "turn_limit"})
TRUNCATIONS: frozenset[str] = frozenset({"max_steps", "turn_limit"})
ChatMessage = dict[str, Any]


class Message(dict[str, Any]):
    """A chat message that is the chat-template dict itself, with typed reads.

    Build one like the dict it is, ``Message(role="user", content="hi")`` (or from any chat dict,
    ``Message(chat)``); :meth:`assistant` builds an assistant message from parsed calls. The
    keys are what a chat template reads: ``role``, ``content``, and when present ``tool_calls``
    (OpenAI form), ``name`` (on tool results) and ``reasoning_content``; :attr:`calls` has the
    same calls typed (named apart from the key, so that a template's ``message.tool_calls``
    still finds the OpenAI form). An episode's transcript therefore goes to
    ``tokenizer.apply_chat_template`` as it is, and ``info["messages"]`` hands out these same
    objects: copy one (``dict(message)``) before changing it, or the episode's transcript
    changes too.
    """

    __slots__ = ("_calls",)

    @classmethod
    def assistant(cls, content: str, calls: list[ToolCall] | None = None, reasoning: str | None = None) -> Message:
        """An assistant message; ``calls`` are kept typed and written in OpenAI form."""
        message = cls(role="assistant", content=content)
        if calls:
            message["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
        if reasoning:
            message["reasoning_content"] = reasoning
        message._calls = calls if calls is not None else []
        return message

    @property
    def role(self) -> Role:
        """``system``, ``user``, ``assistant`` or ``tool``."""
        return self["role"]  # type: ignore[no-any-return]

    @property
    def content(self) -> str:
        """The message text (for an assistant, without its tool calls and reasoning)."""
        return self.get("content") or ""

    @property
    def reasoning(self) -> str | None:
        """The assistant's ``<think>`` text, when it had any."""
        return self.get("reasoning_content")

    @property
    def calls(self) -> list[ToolCall]:
        """The message's calls as :class:`ToolCall` s (read back from the chat form if need be)."""
        try:
            return self._calls
        except AttributeError:
            self._calls = [_typed_call(c) for c in self.get("tool_calls") or ()]
            return self._calls

    def __repr__(self) -> str:
        return f"Message({dict.__repr__(self)})"


def _typed_call(chat: dict[str, Any]) -> ToolCall:
    """A :class:`ToolCall` from an OpenAI-form call (arguments as a dict or as JSON text)."""
    function = chat.get("function", chat)
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ValueError(f"tool call {function.get('name')!r}: arguments are not JSON ({exc.msg}): {arguments[:80]!r}") from exc
    return ToolCall(function["name"], arguments, chat.get("id"))


@dataclass(slots=True)
class CallRecord:
    """A tool call the agent made, where it was made, and what came back."""

    turn: int
    step: int
    call: ToolCall
    result: str
    ok: bool
    write: bool


@dataclass
class Outcome:
    """The verifier's verdict: the official reward plus a per-component breakdown.

    ``reward`` is what the benchmark scores; ``breakdown`` holds components and any shaped
    (dense) reward a verifier reports alongside, which never replaces ``reward``.
    """

    reward: float
    success: bool
    breakdown: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def to_info(self) -> dict[str, Any]:
        """JSON-able dict for ``info['outcome']`` (it shares ``breakdown`` and ``details``)."""
        return {"reward": self.reward, "success": self.success, "breakdown": self.breakdown, "details": self.details}


@dataclass
class Episode:
    """Everything that happened in one episode, as verifiers and trainers read it."""

    task: TaskSpec
    env: EnvSpec
    messages: list[ChatMessage] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    turn: int = 0
    steps: int = 0
    steps_in_turn: int = 0
    parse_errors: int = 0
    termination: Termination | None = None
    user_error: str | None = None
    outcome: Outcome | None = None

    @property
    def done(self) -> bool:
        """True once the episode has ended for any reason."""
        return self.termination is not None

    @property
    def abnormal(self) -> bool:
        """True when the episode ended by a limit or a failed user simulator."""
        return self.termination in ABNORMAL

    def assistant_messages(self) -> list[Message]:
        """Every assistant message, in order, as :class:`Message` (plain dicts are wrapped)."""
        return [m if isinstance(m, Message) else Message(m) for m in self.messages if m["role"] == "assistant"]

    def final_answer(self) -> str:
        """Content of the last assistant message (the agent's final reply)."""
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                return message.get("content") or ""
        return ""

    def calls_in_turn(self, turn: int) -> list[CallRecord]:
        """Calls the agent made during user turn ``turn``."""
        return [c for c in self.calls if c.turn == turn]
