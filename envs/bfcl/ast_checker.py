"""BFCL's single-turn AST checker rules, re-implemented over parsed :class:`ToolCall` s.

A call is checked against one ground-truth entry ``{function: {param: [accepted values]}}``:
the function name must match; every required parameter must be present; every given parameter
must be declared and listed in the ground truth; its type must match the declared type (an int
is accepted for ``float``; a value of the ground truth's own type is accepted as a "variable");
strings compare after BFCL's normalisation (case, spaces and ``,./-_*^`` ignored, ``'`` read as
``"``), lists element-wise after it, dicts key by key; a ground-truth list containing ``""``
makes the parameter optional. Parallel categories match calls to ground-truth entries in any
order (greedily, as BFCL does); ``multiple`` categories expect exactly one call. Java and
JavaScript values are literal strings converted by :mod:`.literals` first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from envsched_gym.envs.bfcl.literals import JAVA_TYPES, JS_TYPES, UnsupportedType, java_value, js_value
from envsched_gym.envs.bfcl.schema import Language, language_of

from envsched_gym.declarations import ToolCall

PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict, "any": str,
}  # fmt: skip
_NESTED = {"python": ("array", "tuple"), "java": ("Array", "ArrayList", "array"), "javascript": ("Array", "ArrayList", "array")}
_STRIPPED = re.compile(r"[ \,\.\/\-\_\*\^]")


@dataclass(frozen=True)
class Verdict:
    """The checker's answer: ``valid`` plus BFCL's error type and a readable reason when not."""

    valid: bool
    error_type: str = ""
    reason: str = ""


VALID = Verdict(True)


def check_calls(functions: list[dict[str, Any]], calls: list[ToolCall], answer: list[dict[str, Any]], category: str) -> Verdict:
    """Check a model's calls for one single-turn entry of ``category`` (an AST category)."""
    language = language_of(category)
    if "parallel" in category:
        return _parallel(functions, calls, answer, language)
    expected = len(answer) if "multiple" in category else 1
    if len(calls) != expected:
        return Verdict(False, "wrong_count", f"expected {len(answer)} call(s), got {len(calls)}")
    doc = _find(functions, next(iter(answer[0]))) if "multiple" in category else functions[0]
    return check_call(doc, calls[0], answer[0], language)


