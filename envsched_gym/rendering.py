"""Rendering of tool calls and tool results in each wire format (the inverse of parsing)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from envsched_gym.declarations import AssistantTurn, ToolCall
from envsched_gym.parsing import Format


def render_calls(calls: Sequence[ToolCall], fmt: Format = "qwen3", content: str = "") -> str:
    """Text an assistant would emit for ``calls`` in wire format ``fmt``."""
    if fmt == "qwen3":
        blocks = [f"<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments}, ensure_ascii=False)}\n</tool_call>" for c in calls]
        return "\n".join(([content] if content else []) + blocks)
    if fmt == "openai":
        items = [
            {"id": c.id or f"call_{i}", "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
            for i, c in enumerate(calls)
        ]
        return json.dumps({"content": content, "tool_calls": items}, ensure_ascii=False)
    if fmt == "python":
        return "[" + ", ".join(_python_call(c) for c in calls) + "]"
    raise ValueError(f"unknown wire format {fmt!r}; use one of 'qwen3', 'openai', 'python'")


def render_turn(turn: AssistantTurn, fmt: Format = "qwen3") -> str:
    """Render a gold :class:`AssistantTurn` (plain text when it has no calls)."""
    if not turn.tool_calls:
        return turn.content
    return render_calls(turn.tool_calls, fmt, turn.content)


def _python_call(call: ToolCall) -> str:
    args = ", ".join(f"{k}={_python_literal(v)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def _python_literal(value: Any) -> str:
    """``repr`` of JSON data is a Python literal that :func:`ast.literal_eval` reads back."""
    return repr(value)


def render_tool_results(results: Sequence[str]) -> str:
    """Qwen3's ``<tool_response>`` blocks for the results of one message's calls."""
    return "\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in results)


def result_text(value: Any) -> str:
    """A tool result as the text the agent reads: strings as they are, other data as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=repr)
