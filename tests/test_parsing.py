"""Tool-call parsing: each wire format, round-trips, errors, and fuzzing (never raises, never executes)."""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envsched_gym.declarations import ToolCall
from envsched_gym.parsing import ParseResult, malformed_turn, parse_tool_calls
from envsched_gym.rendering import render_calls

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
SCALAR = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
JSON_VALUE = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
CALLS = st.lists(st.builds(ToolCall, name=IDENT, arguments=st.dictionaries(IDENT, JSON_VALUE, max_size=5)), min_size=1, max_size=4)
FUZZ = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _pairs(calls: list[ToolCall]) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in calls]


def test_qwen3_several_calls_with_think_and_content() -> None:
    text = '<think>plan: two calls</think>Checking.\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>{"name": "b", "arguments": "{\\"y\\": [2]}"}</tool_call>'
    result = parse_tool_calls(text)
    assert _pairs(result.calls) == [("a", {"x": 1}), ("b", {"y": [2]})]
    assert result.reasoning == "plan: two calls"
    assert result.content == "Checking."
    assert result.format == "qwen3" and result.ok


def test_qwen3_unopened_think_prefix_is_reasoning() -> None:
    result = parse_tool_calls('thinking...</think><tool_call>{"name": "a", "arguments": {}}</tool_call>')
    assert result.reasoning == "thinking..." and _pairs(result.calls) == [("a", {})]


def test_qwen3_string_containing_close_tag_is_one_call() -> None:
    call = ToolCall("say", {"text": "a </tool_call> b"})
    assert _pairs(parse_tool_calls(render_calls([call])).calls) == [("say", {"text": "a </tool_call> b"})]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<tool_call>{not json}</tool_call>", "not valid JSON"),
        ('<tool_call>{"name": "a", "arguments": {}}', "missing </tool_call>"),
        ('<tool_call>{"arguments": {}}</tool_call>', 'non-empty string "name"'),
        ('<tool_call>{"name": "a", "arguments": [1]}</tool_call>', "must be a JSON object"),
        ('<tool_call>["a"]</tool_call>', "must be a JSON object"),
        ('<tool_call>{"name": "a", "arguments": "{oops"}</tool_call>', "arguments string is not valid JSON"),
    ],
)
def test_qwen3_errors_are_structured(text: str, fragment: str) -> None:
    result = parse_tool_calls(text)
    assert not result.calls and len(result.errors) == 1
    assert fragment in result.errors[0].message and result.errors[0].format == "qwen3"


def test_qwen3_good_call_survives_a_bad_neighbour() -> None:
    result = parse_tool_calls('<tool_call>{bad}</tool_call><tool_call>{"name": "ok", "arguments": {}}</tool_call>')
    assert _pairs(result.calls) == [("ok", {})] and len(result.errors) == 1


