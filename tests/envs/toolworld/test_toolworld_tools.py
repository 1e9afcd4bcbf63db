"""ToolWorld tools: the rules the worlds enforce and the errors the agent sees."""

from __future__ import annotations

import gymnasium as gym
import pytest
from envsched_gym.envs.toolworld.domain import build_variant
from envsched_gym.envs.toolworld.domains.commerce import INVENTORY
from envsched_gym.envs.toolworld.domains.finance import BANKING
from envsched_gym.envs.toolworld.domains.office import FILESYSTEM
from hypothesis import given, settings
from hypothesis import strategies as st

import envsched_gym
from envsched_gym import ToolCall, ToolError, render_calls


@pytest.fixture()
def bank():
    variant = build_variant(BANKING, 0, 0, heldout=False)
    return variant, variant.new_world()


def _first(world, **where) -> str:
    return next(rid for rid, r in world.records.items() if all(r[k] == v for k, v in where.items()))


def test_lookup_by_name_and_suggestions(bank) -> None:
    variant, world = bank
    rid, rec = next(iter(world.records.items()))
    assert world.call("find_account", {"name": rec["name"].upper()}) == {"account_id": rid, "name": rec["name"]}
    with pytest.raises(ToolError, match="no account named 'Zed Nobody'"):
        world.call("find_account", {"name": "Zed Nobody"})
    with pytest.raises(ToolError, match="Did you mean"):
        world.call("find_account", {"name": rec["name"][:-1]})
    with pytest.raises(ToolError, match=r"unknown account id 'ACC-999'.*find_account"):
        world.call("get_account", {"account_id": "ACC-999"})


def test_transfer_moves_money_and_checks_balance(bank) -> None:
    _, world = bank
    src, dst = list(world.records)[:2]
    world.records[src]["balance"] = 100.25
    total = 100.25 + world.records[dst]["balance"]
    out = world.call("transfer_funds", {"from_account": src, "to_account": dst, "amount": 40})
    assert out["from"]["balance"] == 60.25 and round(out["from"]["balance"] + out["to"]["balance"], 2) == round(total, 2)
    with pytest.raises(ToolError, match=r"has only 60\.25 balance; cannot move 70"):
        world.call("transfer_funds", {"from_account": src, "to_account": dst, "amount": 70})
    with pytest.raises(ToolError, match="amount must be positive"):
        world.call("transfer_funds", {"from_account": src, "to_account": dst, "amount": -5})
    with pytest.raises(ToolError, match="choose two different"):
        world.call("transfer_funds", {"from_account": src, "to_account": src, "amount": 5})
    assert world.records[src]["balance"] == 60.25


def test_money_stays_in_cents(bank) -> None:
    _, world = bank
    rid = next(iter(world.records))
    world.records[rid]["balance"] = 0.1
    world.call("deposit", {"account_id": rid, "amount": 0.2})
    assert world.records[rid]["balance"] == 0.3


def test_capacity_floor_and_status_rules() -> None:
    world = build_variant(INVENTORY, 0, 0, heldout=False).new_world()
    rid = _first(world, status="active")
    room = world.records[rid]["capacity"] - world.records[rid]["quantity"]
    with pytest.raises(ToolError, match="would exceed its limit of 150 units"):
        world.call("restock_item", {"item_id": rid, "quantity": room + 1})
    with pytest.raises(ToolError, match="cannot take away"):
        world.call("ship_item", {"item_id": rid, "quantity": world.records[rid]["quantity"] + 1})
    assert world.call("ship_item", {"item_id": rid, "quantity": 1.0})["quantity"] == world.records[rid]["quantity"]
    assert isinstance(world.records[rid]["quantity"], int), "an integral float argument keeps integer fields integer"
    world.call("discontinue_item", {"item_id": rid})
    with pytest.raises(ToolError, match="is discontinued; only a item that is active"):
        world.call("discontinue_item", {"item_id": rid})


def test_state_round_trip_does_not_alias() -> None:
    variant = build_variant(FILESYSTEM, 0, 0, heldout=False)
    world = variant.new_world()
    snapshot = world.state()
    rid = _first(world, status="unlocked")
    world.call("lock_file", {"file_id": rid})
    assert snapshot != world.state() and variant.records[rid]["status"] == "unlocked"
    world.load_state(snapshot)
    assert world.state() == snapshot and world.records is not snapshot["records"]


def test_disabled_tools_are_unknown() -> None:
    variant = build_variant(INVENTORY, 0, 0, heldout=False)
    assert "search_items" not in variant.enabled
    with pytest.raises(KeyError, match="not enabled"):
        variant.new_world().call("search_items", {"query": "x"})


def _env_with(task_id: str):
    env = gym.make("envsched/ToolWorld-v0")
    env.reset(options={"task_id": task_id})
    return env


def test_errors_reach_the_agent_as_observations() -> None:
    env = _env_with("ToolWorld/banking-0/000")
    world = env.unwrapped.world
    rich, poor = (
        sorted(world.records, key=lambda r: world.records[r]["balance"])[-1],
        sorted(world.records, key=lambda r: world.records[r]["balance"])[0],
    )
    calls = [
        ToolCall("get_account", {"account_id": "ACC-999"}),
        ToolCall("transfer_funds", {"from_account": poor, "to_account": rich, "amount": world.records[poor]["balance"] + 1000}),
        ToolCall("withdraw", {"account_id": poor, "amount": "lots"}),
        ToolCall("close_account", {"account_id": poor}),
        ToolCall("deposit", {"account_id": poor}),
    ]
    obs, reward, terminated, truncated, info = env.step(render_calls(calls))
    results = [m["content"] for m in info["messages"] if m["role"] == "tool"]
    assert results[0].startswith("Error: unknown account id 'ACC-999'")
    assert results[1].startswith(f"Error: {poor} has only")
    assert results[2].startswith("Error: invalid arguments for 'withdraw' at 'amount'")
    assert results[3].startswith("Error: unknown tool 'close_account'")
    assert results[4].startswith("Error: invalid arguments for 'deposit'") and "'amount' is a required property" in results[4]
    assert obs.count("<tool_response>") == 5 and not terminated and not truncated and reward == 0.0
    assert all(not c.ok for c in env.unwrapped.episode.calls)
    assert envsched_gym.registered_ids("ToolWorld") == ["envsched/ToolWorld-v0"]


ARGS = st.dictionaries(
    st.sampled_from(["item_id", "quantity", "price", "name", "query", "extra"]),
    st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=True), st.text(max_size=8), st.booleans(), st.none()),
    max_size=3,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.sampled_from(["find_item", "get_item", "restock_item", "ship_item", "set_price", "discontinue_item", "nope"]), ARGS),
        min_size=1,
        max_size=3,
    )
)
def test_arbitrary_calls_never_crash_the_env(calls: list) -> None:
    env = _env_with("ToolWorld/inventory-0/000")
    obs, _, terminated, truncated, info = env.step(render_calls([ToolCall(name, args) for name, args in calls]))
    assert isinstance(obs, str) and not terminated and not truncated
    assert len([m for m in info["messages"] if m["role"] == "tool"]) == len(calls)
