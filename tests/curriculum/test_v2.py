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
            model.observe(i, 8, 7.0, step, signal=4 * 7 / 64)  # Easy: 7 of 8
            model.observe(30 + i, 8, 1.0, step, signal=4 * 7 / 64)  # Hard: 1 of 8
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
            model.observe(i, 8, 1.0 + 6.0 * step / 29, step, signal=0.0)  # no training signal: the drift alone
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
    on._rescore(nodes)
    off._rescore(nodes)
    assert not np.allclose(on._base_score, off._base_score)


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
    counts = {}
    for discount in (0, 1, 10):
        batch = _tools_of(suite, EnvSchedScheduler(suite, seed=0, repeat_discount=discount).next_batch(4))
        counts[discount] = batch.count("shared_tool")
        assert len(set(batch)) == 5 - counts[discount]  # every other pick is an own tool, each a different one
    # shared_tool's sensitivity mass is 40 tasks', an own tool's 10: valued alone it wins every slot; at 1 / (1 + c)
    # after c picks it still wins a second one; at 1 / (1 + 10 c) an own tool beats it from the second slot on
    assert counts[0] == 4 and 1 < counts[1] < 4 and counts[10] == 1


def test_the_batch_rescore_kept_pick_by_pick_equals_the_transfer_value_of_the_picks_summed() -> None:
    """``_spread`` adds each new pick's unit rows to a running sum; the scores must equal those
    computed from the picks' rows summed afresh (``transfer_value`` with ``covered``)."""
    s = EnvSchedScheduler(_shared_tool_suite(), seed=0, repeat_discount=1.0)
    cand = np.arange(80)
    s._rescore(cand)
    score = s._base_score[cand]
    rescore = s._spread(cand, score)
    rest = score - s._variance_term(cand, np.ones(len(cand))) * s.transfer_value(cand) ** s.config.transfer_weight
    picks: list[int] = []
    for node in (0, 1, 45, 2, 79):
        picks.append(node)
        covered = np.asarray(s.features.units.matrix[picks].sum(axis=0)).ravel()
        expected = rest + s._variance_term(cand, np.ones(len(cand))) * s.transfer_value(cand, covered) ** s.config.transfer_weight
        assert np.allclose(rescore(picks), expected, rtol=1e-9, atol=1e-12), picks
    assert not np.allclose(rescore(picks), score)


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


def test_exposure_columns_credit_each_tool_in_full_and_in_share() -> None:
    """A group of a task calling two tools adds its signal to each tool in full (column 0), half to each (column 1) and in full to its environment (column 2)."""
    nodes = []
    tools = [ToolSpec(f"t{k}", "a tool") for k in range(3)]
    env = EnvSpec(env_id="E", family="Toy", gym_id="envsched/Toy-v0", tools=tools)
    for i, called in enumerate((["t0", "t1"], ["t0"], ["t2"])):
        solution = [AssistantTurn(tool_calls=[ToolCall(name, {}) for name in called]), AssistantTurn(content="done")]
        nodes.append(TaskNode(env, TaskSpec(task_id=f"E-{i}", env_id="E", instruction=f"job {i}", solution=solution)))
    model = DeclarationModel(build_features(Suite(nodes).nodes), half_life=30.0)
    model.observe(0, 8, 4.0, 0, signal=1.0)
    assert model.exposure_columns(np.arange(3)).tolist() == [[0.0, 0.0, 0.0]] * 3  # a group joins the exposure at the next fit
    model.fit(0)
    assert np.allclose(model.exposure_columns(np.arange(3)), [[1.0, 0.5, 1.0], [1.0, 0.5, 1.0], [0.0, 0.0, 1.0]])
    model.observe(1, 8, 4.0, 1, signal=0.5)
    model.fit(1)
    assert np.allclose(model.exposed, [[0.0, 0.0, 0.0], [1.0, 0.5, 1.0]])  # each group as the training before it left it


