"""ACEBench function descriptions as :class:`~envsched_gym.ToolSpec` (valid JSON schema).

ACEBench writes ``"type": "dict"`` (and ``float``, ``tuple``, ``any``), some distractor
functions put their schema under ``arguments`` instead of ``parameters``, and a few list a
required name that is not a property (``reserve_flight`` requires ``payment_methods`` but
defines ``payment_method``); such names are dropped from ``required``.
"""

from __future__ import annotations

import copy
from typing import Any

from envsched_gym import ToolSpec

_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer", "objectArray": "array"}
WRITE_TOOLS = frozenset({
    "turn_on_wifi", "login_device", "send_message", "delete_message", "add_reminder", "delete_reminder", "mark_as_notified",
    "login_food_platform", "add_food_delivery_order", "reserve_flight", "modify_flight", "cancel_reservation",
})  # fmt: skip


def _fix(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_fix(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _fix(v) for k, v in schema.items()}
    kind = out.get("type")
    if isinstance(kind, str):
        if kind == "any":
            out.pop("type")
        elif kind.startswith("list("):
            out["type"] = "array"
        else:
            out["type"] = _TYPES.get(kind, kind)
    if isinstance(out.get("properties"), dict) and isinstance(out.get("required"), list):
        out["required"] = [r for r in out["required"] if r in out["properties"]]
    return out


def tool_spec(function: dict[str, Any]) -> ToolSpec:
    """One ACEBench function description as a tool."""
    raw = function.get("parameters", function.get("arguments")) or {}
    parameters = _fix(copy.deepcopy(raw))
    parameters["type"] = "object"
    parameters.setdefault("properties", {})
    parameters.setdefault("required", [])
    return ToolSpec(
        name=function["name"],
        description=str(function.get("description", "")),
        parameters=parameters,
        write=function["name"] in WRITE_TOOLS,
    )
