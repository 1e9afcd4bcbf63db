"""Argument checks against a tool's JSON schema, before any tool code runs."""

from __future__ import annotations

import difflib
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from envsched_gym.declarations import ToolCall, ToolSpec


class ToolBox:
    """The tools of one environment with compiled validators; checks calls by name and schema."""

    def __init__(self, tools: list[ToolSpec]) -> None:
        self.specs: dict[str, ToolSpec] = {t.name: t for t in tools}
        self._validators = {t.name: Draft202012Validator(t.parameters) for t in tools}

    def check(self, call: ToolCall) -> str | None:
        """Return ``None`` if the call may run, otherwise an error message for the agent."""
        spec = self.specs.get(call.name)
        if spec is None:
            return unknown_tool_message(call.name, list(self.specs))
        if not isinstance(call.arguments, dict):
            return f"Error: arguments of '{call.name}' must be a JSON object, got {type(call.arguments).__name__}"
        props = spec.parameters.get("properties", {})
        if spec.parameters.get("additionalProperties", False) is False:
            extra = [k for k in call.arguments if k not in props]
            if extra:
                return f"Error: unexpected argument(s) {extra} for '{call.name}'; it takes {sorted(props)}"
        error = best_match(self._validators[call.name].iter_errors(call.arguments))
        if error is None:
            return None
        where = ".".join(str(p) for p in error.absolute_path)
        where = f" at '{where}'" if where else ""
        return f"Error: invalid arguments for '{call.name}'{where}: {error.message}"


def unknown_tool_message(name: str, available: list[str]) -> str:
    """``Error: unknown tool ...`` with a did-you-mean suggestion."""
    close = difflib.get_close_matches(name, available, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"Error: unknown tool '{name}'.{hint} Available tools: {', '.join(sorted(available)) or '(none)'}"


def jsonable(value: Any) -> Any:
    """Best-effort conversion of a tool result to JSON-compatible data (sets, tuples, objects)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    return repr(value)
