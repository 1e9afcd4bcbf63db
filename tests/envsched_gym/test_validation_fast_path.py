"""``ToolBox.check``'s fast path for plain-scalar schemas gives jsonschema's verdict on every call."""

from __future__ import annotations

from typing import Any

from envsched_gym.envs.toolworld.domains import DOMAINS
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from envsched_gym import ToolCall, ToolSpec
from envsched_gym.validation import ToolBox

SYNTHETIC = [
    ToolSpec("mixed", "Every plain kind.", {
        "type": "object",
        "properties": {
            "s": {"type": "string"}, "i": {"type": "integer", "default": 1}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "e": {"type": "integer", "enum": [1, 2, 4]}, "f": {"type": "number", "enum": [0.5, 2]},
            "w": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["s", "i"],
    }),
    ToolSpec("nested", "Not plain: always checked by jsonschema.", {
        "type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}, "required": ["xs"],
    }),
    ToolSpec("open", "Extra arguments allowed.", {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": [], "additionalProperties": True,
    }),
]  # fmt: skip
TOOLS = SYNTHETIC + [t for d in DOMAINS for t in d.world.tool_specs()]
BOX = ToolBox(TOOLS)
NAMES = sorted({t.name for t in TOOLS})
SPECS = {t.name: t for t in TOOLS}
VALIDATORS = {t.name: Draft202012Validator(t.parameters) for t in TOOLS}
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 200), st.floats(allow_nan=False, width=32),
    st.sampled_from([0.5, 2.0, 1.0, 4.0, 25.0]), st.text(max_size=6), st.sampled_from(["a", "b", "ITM-001", "suite", "Kim"]),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)  # fmt: skip


def _reference(call: ToolCall) -> bool:
    """Whether the call may run, by jsonschema alone (after ToolBox's unknown-argument rule)."""
    spec = SPECS[call.name]
    props = spec.parameters.get("properties", {})
    if spec.parameters.get("additionalProperties", False) is False and set(call.arguments) - set(props):
        return False
    return VALIDATORS[call.name].is_valid(call.arguments)


@st.composite
def calls(draw: Any) -> ToolCall:
    name = draw(st.sampled_from(NAMES))
    spec = BOX.specs[name]
    keys = [*spec.parameters["properties"], "zz_extra"]
    chosen = draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
    return ToolCall(name, {k: draw(VALUES) for k in chosen})


@settings(max_examples=800, deadline=None, derandomize=True)
@given(calls())
def test_fast_path_agrees_with_jsonschema(call: ToolCall) -> None:
    assert (BOX.check(call) is None) == _reference(call)


def test_fast_path_covers_toolworld_and_skips_nested_schemas() -> None:
    fast = BOX._fast  # the compiled rules are the unit under test
    assert {t.name for d in DOMAINS for t in d.world.tool_specs()} <= set(fast)
    assert "nested" not in fast and "open" not in fast and "mixed" in fast
    assert BOX.check(ToolCall("mixed", {"s": "x", "i": True})).startswith("Error: invalid arguments for 'mixed' at 'i'")
    assert BOX.check(ToolCall("mixed", {"s": "x", "i": 3.0})) is None, "jsonschema accepts an integral float as an integer"
    assert BOX.check(ToolCall("mixed", {"s": "x", "i": 1, "f": 2})) is None


def test_many_schema_errors_are_ranked_from_a_bounded_prefix_and_the_message_is_cut() -> None:
    """20,000 errors in one call: ranking all of them took 0.9 s; quoting a 100 KB value bloated the observation."""
    import time

    box = ToolBox([SYNTHETIC[1]])
    start = time.perf_counter()
    message = box.check(ToolCall("nested", {"xs": [[[]]] * 10_000}))
    assert time.perf_counter() - start < 0.3
    assert message is not None and message.startswith("Error: invalid arguments for 'nested' at 'xs.") and "is not of type 'integer'" in message
    long = box.check(ToolCall("nested", {"xs": "x" * 100_000}))
    assert long is not None and len(long) < 600 and long.endswith("[...]")
