"""The format penalty's arithmetic and its refusals (the rollout function's use: tests/rl/test_feedback.py)."""

from __future__ import annotations

import math

import pytest

from envsched_gym.rl.format_penalty import check_format_penalty, training_rewards


def test_only_malformed_episodes_lose_the_penalty():
    assert training_rewards([1.0, 1.0, 0.0, 0.0], [False, True, False, True], 0.5) == [1.0, 0.5, 0.0, -0.5]
    assert training_rewards([1.0, 0.0], [True, True], 0.0) == [1.0, 0.0]


@pytest.mark.parametrize("penalty", [-0.1, math.nan, math.inf])
def test_a_penalty_that_would_pay_or_poison_is_refused(penalty):
    with pytest.raises(ValueError, match="finite number >= 0"):
        check_format_penalty(penalty)
    check_format_penalty(0.0)


def test_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="1 malformed flags for 2 rewards"):
        training_rewards([1.0, 0.0], [True], 0.5)