def _trained_tool_run(exposure: float) -> np.ndarray:
    """Easy tasks 0-19 call 3 tools by turns. Every tool starts at 1 in 8; then only tool 0's tasks train, and their success rises."""
    suite = _suite()
    model = DeclarationModel(build_features(suite.nodes), half_life=30.0, exposure=exposure)
    for step in range(30):
        trained = [0, 3, 6, 9] if step >= 3 else list(range(12))
        for i in trained:
            rate = 1.0 if step < 3 else 1.0 + 6.0 * (step - 3) / 26
            model.observe(i, 8, rate, step, signal=4 * (rate / 8) * (1 - rate / 8))
        model.fit(step)
    return model.predict(np.array([12, 13]))[0]  # never seen: tool 0 and tool 1


def test_exposure_tells_a_trained_tool_from_an_untrained_one() -> None:
    """Tool 1 has not trained since its groups at 1 in 8, tool 0 has: with the exposure columns a never-seen task of tool 1
    stays low while one of tool 0 rises; without them the drift column lifts both alike."""
    with_exposure, without = _trained_tool_run(1.0), _trained_tool_run(0.0)
    assert with_exposure[0] - with_exposure[1] > 0.25
    assert with_exposure[0] - with_exposure[1] > 2 * (without[0] - without[1])


def test_transfer_value_follows_the_fitted_rates_and_the_sensitivity_mass() -> None:
    suite = _shared_tool_suite()
    s = EnvSchedScheduler(suite, seed=0)
    nodes = np.arange(len(suite))
    model = s.predictor.model
    model.beta[-4:-1] = [1.0, 0.0, 0.0]  # training moves tools in full, environments not at all
    s._values = None
    value = s.transfer_value(nodes)
    assert value[:40].min() > 3.5 * value[40:].max()  # shared_tool's mass is 40 tasks', an own tool's 10
    model.beta[-4:-1] = [0.0, 0.0, 1.0]  # environments only: every environment has 10 tasks
    s._values = None
    assert np.allclose(s.transfer_value(nodes), 1.0, atol=0.05)  # up to the tools' prior rate, RATE_PRIOR
    solved = np.arange(40)  # the shared tool's tasks are solved or hopeless
    s.predictor.store(solved, np.zeros(40), s.predictor.mean[solved], s.predictor.uncertainty[solved])
    model.beta[-4:-1] = [1.0, 0.0, 0.0]
    s._values = None
    value = s.transfer_value(nodes)
    assert value[40:].min() > 10 * value[:40].max()


def test_the_transfer_value_stays_finite_where_every_node_of_a_unit_predicts_no_variance() -> None:
    suite = _shared_tool_suite()
    s = EnvSchedScheduler(suite, seed=0)
    nodes = np.arange(len(suite))
    s.predictor.store(nodes, np.zeros(len(suite)), s.predictor.mean, s.predictor.uncertainty)
    s.predictor.unit_variance[:] = -1e-17  # what the running scatter-add can leave behind
    s._values = None
    value = s.transfer_value(nodes)
    assert np.isfinite(value).all() and value.min() >= 0.0
    assert np.isfinite(s._variance_term(nodes)).all()  # the power of a negative value was NaN, and the family mix refused it


def test_the_unit_variance_mass_stays_in_step_with_the_cached_predictions(small_suite: Suite) -> None:
    s = EnvSchedScheduler(small_suite, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        for task in s.next_batch(8):
            s.update(task, (rng.random(8) < 0.5).astype(float).tolist())
    matrix = s.features.units.matrix
    assert np.abs(s.predictor.unit_variance).sum() > 0
    assert np.allclose(s.predictor.unit_variance, matrix.T @ s.predictor.variance)


@pytest.mark.parametrize(("option", "value", "message"), [("direction_transfer", 0.5, "do not blend"), ("model_exposure", -1.0, "at least 0")])
def test_transfer_form_and_exposure_scale_are_checked(small_suite: Suite, option: str, value: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EnvSchedScheduler(small_suite, seed=0, **{option: value})
