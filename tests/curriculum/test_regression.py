"""The declaration model's fit stays a descent on the penalised likelihood, whatever the order and size of its batches."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from envsched_gym.curriculum import build_features
from envsched_gym.curriculum.regression import DeclarationModel
from tests.curriculum.test_v2 import _suite


def _model() -> DeclarationModel:
    return DeclarationModel(build_features(_suite().nodes), half_life=30.0)


def _objective(model: DeclarationModel) -> float:
    decay = 0.5 ** ((model.fit_step - model.born) / model.half_life)
    penalty = np.full(len(model.beta), model.penalty)
    penalty[model.design.shape[1] - 1] = 1e-4
    age = (model.born - model.fit_step) / model.half_life
    logit = model._kept @ model.beta[:-1] + age * model.beta[-1]
    return model._objective(model.beta, logit, decay, penalty)


@pytest.mark.parametrize("per_fit", [1, 4])
def test_early_failures_then_successes_keep_the_fit_bounded(per_fit: int) -> None:
    """Four steps in which every group fails, then groups succeed 15 % of the time, fitted after
    every group or every 4 (the smol-cpu batch): a plain IRLS step swung the intercept between
    -8000 and +8000 and predicted 0 or 1 for every task."""
    model, rng = _model(), np.random.default_rng(1)
    for k in range(80):
        step = k // per_fit
        successes = 0 if k < 16 else int(rng.binomial(8, 0.15))
        model.observe(int(rng.integers(60)), 8, float(successes), step, signal=0.5 if 0 < successes < 8 else 0.0)
        if (k + 1) % per_fit == 0:
            model.fit(step)
            assert np.abs(model.beta).max() < 30.0, (
                k,
                np.abs(model.beta).max(),
            )  # all-failure groups alone pull the intercept to about -11
    mean, _ = model.predict(np.arange(60))
    assert 0.05 < mean.mean() < 0.35  # the groups succeeded 12 % of the time over all, 15 % lately


def test_each_fit_on_the_same_groups_lowers_the_penalised_likelihood() -> None:
    model, rng = _model(), np.random.default_rng(2)
    for _ in range(12):  # one separable batch: the tasks of one environment all fail, the other's all succeed
        node = int(rng.integers(60))
        model.observe(node, 8, 0.0 if node < 30 else 8.0, 0, signal=0.0)
    model.fit(0)
    values = [_objective(model)]
    for _ in range(15):
        model.fit(0)
        values.append(_objective(model))
    assert all(b <= a + 1e-9 * abs(a) for a, b in itertools.pairwise(values))
    assert values[-1] < values[0]
