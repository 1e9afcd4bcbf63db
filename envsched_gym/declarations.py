"""Typed declarations every environment makes: tools, tasks, environments.

These dataclasses are the contract between adapters, the environment and the curriculum.
They hold plain JSON data only, so every declaration round-trips through ``to_dict`` /
``from_dict`` (and ``to_json`` / ``from_json``) without loss.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

T = TypeVar("T", bound="_JsonMixin")

Interaction = Literal["multi_step", "single_response"]
"""``multi_step``: tool calls are executed and answered until the agent replies in text.
``single_response``: the first assistant message is the answer and is scored, not executed
(BFCL's single-turn AST categories)."""


class _JsonMixin:
    """JSON round-trip for the declaration dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-compatible dict (nested declarations become dicts)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def to_json(self, **kwargs: Any) -> str:
        """Serialise to a JSON string; ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), ensure_ascii=False, **kwargs)

    @classmethod
    def from_json(cls: type[T], text: str) -> T:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Build from a dict produced by :meth:`to_dict`; unknown keys are an error."""
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = set(data) - names
        if unknown:
            raise ValueError(
                f"{cls.__name__}.from_dict: unknown keys {sorted(unknown)}; expected a subset of {sorted(names)}"
            )
        return cls(**cls._convert(data))

    @classmethod
    def _convert(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Hook for nested declarations; the default keeps values as they are."""
        return dict(data)


@dataclass
class ToolCall(_JsonMixin):
    """One function call made by the agent (or in a gold solution)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class AssistantTurn(_JsonMixin):
    """One assistant message: text content plus zero or more (parallel) tool calls.

    A message with no tool calls is addressed to the user and ends the agent's turn.
    """

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)

    @classmethod
    def _convert(cls, data: dict[str, Any]) -> dict[str, Any]:
        out = dict(data)
        out["tool_calls"] = [c if isinstance(c, ToolCall) else ToolCall.from_dict(c) for c in data.get("tool_calls", [])]
        return out


@dataclass
class ToolSpec(_JsonMixin):
    """A tool in OpenAI function-schema form, marked read or write.

    ``parameters`` is a JSON schema with ``"type": "object"`` at the top.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}, "required": []})
    write: bool = False

    def openai_schema(self) -> dict[str, Any]:
        """The ``{"type": "function", "function": {...}}`` form chat templates expect."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass
class VerifierConfig(_JsonMixin):
    """How a task is scored: a verifier ``kind`` known to the adapter plus its parameters."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskSpec(_JsonMixin):
    """One task of an environment.

    Attributes:
        task_id: Unique within the suite (adapters prefix ids where the source's ids clash).
        env_id: The :class:`EnvSpec` this task runs in.
        instruction: The first user message.
        user_turns: Every scripted user message, the first included; a scripted user replays
            them one per agent turn. Empty when an LLM user simulator drives the dialogue.
        initial_state: JSON state the world is built from (``None``: the environment's default).
        solution: Gold assistant messages in order, or ``None`` when the task has no gold.
            An oracle that sends them one by one must score 1.0.
        verifier: How the outcome reward is computed.
        split: ``train``, ``test`` or ``heldout`` (a task of an environment held out of training).
        tools: Task-specific tools overriding the environment's (BFCL single-turn entries).
        metadata: Free-form facts used by verifiers and the curriculum (difficulty, pattern, ...).
    """

    task_id: str
    env_id: str
    instruction: str
    user_turns: list[str] = field(default_factory=list)
    initial_state: dict[str, Any] | None = None
    solution: list[AssistantTurn] | None = None
    verifier: VerifierConfig = field(default_factory=lambda: VerifierConfig(kind="none"))
    split: str = "train"
    tools: list[ToolSpec] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def _convert(cls, data: dict[str, Any]) -> dict[str, Any]:
        out = dict(data)
        if data.get("solution") is not None:
            out["solution"] = [t if isinstance(t, AssistantTurn) else AssistantTurn.from_dict(t) for t in data["solution"]]
        if isinstance(data.get("verifier"), dict):
            out["verifier"] = VerifierConfig.from_dict(data["verifier"])
        if data.get("tools") is not None:
            out["tools"] = [t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in data["tools"]]
        return out


@dataclass
class StateComponent(_JsonMixin):
    """A named part of the world state (a backend class, a database table, ...)."""

    name: str
    description: str = ""


@dataclass
class EnvSpec(_JsonMixin):
    """An environment: the tools, state and verifier its tasks share.

    Attributes:
        env_id: Environment name, e.g. ``"ToolWorld/inventory-3"`` or ``"BFCL/multi_turn_base"``.
        family: Benchmark family (``ToolWorld``, ``BFCL``, ``Tau``, ``ACE`` or a user's).
        gym_id: The registered gymnasium id that serves this environment's tasks.
        tools: Tools every task of the environment can use (tasks may override).
        state_components: Named parts of the world state.
        verifier_kind: Name of the scoring rule (``state+facts``, ``bfcl_ast``, ``tau_db``, ...).
        interaction: ``multi_step`` or ``single_response`` (see :data:`Interaction`).
        user_simulator: ``scripted``, ``llm`` or ``none``.
        max_steps: Assistant messages per episode before ``truncated``.
        max_steps_per_turn: Assistant messages per user turn before the turn is force-ended
            (``None``: no per-turn limit).
        system_prompt: Prepended as the system message (domain policy and the like).
        split: ``train`` or ``heldout`` for whole environments held out of training.
    """

    env_id: str
    family: str
    gym_id: str
    tools: list[ToolSpec] = field(default_factory=list)
    state_components: list[StateComponent] = field(default_factory=list)
    verifier_kind: str = "none"
    interaction: Interaction = "multi_step"
    user_simulator: str = "scripted"
    max_steps: int = 30
    max_steps_per_turn: int | None = None
    system_prompt: str = ""
    split: str = "train"

    @classmethod
    def _convert(cls, data: dict[str, Any]) -> dict[str, Any]:
        out = dict(data)
        out["tools"] = [t if isinstance(t, ToolSpec) else ToolSpec.from_dict(t) for t in data.get("tools", [])]
        out["state_components"] = [
            s if isinstance(s, StateComponent) else StateComponent.from_dict(s) for s in data.get("state_components", [])
        ]
        return out
