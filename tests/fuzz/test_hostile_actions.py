"""Hostile actions on every registered id: nothing raises out of ``step``, nothing stalls, nothing runs.

Each id gets its family's share of 1,000 seeded actions (``make test``; 10,000 per family in the
slow tier) from :func:`envsched_gym.fuzz.fuzz_env`: token soups, integers too long to print,
floods of tags and calls, deep nesting, code injection, and schema-typed edge values for every
tool of the task. Asserted: no exception, every step under the bound, the injected code's
sentinel file absent, no file created in the working directory, no child process, flat memory,
and no state left behind: gold replays of the tasks the fuzzer played still score 1.0.
"""

from __future__ import annotations

import math
from pathlib import Path

import gymnasium as gym
import psutil
import pytest

import envsched_gym
from envsched_gym.fuzz import FuzzResult, fuzz_env
from envsched_gym.policies import OraclePolicy, run_episode

STEP_BOUND_S = 1.0
"""CPU seconds one step may take (a busy machine slows the wall clock, not the CPU time); the
defects this guards against took 2.7 s to hours."""
MEMORY_GROWTH_MB = 64.0
"""Peak RSS may grow this much after the first fifth of the actions (a leak of 10 KB per action
over 10,000 actions is 100 MB)."""
IDS = envsched_gym.registered_ids()


def _family(gym_id: str) -> str:
    return gym_id.removeprefix("envsched/").split("-")[0]


def _share(gym_id: str, per_family: int) -> int:
    """This id's part of ``per_family`` actions, split evenly over the family's ids."""
    return math.ceil(per_family / sum(_family(i) == _family(gym_id) for i in IDS))


def _fuzz(gym_id: str, per_family: int, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FuzzResult:
    monkeypatch.chdir(tmp_path)
    children = {p.pid for p in psutil.Process().children(recursive=True)}
    result = fuzz_env(gym_id, actions=_share(gym_id, per_family), seed=seed, step_budget_s=STEP_BOUND_S)
    assert result.actions == _share(gym_id, per_family)
    assert not result.exceptions, result.summary()
    assert not result.stalls, result.summary()
    assert not result.code_executed, result.summary()
    assert list(tmp_path.iterdir()) == [], f"{gym_id}: files appeared in the working directory"
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= children, f"{gym_id}: a process was started"
    assert result.peak_rss_growth_mb < MEMORY_GROWTH_MB, result.summary()
    env = gym.make(gym_id)
    solved = [t for t in result.task_ids if env.unwrapped.index.get(t)[0].solution is not None][:5]
    replays = {t: run_episode(env, OraclePolicy(), t)["reward"] for t in solved}
    assert all(r == 1.0 for r in replays.values()), f"{gym_id}: gold replays after the fuzz: {replays}"
    return result


@pytest.mark.parametrize("gym_id", IDS)
def test_a_thousand_hostile_actions_per_family(gym_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _fuzz(gym_id, 1_000, seed=0, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert set(result.by_kind) >= {"edge_arguments", "token_soup"}


@pytest.mark.slow
@pytest.mark.parametrize("gym_id", IDS)
def test_ten_thousand_hostile_actions_per_family(gym_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _fuzz(gym_id, 10_000, seed=1, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert len(result.by_kind) == 7  # every kind of hostile action was played


def test_the_fuzzer_catches_a_step_that_raises_and_one_that_stalls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks above can fail: a parser that raises on, or sleeps over, one kind of action is reported."""
    import time

    import envsched_gym.env as env_module

    real = env_module.parse_tool_calls

    def fragile(text, *args, **kwargs):
        if isinstance(text, str) and text.startswith("<think>" * 3):
            end = time.process_time() + 0.05
            while time.process_time() < end:  # compute, as a quadratic regex would
                pass
        if isinstance(text, str) and "9" * 4301 in text:
            raise ValueError("Exceeds the limit (4300 digits)")
        return real(text, *args, **kwargs)

    monkeypatch.setattr(env_module, "parse_tool_calls", fragile)
    result = fuzz_env("envsched/ToolWorld-v0", actions=400, seed=0, step_budget_s=0.04)
    assert result.exceptions and all("4300 digits" in f.error for f in result.exceptions)
    assert result.stalls and not result.clean
