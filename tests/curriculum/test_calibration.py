"""Post-selection calibration of never-rolled predictions, alone and inside EnvSched."""

from __future__ import annotations

import numpy as np
import pytest

from envsched_gym.curriculum import EnvSchedScheduler
from envsched_gym.curriculum.calibration import NEW, PREDICTED, REVISIT, SelectionCalibration
from envsched_gym.suite import Suite


def _fed(new_ratio: float, revisit_ratio: float = 1.0, groups: int = 20) -> SelectionCalibration:
    """A calibration that saw ``groups`` never-rolled and revisit picks predicted at 0.2 each, realising ``ratio`` x 0.2."""
    calibration = SelectionCalibration(half_life=20.0)
    for _ in range(groups):
        calibration.observe(True, 0.2, 0.2 * new_ratio)
        calibration.observe(False, 0.2, 0.2 * revisit_ratio)
    return calibration


def test_the_factor_is_the_never_rolled_shortfall_relative_to_the_revisits() -> None:
    assert _fed(0.75).factor() == pytest.approx(0.75)
    assert _fed(0.6, revisit_ratio=0.8).factor() == pytest.approx(0.75)  # a shortfall shared by every pick cancels


def test_the_factor_is_clipped_to_half_and_never_raises_never_rolled_nodes() -> None:
    assert _fed(0.1).factor() == pytest.approx(SelectionCalibration.MINIMUM)
    assert _fed(1.4).factor() == 1.0


def test_the_factor_waits_for_evidence_on_both_kinds_of_pick() -> None:
    assert _fed(0.5, groups=5).factor() == 1.0  # 5 x 0.2 of predicted variance is under the warm-up
    calibration = SelectionCalibration(half_life=20.0)
    for _ in range(50):
        calibration.observe(True, 0.2, 0.0)  # never-rolled picks only: nothing to compare with
    assert calibration.factor() == 1.0


def test_old_groups_count_half_after_one_half_life() -> None:
    calibration = _fed(0.75)
    before = calibration.sums.copy()
    for _ in range(20):
        calibration.advance()
    assert np.allclose(calibration.sums, before / 2)
    assert calibration.factor() == pytest.approx(0.75)  # decay alone leaves the ratio


def test_half_life_zero_switches_it_off_and_a_negative_one_is_refused() -> None:
    off = SelectionCalibration(half_life=0.0)
    for _ in range(50):
        off.observe(True, 0.2, 0.0)
        off.observe(False, 0.2, 0.2)
    assert off.factor() == 1.0
    with pytest.raises(ValueError, match="at least 0"):
        SelectionCalibration(half_life=-1.0)


def test_envsched_records_each_pick_under_its_kind_with_the_prediction_it_was_picked_on(small_suite: Suite) -> None:
    s = EnvSchedScheduler(small_suite, seed=0)
    batch = s.next_batch(8)
    nodes = s.positions(batch)
    predicted = s.predictor.variance[nodes].copy()
    for task in batch:
        s.update(task, [0.0, 1.0, 1.0, 1.0])  # variance 0.1875 each
    assert s.calibration.sums[NEW, PREDICTED] == pytest.approx(predicted.sum())
    assert s.calibration.sums[REVISIT, PREDICTED] == 0.0
    s.update(batch[0], [1.0, 1.0, 1.0, 1.0])  # a revisit
    assert s.calibration.sums[REVISIT].tolist() == pytest.approx([s.predictor.variance[nodes[0]], 0.0])


def test_envsched_scales_only_never_rolled_nodes_by_the_factor(small_suite: Suite) -> None:
    s = EnvSchedScheduler(small_suite, seed=0)
    for task in s.next_batch(8):
        s.update(task, [0.0, 1.0, 0.0, 1.0])
    nodes = np.arange(len(s.task_ids))
    rolled = s.predictor.model.visits[nodes] > 0
    before = s._variance_term(nodes)
    s.calibration.sums[:] = [[4.0, 4.0], [4.0, 2.4]]  # revisits realised what they were predicted; never-rolled picks 0.6 of it
    after = s._variance_term(nodes)
    assert np.allclose(after[rolled], before[rolled])
    assert np.allclose(after[~rolled], 0.6 * before[~rolled])
    with pytest.raises(ValueError, match="calibration_half_life"):
        EnvSchedScheduler(small_suite, seed=0, calibration_half_life=-1)
