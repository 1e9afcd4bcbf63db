"""Tool-call parsing from raw assistant text. Nothing here ever evaluates model output.

Three wire formats are understood:

* ``qwen3``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks, several per
  message, optionally after a ``<think>...</think>`` block;
* ``openai``: a JSON message ``{"tool_calls": [{"function": {"name", "arguments"}}]}`` or a bare
  list of such calls;
* ``python``: BFCL's call syntax ``[f(a=1), g(b=[2])]``, read with :mod:`ast` and
  :func:`ast.literal_eval` (literal arguments only).

Parsing never raises and runs in time linear in the text: malformed calls come back as
:class:`ParseError` entries, and so do numbers no tool could use (integers of more than
:data:`MAX_INT_DIGITS` digits, NaN and infinities) and messages with more calls than the cap.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

from envsched_gym.declarations import ToolCall

Format = Literal["qwen3", "openai", "python"]
ALL_FORMATS: tuple[Format, ...] = ("qwen3", "openai", "python")
MAX_PYTHON_CHARS = 100_000
MAX_CALLS_PER_MESSAGE = 64
#: Python's own limit for converting an integer to decimal text: a longer integer could not
#: even be printed back to the agent, let alone used as an argument.
MAX_INT_DIGITS = 4300
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219280948873626)  # log2(10): hex literals skip the decimal limit

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_PYTHON_START = re.compile(r"^\[?\s*[A-Za-z_][\w.]*\s*\(")
_PARSE_FAILURES = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError, OverflowError)


class _BadNumber(ValueError):
    """A JSON number no tool can take; raised from the decoder's hooks and reported as such."""


