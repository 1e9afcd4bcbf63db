"""ACEBench's aggregate scores."""

from __future__ import annotations

import pytest
from envsched_gym.envs.acebench.dataset import AGENT, NORMAL, SPECIAL
from envsched_gym.envs.acebench.scores import WEIGHTS, category_accuracy, overall_score


def test_weights_are_acebench_s() -> None:
    assert WEIGHTS == {"normal": 0.578, "special": 0.2676, "agent": 0.1545}


def test_overall_from_group_means() -> None:
    accuracies = {c: 1.0 for c in NORMAL} | {c: 0.5 for c in SPECIAL} | {AGENT[0]: 1.0, AGENT[1]: 0.0}
    scores = overall_score(accuracies)
    assert scores["normal"] == 1.0 and scores["special"] == 0.5 and scores["agent"] == 0.5
    assert scores["overall"] == pytest.approx(round(0.578 + 0.2676 * 0.5 + 0.1545 * 0.5, 3))


def test_missing_categories_count_zero() -> None:
    scores = overall_score({"normal_atom_bool": 1.0})
    assert scores["atom"] == round(1 / 6, 3)
    assert scores["normal"] == round(1 / 12, 3)
    assert scores["overall"] == round(0.578 * round(1 / 12, 3), 3)


def test_unknown_category_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown ACEBench categories"):
        overall_score({"normal_atom_boolean": 1.0})


def test_multi_turn_scores_whole_dialogues() -> None:
    correct = {
        "normal_multi_turn_user_adjust_0_0": True,
        "normal_multi_turn_user_adjust_0_1": False,
        "normal_multi_turn_user_adjust_1_0": True,
    }
    assert category_accuracy("normal_multi_turn_user_adjust", correct) == 0.5
    assert category_accuracy("normal_atom_bool", {"normal_atom_bool_0": True, "normal_atom_bool_1": False}) == 0.5
