"""EnvSched selection: determinism, quotas, similarity penalty, state round-trip."""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import envsched_gym
from envsched_gym import EnvSpec, TaskSpec, registry
from envsched_gym.curriculum import EnvSchedScheduler, make_scheduler
from envsched_gym.curriculum.mixture import MixtureConfig
from envsched_gym.declarations import AssistantTurn, ToolCall, ToolSpec
from envsched_gym.suite import Suite, TaskNode
from tests.curriculum.driving import drive


def test_deterministic_per_seed(small_suite: Suite) -> None:
    a = drive(EnvSchedScheduler(small_suite, seed=1), 6, seed=0, batch=16, group=8, per_task_p=True)
    b = drive(EnvSchedScheduler(small_suite, seed=1), 6, seed=0, batch=16, group=8, per_task_p=True)
    c = drive(EnvSchedScheduler(small_suite, seed=2), 6, seed=0, batch=16, group=8, per_task_p=True)
    assert a == b
    assert a != c


def test_batches_are_distinct_and_respect_quotas(small_suite: Suite) -> None:
    s = EnvSchedScheduler(small_suite, seed=0, max_env_share=0.25)
    rng = np.random.default_rng(0)
    for _ in range(8):
        quotas = None
        ids = s.next_batch(16)
        quotas = s.quotas(16)
        assert len(set(ids)) == 16
        envs = np.bincount(s.env_of[s.positions(ids)], minlength=len(s.env_ids))
        assert (envs <= quotas).all() and envs.max() <= math.ceil(0.25 * 16)
        for t in ids:
            s.update(t, (rng.random(8) < 0.5).astype(float))


def test_one_environment_still_fills_the_batch() -> None:
    env = EnvSpec(env_id="Solo", family="Solo", gym_id="envsched/Solo-v0")
    suite = Suite(TaskNode(env, TaskSpec(task_id=f"s{i}", env_id="Solo", instruction=f"task {i}")) for i in range(30))
    assert len(set(EnvSchedScheduler(suite).next_batch(10))) == 10


def _twins_suite() -> Suite:
    """Pairs of identical tasks (twins) plus distinct ones, one environment."""
    env = EnvSpec(env_id="Twins", family="Twins", gym_id="envsched/Twins-v0")
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    nodes = []
    for i, w in enumerate(words):
        for copy in range(2):
            nodes.append(TaskNode(env, TaskSpec(task_id=f"{w}-{copy}", env_id="Twins", instruction=f"{w} {w} {w} report {i}")))
    return Suite(nodes)


def test_similarity_penalty_keeps_twins_apart() -> None:
    suite = _twins_suite()
    with_penalty = EnvSchedScheduler(suite, seed=0, similarity_penalty=10.0, max_env_share=1.0).next_batch(8)
    stems = [t.split("-")[0] for t in with_penalty]
    assert len(set(stems)) == 8
    without = EnvSchedScheduler(suite, seed=0, similarity_penalty=0.0, max_env_share=1.0, task_bonus=0.0, env_bonus=0.0)
    for t in suite:  # make one twin pair clearly the most learnable
        without.update(t.task_id, [1, 0] * 4 if t.task_id.startswith("alpha") else [1] * 8)
    assert {"alpha-0", "alpha-1"} <= set(without.next_batch(4))


def test_state_round_trip(small_suite: Suite) -> None:
    s = EnvSchedScheduler(small_suite, seed=4)
    drive(s, 5, seed=1, batch=16, group=8, per_task_p=True)
    state = json.loads(json.dumps(s.state_dict()))
    restored = EnvSchedScheduler(small_suite, seed=4)
    restored.load_state_dict(state)
    assert drive(restored, 4, seed=9, batch=16, group=8, per_task_p=True) == drive(s, 4, seed=9, batch=16, group=8, per_task_p=True)
    for key, value in s.predict(s.task_ids[:20]).items():
        assert np.allclose(value, restored.predict(s.task_ids[:20])[key])


def test_state_from_another_suite_is_refused(small_suite: Suite) -> None:
    state = EnvSchedScheduler(small_suite).state_dict()
    with pytest.raises(ValueError, match="different suite"):
        EnvSchedScheduler(_twins_suite()).load_state_dict(state)


def test_make_scheduler_errors(small_suite: Suite) -> None:
    with pytest.raises(KeyError, match="Did you mean 'envsched'"):
        make_scheduler("envshed", small_suite)
    with pytest.raises(TypeError, match="unknown EnvSched options"):
        make_scheduler("envsched", small_suite, halflife=3)
    with pytest.raises(KeyError, match="not in this scheduler's suite"):
        make_scheduler("envsched", small_suite).update("nope", [1.0])


