"""Fresh τ-bench worlds over the real τ2 databases (skipped when the benchmark data is absent)."""

from __future__ import annotations

import pytest
from envsched_gym.envs.tau.airline import AirlineWorld
from envsched_gym.envs.tau.db import BaseDB, load_base
from envsched_gym.envs.tau.retail import RetailWorld

from envsched_gym.data import DataNotFoundError, benchmark_path


def _base(domain: str) -> BaseDB:
    try:
        return load_base(str(benchmark_path("tau2", "data", "tau2", "domains", domain, "db.json")))
    except DataNotFoundError as exc:
        pytest.skip(f"tau2 data not available: {exc}")


@pytest.fixture
def retail() -> RetailWorld:
    """A fresh retail world (its own copy of the DB)."""
    return RetailWorld(_base("retail"))


@pytest.fixture
def airline() -> AirlineWorld:
    """A fresh airline world (its own copy of the DB)."""
    return AirlineWorld(_base("airline"))
