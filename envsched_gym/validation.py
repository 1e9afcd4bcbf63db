"""Argument checks against a tool's JSON schema, before any tool code runs."""

from __future__ import annotations

import difflib
from itertools import islice
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from envsched_gym.declarations import ToolCall, ToolSpec

_SCALAR_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}
_PLAIN_KEYS = frozenset({"type", "description", "default", "enum", "title"})
MAX_ERRORS_RANKED = 32
"""Schema errors ranked for the message: ``best_match`` over all of them would cost time
linear in the errors (a 10,000-item array of wrong items: 20,000 errors, 0.9 s)."""
MAX_MESSAGE_CHARS = 400
"""A message quoting the offending value is cut here (the value may be 100 KB)."""

FastRule = tuple[tuple[type, ...], tuple[Any, ...] | None]
"""Accepted Python types of a property and its enum values (``None``: any value of those types)."""


class ToolBox:
    """The tools of one environment with compiled validators; checks calls by name and schema.

    Tools whose parameters are all plain scalars or enums (most tools) get a fast check first:
    it accepts a call only when the JSON schema would too, and anything it does not accept
    goes through ``jsonschema`` for the exact verdict and message.
    """

    def __init__(self, tools: list[ToolSpec]) -> None:
        self.specs: dict[str, ToolSpec] = {t.name: t for t in tools}
        self._validators = {t.name: Draft202012Validator(t.parameters) for t in tools}
        self._fast = {t.name: rules for t in tools if (rules := _fast_rules(t.parameters)) is not None}

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
        fast = self._fast.get(call.name)
        if fast is not None and _fast_accepts(fast, call.arguments):
            return None
        error = best_match(islice(self._validators[call.name].iter_errors(call.arguments), MAX_ERRORS_RANKED))
        if error is None:
            return None
        where = ".".join(str(p) for p in error.absolute_path)
        where = f" at '{where[:100]}'" if where else ""
        message = error.message if len(error.message) <= MAX_MESSAGE_CHARS else error.message[:MAX_MESSAGE_CHARS] + " [...]"
        return f"Error: invalid arguments for '{call.name}'{where}: {message}"


def _fast_rules(parameters: dict[str, Any]) -> tuple[dict[str, FastRule], tuple[str, ...]] | None:
    """Per-property rules and required names, or ``None`` when the schema is not all plain scalars."""
    if parameters.get("type") != "object" or set(parameters) - {"type", "properties", "required", "additionalProperties"}:
        return None
    if parameters.get("additionalProperties", False) is not False:
        return None
    rules: dict[str, FastRule] = {}
    for name, schema in parameters.get("properties", {}).items():
        types = _SCALAR_TYPES.get(schema.get("type")) if isinstance(schema, dict) else None
        if types is None or set(schema) - _PLAIN_KEYS:
            return None
        enum = schema.get("enum")
        if enum is not None and not all(isinstance(v, (str, int, float, bool)) for v in enum):
            return None
        rules[name] = (types, tuple(enum) if enum is not None else None)
    return rules, tuple(parameters.get("required", ()))


def _fast_accepts(fast: tuple[dict[str, FastRule], tuple[str, ...]], arguments: dict[str, Any]) -> bool:
    """True only if the arguments surely satisfy the schema (same types, no bool for numbers)."""
    rules, required = fast
    for name in required:
        if name not in arguments:
            return False
    for name, value in arguments.items():
        types, enum = rules[name]
        if type(value) is bool and bool not in types:
            return False
        if not isinstance(value, types):
            return False
        if enum is not None and not any(type(value) is type(e) and value == e for e in enum):
            return False
    return True


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
