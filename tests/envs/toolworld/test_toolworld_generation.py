"""ToolWorld generation: sizes, patterns and difficulties, determinism, splits, tool coverage."""

from __future__ import annotations

import collections
import json
import time

import pytest
from envsched_gym.adapters.toolworld import ToolWorldAdapter
from envsched_gym.envs.toolworld.domain import build_variant
from envsched_gym.envs.toolworld.domains import DOMAINS
from envsched_gym.envs.toolworld.generator import PLAN, difficulty

PATTERNS = {"single", "chain", "parallel", "refuse", "ask"}


@pytest.fixture(scope="module")
def adapter() -> ToolWorldAdapter:
    return ToolWorldAdapter()


def test_suite_size(adapter: ToolWorldAdapter) -> None:
    tasks = adapter.tasks("all")
    assert len(DOMAINS) >= 20
    assert len({d.name for d in DOMAINS}) == len(DOMAINS)
    assert len(adapter.env_specs()) >= 100
    assert len(tasks) >= 5000
    assert len(tasks) == len(adapter.env_specs()) * len(PLAN)
    assert len({t.task_id for t in tasks}) == len(tasks)


def test_every_pattern_and_difficulty_present(adapter: ToolWorldAdapter) -> None:
    tasks = adapter.tasks("all")
    assert {t.metadata["pattern"] for t in tasks} == PATTERNS
    assert {t.metadata["difficulty"] for t in tasks} == set(range(1, 7))
    calls = collections.defaultdict(set)
    for t in tasks:
        calls[t.metadata["pattern"]].add(t.metadata["n_calls"])
    assert calls["single"] == {1}
    assert calls["chain"] == calls["parallel"] == {2, 3, 4, 5, 6}
    assert 0 in calls["refuse"] and max(calls["refuse"]) >= 4
    assert {t.metadata["refusal"] for t in tasks if t.metadata["pattern"] == "refuse"} == {"bound", "status", "policy"}
    assert {t.metadata["missing"] for t in tasks if t.metadata["pattern"] == "ask"} == {"record", "amount"}


def test_ask_tasks_hold_back_what_the_second_turn_gives(adapter: ToolWorldAdapter) -> None:
    for task in adapter.tasks("all"):
        if task.metadata["pattern"] != "ask":
            continue
        write = next(c for turn in task.solution for c in turn.tool_calls if not c.name.startswith(("find_", "get_")))
        first, second = task.user_turns
        assert "?" in task.solution[0].content and not task.solution[0].tool_calls
        if task.metadata["missing"] == "amount":
            amount = str(write.arguments[next(reversed(write.arguments))])
            assert amount not in first.split() and second.split()[0] == amount, task.task_id
        else:
            rid = next(v for v in write.arguments.values() if v in adapter.variant(task.env_id).records)
            name = adapter.variant(task.env_id).records[rid]["name"]
            assert rid not in first and name not in first and (rid in second or name in second), task.task_id


def test_metadata_matches_solution(adapter: ToolWorldAdapter) -> None:
    for task in adapter.tasks("all"):
        meta = task.metadata
        gold_calls = [c for turn in task.solution for c in turn.tool_calls]
        assert meta["n_calls"] == len(gold_calls), task.task_id
        assert meta["difficulty"] == difficulty(meta["pattern"], meta["n_calls"])
        assert meta["n_turns"] == len(task.user_turns) == (2 if meta["pattern"] == "ask" else 1)
        assert not task.solution[-1].tool_calls and task.solution[-1].content, "the gold ends with a text answer"
        assert task.instruction == task.user_turns[0]


def test_chain_calls_depend_on_lookups(adapter: ToolWorldAdapter) -> None:
    """In chains, an id used after a find_* call is the id that call returns (a real dependency)."""
    dependent = 0
    for task in adapter.tasks("all"):
        if task.metadata["pattern"] != "chain":
            continue
        world = adapter.make_world(task)
        found: set[str] = set()
        for turn in task.solution:
            for call in turn.tool_calls:
                result = world.call(call.name, call.arguments)
                if call.name.startswith("find_"):
                    found.update(v for k, v in result.items() if k.endswith("_id"))
                elif set(call.arguments.values()) & found:
                    dependent += 1
    assert dependent >= 1000


