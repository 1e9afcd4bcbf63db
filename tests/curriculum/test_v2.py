"""EnvSched v2: shared units, the declaration model, learning progress and the transfer value."""

from __future__ import annotations

import numpy as np
import pytest

from envsched_gym import EnvSpec, TaskSpec
from envsched_gym.curriculum import EnvSchedScheduler, build_features
from envsched_gym.curriculum.progress import LearningProgress
from envsched_gym.curriculum.regression import DeclarationModel
from envsched_gym.curriculum.units import KINDS
from envsched_gym.declarations import AssistantTurn, ToolCall, ToolSpec
from envsched_gym.suite import Suite, TaskNode


def _suite() -> Suite:
    """Two environments of 30 tasks; in each, tasks 0-24 call a shared tool (by pairs of names), 25-29 make no call."""
    nodes = []
    for env_name in ("Easy", "Hard"):
        tools = [ToolSpec(f"{env_name}_tool_{k}", "a tool") for k in range(3)]
        env = EnvSpec(env_id=env_name, family="Toy", gym_id="envsched/Toy-v0", tools=tools)
        for i in range(30):
            calls = [] if i >= 25 else [ToolCall(tools[i % 3].name, {"i": i})]
            solution = [AssistantTurn(tool_calls=calls), AssistantTurn(content="done")]
            nodes.append(
                TaskNode(env, TaskSpec(task_id=f"{env_name}-{i}", env_id=env_name, instruction=f"{env_name} job {i}", solution=solution))
            )
    return Suite(nodes)


def test_units_rows_sum_to_one_per_kind_and_no_call_tasks_have_no_tool() -> None:
    suite = _suite()
    units = build_features(suite.nodes).units
    dense = units.matrix.toarray()
    for k, kind in enumerate(KINDS):
        sums = dense[:, units.kind == k].sum(axis=1)
        expected = np.where(np.arange(len(suite)) % 30 >= 25, 0.0, 1.0) if kind == "tool" else np.ones(len(suite))
        assert np.allclose(sums, expected), kind
    assert units.count[units.names.index("env=Easy")] == 30


def test_declaration_model_predicts_never_seen_tasks_from_shared_units() -> None:
    suite = _suite()
    model = DeclarationModel(build_features(suite.nodes), half_life=30.0)
    rng = np.random.default_rng(0)
    for step in range(6):
        for i in rng.choice(20, size=8, replace=False):  # tasks 0-19 of each environment are trained
            model.observe(i, 8, 7.0, step)  # Easy: 7 of 8
            model.observe(30 + i, 8, 1.0, step)  # Hard: 1 of 8
        model.fit(step)
    mean, variance = model.predict(np.array([22, 52]))  # never seen, one per environment
    assert model.visits[[22, 52]].tolist() == [0, 0]
    assert mean[0] > 0.7 > 0.3 > mean[1]
    assert variance.max() < 0.25


def test_declaration_model_predicts_the_current_policy_not_the_decayed_average() -> None:
    """Success rises from 1 in 8 to 7 in 8 over 30 steps: a never-seen task is predicted near
    the latest rate (the drift column), not the rate of an older policy."""
    suite = _suite()
    model = DeclarationModel(build_features(suite.nodes), half_life=30.0)
    rng = np.random.default_rng(0)
    for step in range(30):
        for i in rng.choice(20, size=8, replace=False):
            model.observe(i, 8, 1.0 + 6.0 * step / 29, step)
        model.fit(step)
    mean, _ = model.predict(np.array([22]))
    assert model.beta[-1] > 0
    assert mean[0] > 0.7  # without the drift column: 0.10 (the visits column takes the rise, and a never-seen task has no visits)


def test_progress_factor_marks_tasks_whose_rewards_do_not_move() -> None:
    progress = LearningProgress(20)
    for visit in range(10):
        for node in range(10):  # rising by 0.05 a visit
            progress.observe(node, 8, 0.2 + 0.05 * visit)
        for node in range(10, 20):  # flat at 0.5
            progress.observe(node, 8, 0.5)
    progress.refresh()
    assert progress.prior_slope > 0
    factor = progress.factor(np.arange(20))
    assert factor[:10].min() > 1.1 and factor[10:].max() < 0.8  # shrunk towards the pool: 8-rollout means are noisy
    assert LearningProgress(3).factor(np.arange(3)).tolist() == [1.0, 1.0, 1.0]