@pytest.fixture(scope="module")
def toolworld_and_lamps() -> Iterator[Suite]:
    """ToolWorld's train split next to LampWorld (tests/fixtures/lampworld), a 9-task user family: 0.2 % of the pool.

    LampWorld is unregistered afterwards: other tests expect it unknown until they import it."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "lampworld"))
    try:
        importlib.import_module("lampworld")  # registers the family
    finally:
        sys.path.pop(0)
    yield envsched_gym.suite(["ToolWorld", "LampWorld"], split="train")
    entry = registry._FAMILIES.pop("LampWorld", None)
    for gym_id in entry.gym_ids if entry else []:
        gym.registry.pop(gym_id, None)
    sys.modules.pop("lampworld", None)


def test_a_small_user_family_beside_toolworld_gets_its_floor_share(toolworld_and_lamps: Suite) -> None:
    """Issue 13: EnvSched picked LampWorld-sized families 0 times in 30 x 16 picks; the floor guarantees them a share."""
    s = EnvSchedScheduler(toolworld_and_lamps, seed=0)
    picks = [toolworld_and_lamps.node(t).family for batch in drive(s, 30, seed=0, batch=16, group=8, per_task_p=True) for t in batch]
    assert picks.count("LampWorld") / len(picks) >= MixtureConfig().floor


def _revisits(scheduler: EnvSchedScheduler, rounds: int, batch: int) -> tuple[int, int]:
    """Most groups any task got and distinct tasks over ``rounds`` batches, every group varied (1, 0, 1, 0)."""
    seen: dict[str, int] = {}
    for _ in range(rounds):
        for task in scheduler.next_batch(batch):
            seen[task] = seen.get(task, 0) + 1
            scheduler.update(task, [1.0, 0.0, 1.0, 0.0])
    return max(seen.values()), len(seen)


def test_max_visits_caps_the_groups_of_a_task_while_the_pool_has_others(small_suite: Suite) -> None:
    uncapped = _revisits(EnvSchedScheduler(small_suite, seed=0), 12, 8)
    capped = _revisits(EnvSchedScheduler(small_suite, seed=0, max_visits=2), 12, 8)
    assert uncapped[0] > 2  # varied groups pull the scheduler back to the same tasks
    assert capped[0] == 2 and capped[1] >= 96 // 2


def test_max_visits_rises_by_its_step_once_a_small_pool_is_spent() -> None:
    env = EnvSpec(env_id="Solo", family="Solo", gym_id="envsched/Solo-v0")
    suite = Suite(TaskNode(env, TaskSpec(task_id=f"s{i}", env_id="Solo", instruction=f"task {i}")) for i in range(12))
    scheduler = EnvSchedScheduler(suite, seed=0, max_visits=1)
    most, distinct = _revisits(scheduler, 6, 4)  # 24 groups over 12 tasks: every task twice
    assert (most, distinct) == (2, 12)
    assert scheduler.open_nodes(np.arange(12), 4).all()  # every task at 2 visits: the cap is now 3


@pytest.mark.parametrize("value", [-1, 1.5])
def test_max_visits_must_be_a_whole_number_of_groups(small_suite: Suite, value: float) -> None:
    with pytest.raises(ValueError, match="max_visits must be a whole number of groups"):
        EnvSchedScheduler(small_suite, max_visits=value)


def _look_ups_and_writes(reads: int = 40, writes: int = 60, refusals: int = 0) -> Suite:
    """One environment whose look-up tasks call ``get_item``, whose write tasks call ``get_item`` then ``set_item`` (declared write),
    and whose refusal tasks' gold makes no call (they exercise no tool, so their transfer value counts the environment alone)."""
    tools = [ToolSpec("get_item", "read an item"), ToolSpec("set_item", "change an item", write=True)]
    env = EnvSpec(env_id="Shop", family="Shop", gym_id="envsched/Shop-v0", tools=tools)
    look = [TaskNode(env, TaskSpec(f"read-{i}", "Shop", f"what is item {i}", solution=[_turn("get_item")])) for i in range(reads)]
    change = [TaskNode(env, TaskSpec(f"write-{i}", "Shop", f"rename item {i}", solution=[_turn("get_item"), _turn("set_item")])) for i in range(writes)]
    refuse = [TaskNode(env, TaskSpec(f"refuse-{i}", "Shop", f"delete every item {i}", solution=[AssistantTurn("I cannot delete every item.", [])])) for i in range(refusals)]
    return Suite(look + change + refuse)


