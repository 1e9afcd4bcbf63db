"""ACEBench's checker for the normal categories, in ``faithful`` and ``strict`` modes.

A model output is a list of calls ``[{name: {param: value}}]``; a possible answer is
``{name: {param: value}}`` (``name_1``-style suffixes for repeated functions) or a list of such
alternatives. ``faithful`` re-implements the original ``normal_checker`` with its quirks (see
``docs/acebench.md`` for the list, and tests/envs/acebench/test_normal_check.py, one test per
quirk); ``strict`` matches calls one-to-one and values exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

Calls = list[dict[str, dict[str, Any]]]
_SUFFIX = re.compile(r"_\d+$")
_STRIP_CHARS = re.compile(r"[ ,./\-_*^]")
PY_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict,
    "any": str, "list": list, "object": dict, "objectArray": list, "list(string)": list, "list(enum)": list,
    "int": int, "number": int,
}  # fmt: skip
NESTED_TYPES = ("array", "tuple", "list(string)", "list(enum)", "object", "objectArray")


@dataclass
class Check:
    """A checker's verdict; ``errors`` says what differed (empty when valid)."""

    valid: bool
    errors: list[str] = field(default_factory=list)
    error_type: str = ""


def _ok() -> Check:
    return Check(True)


def _bad(error_type: str, message: str) -> Check:
    return Check(False, [message], error_type)


def alternatives(answer: Any) -> list[dict[str, Any]]:
    """The possible answer as a list of alternatives."""
    return list(answer) if isinstance(answer, list) else [answer]


def base_name(key: str) -> str:
    """A ground-truth key without its ``_<n>`` duplicate suffix (the original strips it always)."""
    return _SUFFIX.sub("", key)


def gold_function_name(key: str, functions: list[dict[str, Any]]) -> str:
    """The function a ground-truth key calls: the key itself when a function has that name
    (``perception_check_1``), else the key without its duplicate suffix."""
    return key if any(f["name"] == key for f in functions) else base_name(key)


def check_normal(
    functions: list[dict[str, Any]], output: Calls, answer: Any, mode: str = "strict", strip_whitespace: bool = False
) -> Check:
    """Check ``output`` against every alternative of ``answer``; valid if any alternative matches.

    Args:
        functions: The entry's function descriptions.
        output: The calls, ``[{name: arguments}]``.
        answer: The possible answer (one alternative or a list of them).
        mode: ``strict`` or ``faithful``.
        strip_whitespace: Faithful only: first delete all whitespace inside strings, as the
            original does to the model's raw text before decoding it (it then rejects 72 of the
            benchmark's own ground truths, see docs/acebench.md).
    """
    checker = faithful_check if mode == "faithful" else strict_check
    if mode == "faithful" and strip_whitespace:
        output = without_whitespace(output)
    first: Check | None = None
    for gold in alternatives(answer):
        result = checker(functions, output, gold)
        if result.valid:
            return result
        first = first or result
    return first or _bad("no_answer", "the possible answer has no alternative")


# ------------------------------------------------------------------ faithful
def standardize(text: str) -> str:
    """The original's string normalisation: drop `` ,./-_*^``, lower-case, ``'`` to ``"``."""
    return _STRIP_CHARS.sub("", text).lower().replace("'", '"')


def without_whitespace(value: Any) -> Any:
    """``value`` with all whitespace deleted inside its strings (dict keys included)."""
    if isinstance(value, str):
        return "".join(value.split())
    if isinstance(value, list):
        return [without_whitespace(v) for v in value]
    if isinstance(value, dict):
        return {without_whitespace(k): without_whitespace(v) for k, v in value.items()}
    return value


