"""Baselines behind the Scheduler interface."""

from __future__ import annotations

import json

import numpy as np
import pytest

from envsched_gym.curriculum import SCHEDULERS, DAPOScheduler, DUMPScheduler, MoPPSScheduler, PLRScheduler, Scheduler, make_scheduler
from envsched_gym.suite import Suite
from tests.curriculum.driving import drive


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_interface_determinism_and_round_trip(name: str, small_suite: Suite) -> None:
    s = make_scheduler(name, small_suite, seed=3)
    assert isinstance(s, Scheduler) and s.name == name
    first = drive(s, 4, seed=0)
    assert all(len(set(b)) == len(b) >= 8 for b in first)
    assert first == drive(make_scheduler(name, small_suite, seed=3), 4, seed=0)
    restored = make_scheduler(name, small_suite, seed=3)
    restored.load_state_dict(json.loads(json.dumps(s.state_dict())))
    assert drive(restored, 3, seed=5) == drive(s, 3, seed=5)
    pred = s.predict(s.task_ids[:5])
    assert set(pred) >= {"variance", "mean", "uncertainty"} and all(len(v) == 5 for v in pred.values())


def test_dapo_drops_zero_variance_groups_and_counts_their_rollouts(small_suite: Suite) -> None:
    s = DAPOScheduler(small_suite, seed=0)
    rolled, trained = 0, []
    for _ in range(6):
        batch = s.next_batch(8)
        assert len(batch) >= 8
        for k, t in enumerate(batch):
            rewards = [1.0] * 4 if k % 2 else [1.0, 0.0, 0.0, 1.0]
            s.update(t, rewards)
            rolled += 4
            if s.keep(t, rewards):
                trained.append(rewards)
    assert all(np.ptp(r) > 0 for r in trained)
    assert s.rollouts == rolled and s.dropped > 0
    assert len(s.next_batch(8)) > 8  # half the groups were flat, so it over-samples


def test_mopps_prefers_tasks_near_half(small_suite: Suite) -> None:
    s = MoPPSScheduler(small_suite, seed=0, forget=1.0)
    half, solved = s.task_ids[:10], s.task_ids[10:]
    for t in half:
        s.update(t, [1, 0] * 20)
    for t in solved:
        s.update(t, [1] * 40)
    picks = set(s.next_batch(10))
    assert len(picks & set(half)) >= 8


def test_plr_replays_learnable_tasks(small_suite: Suite) -> None:
    s = PLRScheduler(small_suite, seed=0, replay_prob=1.0, staleness_mix=0.0)
    for t in s.task_ids:
        s.update(t, [1, 0] if t in s.task_ids[:5] else [1, 1])
    assert len(set(s.next_batch(5)) & set(s.task_ids[:5])) >= 4


def test_dump_favours_environment_with_large_advantages(small_suite: Suite) -> None:
    s = DUMPScheduler(small_suite, seed=0, exploration=0.01, temperature=0.02)
    s.next_batch(len(s.env_ids) * 2)  # every environment tried once
    good = s.env_ids[0]
    for node in small_suite:
        s.update(node.task_id, [1, 0, 1, 0] if node.env.env_id == good else [1, 1, 1, 1])
    envs = [small_suite.node(t).env.env_id for t in s.next_batch(8)]
    assert envs.count(good) >= 6
