"""Fixtures: small synthetic suites with real-shaped declarations."""

from __future__ import annotations

import pytest

from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.suite import Suite


@pytest.fixture(scope="session")
def small_suite() -> Suite:
    """400 tasks over 12 environments."""
    return synthetic_suite(400, n_envs=12, seed=3)
