"""load_state_dict of every registered scheduler checks every key and array of a saved state."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from envsched_gym.curriculum import SCHEDULERS, BaseScheduler, make_scheduler
from envsched_gym.suite import Suite

VARIABLE_LENGTH = {"predictor.dirty", "predictor.model.pending"}  # nodes awaiting a refresh, groups awaiting a fit: any number is a valid state


def _driven(name: str, suite: Suite) -> BaseScheduler:
    s = make_scheduler(name, suite, seed=1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        for t in s.next_batch(8):
            s.update(t, (rng.random(4) < 0.5).astype(float))
    return s


def _saved(name: str, suite: Suite) -> dict[str, Any]:
    return json.loads(json.dumps(_driven(name, suite).state_dict()))


def _arrays(state: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, dict[str, Any], str]]:
    """(dotted name, containing dict, key) of every list-valued entry, nested dicts included."""
    for key, value in state.items():
        if isinstance(value, list):
            yield prefix + key, state, key
        elif isinstance(value, dict) and key != "rng" and key != "config":
            yield from _arrays(value, f"{prefix}{key}.")


def _first_leaf(value: list) -> tuple[list, int]:
    """The innermost list holding the first scalar of ``value``, and its index there."""
    for i, item in enumerate(value):
        if not isinstance(item, list):
            return value, i
        if item:
            return _first_leaf(item)
    raise AssertionError("no scalar to corrupt")


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_valid_round_trip_gives_the_same_next_picks(name: str, small_suite: Suite) -> None:
    s = _driven(name, small_suite)
    fresh = make_scheduler(name, small_suite, seed=1)
    fresh.load_state_dict(json.loads(json.dumps(s.state_dict())))
    assert [fresh.next_batch(8) for _ in range(3)] == [s.next_batch(8) for _ in range(3)]


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_truncated_array_is_refused_naming_key_and_shapes(name: str, small_suite: Suite) -> None:
    saved = _saved(name, small_suite)
    names = [dotted for dotted, _, _ in _arrays(saved) if dotted not in VARIABLE_LENGTH]
    assert names, "the state has no arrays"
    for dotted in names:
        state = copy.deepcopy(saved)
        holder, key = next((h, k) for d, h, k in _arrays(state) if d == dotted)
        full = len(holder[key])
        holder[key] = holder[key][: full // 2]
        target = _driven(name, small_suite)
        before = json.dumps(target.state_dict())
        with pytest.raises(ValueError, match=re.escape(f"'{dotted}'")) as err:
            target.load_state_dict(state)
        assert str(full) in str(err.value) and str(full // 2) in str(err.value) and "expected" in str(err.value), str(err.value)
        assert json.dumps(target.state_dict()) == before, f"a refused load of a truncated '{dotted}' changed the scheduler"


@pytest.mark.parametrize("bad", ["x", math.nan, None], ids=["text", "nan", "null"])
@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_array_with_a_non_numeric_or_non_finite_entry_is_refused(name: str, bad: Any, small_suite: Suite) -> None:
    saved = _saved(name, small_suite)
    for dotted, _, _ in list(_arrays(saved)):
        state = copy.deepcopy(saved)
        holder, key = next((h, k) for d, h, k in _arrays(state) if d == dotted)
        try:
            leaf, i = _first_leaf(holder[key])
        except AssertionError:
            continue  # an empty list (no node awaiting a refresh) has no entry to corrupt
        if bad is None and dotted == "last_mean" and leaf[i] is None:
            leaf[i] = 0.5  # None marks an unseen task here: a score there contradicts last_seen instead
        else:
            leaf[i] = bad
        with pytest.raises(ValueError, match=re.escape(f"'{dotted}")):
            make_scheduler(name, small_suite, seed=1).load_state_dict(state)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_unknown_and_missing_keys_are_refused_by_name(name: str, small_suite: Suite) -> None:
    saved = _saved(name, small_suite)
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['bogus'\]"):
        make_scheduler(name, small_suite, seed=1).load_state_dict({**saved, "bogus": [1, 2]})
    for key in saved:
        state = {k: v for k, v in saved.items() if k != key}
        with pytest.raises(ValueError, match=rf"missing key\(s\) \['{key}'\]"):
            make_scheduler(name, small_suite, seed=1).load_state_dict(state)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize(
    ("key", "value"), [("step", -1), ("rollouts", "12"), ("seed", 1.5), ("rng", {"bit_generator": "MT19937"}), ("totals", [1, 2])]
)
def test_bad_shared_scalars_are_refused_by_name(name: str, key: str, value: Any, small_suite: Suite) -> None:
    state = {**_saved(name, small_suite), key: value}
    with pytest.raises(ValueError, match=f"'{key}'"):
        make_scheduler(name, small_suite, seed=1).load_state_dict(state)


def test_envsched_nested_predictor_keys_are_checked(small_suite: Suite) -> None:
    saved = _saved("envsched", small_suite)
    saved["predictor"]["extra"] = 0
    del saved["predictor"]["cursor"]
    with pytest.raises(ValueError, match=r"missing key\(s\) \['predictor.cursor'\] and unknown key\(s\) \['predictor.extra'\]"):
        make_scheduler("envsched", small_suite, seed=1).load_state_dict(saved)


def test_state_of_another_scheduler_says_which_to_build(small_suite: Suite) -> None:
    with pytest.raises(ValueError, match=r"saved by scheduler 'dapo', not 'random'.*make_scheduler\('dapo'"):
        make_scheduler("random", small_suite).load_state_dict(_saved("dapo", small_suite))


@pytest.mark.parametrize("pending", [False, True], ids=["fitted", "groups-queued"])
def test_a_restored_envsched_predicts_exactly_what_the_uninterrupted_run_does(small_suite: Suite, pending: bool) -> None:
    """Saving must not fit the declaration model (that would change the saved run's future), and
    a restored model keeps the unit statistics of its last fit, not ones decayed to the load step."""
    runs = [make_scheduler("envsched", small_suite, seed=0) for _ in range(2)]  # saved, uninterrupted
    for s in runs:
        for step in range(3):
            batch = s.next_batch(4)
            for i, task in enumerate(batch):
                s.update(task, [float((i + k + step) % 2) for k in range(4)])
        if not pending:
            s.next_batch(4)  # fits the queued groups
    saved, uninterrupted = runs
    ids = [n.task_id for n in small_suite]
    restored = make_scheduler("envsched", small_suite, seed=0)
    restored.load_state_dict(json.loads(json.dumps(saved.state_dict())))
    for key in ("mean", "variance", "uncertainty"):
        expected = uninterrupted.predict(ids)[key]
        assert saved.predict(ids)[key] == expected and restored.predict(ids)[key] == expected, key
    assert restored.next_batch(4) == saved.next_batch(4) == uninterrupted.next_batch(4)
