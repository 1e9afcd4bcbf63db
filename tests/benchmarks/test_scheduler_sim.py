"""The simulated-learner benchmark: equal budgets, learning only from varied groups, learner B's dynamics."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import scheduler_sim
from benchmarks.learner_b import LearnerB
from benchmarks.scheduler_sim import ORDER, Learner, SimConfig, _pattern, _skills_of, parse_variant, run_all, simulate
from benchmarks.sim_report import Run, acceptance, summarise
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


@pytest.fixture()
def learner_b(pool) -> tuple[LearnerB, int, np.ndarray]:
    """Learner B over train + held-out nodes, the number of train nodes, and the held-out positions."""
    train, held = pool
    nodes = list(train.nodes) + held
    return LearnerB(nodes, 0, _skills_of, _pattern), len(train), np.arange(len(train), len(nodes))


def test_learner_b_memo_does_not_reach_held_out_tasks(learner_b) -> None:
    """Revisiting one task raises it far more than anything else; a held-out task gains only through shared skills."""
    learner, n_train, held = learner_b

    def skills(i: int) -> tuple:
        return tuple(sorted(learner.tools[i])), learner.env[i], learner.pattern[i]

    task, twin = next(
        (int(t), int(h)) for t in np.flatnonzero(~learner.dead[:n_train]) for h in held if not learner.dead[h] and skills(h) == skills(t)
    )
    logit_task, logit_twin = learner.logits(np.array([task, twin]))
    for _ in range(5):
        learner.learn(np.array([task]), np.array([0.25]))
    gain_task, gain_twin = learner.logits(np.array([task, twin])) - np.array([logit_task, logit_twin])
    assert learner.memo[task] == pytest.approx(5 * learner.MEMO_LR) and (learner.memo[held] == 0).all()
    assert gain_task == pytest.approx(gain_twin + 5 * learner.MEMO_LR) and gain_twin > 0


def test_learner_b_forgets_unused_skills_and_dead_ends_never_move(learner_b) -> None:
    learner, n_train, _ = learner_b
    dead = np.flatnonzero(learner.dead)
    assert dead.size and (learner.success(dead) == learner.dead_p[dead]).all()
    live = int(np.flatnonzero(~learner.dead[:n_train])[0])
    learner.skill += 1.0  # every skill above its initial value
    raised = learner.skill.copy()
    unused_env = int(next(e for e in np.unique(learner.env) if e != learner.env[live]))
    learner.learn(np.array([live]), np.array([0.0]))  # a step that uses only `live`'s skills and teaches nothing
    assert learner.skill[unused_env] == pytest.approx(raised[unused_env] - learner.FORGET * 1.0)
    assert learner.skill[learner.env[live]] == raised[learner.env[live]]
    before = learner.success(dead).copy()
    learner.learn(dead[:5], np.full(min(5, dead.size), 0.25))
    assert np.array_equal(learner.success(dead), before) and (learner.memo[dead] == 0).all()


def test_learner_b_interference_lowers_conflicting_environments(learner_b) -> None:
    learner, n_train, _ = learner_b
    live = int(np.flatnonzero(~learner.dead[:n_train])[0])
    env = learner.env[live]
    rivals = learner.conflict[env].indices
    assert rivals.size == min(learner.CONFLICTS, len(np.unique(learner.env)) - 1)
    before = learner.skill[rivals].copy()
    learner.learn(np.array([live]), np.array([0.25]))
    assert (learner.skill[rivals] < before).all()


@pytest.mark.parametrize("learner", ["A", "B", "C"])
def test_every_scheduler_spends_the_same_budget(pool, learner: str) -> None:
    train, held = pool
    cfg = SimConfig(seeds=1, steps=3, batch=8, group=4, variants=("plain:task_bonus=0.0",))
    runs = run_all(train, held, cfg, learner)
    assert list(runs) == [*ORDER, "envsched-plain"]
    for name, (run,) in runs.items():
        assert len(run.curve) == 3 * cfg.steps + 1, name
        assert run.groups * cfg.group == 3 * cfg.steps * cfg.batch * cfg.group, name
        assert len(run.predicted) == len(run.realised) == run.groups
    lines = summarise(runs, cfg.steps, cfg.batch * cfg.group)
    assert len(lines) == 2 + len(runs) and lines[2].startswith("envsched")
    assert len(acceptance(runs, train, cfg.steps)) == 6


def test_the_probe_reads_never_seen_tasks_and_leaves_the_run_unchanged(pool, monkeypatch) -> None:
    """The uniform never-seen probe gets one (prediction, realised, ceiling) triple per probed task, and a run with it
    follows the same curve, picks and predictions as one without it (its predictions do not refit the scheduler)."""
    train, held = pool
    cfg = SimConfig(seeds=1, steps=3, batch=8, group=4)
    probed, size = simulate("envsched", train, held, 0, cfg, "B"), scheduler_sim.PROBE
    monkeypatch.setattr(scheduler_sim, "PROBE", 0)
    plain = simulate("envsched", train, held, 0, cfg, "B")
    assert probed.curve == plain.curve and probed.predicted == plain.predicted and probed.realised == plain.realised
    assert not plain.probe_predicted
    steps = 3 * cfg.steps  # 72 groups of 222 train tasks: at least 150 never-seen ones at every step
    assert len(probed.probe_predicted) == len(probed.probe_realised) == len(probed.probe_ceiling) == steps * size
    assert set(probed.probe_realised) <= {0.0, 0.1875, 0.25}  # variances of 4 Bernoulli rewards


def test_learners_differ_and_bad_options_say_the_fix(pool) -> None:
    train, held = pool
    cfg = SimConfig(seeds=1, steps=2, batch=8, group=4)
    a, b = (simulate("random", train, held, 0, cfg, kind) for kind in "AB")
    assert a.curve != b.curve
    with pytest.raises(ValueError, match="use 'A', 'B' or 'C'"):
        simulate("random", train, held, 0, cfg, "D")
    with pytest.raises(ValueError, match="LABEL:key=value"):
        parse_variant("transfer_weight=0")
    assert parse_variant("x:transfer_weight=0.5,candidates_per_slot=8") == ("x", {"transfer_weight": 0.5, "candidates_per_slot": 8})


def test_the_probe_draws_only_tasks_never_rolled(pool) -> None:
    train, held = pool
    learner = Learner(list(train.nodes) + held, seed=0)
    fresh = {n.task_id for n in train.nodes[:5]}
    asked: list[str] = []

    class Spy:
        def predict(self, task_ids: list[str]) -> dict[str, np.ndarray]:
            asked.extend(task_ids)
            return {"variance": np.full(len(task_ids), 0.1)}

    run = Run()
    scheduler_sim.probe(run, Spy(), learner, train, {n.task_id for n in train.nodes[5:]}, np.random.default_rng(0), 4)
    assert sorted(asked) == sorted(fresh) and len(run.probe_realised) == len(run.probe_ceiling) == 5
    scheduler_sim.probe(run, Spy(), learner, train, {n.task_id for n in train.nodes}, np.random.default_rng(0), 4)
    assert len(asked) == 5  # nothing left to probe: no prediction asked
