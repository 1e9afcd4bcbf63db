"""EnvSchedCurriculum: reset() lets the scheduler pick; finished episodes report rewards."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import envsched_gym
from envsched_gym import render_turn
from envsched_gym.curriculum import EnvSchedCurriculum, RandomScheduler


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


def _play(env: EnvSchedCurriculum, gold: bool) -> float:
    _, info = env.reset()
    task = env.suite.node(info["task_id"]).task
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