def _find(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((f for f in functions if f["name"] == name), None)


def _parallel(functions: list[dict[str, Any]], calls: list[ToolCall], answer: list[dict[str, Any]], language: Language) -> Verdict:
    if len(calls) != len(answer):
        return Verdict(False, "wrong_count", f"expected {len(answer)} call(s), got {len(calls)}")
    used: set[int] = set()
    for position, gold in enumerate(answer):
        doc = _find(functions, next(iter(gold)))
        match = next((i for i, call in enumerate(calls) if i not in used and check_call(doc, call, gold, language).valid), None)
        if match is None:
            return Verdict(False, "cannot_find_match", f"no call matches ground-truth entry {position}")
        used.add(match)
    return VALID


def check_call(doc: dict[str, Any] | None, call: ToolCall, gold: dict[str, Any], language: Language) -> Verdict:
    """Check one call against one ground-truth entry ``{name: {param: accepted}}``."""
    if doc is None:
        return Verdict(False, "missing_function_doc", "the ground truth names an undeclared function")
    accepted = next(iter(gold.values()))
    declared = doc["parameters"].get("properties", {})
    if call.name != doc["name"]:
        return Verdict(False, "wrong_func_name", f"expected {doc['name']!r}, got {call.name!r}")
    missing = [p for p in doc["parameters"].get("required", []) if p not in call.arguments]
    if missing:
        return Verdict(False, "missing_required", f"missing required parameter {missing[0]!r}")
    for param, value in call.arguments.items():
        if param not in declared or param not in accepted:
            return Verdict(False, "unexpected_param", f"unexpected parameter {param!r}")
        try:
            verdict = _check_param(param, value, declared[param], accepted[param], language)
        except (UnsupportedType, KeyError, TypeError, AttributeError) as exc:
            verdict = Verdict(False, "unsupported", f"{param}: {exc}")
        if not verdict.valid:
            return verdict
    for param, values in accepted.items():
        if param not in call.arguments and "" not in values:
            return Verdict(False, "missing_optional", f"parameter {param!r} is not optional")
    return VALID


def _check_param(param: str, value: Any, schema: dict[str, Any], accepted: list[Any], language: Language) -> Verdict:
    declared = schema["type"]
    table = {"python": PYTHON_TYPES, "java": JAVA_TYPES, "javascript": JS_TYPES}[language]
    expected = table[declared]
    nested = schema["items"]["type"] if declared in _NESTED[language] else None
    nested_type = table[nested] if nested is not None else None
    if language != "python":
        if type(value) is not str:
            return Verdict(False, f"type_error:{language}", f"{param}: expected a {language} literal in a string")
        convert = java_value if language == "java" else js_value
        value = convert(value, declared, nested) if nested is not None else convert(value, declared)
    elif declared == "float" and type(value) is int:
        try:
            value = float(value)
        except OverflowError:  # BFCL's checker raises here; no ground truth is out of a float's range
            return Verdict(False, "value_error:others", f"{param}: {value.bit_length()}-bit integer is outside a float's range")
    type_ok, is_variable = _type_check(value, accepted, expected, nested_type)
    if not type_ok:
        return Verdict(False, "type_error", f"{param}: expected type {declared}, got {type(value).__name__}")
    if not is_variable:
        if expected is dict:
            return _dict_check(param, value, accepted)
        if expected is list and nested_type is dict:
            return _list_of_dicts_check(param, value, accepted)
        if expected is str:
            ok = normalise(value) in [normalise(a) for a in accepted if type(a) is str]
            return VALID if ok else Verdict(False, "value_error:string", f"{param}: {value!r} not in {accepted}")
        if expected is list:
            return _list_check(param, value, accepted)
    return VALID if value in accepted else Verdict(False, "value_error:others", f"{param}: {value!r} not in {accepted}")


def _type_check(value: Any, accepted: list[Any], expected: type, nested: type | None) -> tuple[bool, bool]:
    """``(type ok, is a variable)``; a "variable" is a value of the ground truth's own type."""
    gold_type = next((type(a) for a in accepted if a != ""), None)
    is_variable = gold_type is not None and gold_type is not expected
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for option in accepted:
            if type(option) is not list or all(_type_check(item, option, nested, None)[0] for item in value):
                return True, is_variable
        return False, is_variable
    return (True, True) if gold_type is not None and type(value) is gold_type else (False, False)


def normalise(text: str) -> str:
    """BFCL's string normalisation: drop spaces and ``,./-_*^``, lower-case, ``'`` -> ``"``."""
    return _STRIPPED.sub("", text).lower().replace("'", '"')


def _norm(value: Any) -> Any:
    return normalise(value) if type(value) is str else value


def _list_check(param: str, value: list[Any], accepted: list[Any]) -> Verdict:
    options = [[_norm(item) for item in option] for option in accepted]
    ok = [_norm(item) for item in value] in options
    return VALID if ok else Verdict(False, "value_error:list/tuple", f"{param}: {value!r} not in {accepted}")


def _dict_check(param: str, value: dict[str, Any], accepted: list[Any]) -> Verdict:
    for option in accepted:
        if option == "":
            continue
        keys_ok = all(key in option and _norm(item) in [_norm(o) for o in option[key]] for key, item in value.items())
        if keys_ok and all(key in value or "" in values for key, values in option.items()):
            return VALID
    return Verdict(False, "value_error:dict", f"{param}: {value!r} matches none of {accepted}")


def _list_of_dicts_check(param: str, value: list[Any], accepted: list[Any]) -> Verdict:
    for option in accepted:
        if len(value) != len(option):
            continue
        if all(isinstance(item, dict) and _dict_check(param, item, [gold]).valid for item, gold in zip(value, option, strict=True)):
            return VALID
    return Verdict(False, "value_error:list_dict", f"{param}: {value!r} matches none of {accepted}")