def test_openai_message_and_bare_list() -> None:
    message = {"content": "hi", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
    result = parse_tool_calls(json.dumps(message))
    assert _pairs(result.calls) == [("f", {"a": 1})] and result.calls[0].id == "c1" and result.content == "hi"
    bare = parse_tool_calls(json.dumps([{"function": {"name": "g", "arguments": {"b": 2}}}]))
    assert _pairs(bare.calls) == [("g", {"b": 2})] and bare.format == "openai"


def test_plain_json_that_is_not_a_call_is_content() -> None:
    result = parse_tool_calls('{"answer": 42}')
    assert not result.calls and not result.errors and result.content == '{"answer": 42}'


def test_python_syntax_list_dotted_and_fenced() -> None:
    result = parse_tool_calls("```python\n[math.factorial(n=5), g(x=[1, (2, 3)], y={'k': None}, z=-1.5)]\n```")
    assert _pairs(result.calls) == [("math.factorial", {"n": 5}), ("g", {"x": [1, [2, 3]], "y": {"k": None}, "z": -1.5})]


def test_python_positional_arguments_need_a_signature() -> None:
    assert "by keyword" in parse_tool_calls("sort('a.txt')").errors[0].message
    named = parse_tool_calls("sort('a.txt')", signatures={"sort": ["file_name"]})
    assert _pairs(named.calls) == [("sort", {"file_name": "a.txt"})]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "[f(a=__import__('os').system('x'))]",
        "f(a=open('/etc/passwd').read())",
        "f(**{'a': 1})",
        "f(a=lambda: 1)",
        "f(a={1, 2})",
        "f(a=1, a=2)",
        "(" * 500 + "f(a=1)" + ")" * 500,
        "f(a=" + "[" * 5000 + "]" * 5000 + ")",
    ],
)
def test_python_adversarial_inputs_never_execute(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    executed: list[str] = []
    monkeypatch.setattr(os, "system", lambda cmd: executed.append(cmd) or 0)
    result = parse_tool_calls(text)
    assert executed == []
    assert not result.calls or all(isinstance(v, (int, str, list, dict)) for c in result.calls for v in c.arguments.values())
    assert result.errors or result.calls == []


def test_natural_language_is_content_not_error() -> None:
    result = parse_tool_calls("The weather (today) is sunny.")
    assert result.calls == [] and result.errors == [] and result.content.startswith("The weather")


def test_formats_can_be_restricted() -> None:
    assert parse_tool_calls("f(a=1)", formats=("qwen3",)).calls == []


@pytest.mark.parametrize("fmt", ["qwen3", "openai", "python"])
@given(calls=CALLS)
@settings(max_examples=150, deadline=None, derandomize=True)
def test_parse_render_round_trip(fmt: str, calls: list[ToolCall]) -> None:
    result = parse_tool_calls(render_calls(calls, fmt))  # type: ignore[arg-type]
    assert result.ok, result.errors
    assert _pairs(result.calls) == _pairs(calls)


def _check(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    for call in result.calls:
        assert isinstance(call.name, str) and isinstance(call.arguments, dict)
        json.dumps(call.arguments)


@FUZZ
@given(text=st.text(max_size=300))
def test_fuzz_arbitrary_text(text: str) -> None:
    _check(parse_tool_calls(text))


TOKENS = ["<tool_call>", "</tool_call>", "<think>", "</think>", "{", "}", "[", "]", "(", ")", '"name"', '"arguments"', ":", ",", "=",
          '"f"', "f", "a", "1", "-", "'", '"', "\\", "__import__", ".", "```", "\n", " ", "None", "True", "tool_calls", "function", "*"]  # fmt: skip


@FUZZ
@given(parts=st.lists(st.sampled_from(TOKENS), max_size=40))
def test_fuzz_token_soup(parts: list[str]) -> None:
    _check(parse_tool_calls("".join(parts)))


def test_fuzz_mutated_valid_calls() -> None:
    """8,000 seeded mutations (insert / delete / replace tokens) of rendered valid calls."""
    rng = random.Random(0)
    seeds = [render_calls([ToolCall(f"f{i}", {"a": i, "b": [1, "x"], "c": {"d": None}})] * (1 + i % 3), fmt)  # type: ignore[arg-type]
             for i in range(20) for fmt in ("qwen3", "openai", "python")]  # fmt: skip
    alphabet = TOKENS + list("xyz0{}[]()<>\"'")
    for _ in range(8000):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randint(0, len(text))
            op = rng.choice(["insert", "delete", "replace"])
            text = text[:pos] + (rng.choice(alphabet) if op != "delete" else "") + text[pos + (op != "insert") :]
        _check(parse_tool_calls(text))


def test_non_string_input_is_an_error_not_an_exception() -> None:
    result = parse_tool_calls(None)  # type: ignore[arg-type]
    assert result.errors and result.errors[0].format == "input"


# ---------------------------------------------------------------- hostile input (issue 14)
HUGE = "9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        f'<tool_call>{{"name": "a", "arguments": {{"x": {HUGE}}}}}</tool_call>',
        f'<tool_call>{{"name": "a", "arguments": "{{\\"x\\": {HUGE}}}"}}</tool_call>',
        f'{{"tool_calls": [{{"function": {{"name": "a", "arguments": {{"x": {HUGE}}}}}}}]}}',
        f"[a(x={HUGE})]",
        "[a(x=0x" + "f" * 20_000 + ")]",
    ],
    ids=["qwen3", "qwen3-arguments-string", "openai", "python-decimal", "python-hex"],
)
def test_integers_too_long_to_print_are_parse_errors(text: str) -> None:
    result = parse_tool_calls(text)
    assert not result.calls and len(result.errors) == 1
    assert "4300" in result.errors[0].message and "digits" in result.errors[0].message


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_nan_and_infinite_json_numbers_are_parse_errors(number: str) -> None:
    for text in (f'<tool_call>{{"name": "a", "arguments": {{"x": {number}}}}}</tool_call>',
                 f'{{"tool_calls": [{{"function": {{"name": "a", "arguments": {{"x": {number}}}}}}}]}}'):  # fmt: skip
        result = parse_tool_calls(text)
        assert not result.calls and "NaN and infinity are not valid" in result.errors[0].message


