"""EnvSchedCurriculum: reset() lets the scheduler pick; finished episodes report rewards; its state round-trips."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

import envsched_gym
from envsched_gym import render_turn
from envsched_gym.curriculum import SCHEDULERS, EnvSchedCurriculum, RandomScheduler


class Spy(RandomScheduler):
    """Random selection that records what it is told."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[list[str]] = []
        self.updates: list[tuple[str, list[float]]] = []

    def next_batch(self, batch_size: int) -> list[str]:
        batch = super().next_batch(batch_size)
        self.batches.append(batch)
        return batch

    def update(self, task_id: str, rewards: Sequence[float]) -> None:
        super().update(task_id, rewards)
        self.updates.append((task_id, list(rewards)))


def _play(env: EnvSchedCurriculum, gold: bool, reset: bool = True) -> float:
    """Play one episode to its end (the current one when not ``reset``) with gold or refusing turns."""
    if reset:
        env.reset()
    task = env.suite.node(env.task_id).task
    reward, done = 0.0, False
    turns = task.solution if gold else []
    for turn in turns:
        _, reward, terminated, truncated, _ = env.step(render_turn(turn))
        done = terminated or truncated
        if done:
            break
    while not done:
        _, reward, terminated, truncated, _ = env.step("I cannot help with that.")
        done = terminated or truncated
    return float(reward)


def test_reset_follows_the_scheduler_and_groups_report_rewards(notes_adapter) -> None:
    suite = envsched_gym.suite(["Notes"], split="all")
    spy = Spy(suite, seed=0)
    env = EnvSchedCurriculum(suite, scheduler=spy, group_size=2, batch_size=2)
    rewards = [_play(env, gold=k % 2 == 0) for k in range(4)]
    assert len(spy.batches) == 1
    first, second = spy.batches[0]
    assert [u[0] for u in spy.updates] == [first, second]
    assert [u[1] for u in spy.updates] == [rewards[:2], rewards[2:]]
    assert rewards[0] == 1.0 and rewards[1] == 0.0
    env.close()


def test_explicit_task_and_batch_api(notes_adapter) -> None:
    suite = envsched_gym.suite(["Notes"], split="all")
    env = EnvSchedCurriculum(suite, scheduler="envsched", seed=0, group_size=8)
    _, info = env.reset(options={"task_id": "notes/2"})
    assert info["task_id"] == "notes/2"
    batch = env.next_batch(2)
    assert len(set(batch)) == 2
    env.update(batch[0], [1, 0, 1, 0])
    assert env.keep(batch[0], [1, 0, 1, 0])
    assert np.isfinite(env.scheduler.predict(batch)["variance"]).all()
    env.close()


def test_package_exports_the_wrapper_lazily() -> None:
    assert envsched_gym.EnvSchedCurriculum is EnvSchedCurriculum


def _serve(env: EnvSchedCurriculum, count: int, start: int) -> list[str]:
    """The task ids of ``count`` finished episodes (gold on every other one, counted from ``start``)."""
    served = []
    for k in range(start, start + count):
        _play(env, gold=k % 2 == 0)
        served.append(env.task_id)
    return served


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_round_trip_serves_the_same_tasks_next(notes_adapter, name: str) -> None:
    suite = envsched_gym.suite(["Notes"], split="all")
    saved = EnvSchedCurriculum(suite, scheduler=name, seed=4, group_size=2, batch_size=2)
    _serve(saved, 1, start=0)  # half a group finished, the other task of the batch still queued
    saved.reset()  # and an episode in progress, served again after loading
    state = json.loads(json.dumps(saved.state_dict()))
    assert state["queue"][0] == saved.task_id and len(state["queue"]) == 3 and len(state["pending"]) == 1
    restored = EnvSchedCurriculum(suite, scheduler=name, seed=4, group_size=2, batch_size=2)
    restored.load_state_dict(state)
    in_progress = saved.task_id
    _play(saved, gold=False, reset=False)  # episode 1 (not gold), finished where it was saved
    assert _serve(restored, 9, start=1) == [in_progress, *_serve(saved, 8, start=2)]
    assert json.dumps(restored.state_dict()) == json.dumps(saved.state_dict())
    saved.close()
    restored.close()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda s: s.pop("pending"), r"missing key\(s\) \['pending'\]"),
        (lambda s: s.update(queue=["notes/9"]), r"'queue' holds 'notes/9', which is not a task id of this suite"),
        (lambda s: s.update(pending={"notes/0": [1.0, 0.0, 1.0]}), r"'pending.notes/0' must be 1 to 1 finite rewards"),
        (lambda s: s.update(pending={"notes/0": [float("nan")]}), r"'pending.notes/0' must be 1 to 1 finite rewards"),
        (lambda s: s["scheduler"].update(step=-1), r"'step' must be at least 0"),
    ],
    ids=["missing", "unknown-task", "full-group", "nan", "scheduler"],
)
def test_damaged_state_names_the_key_and_changes_nothing(notes_adapter, damage, message: str) -> None:
    suite = envsched_gym.suite(["Notes"], split="all")
    env = EnvSchedCurriculum(suite, scheduler="envsched", seed=0, group_size=2, batch_size=2)
    _serve(env, 1, start=0)
    before = json.dumps(env.state_dict())
    state = json.loads(before)
    damage(state)
    with pytest.raises(ValueError, match=message):
        env.load_state_dict(state)
    assert json.dumps(env.state_dict()) == before
    env.close()
