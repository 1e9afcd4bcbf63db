"""The update contract every registered scheduler shares: hostile rewards are refused with nothing changed."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from envsched_gym.curriculum import SCHEDULERS, DAPOScheduler, make_scheduler, parse_options, parse_variant
from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.suite import Suite
from tests.curriculum.driving import drive


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_non_finite_reward_is_refused_and_changes_nothing(name: str, bad: float, small_suite: Suite) -> None:
    refused, twin = make_scheduler(name, small_suite, seed=2), make_scheduler(name, small_suite, seed=2)
    drive(refused, 3, seed=0)
    drive(twin, 3, seed=0)
    task = refused.task_ids[7]
    with pytest.raises(
        ValueError, match=rf"task '{re.escape(task)}': reward {bad} \(rollout 2 of 4\) is not finite.*fix the reward function"
    ):
        refused.update(task, [1.0, 0.0, bad, 1.0])
    assert json.dumps(refused.state_dict()) == json.dumps(twin.state_dict())
    assert drive(refused, 3, seed=1) == drive(twin, 3, seed=1)
    for key, value in refused.predict(refused.task_ids).items():
        assert np.isfinite(value).all(), key


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize(
    ("rewards", "message"), [([], "at least one reward"), (["high", 1.0], "rewards must be numbers"), ([[1.0], [0.0]], "flat list")]
)
def test_malformed_rewards_are_refused_with_the_task_named(name: str, rewards: list, message: str, small_suite: Suite) -> None:
    s = make_scheduler(name, small_suite, seed=0)
    before = json.dumps(s.state_dict())
    with pytest.raises(ValueError, match=rf"task '{re.escape(s.task_ids[0])}'.*{message}"):
        s.update(s.task_ids[0], rewards)
    assert json.dumps(s.state_dict()) == before


def test_dapo_keep_refuses_non_finite_rewards(small_suite: Suite) -> None:
    s = DAPOScheduler(small_suite, seed=0)
    s.next_batch(4)
    with pytest.raises(ValueError, match="reward nan"):
        s.keep(s.task_ids[0], [1.0, math.nan])
    assert (s.kept, s.dropped) == (0, 0)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_predict_returns_lists_of_plain_floats(name: str, small_suite: Suite) -> None:
    s = make_scheduler(name, small_suite, seed=0)
    drive(s, 2, seed=0)
    ids = s.task_ids[:6]
    pred = s.predict(ids)
    assert set(pred) == {"variance", "mean", "uncertainty"}
    for key, values in pred.items():
        assert type(values) is list and len(values) == len(ids), key
        assert all(type(v) is float and math.isfinite(v) for v in values), (key, [type(v).__name__ for v in values])
    json.dumps(pred)  # plain floats serialise as they are


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_next_batch_larger_than_the_pool_is_refused_with_the_sizes_and_the_fix(name: str) -> None:
    s = make_scheduler(name, synthetic_suite(10, n_envs=3, seed=0), seed=0)
    before = json.dumps(s.state_dict())
    with pytest.raises(
        ValueError, match=rf"next_batch\(16\) needs 16 distinct tasks but the '{name}' scheduler's pool has 10; ask for at most 10"
    ):
        s.next_batch(16)
    assert json.dumps(s.state_dict()) == before  # a refused call draws nothing
    whole = s.next_batch(10)
    assert sorted(whole) == sorted(s.task_ids)  # the whole pool, each once (DAPO's over-sampling stops at the pool)


def test_scheduler_options_parse_as_numbers_and_name_a_malformed_item() -> None:
    assert parse_options("repeat_discount=0, transfer_weight=0.5,half_life=-3") == {"repeat_discount": 0, "transfer_weight": 0.5, "half_life": -3}
    assert parse_options("") == {}
    with pytest.raises(ValueError, match="'transfer_weight' is not key=value"):
        parse_options("transfer_weight")
    with pytest.raises(ValueError, match="'high' is not a number"):
        parse_options("repeat_discount=high")
    with pytest.raises(ValueError, match="'repeat_discount' is given twice"):
        parse_options("repeat_discount=0,repeat_discount=1")


def test_a_baselines_unknown_option_names_the_ones_it_has() -> None:
    suite = synthetic_suite(40, seed=0)
    assert make_scheduler("plr", suite, replay_prob=0.2).replay_prob == 0.2
    with pytest.raises(TypeError, match=r"unknown plr options \['repeat_discount'\]; known: \['beta', 'mixture', 'replay_prob', 'staleness_mix', 'weights'\]"):
        make_scheduler("plr", suite, repeat_discount=0)


def test_a_variant_is_a_label_and_its_options() -> None:
    assert parse_variant("rd0: repeat_discount=0,transfer_weight=0.5") == ("rd0", {"repeat_discount": 0, "transfer_weight": 0.5})
    with pytest.raises(ValueError, match="must read LABEL:key=value"):
        parse_variant("repeat_discount=0")
    with pytest.raises(ValueError, match=r"variant 'x:a=b': scheduler option 'a=b': 'b' is not a number"):
        parse_variant("x:a=b")