def test_the_largest_allowed_integer_still_parses() -> None:
    result = parse_tool_calls(f'<tool_call>{{"name": "a", "arguments": {{"x": {"9" * 4300}}}}}</tool_call>')
    assert result.ok and result.calls[0].arguments["x"] == 10**4300 - 1


def _split_reasoning_by_regex(text: str) -> tuple[str | None, str]:
    """The former regex implementation (quadratic on many unclosed tags): the reference semantics."""
    import re

    think = re.compile(r"<think>(.*?)</think>", re.DOTALL)
    cut = text.find("<tool_call>")
    head, tail = (text, "") if cut < 0 else (text[:cut], text[cut:])
    parts = [m.group(1).strip() for m in think.finditer(head)]
    head = think.sub("", head)
    if "</think>" in head and "<think>" not in head:
        before, _, head = head.partition("</think>")
        parts.insert(0, before.strip())
    return ("\n".join(parts) if parts else None), head + tail


@FUZZ
@given(parts=st.lists(st.sampled_from(["<think>", "</think>", "<tool_call>", "a", " ", "\n", "think>", "<"]), max_size=30))
def test_linear_reasoning_split_matches_the_regex_semantics(parts: list[str]) -> None:
    from envsched_gym.parsing import _split_reasoning

    text = "".join(parts)
    assert _split_reasoning(text) == _split_reasoning_by_regex(text)


@pytest.mark.parametrize("unit", ["<think>", "<think>x", "<think></think><think>", "</think><think>"])
def test_many_think_tags_parse_in_linear_time(unit: str) -> None:
    """200,000 tags: the regex took 2.7 s for 4,000 and grew quadratically (hours here); linear takes milliseconds."""
    import time

    start = time.perf_counter()
    parse_tool_calls(unit * 200_000)
    assert time.perf_counter() - start < 2.0


def test_more_calls_than_the_cap_run_none_and_say_why() -> None:
    call = '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
    assert len(parse_tool_calls(call * 64).calls) == 64
    flood = parse_tool_calls(call * 65)
    assert not flood.calls and len(flood.errors) == 1
    assert "more than 64 tool calls" in flood.errors[0].message and "max_calls_per_message" in flood.errors[0].message
    assert len(parse_tool_calls(call * 3, max_calls=2).errors) == 1
    malformed = parse_tool_calls("<tool_call>{bad}</tool_call>" * 100)
    assert len(malformed.errors) == 1 and "more than 64 tool calls" in malformed.errors[0].message


CALL = '<tool_call>\n{"name": "set_rate", "arguments": {"garage_id": "GAR-010"}}\n</tool_call>'


@pytest.mark.parametrize(
    ("text", "malformed"),
    [
        (CALL, False),
        ("Done: the rate of garage GAR-010 is now 2.", False),
        ("<think>plan</think>\n" + CALL + "\n" + CALL, False),
        ("[set_rate(garage_id='GAR-010')]", False),
        ("<tool_response>\n<tool_response>\n" + CALL + "\nDone", True),  # a good call after the environment's tag
        ("<tool_response>\nset_rate: done.", True),  # the environment's tag opening a plain answer
        ("<tool_call>\n<tool_call>\n<tool_call>\n<tool_call", True),  # repeated tags until the budget ran out
        ("Done.</tool_call>", True),
        ('<tool_call>\n{"name": "set_rate", "arguments": {}\n', True),  # unclosed
    ],
)
def test_a_turn_is_malformed_when_a_call_fails_or_markup_is_left_outside_the_calls(text: str, malformed: bool) -> None:
    assert malformed_turn(text) is malformed
    if malformed and not parse_tool_calls(text).errors:  # the cases parsing alone lets through
        assert parse_tool_calls(text).content
