"""The ``@tool`` decorator: OpenAI function schemas from type hints and Google docstrings.

Schemas are derived, never hand-written, so they cannot drift from the code that runs::

    class Shop(World):
        @tool(write=True)
        def buy(self, item: str, qty: int = 1, colour: Literal["red", "blue"] | None = None) -> dict:
            \"\"\"Buy an item.

            Args:
                item: Catalogue name.
                qty: How many.
                colour: Optional colour.
            \"\"\"

gives ``item`` required, ``qty`` optional integer, ``colour`` an optional enum.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from envsched_gym.declarations import ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

TOOL_ATTR = "__envsched_tool__"
_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SECTION = re.compile(r"^(Args|Arguments|Parameters|Attributes|Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_SECTIONS = ("Args", "Arguments", "Parameters", "Attributes")
_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def tool(fn: F | None = None, *, write: bool = False, name: str | None = None) -> Any:
    """Mark a :class:`~envsched_gym.World` method as a tool.

    Args:
        fn: The method (when used as bare ``@tool``).
        write: Whether the tool changes world state (verifiers and the curriculum use this).
        name: Tool name if it differs from the method name.
    """

    def mark(f: F) -> F:
        setattr(f, TOOL_ATTR, {"write": write, "name": name or f.__name__})
        return f

    return mark(fn) if fn is not None else mark


def spec_from_function(fn: Callable[..., Any], *, write: bool = False, name: str | None = None) -> ToolSpec:
    """Build the :class:`ToolSpec` of a function (``self`` is skipped).

    Raises:
        TypeError: A parameter lacks a type hint or has a type with no JSON-schema form.
    """
    hints = get_type_hints(fn, include_extras=False)
    summary, arg_docs = parse_google_docstring(inspect.getdoc(fn) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if pname in ("self", "cls") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if pname not in hints:
            raise TypeError(f"tool {fn.__qualname__}: parameter '{pname}' needs a type hint to build its schema")
        schema, optional = json_schema(hints[pname], where=f"{fn.__qualname__}.{pname}")
        if pname in arg_docs:
            schema["description"] = arg_docs[pname]
        if param.default is not inspect.Parameter.empty and param.default is not None:
            schema["default"] = _json_default(param.default)
        properties[pname] = schema
        if param.default is inspect.Parameter.empty and not optional:
            required.append(pname)
    parameters = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(name=name or fn.__name__, description=summary, parameters=parameters, write=write)


def _json_default(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def json_schema(tp: Any, *, where: str = "") -> tuple[dict[str, Any], bool]:
    """JSON schema of a Python type; the flag says whether ``None`` is allowed (optional)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        optional = len(rest) < len(args)
        if len(rest) == 1:
            return json_schema(rest[0], where=where)[0], optional
        return {"anyOf": [json_schema(a, where=where)[0] for a in rest]}, optional
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}, False
    if tp is Any:
        return {}, False
    if origin is Literal:
        return _literal_schema(args), False
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _literal_schema(tuple(m.value for m in tp)), False
    if tp in (list, tuple, set) or origin in (list, tuple, set, typing.Sequence):
        item = args[0] if args else Any
        return {"type": "array", "items": json_schema(item, where=where)[0]}, False
    if tp is dict or origin is dict:
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": json_schema(value, where=where)[0]}, False
    if dataclasses.is_dataclass(tp) or typing.is_typeddict(tp):
        return _object_schema(tp, where=where), False
    raise TypeError(f"{where}: type {tp!r} has no JSON-schema form; use str/int/float/bool, list, dict, Literal, Enum, a dataclass or a TypedDict")


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    schema: dict[str, Any] = {"enum": list(values)}
    if len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
        schema["type"] = _SCALARS[next(iter(kinds))]
    return schema


def _object_schema(tp: Any, *, where: str) -> dict[str, Any]:
    hints = get_type_hints(tp)
    _, field_docs = parse_google_docstring(inspect.getdoc(tp) or "")
    if dataclasses.is_dataclass(tp):
        defaults = {f.name for f in dataclasses.fields(tp) if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING}
        optional_keys = defaults
    else:
        optional_keys = set(getattr(tp, "__optional_keys__", set()))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, hint in hints.items():
        schema, optional = json_schema(hint, where=f"{where}.{key}")
        if key in field_docs:
            schema["description"] = field_docs[key]
        properties[key] = schema
        if key not in optional_keys and not optional:
            required.append(key)
    return {"type": "object", "properties": properties, "required": required}


def parse_google_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and ``{arg: description}``.

    The summary is every line before the first section header. In ``Args:`` (or
    ``Attributes:``) an entry is a line at the section's entry indentation; lines indented
    deeper continue the entry before them.
    """
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    entry_indent: int | None = None
    current: str | None = None
    for raw in doc.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header:
            section, entry_indent, current = header.group(1), None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in _ARG_SECTIONS or not line:
            continue
        indent = len(raw) - len(raw.lstrip())
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.match(line)
        if indent <= entry_indent and match:
            current = match.group(1)
            args[current] = match.group(2)
        elif current is not None:
            args[current] = f"{args[current]} {line}".strip()
    return " ".join(" ".join(summary).split()), args