def _turn(name: str) -> AssistantTurn:
    return AssistantTurn("", [ToolCall(name, {})])


def _picks(scheduler: EnvSchedScheduler, rounds: int, varied: str = "read") -> list[str]:
    """Every pick of ``rounds`` batches of 10 when the tasks whose id starts with ``varied`` always vary (1, 0, 1, 0) and the others always fail."""
    picks = []
    for _ in range(rounds):
        batch = scheduler.next_batch(10)
        picks += batch
        for task in batch:
            scheduler.update(task, [1.0, 0.0, 1.0, 0.0] if task.startswith(varied) else [0.0] * 4)
    return picks


def _share(picks: list[str], prefix: str) -> float:
    return sum(t.startswith(prefix) for t in picks) / len(picks)


def _write_share(scheduler: EnvSchedScheduler, rounds: int) -> float:
    """Share of write tasks over ``rounds`` batches of 10 when look-ups always vary and writes always fail."""
    return _share(_picks(scheduler, rounds), "write")


def test_kind_cover_keeps_the_write_tasks_share_when_look_ups_score_higher() -> None:
    """Session 42's failure: look-ups carried the signal, so EnvSched starved the write tasks (4-15 of 144 groups) and the policy unlearned them."""
    suite = _look_ups_and_writes()
    covered = EnvSchedScheduler(suite, seed=0)
    assert covered.kind_mix[0].families == ["writes", "reads"] and covered.kind_mix[0].target.tolist() == pytest.approx([0.6, 0.4])
    assert abs(_write_share(covered, 20) - 0.6) <= MixtureConfig().band + 0.01  # evidence tilts it towards look-ups, within the band
    assert _write_share(EnvSchedScheduler(suite, seed=0, kind_cover=False), 20) < 0.3


def test_a_kind_with_fewer_shared_units_keeps_its_target_share_when_rewards_do_not_differ() -> None:
    """Session 48's floor: every EnvSched run gave ToolWorld's no-call tasks 7 of 144 groups (the band's floor), from their transfer value alone."""
    suite = _look_ups_and_writes(reads=40, writes=40, refusals=20)
    s = EnvSchedScheduler(suite, seed=0)
    assert s.kind_mix[0].families == ["writes", "reads", "no_call"] and s.kind_mix[0].target.tolist() == pytest.approx([0.4, 0.4, 0.2])
    refusals = s.positions([t for t in s.task_ids if t.startswith("refuse")])
    assert s.transfer_value(refusals).mean() < 0.6 * s.transfer_value(np.setdiff1d(np.arange(len(suite)), refusals)).mean()
    picks = _picks(s, 20, varied="")  # every group varies alike
    assert _share(picks[:10], "refuse") == pytest.approx(0.2) and _share(picks, "refuse") == pytest.approx(0.2)
    old = _picks(EnvSchedScheduler(suite, seed=0, kind_transfer=True), 20, varied="")
    assert _share(old, "refuse") == pytest.approx(0.2 - MixtureConfig().band)  # tilted to its floor


def test_kind_transfer_must_be_true_or_false(small_suite: Suite) -> None:
    with pytest.raises(ValueError, match="kind_transfer must be true"):
        EnvSchedScheduler(small_suite, kind_transfer=2)


def test_the_kind_mix_carry_survives_a_state_round_trip() -> None:
    suite = _look_ups_and_writes(reads=7, writes=30)
    s = EnvSchedScheduler(suite, seed=3)
    _write_share(s, 3)
    state = json.loads(json.dumps(s.state_dict()))
    assert np.abs(state["kind_mix"]["Shop"]["carry"]).max() > 0  # the test needs a remainder to carry
    restored = EnvSchedScheduler(suite, seed=3)
    restored.load_state_dict(state)
    assert [restored.next_batch(10) for _ in range(4)] == [s.next_batch(10) for _ in range(4)]
    state["kind_mix"]["Shop"]["carry"] = [3.0, 0.0]
    with pytest.raises(ValueError, match=r"kind_mix\.Shop\.carry"):
        EnvSchedScheduler(suite, seed=3).load_state_dict(state)


def test_kind_cover_must_be_true_or_false(small_suite: Suite) -> None:
    with pytest.raises(ValueError, match="kind_cover must be true"):
        EnvSchedScheduler(small_suite, kind_cover=2)
