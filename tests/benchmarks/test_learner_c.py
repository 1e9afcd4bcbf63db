"""Learner C: learner B plus one write-or-stop trade-off per family (benchmarks/learner_c.py)."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np
import pytest

from benchmarks.learner_b import LearnerB
from benchmarks.learner_c import MODE_KINDS, LearnerC
from benchmarks.scheduler_sim import SimConfig, _pattern, _skills_of, run_all
from benchmarks.sim_report import kind_table
from envsched_gym.curriculum.features import CALL_KINDS, node_call_kinds
from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.declarations import AssistantTurn
from envsched_gym.suite import Suite, TaskNode


@pytest.fixture(scope="module")
def pool() -> tuple[Suite, list[TaskNode]]:
    suite = synthetic_suite(300, n_envs=8, seed=2, heldout_fraction=0.2)
    return Suite(n for n in suite if n.split == "train"), [n for n in suite if n.split != "train"]


@pytest.fixture()
def nodes(pool) -> list[TaskNode]:
    train, held = pool
    return list(train.nodes) + held


def _live(learner: LearnerC, kind: str) -> np.ndarray:
    return np.flatnonzero(~learner.dead & (learner.mode_unit == MODE_KINDS.index(kind)))


def test_the_pool_has_both_kinds_and_no_call_tasks_have_no_mode(nodes) -> None:
    refusal = replace(nodes[0].task, task_id="refusal", solution=[AssistantTurn(content="I cannot do that.")])
    nodes = [*nodes, TaskNode(nodes[0].env, refusal)]
    learner = LearnerC(nodes, 0, _skills_of, _pattern)
    kinds = node_call_kinds(nodes)
    assert {CALL_KINDS[k] for k in kinds} >= {"writes", "reads"}
    for code, kind in enumerate(CALL_KINDS):
        units = learner.mode_unit[kinds == code]
        assert (units == MODE_KINDS.index(kind)).all() if kind in MODE_KINDS else (units == -1).all(), kind
    assert learner.no_call[-1] and CALL_KINDS[kinds[-1]] == "no_call" and learner.mode_unit[-1] == -1
    before = learner.mode.copy()
    learner.learn(np.array([len(nodes) - 1]), np.array([0.25]))
    assert np.array_equal(learner.mode, before)


def test_without_the_trade_off_c_is_b(nodes) -> None:
    """The same seeded draws and dynamics: with KIND_LR = 0, C follows B step for step."""
    b, c = LearnerB(nodes, 3, _skills_of, _pattern), LearnerC(nodes, 3, _skills_of, _pattern)
    c.KIND_LR = 0.0
    rng = np.random.default_rng(0)
    for _ in range(5):
        picked = rng.choice(len(nodes), 16, replace=False)
        variances = rng.choice([0.0, 0.1875, 0.25], 16)
        b.learn(picked, variances)
        c.learn(picked, variances)
    assert np.array_equal(b.success(), c.success())


def test_a_look_up_group_unteaches_the_writes_of_its_family(nodes) -> None:
    learner = LearnerC(nodes, 0, _skills_of, _pattern)
    reads, writes = _live(learner, "reads"), _live(learner, "writes")
    twin = copy.deepcopy(learner)
    LearnerB.learn(twin, reads[:3], np.full(3, 0.25))  # the same step without the trade-off
    learner.learn(reads[:3], np.full(3, 0.25))
    assert learner.mode[MODE_KINDS.index("reads")] == pytest.approx(3 * learner.KIND_LR)
    assert learner.mode[MODE_KINDS.index("writes")] == pytest.approx(-3 * learner.KIND_INTERFERENCE * learner.KIND_LR)
    assert (learner.logits(writes) < twin.logits(writes)).all() and (learner.logits(reads) > twin.logits(reads)).all()
    learner.learn(writes[:3], np.full(3, 0.25))  # equal signal on both kinds: the modes are back where they started
    assert np.allclose(learner.mode, 0.0)


def test_the_direction_includes_the_modes_to_first_order(nodes, pool) -> None:
    learner = LearnerC(nodes, 1, _skills_of, _pattern)
    held = np.arange(len(pool[0]), len(nodes))
    picked = np.concatenate([_live(learner, "reads")[:2], _live(learner, "writes")[:2]])
    modes_only = learner.direction(picked, held) - LearnerB.direction(learner, picked, held)
    eps, before = 1e-4, learner.success(held).mean()
    for node, expected in zip(picked, modes_only, strict=True):
        moved = copy.deepcopy(learner)
        moved.mode += moved.mode_delta(np.array([node]), np.array([eps]))
        assert (moved.success(held).mean() - before) / eps == pytest.approx(expected, rel=1e-3, abs=1e-9)
    assert np.abs(modes_only).max() > 0


def test_the_kind_table_reports_shares_and_gains_per_kind(pool) -> None:
    train, held = pool
    cfg = SimConfig(seeds=2, steps=3, batch=8, group=4, schedulers=("envsched", "random"))
    runs = run_all(train, held, cfg, "C")
    for rs in runs.values():
        for run in rs:
            assert set(run.kind_held) == {0, cfg.steps} and sum(run.kind_groups.values()) == run.groups
    lines = kind_table(runs, cfg.steps)
    assert lines[0].split()[:3] == ["scheduler", "writes", "groups"] and len(lines) == 2 + len(runs)
    random = runs["random"]
    share = sum(r.kind_groups["writes"] for r in random) / sum(r.groups for r in random)
    assert f"{share:14.3f}" in lines[3]
