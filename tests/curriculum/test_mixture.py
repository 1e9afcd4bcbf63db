"""The target mix of families: pool share or weights, floor, cap, band, group counts, state; every scheduler follows it."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from envsched_gym import EnvSpec, TaskSpec
from envsched_gym.curriculum import SCHEDULERS, make_scheduler
from envsched_gym.curriculum.mixture import Mixture, MixtureConfig, apportion
from envsched_gym.suite import Suite, TaskNode
from tests.curriculum.driving import drive


def _suite(sizes: dict[str, int]) -> Suite:
    """One environment per family, with ``sizes[family]`` tasks."""
    nodes = []
    for family, size in sizes.items():
        env = EnvSpec(env_id=family, family=family, gym_id=f"envsched/{family}-v0")
        nodes += [TaskNode(env, TaskSpec(task_id=f"{family}/{i}", env_id=family, instruction=f"{family} task {i}")) for i in range(size)]
    return Suite(nodes)


def test_the_default_target_is_the_pool_share() -> None:
    assert Mixture(_suite({"A": 60, "B": 40})).target.tolist() == pytest.approx([0.6, 0.4])


def test_the_floor_lifts_a_small_family_and_the_others_give_in_proportion() -> None:
    target = Mixture(_suite({"A": 600, "B": 390, "C": 10})).target
    assert target[2] == pytest.approx(0.05)
    assert target[0] / target[1] == pytest.approx(600 / 390) and target.sum() == pytest.approx(1.0)


def test_the_cap_limits_a_large_pool_share_but_not_a_weight() -> None:
    suite = _suite({"A": 990, "B": 10})
    assert Mixture(suite).target.tolist() == pytest.approx([0.8, 0.2])
    assert Mixture(suite, {"A": 9, "B": 1}).target.tolist() == pytest.approx([0.9, 0.1])
    assert Mixture(suite, {"A": 0.99, "B": 0.01}).target.tolist() == pytest.approx([0.95, 0.05])  # the floor holds for weights too
    assert Mixture(suite, {"A": 0.99, "B": 0.01}, MixtureConfig(floor=0.0)).target.tolist() == pytest.approx([0.99, 0.01])


def test_suite_weights_are_the_default_and_scheduler_weights_override_them() -> None:
    suite = _suite({"A": 50, "B": 50}).with_weights({"A": 3, "B": 1})
    assert Mixture(suite).target.tolist() == pytest.approx([0.75, 0.25])
    assert make_scheduler("random", suite, weights={"A": 1, "B": 3}).mixture.target.tolist() == pytest.approx([0.25, 0.75])
    assert suite.filter(family="A").weights == {"A": 3.0}


@pytest.mark.parametrize("batch", [4, 16, 17])
def test_counts_sum_to_the_batch_and_average_to_the_share(batch: int) -> None:
    mix = Mixture(_suite({"A": 500, "B": 300, "C": 10}))
    counts = np.array([mix.counts(batch) for _ in range(40)])
    assert (counts.sum(axis=1) == batch).all()
    assert np.abs(counts.sum(axis=0) - 40 * batch * mix.target).max() < 1.0  # within one group after 40 batches


def test_a_family_smaller_than_its_count_gives_the_rest_to_the_others() -> None:
    mix = Mixture(_suite({"A": 100, "B": 3}), {"A": 1, "B": 1})
    assert mix.counts(16).tolist() == [13, 3]
    assert apportion(np.array([5.0, 5.0, 6.0]), 16, np.array([2, 100, 100])).tolist() == [2, 6, 8]


@pytest.mark.parametrize("evidence", [[10.0, 0.0, 0.0], [0.0, 0.0, 10.0], [-3.0, 5.0, 0.0]])
def test_evidence_moves_a_share_only_within_the_band_and_never_below_the_floor(evidence: list[float]) -> None:
    mix = Mixture(_suite({"A": 600, "B": 390, "C": 10}))
    shares = mix.shifted(np.array(evidence), temperature=0.05)
    assert shares.sum() == pytest.approx(1.0)
    assert (np.abs(shares - mix.target) <= mix.config.band + 1e-9).all() and shares[2] >= 0.05 - 1e-9
    assert shares[int(np.argmax(evidence))] > mix.target[int(np.argmax(evidence))]


def test_bad_mixture_settings_are_refused() -> None:
    with pytest.raises(ValueError, match=r"MixtureConfig.floor must be a share in \[0, 1\]"):
        MixtureConfig(floor=1.5)
    with pytest.raises(ValueError, match="evidence must be 2 finite numbers"):
        Mixture(_suite({"A": 5, "B": 5})).shifted(np.array([np.nan, 0.0]), 0.05)


WEIGHTS = {"Big": 0.3, "Mid": 0.5, "Tiny": 0.2}  # far from the pool share (about 0.71 / 0.26 / 0.03); Tiny fits DAPO's 3x over-sampling


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_scheduler_follows_the_weights_within_the_band(name: str, mixed_suite: Suite) -> None:
    s = make_scheduler(name, mixed_suite, seed=0, weights=WEIGHTS)
    picks = Counter(mixed_suite.node(t).family for batch in drive(s, 30, seed=1, batch=16, per_task_p=True) for t in batch)
    total = sum(picks.values())
    for family, weight in WEIGHTS.items():
        # the band, and one group of rounding
        assert abs(picks[family] / total - weight) <= MixtureConfig().band + 1 / total, (family, picks)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_scheduler_gives_a_tiny_family_its_floor(name: str, mixed_suite: Suite) -> None:
    s = make_scheduler(name, mixed_suite, seed=0)
    picks = Counter(mixed_suite.node(t).family for batch in drive(s, 30, seed=1, batch=16, per_task_p=True) for t in batch)
    assert picks["Tiny"] / sum(picks.values()) >= 0.05 - 1 / 480, picks


def test_envsched_moves_shares_towards_varied_families_within_the_band(mixed_suite: Suite) -> None:
    s = make_scheduler("envsched", mixed_suite, seed=0)
    target = dict(zip(s.mixture.families, s.mixture.target, strict=True))
    picks: Counter[str] = Counter()
    for _ in range(30):
        for t in s.next_batch(16):
            family = mixed_suite.node(t).family
            picks[family] += 1
            s.update(t, [1.0, 0.0] * 4 if family == "Mid" else [1.0] * 8)  # only Mid's groups teach anything
    share = {f: picks[f] / 480 for f in target}
    assert share["Mid"] > target["Mid"] + 0.02, (share, target)
    assert all(abs(share[f] - target[f]) <= s.mixture.config.band + 1 / 480 for f in target), (share, target)
    assert max(abs(share[f] - target[f]) for f in target) < 0.05, (share, target)
    # the guarantee behind it: a share ends within the band plus one group of its target, inside the 5-point family target
    assert s.mixture.config.band + 1 / 480 < 0.05


def test_the_carry_is_saved_and_a_state_under_other_weights_is_refused(mixed_suite: Suite) -> None:
    s = make_scheduler("random", mixed_suite, seed=0)
    drive(s, 3, seed=0, batch=7)
    state = json.loads(json.dumps(s.state_dict()))
    assert np.abs(state["mixture"]["carry"]).sum() > 0
    restored = make_scheduler("random", mixed_suite, seed=0)
    restored.load_state_dict(state)
    assert [restored.next_batch(7) for _ in range(3)] == [s.next_batch(7) for _ in range(3)]
    with pytest.raises(ValueError, match=r"'mixture.target' is .* same family weights"):
        make_scheduler("random", mixed_suite, seed=0, weights=WEIGHTS).load_state_dict(state)


def test_family_mix_reports_target_and_drawn_shares(mixed_suite: Suite) -> None:
    s = make_scheduler("envsched", mixed_suite, seed=0, weights=WEIGHTS)
    batch = s.next_batch(10)
    mix = s.family_mix(batch)
    assert set(mix["target"]) == set(mix["share"]) == set(WEIGHTS)
    assert sum(mix["share"].values()) == pytest.approx(1.0) and sum(mix["target"].values()) == pytest.approx(1.0)
    assert mix["share"]["Tiny"] == pytest.approx(Counter(mixed_suite.node(t).family for t in batch)["Tiny"] / 10)


def test_a_mix_over_any_partition_targets_its_pool_share_with_the_floor() -> None:
    labels = np.array([0] * 90 + [1] * 8 + [2] * 2)
    mix = Mixture.over(["writes", "reads", "no_call"], labels)
    assert mix.target.tolist() == pytest.approx([0.8, 0.15, 0.05])  # pool share 0.9/0.08/0.02, capped at 0.8, the floor lifting the last
    assert [len(m) for m in mix.members] == [90, 8, 2]
    assert sum(mix.counts(4).sum() for _ in range(10)) == 40


@pytest.mark.parametrize("labels", [[0, 0, 2], [0, 0, 0], [], [-1, 1]])
def test_a_mix_over_a_partition_needs_every_part_labelled_and_non_empty(labels: list[int]) -> None:
    with pytest.raises(ValueError, match="every part non-empty"):
        Mixture.over(["a", "b"], np.array(labels, dtype=np.int64))
