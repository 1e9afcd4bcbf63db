"""Fixtures: small synthetic suites with real-shaped declarations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from envsched_gym.curriculum.synthetic import synthetic_suite
from envsched_gym.suite import Suite, TaskNode


@pytest.fixture(scope="session")
def small_suite() -> Suite:
    """400 tasks over 12 environments."""
    return synthetic_suite(400, n_envs=12, seed=3)


@pytest.fixture(scope="session")
def mixed_suite() -> Suite:
    """Three families over the small suite's environments: Big (8 environments), Mid (3) and Tiny (10 tasks of one)."""
    nodes, tiny = [], 0
    for node in synthetic_suite(400, n_envs=12, seed=3):
        env = int(node.env.env_id.rsplit("-", 1)[1])
        family = "Big" if env < 8 else "Mid" if env < 11 else "Tiny"
        tiny += family == "Tiny"
        if tiny <= 10 or family != "Tiny":
            nodes.append(TaskNode(replace(node.env, family=family), node.task))
    return Suite(nodes)
