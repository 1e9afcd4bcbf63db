"""The simulated-learner benchmark: equal budgets, learning only from varied groups."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scheduler_sim import ORDER, Learner, SimConfig, simulate, summarise
from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.suite import Suite


@pytest.fixture(scope="module")
def pool() -> tuple[Suite, list]:
    suite = synthetic_suite(300, n_envs=8, seed=2, heldout_fraction=0.2)
    return Suite(n for n in suite if n.split == "train"), [n for n in suite if n.split != "train"]


def test_learner_learns_only_from_varied_groups(pool) -> None:
    train, held = pool
    learner = Learner(list(train.nodes), seed=0)
    before = learner.success().copy()
    learner.learn(np.array([0, 1]), np.array([0.0, 0.0]))
    assert np.array_equal(learner.success(), before)
    learner.learn(np.array([0]), np.array([0.25]))
    assert learner.success()[0] > before[0]
    assert (learner.success() >= before - 1e-12).all()


def test_every_scheduler_spends_the_same_budget(pool) -> None:
    train, held = pool
    cfg = SimConfig(seeds=1, steps=3, batch=8, group=4)
    runs = {name: [simulate(name, train, held, 0, cfg)] for name in ORDER}
    for name, (run,) in runs.items():
        assert len(run.curve) == 3 * cfg.steps + 1, name
        assert run.groups * cfg.group == 3 * cfg.steps * cfg.batch * cfg.group, name
        assert len(run.predicted) == len(run.realised) == run.groups
    lines = summarise(runs, cfg)
    assert len(lines) == 2 + len(ORDER) and lines[2].startswith("envsched")