def faithful_check(functions: list[dict[str, Any]], output: Calls, gold: dict[str, Any]) -> Check:
    """The original ``normal_checker`` for one alternative (see docs/acebench.md for the quirks)."""
    if len(output) != len(gold):
        return _bad("wrong functions number", "The number of functions does not match the answer.")
    keys = list(gold)
    gold_calls = [{base_name(k): v} for k, v in gold.items()]
    out_count = Counter(next(iter(c)) for c in output)
    gold_count = Counter(next(iter(c)) for c in gold_calls)
    for name in list(out_count) + list(gold_count):
        if name not in out_count or name not in gold_count:
            return _bad("function_mismatch", f"extra function detected: {name} is not in the ground truth")
        if out_count[name] != gold_count[name]:
            return _bad(
                "function_mismatch", f"incorrect count for function {name}: [expected: {gold_count[name]}, actual: {out_count[name]}]"
            )
    for key, gold_call in zip(keys, gold_calls, strict=True):
        description = next((f for f in functions if f["name"] in key), None)  # substring lookup, as the original
        result = _bad("simple_function_checker:unclear", "wrong_function")
        for call in output:
            if next(iter(call)) == next(iter(gold_call)):
                result = _simple_function(description, call, gold_call)
                if result.valid:
                    break
            else:
                result = _bad("simple_function_checker:unclear", "wrong_function")
        if not result.valid:
            return result
    return _ok()


def _simple_function(description: dict[str, Any] | None, call: dict[str, Any], gold_call: dict[str, Any]) -> Check:
    if description is None:
        return _bad("wrong_function_name", f"no function description matches {next(iter(gold_call))}")
    possible = next(iter(gold_call.values()))
    params_schema = description.get("parameters", description.get("arguments", {}))
    model_params = next(iter(call.values()))
    if model_params == {} and params_schema == {}:
        return _ok()
    if model_params == {} or params_schema == {}:
        return _bad("wrong_param", "empty parameters")
    properties = params_schema.get("properties", {})
    if possible == properties:
        return _ok()
    if possible == {}:
        return _bad("wrong_param", "empty possible answer")
    name = description["name"]
    if name not in call:
        return _bad("wrong_function_name", f"expected {name}, got {next(iter(call))}")
    for param in params_schema.get("required", []):
        if param not in model_params:
            return _bad("lack_args", f"lack required_params: {param}")
    for param, value in model_params.items():
        if param not in properties or param not in possible:
            return _bad("addition_args", f"addition params: {param}")
        result = _check_param(name, param, value, properties[param], possible[param])
        if not result.valid:
            return result
    return _ok()


def _check_param(func: str, param: str, value: Any, schema: dict[str, Any], gold: Any) -> Check:
    type_name = schema.get("type", "string")
    expected = PY_TYPES.get(type_name)
    if expected is None:
        return _bad("type_error", f"unsupported schema type {type_name!r} for parameter {param}")
    nested = None
    if type_name in NESTED_TYPES:
        item_type = (schema.get("items") or {}).get("type") or (
            "string" if "string" in type_name else "enum" if "enum" in type_name else "dict"
        )
        nested = PY_TYPES.get(item_type, dict)
    if type_name == "float" and type(value) is int:
        try:
            value = float(value)
        except OverflowError:  # no gold value is out of a float's range
            return _bad("value_error", f"{param}: {value.bit_length()}-bit integer is outside a float's range")
    typed = _type_check(param, value, gold, expected, nested, func)
    if not typed.valid or typed.error_type == "variable":
        return typed if not typed.valid else _ok()
    if expected is dict:
        return _dict_check(param, value, gold, func)
    if expected is list and nested is dict:
        return _list_dict_check(param, value, gold, func)
    if expected is str:
        if isinstance(gold, str) and standardize(gold) not in standardize(value):
            return _bad("value_error:string", f"wrong value for parameter ({param}) of api ({func}): [excepted: {gold}, real: [{value}]]")
        return _ok()
    if expected is list:
        return _list_check(param, value, gold, func)
    return _ok()  # numbers and booleans: the type check is the whole check


def _type_check(param: str, value: Any, gold: Any, expected: type, nested: type | None, func: str) -> Check:
    """The original ``type_checker``; a valid result with ``error_type="variable"`` skips the value check."""
    gold_type = type(gold) if gold != "" else None
    variable = gold_type is not None and gold_type != expected
    value = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
    if type(value) is expected:
        if nested is None:
            return Check(True, error_type="variable" if variable else "")
        for item in gold if isinstance(gold, (list, dict, str)) else []:
            if not isinstance(item, list) or all(_type_check(param, v, item, nested, None, func).valid for v in value):
                return Check(True, error_type="variable" if variable else "")
    if gold_type is not None and (type(value) is gold_type or gold == value):
        return Check(True, error_type="variable")
    return _bad(
        "type_error", f"wrong type for parameter ({param}) of api ({func}):[excepted: {expected.__name__}, real: {type(value).__name__}]"
    )


