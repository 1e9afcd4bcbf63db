"""The format penalty's arithmetic and its refusals (the rollout function's use: tests/rl/test_feedback.py)."""

from __future__ import annotations

import math

import pytest

from envsched_gym.rl.format_penalty import check_format_penalty, training_rewards, varied_groups


def test_only_malformed_episodes_lose_the_penalty():
    assert training_rewards([1.0, 1.0, 0.0, 0.0], [False, True, False, True], 0.5) == [1.0, 0.5, 0.0, -0.5]
    assert training_rewards([1.0, 0.0], [True, True], 0.0) == [1.0, 0.0]


def test_a_group_of_failures_varies_once_one_of_them_is_malformed():
    rewards, malformed = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0], [False, True, False, False, False, False, False, False]
    assert varied_groups(rewards, 4) == 1
    assert varied_groups(training_rewards(rewards, malformed, 0.3), 4) == 2


@pytest.mark.parametrize("penalty", [-0.1, math.nan, math.inf])
def test_a_penalty_that_would_pay_or_poison_is_refused(penalty):
    with pytest.raises(ValueError, match="finite number >= 0"):
        check_format_penalty(penalty)
    check_format_penalty(0.0)


def test_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="1 malformed flags for 2 rewards"):
        training_rewards([1.0, 0.0], [True], 0.5)
    with pytest.raises(ValueError, match="do not split into groups of 4"):
        varied_groups([0.0] * 6, 4)
