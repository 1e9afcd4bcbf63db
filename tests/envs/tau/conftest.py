"""Fresh τ-bench worlds over the real τ2 databases (the tests fail when the benchmark data is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest
from envsched_gym.envs.tau.airline import AirlineWorld
from envsched_gym.envs.tau.db import BaseDB, load_base
from envsched_gym.envs.tau.retail import RetailWorld


def _base(root: Path, domain: str) -> BaseDB:
    path = root / "tau2" / "data" / "tau2" / "domains" / domain / "db.json"
    if not path.is_file():
        pytest.fail(f"{path} does not exist: the benchmark data root {root} lacks the tau2 data.", pytrace=False)
    return load_base(str(path))


@pytest.fixture
def retail(benchmarks: Path) -> RetailWorld:
    """A fresh retail world (its own copy of the DB)."""
    return RetailWorld(_base(benchmarks, "retail"))


@pytest.fixture
def airline(benchmarks: Path) -> AirlineWorld:
    """A fresh airline world (its own copy of the DB)."""
    return AirlineWorld(_base(benchmarks, "airline"))