def test_transfer_value_prefers_shared_unlearned_units() -> None:
    suite = _suite()
    s = EnvSchedScheduler(suite, seed=0)
    value = s.transfer_value(np.arange(len(suite)))
    assert value[:25].min() > value[25:30].max()  # a task whose gold makes no call teaches no tool
    for _ in range(4):
        for i in range(25):
            s.update(f"Easy-{i}", [1.0] * 8)  # every Easy tool and the Easy environment are learned
            s.update(f"Hard-{i}", [1.0, 0.0] * 4)  # Hard's are half learned
    s.next_batch(4)
    after = s.transfer_value(np.arange(len(suite)))
    assert after[:25].mean() < value[:25].mean() and after[30:55].mean() > after[:25].mean()


@pytest.mark.parametrize("option", ["transfer_weight", "progress_weight", "model_weight"])
def test_every_v2_term_is_a_config_switch(small_suite: Suite, option: str) -> None:
    on, off = EnvSchedScheduler(small_suite, seed=0), EnvSchedScheduler(small_suite, seed=0, **{option: 0.0})
    rng = np.random.default_rng(0)
    p = rng.random(len(small_suite))
    for _ in range(6):
        batch = on.next_batch(16)
        off.next_batch(16)
        for t in batch:
            node = on.positions([t])[0]
            rewards = (rng.random(8) < p[node]).astype(float)
            p[node] = min(p[node] + 0.1, 1.0)  # a task gets better as it trains: the progress term has a slope to see
            for s in (on, off):
                s.update(t, rewards)
        on.progress.refresh()
        off.progress.refresh()
    nodes = np.arange(len(small_suite))
    assert not np.allclose(on._node_score(nodes), off._node_score(nodes))


def _shared_tool_suite() -> Suite:
    """Four environments whose 10 tasks each call one tool they all share, and four whose tasks each call the environment's own tool."""
    nodes = []
    for e in range(8):
        name = f"Shared{e}" if e < 4 else f"Own{e}"
        tool = ToolSpec("shared_tool" if e < 4 else f"own_tool_{e}", "a tool")
        env = EnvSpec(env_id=name, family="Toy", gym_id="envsched/Toy-v0", tools=[tool])
        for i in range(10):
            solution = [AssistantTurn(tool_calls=[ToolCall(tool.name, {"i": i})]), AssistantTurn(content="done")]
            nodes.append(TaskNode(env, TaskSpec(task_id=f"{name}-{i}", env_id=name, instruction=f"{name} job {i}", solution=solution)))
    return Suite(nodes)


def _tools_of(suite: Suite, batch: list[str]) -> list[str]:
    return [call.name for t in batch for turn in suite.node(t).task.solution or [] for call in turn.tool_calls]


def test_a_batch_spreads_over_tools_once_a_tool_is_in_it() -> None:
    suite = _shared_tool_suite()
    alone = EnvSchedScheduler(suite, seed=0, repeat_discount=0).next_batch(4)
    assert _tools_of(suite, alone) == ["shared_tool"] * 4  # the most shared tool wins every slot when picks are valued alone
    # shared_tool reaches 39 other tasks, an own tool 9: valued at sqrt(39/9) = 2.1x, it still takes a second slot at
    # 1 / (1 + 1) of its value, not a third at 1 / (1 + 2)
    spread = EnvSchedScheduler(suite, seed=0).next_batch(4)
    assert _tools_of(suite, spread).count("shared_tool") == 2 and len(set(_tools_of(suite, spread))) == 3
    strong = EnvSchedScheduler(suite, seed=0, repeat_discount=3).next_batch(4)
    assert _tools_of(suite, strong).count("shared_tool") == 1 and len(set(_tools_of(suite, strong))) == 4


def test_the_repeat_discount_applies_to_tools_and_environments_not_signature_categories() -> None:
    s = EnvSchedScheduler(_shared_tool_suite(), seed=0)
    units, nodes = s.features.units, np.arange(80)
    shared = units.names.index("tool=shared_tool")
    covered = np.zeros(len(units))
    covered[shared] = 1.0
    before, after = s.transfer_value(nodes), s.transfer_value(nodes, covered)
    assert np.all(after[:40] < before[:40]) and np.allclose(after[40:], before[40:])
    signature = np.flatnonzero(units.kind == KINDS.index("signature"))
    covered[:] = 0.0
    covered[signature] = 5.0
    assert np.allclose(s.transfer_value(nodes, covered), before)
