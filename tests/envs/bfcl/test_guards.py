"""Resource guards: calls that would stall a rollout are refused; BFCL's gold is never touched."""

from __future__ import annotations

import decimal

from envsched_gym.envs.bfcl.guards import MAX_RESULT_DIGITS, refusal

from envsched_gym.env import ToolUseEnv


def test_refusal_rules() -> None:
    assert refusal("power", {"base": 10, "exponent": 10**12}) is not None
    assert refusal("power", {"base": 2, "exponent": 64}) is None
    assert refusal("power", {"base": 10.0, "exponent": 10**12}) is None  # float power overflows at once
    assert refusal("power", {"base": 1, "exponent": 10**12}) is None
    assert refusal("square_root", {"number": 2, "precision": MAX_RESULT_DIGITS + 1}) is not None
    assert refusal("square_root", {"number": 2, "precision": 50}) is None
    assert refusal("ls", {"a": True}) is None


def test_guarded_calls_through_the_env_and_decimal_context_is_restored(bfcl) -> None:
    env = ToolUseEnv(bfcl, "envsched/BFCL-multi_turn_base-v0")
    env.reset(seed=0, options={"task_id": "multi_turn_base_15"})
    before = decimal.getcontext().prec
    obs = env.step('<tool_call>{"name": "power", "arguments": {"base": 10, "exponent": 1000000000000}}</tool_call>')[0]
    assert "digits; the limit is" in obs
    obs = env.step('<tool_call>{"name": "square_root", "arguments": {"number": 2, "precision": 60}}</tool_call>')[0]
    assert "1.41421356237309504880168872420969807856967187537694807317" in obs
    assert decimal.getcontext().prec == before


def test_no_gold_call_is_refused(bfcl) -> None:
    gold_calls = [c for t in bfcl.tasks("all") if t.task_id.startswith("multi_turn") for turn in t.solution or [] for c in turn.tool_calls]
    assert gold_calls and all(refusal(c.name, c.arguments) is None for c in gold_calls)
