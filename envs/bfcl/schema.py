"""BFCL function docs -> OpenAI tool schemas (:class:`ToolSpec`).

BFCL writes ``"type": "dict"`` and Python, Java and JavaScript type names (``float``,
``tuple``, ``any``, ``HashMap``, ``Boolean`` ...). Python-language docs are converted to JSON
schema types that accept what BFCL's checker accepts (``float`` -> ``number`` so an int is
accepted, ``any`` -> no type constraint). Java and JavaScript docs get BFCL's own
language-specific rewrite: every parameter becomes a ``string`` holding a Java / JavaScript
literal, with the original type named in the description (exactly what BFCL shows models).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from envsched_gym.declarations import ToolSpec

Language = Literal["python", "java", "javascript"]

JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "double": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array", "tuple": "array",
    "dict": "object", "object": "object", "byte": "integer", "short": "integer", "long": "integer",
    "char": "string", "String": "string", "Boolean": "boolean", "Bigint": "integer", "ArrayList": "array",
    "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array", "Stack": "array",
}  # fmt: skip
"""BFCL type name -> JSON schema type. Names absent here (``any``, ``""``) get no type constraint."""

_HINTS = {
    "python": " Note that the provided function is in Python 3 syntax.",
    "java": " Note that the provided function is in Java 8 SDK syntax.",
    "javascript": " Note that the provided function is in JavaScript syntax.",
}
_KEPT_KEYS = ("description", "enum", "default", "format", "minimum", "maximum", "minItems", "maxItems", "pattern")


def language_of(category: str) -> Language:
    """The language BFCL checks ``category`` in."""
    if category.endswith("javascript"):
        return "javascript"
    return "java" if category.endswith("java") else "python"


def to_tool_spec(doc: dict[str, Any], language: Language = "python", write: bool = False) -> ToolSpec:
    """One BFCL function doc as a :class:`ToolSpec` (the doc itself is not modified)."""
    params = doc.get("parameters") or {"type": "dict", "properties": {}}
    if language != "python":
        params = copy.deepcopy(params)
        _stringify_parameters(params, language)
    return ToolSpec(
        name=doc["name"],
        description=str(doc.get("description", "")) + _HINTS[language],
        parameters=convert_schema({**params, "type": "dict"}),
        write=write,
    )


def convert_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter schema as JSON schema (recursively; unknown keywords dropped)."""
    out: dict[str, Any] = {}
    json_type = JSON_TYPES.get(str(node.get("type", "")))
    if json_type is not None:
        out["type"] = json_type
    for key in _KEPT_KEYS:
        if key in node and not (key == "enum" and not isinstance(node[key], list)):
            out[key] = node[key]
    if isinstance(node.get("properties"), dict):
        out["properties"] = {k: convert_schema(v) for k, v in node["properties"].items() if isinstance(v, dict)}
        required = node.get("required")
        out["required"] = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    elif json_type == "object":
        out["properties"], out["required"] = {}, []
    if isinstance(node.get("items"), dict):
        out["items"] = convert_schema(node["items"])
    if isinstance(node.get("additionalProperties"), bool):
        out["additionalProperties"] = node["additionalProperties"]
    return out


def json_type(value: Any) -> str:
    """The JSON schema type name of a JSON value."""
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null"


def _stringify_parameters(params: dict[str, Any], language: Language) -> None:
    """BFCL's Java / JavaScript rewrite: parameters become strings holding literals."""
    name = "Java" if language == "java" else "JavaScript"
    for value in params.get("properties", {}).values():
        declared = value.get("type", "")
        value.setdefault("description", "")
        if declared == "any":
            value["description"] += f" This parameter can be of any type of {name} object in string representation."
        else:
            value["description"] += f" This is {name} {declared} type parameter in string representation."
        if declared in (("ArrayList", "Array") if language == "java" else ("array",)):
            items = value.pop("items", {}) or {}
            value["description"] += f" The list elements are of type {items.get('type')}; they are not in string representation."
        if language == "javascript" and declared == "dict" and "properties" in value:
            value["description"] += (
                " The dictionary entries have the following schema; they are not in string representation. "
                + json.dumps(value.pop("properties"))
            )
        value["type"] = "string"