def test_parallel_tasks_have_a_multi_call_message(adapter: ToolWorldAdapter) -> None:
    for task in adapter.tasks("all"):
        if task.metadata["pattern"] == "parallel":
            assert max(len(t.tool_calls) for t in task.solution) >= 2, task.task_id


def test_deterministic_and_seeded() -> None:
    def dump(adapter: ToolWorldAdapter) -> str:
        records = {env_id: v.records for env_id, v in adapter.variants.items()}
        tasks = [
            (t.task_id, t.user_turns, [s.to_dict() for s in t.solution], t.verifier.params, t.split, t.metadata)
            for t in adapter.tasks("all")
        ]
        return json.dumps([records, tasks], sort_keys=True)

    first = dump(ToolWorldAdapter(seed=0, variants_per_domain=2, heldout_variants=1))
    assert first == dump(ToolWorldAdapter(seed=0, variants_per_domain=2, heldout_variants=1))
    assert first != dump(ToolWorldAdapter(seed=1, variants_per_domain=2, heldout_variants=1))


def test_generation_is_fast() -> None:
    start = time.process_time()
    tasks = ToolWorldAdapter(seed=3).tasks("all")
    elapsed = time.process_time() - start
    assert len(tasks) >= 5000
    assert elapsed < 3.0, f"generating {len(tasks)} tasks took {elapsed:.2f} s of CPU"


def test_splits_are_disjoint(adapter: ToolWorldAdapter) -> None:
    by_split = {s: {t.task_id for t in adapter.tasks(s)} for s in ("train", "test", "heldout")}
    assert all(by_split.values())
    assert (
        not (by_split["train"] & by_split["test"])
        and not (by_split["train"] & by_split["heldout"])
        and not (by_split["test"] & by_split["heldout"])
    )
    assert set().union(*by_split.values()) == {t.task_id for t in adapter.tasks("all")}
    heldout_envs = {e.env_id for e in adapter.env_specs() if e.split == "heldout"}
    assert heldout_envs and {t.env_id for t in adapter.tasks("heldout")} == heldout_envs
    assert not heldout_envs & {t.env_id for t in adapter.tasks("train")} and not heldout_envs & {t.env_id for t in adapter.tasks("test")}
    share = len(by_split["test"]) / (len(by_split["train"]) + len(by_split["test"]))
    assert 0.15 < share < 0.25
    with pytest.raises(ValueError, match="unknown split"):
        adapter.tasks("validation")


def test_every_domain_tool_is_used_by_some_variant(adapter: ToolWorldAdapter) -> None:
    enabled = collections.defaultdict(set)
    for variant in adapter.variants.values():
        enabled[variant.domain.name].update(variant.enabled)
    for domain in DOMAINS:
        names = {t.name for t in domain.world.tool_specs()}
        assert {domain.find_tool, domain.get_tool} <= names
        assert enabled[domain.name] == names, f"{domain.name}: tools no variant enables: {names - enabled[domain.name]}"
        assert any(t.write for t in domain.world.tool_specs()) and sum(not t.write for t in domain.world.tool_specs()) >= 2


def test_variants_differ_in_data_tools_and_limits() -> None:
    for domain in DOMAINS:
        variants = [build_variant(domain, k, 0, heldout=False) for k in range(6)]
        assert len({json.dumps(v.records, sort_keys=True) for v in variants}) == 6
        assert len({v.enabled for v in variants}) >= 2 or (not domain.extras and len(domain.actions) < 3)
        for v in variants:
            assert len(v.records) >= 12
            assert v.tools() is v.new_world().tools(), "one tool list object per variant (validators are cached by identity)"
            for action in v.actions:
                if action.tool in v.limits:
                    assert action.policy_text(v.limits[action.tool]) in v.system_prompt()
