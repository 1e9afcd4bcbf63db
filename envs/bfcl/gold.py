"""Ground truth in :class:`ToolCall` form: multi-turn gold strings and single-turn answers.

Multi-turn ground truth is Python call syntax (``"mv(source='a', destination='b')"``,
``"sort('report.pdf')"``); it is read with :func:`envsched_gym.parsing.parse_tool_calls`
(``ast`` and literals only), positional arguments named by the backend method's signature.
Single-turn ground truth lists accepted values per parameter; the first accepted value of each
parameter makes the canonical gold call, rendered as a Java / JavaScript literal string where
the category's parameters are literals.
"""

from __future__ import annotations

import json
from typing import Any

from envsched_gym.envs.bfcl.backends import positional_names
from envsched_gym.envs.bfcl.schema import Language

from envsched_gym.declarations import ToolCall
from envsched_gym.parsing import parse_tool_calls


class GoldParseError(ValueError):
    """A ground-truth call string that is not literal call syntax."""


def parse_gold_call(text: str, owners: dict[str, str]) -> ToolCall:
    """One multi-turn gold string as a :class:`ToolCall`.

    Args:
        text: The call, e.g. ``"cd(folder='document')"``.
        owners: ``{method name: backend class}`` used to name positional arguments.
    """
    name = text.split("(", 1)[0].strip()
    signatures = {name: list(positional_names(owners[name], name))} if name in owners else {}
    parsed = parse_tool_calls(text, ("python",), signatures)
    if parsed.errors or len(parsed.calls) != 1:
        detail = parsed.errors[0].message if parsed.errors else f"{len(parsed.calls)} calls"
        raise GoldParseError(f"ground-truth call {text!r} is not a single literal call: {detail}")
    return parsed.calls[0]


def canonical_call(gold: dict[str, Any], params: dict[str, Any], language: Language) -> ToolCall:
    """The first accepted value of each parameter of one answer entry.

    Parameters that may be left out and are either only optional or not declared by the
    function doc (a few answers list undeclared optional parameters) are left out.

    Args:
        gold: ``{function: {param: [accepted values]}}``.
        params: The function doc's ``parameters.properties`` (for Java / JavaScript types).
        language: Literal syntax of the category.
    """
    name, accepted = next(iter(gold.items()))
    arguments: dict[str, Any] = {}
    for param, values in accepted.items():
        options = [v for v in values if v != ""]
        if not options or (param not in params and "" in values):
            continue
        schema = params.get(param, {})
        value = _canonical_value(options[0], schema)
        arguments[param] = value if language == "python" else literal(value, schema, language)
    return ToolCall(name=name, arguments=arguments)


def _canonical_value(value: Any, schema: dict[str, Any]) -> Any:
    """Dict answers list accepted values per key (``{k: [v, ...]}``): keep the first of each."""
    declared = schema.get("type", "")
    items = (schema.get("items") or {}).get("type", "")
    if declared in ("dict", "HashMap") and isinstance(value, dict):
        return _first_of_each(value)
    if items == "dict" and isinstance(value, list):
        return [_first_of_each(v) if isinstance(v, dict) else v for v in value]
    return value


def _first_of_each(accepted: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, values in accepted.items():
        options = [v for v in (values if isinstance(values, list) else [values]) if v != ""]
        if options:
            out[key] = options[0]
    return out


def literal(value: Any, schema: dict[str, Any], language: Language) -> str:
    """``value`` written as the Java / JavaScript literal BFCL's converter reads back."""
    declared = schema.get("type", "")
    nested = (schema.get("items") or {}).get("type", "")
    if language == "java":
        return _java_literal(value, declared, nested)
    return _js_literal(value, declared, nested)


def _java_literal(value: Any, declared: str, nested: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "long" and isinstance(value, int):
        return f"{value}L"
    if declared == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if declared == "ArrayList" and isinstance(value, list):
        quote = nested in ("String", "char")
        items = [f'"{v}"' if quote else _java_element(v, nested) for v in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(items)}))" if items else "new ArrayList<>()"
    if declared == "Array" and isinstance(value, list):
        return "new Object[]{" + ", ".join(_java_element(v, nested) for v in value) + "}"
    if declared == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{k}", {_java_element(v, "")});' for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _java_element(value: Any, nested: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if nested == "long" and isinstance(value, int):
        return f"{value}L"
    if isinstance(value, str) and nested not in ("String", "char", "any"):
        return f'"{value}"'
    return str(value)


def _js_literal(value: Any, declared: str, nested: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, list):
        return "[" + ", ".join(_js_element(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_js_element(v)}" for k, v in value.items()) + "}"
    return str(value)


def _js_element(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)
