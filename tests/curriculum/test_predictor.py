"""The variance predictor: neighbour-informed, incremental, decaying."""

from __future__ import annotations

import numpy as np
import pytest

from envsched_gym.curriculum import EnvSchedScheduler
from envsched_gym.suite import Suite


@pytest.fixture()
def scheduler(small_suite: Suite) -> EnvSchedScheduler:
    return EnvSchedScheduler(small_suite, seed=0)


def _neighbours(s: EnvSchedScheduler, node: int) -> np.ndarray:
    row = s.graph.within[node]
    return row.indices[np.argsort(-row.data)]


def test_never_seen_node_borrows_from_neighbours(scheduler: EnvSchedScheduler) -> None:
    """A node whose neighbours' groups varied is predicted higher than one whose neighbours always failed."""
    env = scheduler.env_of
    a = 0
    b = int(np.flatnonzero(env != env[a])[0])
    for nb in _neighbours(scheduler, a):
        scheduler.update(scheduler.task_ids[nb], [1, 0, 1, 0, 1, 0, 1, 0])
    for nb in _neighbours(scheduler, b):
        scheduler.update(scheduler.task_ids[nb], [0] * 8)
    pred = scheduler.predict([scheduler.task_ids[a], scheduler.task_ids[b]])
    assert scheduler.predictor.own_groups()[[a, b]].tolist() == [0, 0]
    assert pred["variance"][0] > 0.15 > 0.05 > pred["variance"][1]
    assert pred["mean"][1] < 0.3


@pytest.mark.parametrize("revisit_forget", [0.5, 1.0])
def test_own_evidence_dominates_with_many_observations(small_suite: Suite, revisit_forget: float) -> None:
    """Neighbours vary, the node itself always succeeds: its own groups win over the neighbours'."""
    scheduler = EnvSchedScheduler(small_suite, seed=0, revisit_forget=revisit_forget)
    neighbours = _neighbours(scheduler, 5)
    for nb in neighbours:
        scheduler.update(scheduler.task_ids[nb], [1, 0] * 4)
    for _ in range(6):
        scheduler.update(scheduler.task_ids[5], [1] * 8)
    own, other = scheduler.predict([scheduler.task_ids[5], scheduler.task_ids[int(neighbours[0])]])["variance"]
    assert own < 0.65 * other and own < (0.06 if revisit_forget == 1.0 else 0.15)


def test_incremental_refresh_recomputes_exactly_what_changed(scheduler: EnvSchedScheduler) -> None:
    """A refresh recomputes the updated nodes, their in-neighbours and environments; a full
    rotation of refreshes brings every cached prediction to the full recompute."""
    rng = np.random.default_rng(0)
    predictor = scheduler.predictor
    for _ in range(4):
        batch = scheduler.next_batch(16)
        for task in batch:
            scheduler.update(task, (rng.random(8) < 0.5).astype(float))
    nodes = scheduler.positions(batch)
    refreshed = predictor.refresh()
    fresh, _, _ = predictor.compute(np.arange(predictor.n))
    expected = set(nodes.tolist()) | set(predictor.in_within[nodes].indices.tolist()) | set(predictor.in_cross[nodes].indices.tolist())
    assert expected <= set(refreshed.tolist()) and len(refreshed) < predictor.n
    assert np.allclose(predictor.variance[refreshed], fresh[refreshed])
    for _ in range(scheduler.config.predictor.refresh_period):
        predictor.refresh()
    assert np.allclose(predictor.variance, fresh)
    assert np.allclose(predictor.env_mass, np.bincount(scheduler.env_of, weights=fresh))


def test_evidence_decays(scheduler: EnvSchedScheduler) -> None:
    task = scheduler.task_ids[3]
    scheduler.update(task, [0] * 8)
    before = scheduler.predictor.own_groups()[3]
    scheduler.predictor.advance(int(scheduler.config.predictor.half_life))
    assert scheduler.predictor.own_groups()[3] == pytest.approx(before / 2)
