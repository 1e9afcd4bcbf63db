"""Typed episode state: the messages, the executed calls and how the episode ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from envsched_gym.declarations import EnvSpec, TaskSpec, ToolCall

Role = Literal["system", "user", "assistant", "tool"]
Termination = Literal["agent", "user_stop", "user_error", "single_response", "max_steps", "turn_limit"]
ABNORMAL: frozenset[str] = frozenset({"user_error", "max_steps", "turn_limit"})


@dataclass(slots=True)
class Message:
    """One chat message; ``tool_calls`` only on assistant messages, ``name`` on tool results."""

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    name: str | None = None
    reasoning: str | None = None

    def to_chat(self) -> dict[str, Any]:
        """The message as a Hugging Face / OpenAI chat-template dict."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if not (self.tool_calls or self.name or self.reasoning):
            return out
        if self.tool_calls:
            out["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls]
        if self.name is not None:
            out["name"] = self.name
        if self.reasoning:
            out["reasoning_content"] = self.reasoning
        return out


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
        """JSON-able dict for ``info['outcome']``."""
        return {"reward": self.reward, "success": self.success, "breakdown": dict(self.breakdown), "details": dict(self.details)}


@dataclass
class Episode:
    """Everything that happened in one episode, as verifiers and trainers read it."""

    task: TaskSpec
    env: EnvSpec
    messages: list[Message] = field(default_factory=list)
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
        """Every assistant message, in order."""
        return [m for m in self.messages if m.role == "assistant"]

    def final_answer(self) -> str:
        """Content of the last assistant message (the agent's final reply)."""
        replies = self.assistant_messages()
        return replies[-1].content if replies else ""

    def calls_in_turn(self, turn: int) -> list[CallRecord]:
        """Calls the agent made during user turn ``turn``."""
        return [c for c in self.calls if c.turn == turn]