def _list_check(param: str, value: list[Any], gold: Any, func: str) -> Check:
    norm = [standardize(v) if isinstance(v, str) else v for v in value]
    gold_norm = [standardize(v) if isinstance(v, str) else v for v in gold] if isinstance(gold, list) else gold
    if norm != gold_norm:
        return _bad(
            "value_error:list/tuple", f"wrong value for parameter ({param!r}) of api ({func}): [expected {gold}, real: [{value!r}]]"
        )
    return _ok()


def _dict_check(param: str, value: Any, gold: Any, func: str) -> Check:
    wrong = _bad("value_error", f"wrong value for parameter ({param}) of api ({func}): [excepted: {gold}, real: [{value}]]")
    if not isinstance(value, dict) or not isinstance(gold, dict) or len(value) != len(gold):
        return wrong
    for key, item in value.items():
        item = {"true": True, "false": False}.get(item, item) if isinstance(item, str) else item
        if key not in gold:
            return wrong
        if isinstance(gold[key], dict):
            inner = _dict_check(param, item, gold[key], func)
            if not inner.valid:
                return inner
            continue
        got = standardize(item) if isinstance(item, str) else item
        want = standardize(gold[key]) if isinstance(gold[key], str) else gold[key]
        if str(want) not in str(got):  # substring on the str() of any value, as the original
            return wrong
    return _ok()


def _list_dict_check(param: str, value: list[Any], gold: Any, func: str) -> Check:
    if not isinstance(gold, list) or len(value) != len(gold):
        return _bad(
            "value_error:list_dict_count", f"wrong value for parameter ({param}) of api ({func}): [excepted: {gold}, real: [{value}]]"
        )
    for got, want in zip(value, gold, strict=True):
        result = _dict_check(param, got, want, func)
        if not result.valid:
            return result
    return _ok()


# -------------------------------------------------------------------- strict
def values_equal(got: Any, want: Any) -> bool:
    """Exact equality of JSON values; ``1 == 1.0`` but booleans are not numbers. Never raises:
    an integer beyond a float's range is compared exactly (Python's ``int == float`` is)."""
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        try:
            return float(got) == float(want)
        except OverflowError:
            return got == want
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(values_equal(got[k], want[k]) for k in want)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(values_equal(g, w) for g, w in zip(got, want, strict=True))
    return type(got) is type(want) and got == want


def call_differences(call: dict[str, Any], gold_name: str, gold_args: dict[str, Any]) -> list[str]:
    """Human-readable differences between one call and one gold call (empty when equal)."""
    name, args = next(iter(call.items()))
    if name != gold_name:
        return [f"function {name!r} instead of {gold_name!r}"]
    diffs = [f"{name}: missing parameter {p!r} (expected {gold_args[p]!r})" for p in gold_args if p not in args]
    diffs += [f"{name}: unexpected parameter {p!r}={args[p]!r}" for p in args if p not in gold_args]
    diffs += [
        f"{name}: {p}={args[p]!r}, expected {gold_args[p]!r}" for p in gold_args if p in args and not values_equal(args[p], gold_args[p])
    ]
    return diffs


def strict_check(functions: list[dict[str, Any]], output: Calls, gold: dict[str, Any]) -> Check:
    """One-to-one matching of output calls to gold calls with exact values (order-free)."""
    golds = [(gold_function_name(k, functions), v) for k, v in gold.items()]
    if len(output) != len(golds):
        return _bad("wrong functions number", f"{len(output)} calls, expected {len(golds)}: {[g for g, _ in golds]}")
    if not golds:
        return _ok()
    diffs = [[call_differences(call, name, args) for name, args in golds] for call in output]
    cost = np.array([[len(d) for d in row] for row in diffs], dtype=float)
    rows, cols = linear_sum_assignment(cost)
    errors = [e for r, c in zip(rows, cols, strict=True) for e in diffs[r][c]]
    return _ok() if not errors else Check(False, errors, "value_error")
