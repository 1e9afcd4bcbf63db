"""The simulator's reference rows: EnvSched told what the simulated learner knows."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scheduler_sim import Learner
from benchmarks.sim_reference import ToldPredictor, told_envsched
from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.suite import Suite


@pytest.fixture(scope="module")
def train() -> Suite:
    return synthetic_suite(200, n_envs=6, seed=4)


def _run(row: str, train: Suite) -> tuple:
    """Three steps of ``row`` on learner A; returns the scheduler, the learner and the rolled nodes."""
    learner = Learner(list(train.nodes), seed=1)
    scheduler = told_envsched(row, train, learner, seed=0, group=8)
    rng = np.random.default_rng(0)
    rolled: set[int] = set()
    for _ in range(3):
        batch = scheduler.next_batch(8)
        nodes = scheduler.positions(batch)
        rewards = (rng.random((len(batch), 8)) < learner.success(nodes)[:, None]).astype(float)
        for task_id, node, r in zip(batch, nodes, rewards, strict=True):
            scheduler.update(task_id, r)
            rolled.add(int(node))
        learner.learn(nodes, rewards.var(axis=1))
    scheduler.predictor.refresh()  # the refresh the next batch would start with
    return scheduler, learner, np.array(sorted(rolled))


def test_truth_all_predicts_every_task_by_its_true_variance(train: Suite) -> None:
    scheduler, learner, _ = _run("truth-all", train)
    p = learner.success()
    assert np.allclose(scheduler.predictor.variance, 7 / 8 * p * (1 - p))
    assert np.allclose(scheduler.estimates(np.arange(len(train)))["variance"], 7 / 8 * p * (1 - p))


@pytest.mark.parametrize("row", ["truth-new", "decl-new"])
def test_new_rows_tell_only_never_rolled_tasks(train: Suite, row: str) -> None:
    scheduler, learner, rolled = _run(row, train)
    fresh = np.setdiff1d(np.arange(len(train)), rolled)
    p = learner.success()
    told = learner.expected_variance(fresh) if row == "decl-new" else p[fresh] * (1 - p[fresh])
    assert np.allclose(scheduler.predictor.variance[fresh], 7 / 8 * told)
    own = scheduler.predictor.inner.compute(rolled)[0]  # EnvSched's own predictions for the rolled tasks
    assert np.allclose(scheduler.predictor.variance[rolled], own)
    assert not np.allclose(own, 7 / 8 * p[rolled] * (1 - p[rolled]))


def test_unknown_row_names_the_known_ones(train: Suite) -> None:
    scheduler = told_envsched("truth-all", train, Learner(list(train.nodes), seed=0), seed=0, group=8)
    with pytest.raises(ValueError, match=r"unknown reference row 'truth'; known: \['decl-new', 'truth-all', 'truth-new'\]"):
        ToldPredictor(scheduler.predictor.inner, Learner(list(train.nodes), seed=0), "truth", 8)
