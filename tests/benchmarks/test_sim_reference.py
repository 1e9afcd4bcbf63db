"""The simulator's reference rows: EnvSched told what the simulated learner knows, and the held-out-gain oracle."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.learner_b import LearnerB
from benchmarks.scheduler_sim import Learner, _pattern, _skills_of
from benchmarks.sim_reference import DirectedEnvSched, GainOracleScheduler, ToldPredictor, told_envsched
from envsched_gym.curriculum import EnvSchedScheduler
from envsched_gym.curriculum.mixture import Mixture
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
    assert np.allclose(scheduler.predictor.compute(rolled)[0], own)
    assert not np.allclose(own, 7 / 8 * p[rolled] * (1 - p[rolled]))


def test_unknown_row_names_the_known_ones(train: Suite) -> None:
    scheduler = told_envsched("truth-all", train, Learner(list(train.nodes), seed=0), seed=0, group=8)
    known = r"\['dead', 'decl-new', 'truth-all', 'truth-dead', 'truth-new'\]"
    with pytest.raises(ValueError, match=rf"unknown reference row 'truth'; known: {known}"):
        ToldPredictor(scheduler.predictor.inner, Learner(list(train.nodes), seed=0), "truth", 8)


@pytest.fixture(scope="module")
def pool() -> tuple[Suite, list]:
    suite = synthetic_suite(300, n_envs=8, seed=2, heldout_fraction=0.2)
    return Suite(n for n in suite if n.split == "train"), [n for n in suite if n.split != "train"]


def _learner(kind: str, nodes: list) -> Learner | LearnerB:
    return Learner(nodes, seed=3) if kind == "A" else LearnerB(nodes, 3, _skills_of, _pattern)


@pytest.mark.parametrize("kind", ["A", "B"])
def test_expected_gain_is_the_held_out_change_of_a_small_step(pool, kind: str) -> None:
    """``expected_gain`` is the derivative of the held-out mean along the expected group signal:
    a step with a tiny fraction ``eps`` of each node's expected variance moves the held-out mean by
    ``eps`` times it (against the same step with no signal, which forgets the same on learner B)."""
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = _learner(kind, nodes)
    picks = np.arange(0, len(train), 17)
    gain = learner.expected_gain(picks, held, 8)
    p = learner.success(picks)
    eps, moved = 1e-5, []
    for node, pi in zip(picks, p, strict=True):
        scale = {}
        for k, signal in (("zero", 0.0), ("eps", eps * 7 / 8 * pi * (1 - pi))):
            twin = _learner(kind, nodes)
            twin.learn(np.array([node]), np.array([signal]))
            scale[k] = twin.success(held).mean()
        moved.append((scale["eps"] - scale["zero"]) / eps)
    assert np.allclose(gain, moved, rtol=1e-3, atol=1e-9)
    assert (gain > 0).sum() >= len(picks) // 2  # not a vacuous agreement on zeros
    if kind == "B":
        assert (gain[learner.dead[picks]] == 0).all() and learner.dead[picks].any()


@pytest.mark.parametrize("kind", ["A", "B"])
def test_declared_gain_is_the_true_gain_averaged_over_the_hidden_draws(pool, kind: str) -> None:
    """``expected_gain(declared=True)`` is the mean of the true expected gain over what a task's
    declarations leave open: its hidden difficulty and, on learner B, whether a task whose gold
    makes a call is one of the undeclared dead ends (a no-call task is always one)."""
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = _learner(kind, nodes)
    picks = np.arange(0, len(train), 7)
    if kind == "B":  # the synthetic pool's golds all make calls: declare a few of the picks no-call (so dead) tasks
        learner.no_call[picks[::5]] = learner.dead[picks[::5]] = True
    declared = learner.expected_gain(picks, held, 8, declared=True)
    rng = np.random.default_rng(0)
    true_difficulty, true_dead, draws = learner.difficulty.copy(), learner.dead.copy(), []
    for _ in range(3000):
        learner.difficulty[picks] = learner.declared_difficulty[picks] + rng.normal(0.0, learner.HIDDEN, len(picks))
        if kind == "B":
            learner.dead[picks] = learner.no_call[picks] | (rng.random(len(picks)) < learner.DEAD_END_FRACTION)
        draws.append(learner.expected_gain(picks, held, 8))
    learner.difficulty, learner.dead = true_difficulty, true_dead
    average = np.mean(draws, axis=0)
    scale = np.abs(average).max()
    assert (np.abs(average) > 0.05 * scale).sum() >= len(picks) // 2  # not a vacuous agreement on zeros
    assert np.allclose(declared, average, rtol=0.08, atol=0.005 * scale)
    truth = learner.expected_gain(picks, held, 8)
    assert not np.allclose(declared, truth, rtol=0.08)  # the hidden draws matter for a single task
    if kind == "B":
        assert (declared[::5] == 0).all() and (declared[1::5] != 0).all()


def test_gain_decl_rates_never_rolled_tasks_by_their_declared_gain_and_rolled_ones_by_the_truth(pool) -> None:
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = Learner(nodes, seed=3)
    every = np.arange(len(train))
    truth, declared = learner.expected_gain(every, held, 8), learner.expected_gain(every, held, 8, declared=True)
    oracle = GainOracleScheduler(train, learner, held, 8, mixed=False, declared=True)
    first = np.array([oracle.position[t] for t in oracle.next_batch(16)])
    assert np.array_equal(first, np.argsort(-declared, kind="stable")[:16])
    outside = np.setdiff1d(every, first)
    hidden_gem = outside[np.argmax(truth[outside])]  # a task whose hidden difficulty makes it better than declared
    assert truth[hidden_gem] > np.sort(declared)[-16]
    oracle.update(oracle.task_ids[hidden_gem], np.ones(8))
    second = np.array([oracle.position[t] for t in oracle.next_batch(16)])
    assert hidden_gem in second
    told = oracle.predict([oracle.task_ids[i] for i in (hidden_gem, first[0])])["variance"]
    p = learner.success(np.array([hidden_gem]))
    assert np.allclose(told, [p[0] * (1 - p[0]), learner.expected_variance(first[:1])[0]])
    assert np.array_equal(second, np.argsort(-np.where(every == hidden_gem, truth, declared), kind="stable")[:16])


@pytest.mark.parametrize("kind", ["A", "B"])
def test_expected_gain_is_the_expected_signal_along_the_direction(pool, kind: str) -> None:
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = _learner(kind, nodes)
    picks = np.arange(len(train))
    p = learner.success(picks)
    truth = 7 / 8 * p * (1 - p) / 0.25 * learner.direction(picks, held)
    assert np.allclose(learner.expected_gain(picks, held, 8), truth) and (truth != 0).any()
    declared = learner.expected_gain(picks, held, 8, declared=True)
    direction = learner.direction(picks, held, declared=True)
    live = direction != 0
    assert live.sum() > len(picks) // 2
    variance = learner._live_variance if kind == "B" else learner.expected_variance  # B's: as if the task were live
    assert np.allclose(declared[live] / direction[live], 7 / 8 * variance(picks[live]) / 0.25)
    if kind == "B":  # the declared direction weighs a live-looking task by its chance of being live, dead or not
        undeclared = learner.dead[picks] & ~learner.no_call[picks]
        assert undeclared.any() and (direction[undeclared] != 0).all()
        assert (learner.direction(picks, held)[learner.dead[picks]] == 0).all()


def test_direction_row_fills_each_family_with_its_best_directed_predictions(pool) -> None:
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = LearnerB(nodes, 3, _skills_of, _pattern)
    scheduler, own = DirectedEnvSched(train, learner, held, seed=0), EnvSchedScheduler(train, seed=0)
    family, rng = scheduler.mixture.family_of, np.random.default_rng(0)
    for _ in range(3):
        batch = scheduler.next_batch(16)
        own.next_batch(16)  # the same fits and clock as the row's
        every = np.arange(len(train))
        assert np.allclose(scheduler.predictor.compute(every)[0], own.predictor.compute(every)[0])  # EnvSched's own predictor
        score = scheduler.directed_scores()  # the state the batch was picked on: refreshed, no update since
        picked = np.array(scheduler.positions(batch))
        for f in np.unique(family[picked]):
            members, chosen = np.flatnonzero(family == f), picked[family[picked] == f]
            assert set(chosen) == set(members[np.argsort(-score[members], kind="stable")[: len(chosen)]])
        rewards = (rng.random((len(batch), 8)) < learner.success(picked)[:, None]).astype(float)
        for task_id, r in zip(batch, rewards, strict=True):
            scheduler.update(task_id, r)
            own.update(task_id, r)
    direction = learner.direction(np.arange(len(train)), held, declared=True)
    variance = scheduler.predictor.variance * scheduler.progress.factor(np.arange(len(train)))
    assert not np.array_equal(np.argsort(-direction * variance)[:16], np.argsort(-variance)[:16])  # the direction changes picks


def test_gain_oracle_takes_each_familys_best_gains_at_the_target_mix(pool) -> None:
    train, held_nodes = pool
    nodes = list(train.nodes) + held_nodes
    held = np.arange(len(train), len(nodes))
    learner = Learner(nodes, seed=3)
    gain = learner.expected_gain(np.arange(len(train)), held, 8)
    mixed, free = GainOracleScheduler(train, learner, held, 8), GainOracleScheduler(train, learner, held, 8, mixed=False)
    counts = Mixture(train).counts(16)
    batch = np.array([mixed.position[t] for t in mixed.next_batch(16)])
    family = Mixture(train).family_of
    assert np.array_equal(np.bincount(family[batch], minlength=len(counts)), counts)
    for f in np.unique(family[batch]):
        members = np.flatnonzero(family == f)
        assert np.isin(np.sort(members[np.argsort(-gain[members])][: counts[f]]), batch).all()
    top = np.array([free.position[t] for t in free.next_batch(16)])
    assert np.array_equal(top, np.argsort(-gain, kind="stable")[:16])


@pytest.mark.parametrize("row", ["dead", "truth-dead"])
def test_dead_rows_predict_no_signal_for_dead_ends_only(pool, row: str) -> None:
    train, _ = pool
    learner = LearnerB(list(train.nodes), 3, _skills_of, _pattern)
    scheduler = told_envsched(row, train, learner, seed=0, group=8)
    scheduler.predictor.refresh()
    dead, nodes = learner.dead, np.arange(len(train))
    assert dead.any() and (~dead).any()
    variance, _, uncertainty = scheduler.predictor.compute(nodes)
    assert (variance[dead] == 0).all() and (uncertainty[dead] == 0).all()
    own = scheduler.predictor.inner.compute(nodes)[0]
    p = learner.success(nodes)
    expected = own if row == "dead" else 7 / 8 * p * (1 - p)
    assert np.allclose(variance[~dead], expected[~dead]) and (variance[~dead] > 0).all()
    assert not set(scheduler.positions(scheduler.next_batch(16))) & set(np.flatnonzero(dead))


def test_a_row_that_tells_nothing_runs_as_envsched() -> None:
    """Learner A has no dead ends, so ``dead`` there must pick exactly EnvSched's batches: untold nodes refresh as its own
    (a pool large enough that a step's updates dirty only part of it, so a full refresh would pick otherwise)."""
    train = synthetic_suite(2000, n_envs=10, seed=5)
    learner = Learner(list(train.nodes), seed=3)
    told, own = told_envsched("dead", train, learner, seed=0, group=8), EnvSchedScheduler(train, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(4):
        batch = own.next_batch(16)
        assert told.next_batch(16) == batch
        rewards = (rng.random((len(batch), 8)) < learner.success(own.positions(batch))[:, None]).astype(float)
        for task_id, r in zip(batch, rewards, strict=True):
            own.update(task_id, r)
            told.update(task_id, r)
