"""The AST rules on small hand-made cases, each also checked against BFCL's own checker."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from envsched_gym.envs.bfcl.ast_checker import check_calls, normalise
from envsched_gym.envs.bfcl.literals import java_value, js_value

from envsched_gym.declarations import ToolCall

sys.path.insert(0, str(Path(__file__).parent))
from bfcl_official import official_ast

AREA = {
    "name": "area",
    "description": "Area of a shape.",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "float"},
            "unit": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "dict", "properties": {"round": {"type": "boolean"}}},
        },
        "required": ["base"],
    },
}
ANSWER = [{"area": {"base": [10.0], "unit": ["square meters", ""], "tags": [["a", "b"], ""], "opts": [{"round": [True]}, ""]}}]
CASES = [
    ("int accepted for float", [ToolCall("area", {"base": 10})], True),
    ("optional left out", [ToolCall("area", {"base": 10.0})], True),
    ("string normalised", [ToolCall("area", {"base": 10.0, "unit": "Square-Meters"})], True),
    ("wrong string", [ToolCall("area", {"base": 10.0, "unit": "feet"})], False),
    ("list normalised", [ToolCall("area", {"base": 10.0, "tags": ["A", "b "]})], True),
    ("dict value", [ToolCall("area", {"base": 10.0, "opts": {"round": True}})], True),
    ("dict wrong value", [ToolCall("area", {"base": 10.0, "opts": {"round": False}})], False),
    ("bool is not float", [ToolCall("area", {"base": True})], False),
    ("missing required", [ToolCall("area", {"unit": "square meters"})], False),
    ("unexpected param", [ToolCall("area", {"base": 10.0, "colour": "red"})], False),
    ("wrong function", [ToolCall("volume", {"base": 10.0})], False),
    ("two calls in simple", [ToolCall("area", {"base": 10.0}), ToolCall("area", {"base": 10.0})], False),
    ("no call", [], False),
]


@pytest.mark.parametrize(("label", "calls", "valid"), CASES, ids=[c[0] for c in CASES])
def test_simple_rules_match_bfcl(label, calls, valid):
    ours = check_calls([AREA], calls, ANSWER, "simple_python").valid
    assert ours == valid
    assert official_ast([AREA], [{c.name: c.arguments} for c in calls], ANSWER, "simple_python") == valid


def test_parallel_is_order_free():
    answer = [{"area": {"base": [1.0]}}, {"area": {"base": [2.0]}}]
    for calls in ([ToolCall("area", {"base": 1.0}), ToolCall("area", {"base": 2.0})], [ToolCall("area", {"base": 2}), ToolCall("area", {"base": 1})]):
        assert check_calls([AREA], calls, answer, "parallel").valid
    assert not check_calls([AREA], [ToolCall("area", {"base": 1.0})] * 2, answer, "parallel").valid


def test_normalisation():
    assert normalise("New York, N.Y.") == normalise("new york ny") == "newyorkny"
    assert normalise("it's") == 'it"s'


@pytest.mark.parametrize(
    ("text", "declared", "nested", "value"),
    [
        ("42", "integer", None, 42),
        ("42L", "long", None, 42),
        ("1.5f", "float", None, 1.5),
        ("1.5", "float", None, "1.5"),
        ("true", "boolean", None, True),
        ("new ArrayList<>(Arrays.asList(1L, 2L))", "ArrayList", "long", [1, 2]),
        ('new ArrayList<String>(Arrays.asList("a", "b"))', "ArrayList", "String", ["a", "b"]),
        ("new int[]{1, 2}", "Array", "integer", [1, 2]),
        ('new HashMap<String, Object>() {{ put("k", 1); put("s", "v"); }}', "HashMap", None, {"k": 1, "s": "v"}),
        ("x", "char", None, "x"),
    ],
)
def test_java_literals(text, declared, nested, value):
    assert java_value(text, declared, nested) == value


@pytest.mark.parametrize(
    ("text", "declared", "value"),
    [("'abc'", "String", "abc"), ("abc", "String", "abc"), ("12n", "Bigint", 12), ("[1, 'a']", "array", [1, "a"]), ("{a: 1, b: 'x'}", "dict", {"a": 1, "b": "x"})],
)
def test_javascript_literals(text, declared, value):
    assert js_value(text, declared) == value


def test_an_integer_beyond_a_float_for_a_float_parameter_is_a_value_error_not_a_crash():
    functions = [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}, "required": ["x"]}}]
    verdict = check_calls(functions, [ToolCall("f", {"x": 10**400})], [{"f": {"x": [1.5]}}], "simple")
    assert not verdict.valid and "outside a float's range" in verdict.reason


@pytest.mark.parametrize("declared", ["integer", "long", "byte"])
def test_java_integers_too_long_to_convert_stay_text(declared):
    digits = "9" * 5000 + ("L" if declared == "long" else "")
    assert java_value(digits, declared) == digits
    assert js_value("9" * 5000, "integer") == "9" * 5000 and js_value("9" * 5000 + "n", "Bigint") == "9" * 5000 + "n"


ATTACKS = [
    (java_value, "HashMap", 'new HashMap<>(){{put("'), (java_value, "ArrayList", "new ArrayList<>(Arrays.asList("),
    (java_value, "Array", "new int[]{"), (js_value, "array", "[["), (js_value, "dict", "{a:"),
]  # fmt: skip


@pytest.mark.parametrize(("convert", "declared", "unit"), ATTACKS)
def test_collection_literals_past_the_cap_are_text_and_cheap(convert, declared, unit):
    import time

    from envsched_gym.envs.bfcl.literals import MAX_COLLECTION_CHARS

    text = unit * (100_000 // len(unit))
    start = time.perf_counter()
    assert convert(text, declared) == text
    assert time.perf_counter() - start < 0.5  # HashMap's regex is cubic: 0.2 s at 2,000 characters, hours at 100,000
    assert MAX_COLLECTION_CHARS >= 113 * 4  # BFCL's longest answer literal, with room for spacing


def test_collection_literals_under_the_cap_still_convert():
    assert java_value('new HashMap<String, String>() {{ put("a", "b"); }}', "HashMap") == {"a": "b"}
    assert js_value("[1, 2]", "array") == [1, 2]