def _int_hook(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _BadNumber(f"an integer with {len(digits.lstrip('-'))} digits is too long (at most {MAX_INT_DIGITS})")
    return int(digits)


def _float_hook(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _BadNumber(f"{text[:40]} overflows a float; NaN and infinity are not valid argument values")
    return value


def _constant_hook(name: str) -> Any:
    raise _BadNumber(f"{name} is not valid JSON; NaN and infinity are not valid argument values")


_DECODER = json.JSONDecoder(parse_int=_int_hook, parse_float=_float_hook, parse_constant=_constant_hook)
_JSON_FAILURES = (ValueError, RecursionError, MemoryError)  # JSONDecodeError and _BadNumber are ValueErrors


@dataclass
class ParseError:
    """One malformed call: which format, what is wrong, and the offending text (shortened)."""

    format: str
    message: str
    snippet: str = ""


@dataclass
class ParseResult:
    """Calls found in one assistant message, the remaining text, and any errors."""

    calls: list[ToolCall] = field(default_factory=list)
    content: str = ""
    reasoning: str | None = None
    errors: list[ParseError] = field(default_factory=list)
    format: str | None = None

    @property
    def ok(self) -> bool:
        """True when no call was malformed."""
        return not self.errors


def parse_tool_calls(
    text: str,
    formats: tuple[Format, ...] = ALL_FORMATS,
    signatures: dict[str, list[str]] | None = None,
    max_calls: int = MAX_CALLS_PER_MESSAGE,
) -> ParseResult:
    """Extract tool calls from ``text``.

    Args:
        text: The assistant's raw output.
        formats: Wire formats to try, in order of detection.
        signatures: Parameter names in order, per tool, so python-syntax positional
            arguments can be named; without it a positional argument is a parse error.
        max_calls: Most calls (well-formed or not) one message may make. A message with more
            runs none of them and gets one error instead, so a flood of calls costs one step.
    """
    if not isinstance(text, str):
        return ParseResult(errors=[ParseError("input", f"expected a string, got {type(text).__name__}")])
    return _capped(_parse(text, formats, signatures or {}, max_calls), max_calls)


MARKUP_TAGS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
"""The qwen3 wire format's tags; ``<tool_response>`` wraps the environment's answers, never the model's."""


def malformed_turn(text: str, formats: tuple[Format, ...] = ALL_FORMATS) -> bool:
    """Whether an assistant turn is one the environment cannot read cleanly.

    True for a call that does not parse, and also for wire-format tags left in the turn's text
    outside every parsed call, which parsing alone lets through: a turn that opens with the
    environment's own ``<tool_response>`` tag, or stray tags before a well-formed call, parse to
    a good call plus content. GRPO can teach a small model such text without any reward for it
    (docs/training.md, "What the held-out losses are made of"), so it is counted apart from the reward.
    """
    parsed = parse_tool_calls(text, formats)
    return bool(parsed.errors) or any(tag in parsed.content for tag in MARKUP_TAGS)


def malformed_episode(actions: list[str]) -> bool:
    """Whether any of an episode's generated turns (an answer log's ``actions``) is a :func:`malformed_turn`."""
    return any(malformed_turn(a) for a in actions)


def _capped(result: ParseResult, max_calls: int) -> ParseResult:
    attempts = len(result.calls) + len(result.errors)
    if attempts > max_calls:
        message = (
            f"more than {max_calls} tool calls in one message, the limit (max_calls_per_message); "
            f"none were run. Make at most {max_calls} calls per message."
        )
        result.calls, result.errors = [], [ParseError(result.format or "input", message)]
    return result


def _parse(text: str, formats: tuple[Format, ...], signatures: dict[str, list[str]], max_calls: int) -> ParseResult:
    whole = _parse_bare(text, formats, signatures)
    if whole is not None and whole.calls and whole.ok:
        return whole
    reasoning, body = _split_reasoning(text)
    if "qwen3" in formats and _OPEN in body:
        result = _parse_qwen3(body, max_calls)
    elif body == text:  # no reasoning was split off: the whole-message parse above is the answer
        result = whole or ParseResult(content=body.strip())
    else:
        result = _parse_bare(body, formats, signatures) or ParseResult(content=body.strip())
    result.reasoning = reasoning
    return result


def _parse_bare(body: str, formats: tuple[Format, ...], signatures: dict[str, list[str]]) -> ParseResult | None:
    """OpenAI JSON or python-syntax calls making up the whole message; ``None`` if neither."""
    if "openai" in formats and body.lstrip()[:1] in ("{", "[") and (found := _parse_openai(body)) is not None:
        return found
    if "python" in formats and _PYTHON_START.match(_strip_fence(body)):
        return _parse_python(_strip_fence(body), signatures)
    return None


def _split_reasoning(text: str) -> tuple[str | None, str]:
    """Separate ``<think>`` reasoning (also a leading, unopened ``...</think>``) from the reply.

    Only text before the first ``<tool_call>`` can be reasoning, so a tag inside a call's
    JSON string is left alone. Each ``<think>`` pairs with the first ``</think>`` after it; the
    scan moves forward only, so it is linear in the text however many tags it holds.
    """
    cut = text.find(_OPEN)
    head, tail = (text, "") if cut < 0 else (text[:cut], text[cut:])
    parts, kept, pos = [], [], 0
    while (start := head.find(_THINK_OPEN, pos)) >= 0 and (end := head.find(_THINK_CLOSE, start + len(_THINK_OPEN))) >= 0:
        kept.append(head[pos:start])
        parts.append(head[start + len(_THINK_OPEN) : end].strip())
        pos = end + len(_THINK_CLOSE)
    kept.append(head[pos:])
    head = "".join(kept)
    if _THINK_CLOSE in head and _THINK_OPEN not in head:
        before, _, head = head.partition(_THINK_CLOSE)
        parts.insert(0, before.strip())
    return ("\n".join(parts) if parts else None), head + tail


def _strip_fence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        inner = stripped[3:-3]
        first_newline = inner.find("\n")
        if first_newline >= 0 and re.fullmatch(r"[A-Za-z]*", inner[:first_newline].strip()):
            inner = inner[first_newline + 1 :]
        return inner.strip()
    return stripped


def _parse_qwen3(body: str, max_calls: int) -> ParseResult:
    """Every ``<tool_call>`` block, stopping one past ``max_calls`` (the rest is not read)."""
    result = ParseResult(format="qwen3")
    outside: list[str] = []
    pos = 0
    while (start := body.find(_OPEN, pos)) >= 0 and len(result.calls) + len(result.errors) <= max_calls:
        outside.append(body[pos:start])
        pos = _parse_qwen3_block(body, start + len(_OPEN), result)
    outside.append(body[pos:])
    result.content = "".join(outside).strip()
    return result


def _parse_qwen3_block(body: str, pos: int, result: ParseResult) -> int:
    """Parse one block whose JSON starts at ``pos``; return where scanning resumes."""
    try:
        obj, end = _DECODER.raw_decode(body, _skip_space(body, pos))
    except _JSON_FAILURES as exc:
        stop = _after_close(body, pos)
        result.errors.append(ParseError("qwen3", f"tool call is not valid JSON: {_json_reason(exc)}", body[pos:stop][:200]))
        return stop
    tail = _skip_space(body, end)
    if not body.startswith(_CLOSE, tail):
        stop = _after_close(body, pos)
        result.errors.append(ParseError("qwen3", "missing </tool_call> after the call's JSON", body[pos:stop][:200]))
        return stop
    _append_call(obj, "qwen3", result)
    return tail + len(_CLOSE)


def _after_close(body: str, pos: int) -> int:
    """Where scanning resumes after a malformed block: past its ``</tool_call>``, else the end."""
    close = body.find(_CLOSE, pos)
    return close + len(_CLOSE) if close >= 0 else len(body)


def _json_reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large"
    return str(exc)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _append_call(obj: Any, fmt: str, result: ParseResult) -> None:
    """Validate a decoded ``{"name", "arguments"}`` object and add it (or an error)."""
    if not isinstance(obj, dict):
        result.errors.append(ParseError(fmt, f"a tool call must be a JSON object, got {type(obj).__name__}", str(obj)[:200]))
        return
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = _DECODER.decode(args) if args.strip() else {}
        except _JSON_FAILURES as exc:
            result.errors.append(ParseError(fmt, f"arguments string is not valid JSON: {_json_reason(exc)}", args[:200]))
            return
    if not isinstance(name, str) or not name:
        result.errors.append(ParseError(fmt, 'a tool call needs a non-empty string "name"', str(obj)[:200]))
    elif not isinstance(args, dict):
        result.errors.append(ParseError(fmt, f'"arguments" of {name} must be a JSON object', str(args)[:200]))
    else:
        call_id = obj.get("id")
        result.calls.append(ToolCall(name=name, arguments=args, id=call_id if isinstance(call_id, str) else None))


def _parse_openai(body: str) -> ParseResult | None:
    """Parse an OpenAI-style JSON message; ``None`` when the JSON is not tool-call shaped."""
    try:
        obj = _DECODER.decode(body)
    except _BadNumber as exc:
        return ParseResult(format="openai", errors=[ParseError("openai", f"tool call is not valid JSON: {exc}", body[:200])])
    except _JSON_FAILURES:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("tool_calls"), list):
        items, content = obj["tool_calls"], obj.get("content") or ""
    elif isinstance(obj, dict) and "function" in obj:
        items, content = [obj], ""
    elif isinstance(obj, list) and obj and all(isinstance(i, dict) and "function" in i for i in obj):
        items, content = obj, ""
    else:
        return None
    result = ParseResult(format="openai", content=content if isinstance(content, str) else "")
    for item in items:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            result.errors.append(ParseError("openai", 'each tool call needs a "function" object', str(item)[:200]))
            continue
        _append_call({**function, "id": item.get("id")}, "openai", result)
    return result


def _parse_python(body: str, signatures: dict[str, list[str]]) -> ParseResult:
    result = ParseResult(format="python")
    if len(body) > MAX_PYTHON_CHARS:
        result.errors.append(ParseError("python", f"call text longer than {MAX_PYTHON_CHARS} characters"))
        return result
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(body, mode="eval").body
    except _PARSE_FAILURES as exc:
        result.errors.append(ParseError("python", f"not valid call syntax: {exc}", body[:200]))
        return result
    nodes = tree.elts if isinstance(tree, (ast.List, ast.Tuple)) else [tree]
    for node in nodes:
        _append_python_call(node, signatures, result)
    return result


def _append_python_call(node: ast.expr, signatures: dict[str, list[str]], result: ParseResult) -> None:
    if not isinstance(node, ast.Call) or (name := _dotted_name(node.func)) is None:
        result.errors.append(ParseError("python", "expected a call such as f(a=1)", _unparse(node)))
        return
    try:
        args = _python_arguments(node, name, signatures)
    except _PARSE_FAILURES as exc:
        result.errors.append(ParseError("python", f"{name}: {exc}", _unparse(node)))
        return
    result.calls.append(ToolCall(name=name, arguments=args))


def _python_arguments(node: ast.Call, name: str, signatures: dict[str, list[str]]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if node.args:
        names = signatures.get(name)
        if names is None or len(node.args) > len(names):
            raise ValueError("positional arguments are not supported here; pass them by keyword (a=1)")
        for param, value in zip(names, node.args, strict=False):
            args[param] = _literal(value)
    for kw in node.keywords:
        if kw.arg is None:
            raise ValueError("**kwargs unpacking is not supported; pass arguments by keyword")
        if kw.arg in args:
            raise ValueError(f"argument '{kw.arg}' given twice")
        args[kw.arg] = _literal(kw.value)
    return args


def _literal(node: ast.expr) -> Any:
    """A literal argument value as JSON data (tuples become lists)."""
    return _to_json(ast.literal_eval(node))


def _to_json(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:
            raise ValueError(f"an integer of {value.bit_length()} bits is too large (at most {MAX_INT_DIGITS} decimal digits)")
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("NaN and infinity are not valid argument values")
        return value
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _to_json(v) for k, v in value.items()}
    raise ValueError(f"argument value of type {type(value).__name__} is not JSON data")


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted_name(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)[:200]
    except _PARSE_FAILURES:
        return ""
